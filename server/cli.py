"""``clperf serve`` and ``python -m clperf.server``: start the language server on stdio.

vscode-languageclient appends ``--stdio`` to the command line, so it is accepted (stdio is the only
transport). Imports stay light here: pygls is imported only when the server actually starts.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence


def _add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (the default)")
    p.add_argument("--log-file", metavar="PATH", help="write the server's log here (default: stderr)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def _serve(ns: argparse.Namespace) -> int:
    handler: logging.Handler = (logging.FileHandler(ns.log_file) if ns.log_file
                                else logging.StreamHandler(sys.stderr))
    logging.basicConfig(level=ns.log_level, handlers=[handler],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(ns.log_level)))
    from clperf.server import fastinit

    stdin, stdout = fastinit.streams(sys.stdin.buffer, sys.stdout.buffer)  # answers initialize first
    from clperf.server.wiring import build_server

    build_server().start_io(stdin, stdout)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    p = sub.add_parser("serve", help="run the language server (LSP over stdio)",
                       description="Run the clperf language server, speaking LSP over stdin/stdout.")
    _add_flags(p)
    p.set_defaults(run=_serve)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clperf.server",
                                     description="The clperf language server.")
    _add_flags(parser)
    return _serve(parser.parse_args(argv))
