"""Subcommands of this package (registered by clperf.cli)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    from clperf.predictor import model_cli  # predict, train, evaluate

    model_cli.register(sub)
