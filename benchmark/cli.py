"""Subcommands of this package (registered by clperf.cli)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    pass
