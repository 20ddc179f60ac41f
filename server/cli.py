"""``clperf serve`` and ``python -m clperf.server``: start the language server on stdio.

vscode-languageclient appends ``--stdio`` to the command line, so it is accepted (stdio is the only
transport). Imports stay light here: pygls is imported only when the server actually starts.

Start-up never imports from the working directory, which is often a project someone else wrote: the
editor extension starts ``python -P -m clperf.server`` (safe-path mode: ``sys.path`` without the working
directory). A launch without it (``python -m clperf.server`` in a project folder) is started again with
``-P`` before anything else is imported, so a ``pygls/`` or ``numpy/`` folder there is never loaded. A
``clperf/`` folder there is beyond this check: Python imports it to find this module. Only the launcher's
``-P`` stops that one.

Kernels run only on an explicit user action: the ``clperf.benchmark`` command, and estimates from PoCL's
counted code when ``clperf.poclCode`` is on (a user setting). Code actions never run kernels.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: only modules loaded at start-up come before the safe-path check
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


def unsafe_path() -> bool:
    """Whether ``sys.path`` starts with the working directory (``python -m`` without ``-P``), so that any
    module imported from now on may come from there."""
    if sys.flags.safe_path or not sys.path:
        return False
    try:
        return os.path.realpath(sys.path[0] or os.curdir) == os.path.realpath(os.getcwd())
    except OSError:  # a working directory that was removed cannot be imported from either
        return False


def ensure_safe_path() -> None:
    """Run this interpreter again, same arguments, with ``-P`` (and ``PYTHONSAFEPATH=1`` for the
    interpreters it starts) when the working directory is on ``sys.path``. Re-executing rather than
    refusing keeps an existing editor set-up working; the process, its pid and its stdin/stdout (the LSP
    stream, not read yet) stay the same."""
    if not unsafe_path():
        return
    argv = list(sys.orig_argv) or [sys.executable]
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    try:
        os.execve(sys.executable, [sys.executable, "-P", *argv[1:]], env)
    except OSError as e:
        sys.stderr.write(f"clperf: cannot restart in safe-path mode ({e}); start the server with "
                         f"'{sys.executable} -P -m clperf.server'\n")
        raise SystemExit(2) from e


def _add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (the default)")
    p.add_argument("--log-file", metavar="PATH",
                   help="also write the server's log here (the client gets it as window/logMessage, "
                        "stderr before the client is connected)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def _serve(ns: argparse.Namespace) -> int:
    ensure_safe_path()
    import logging

    from clperf.server import logs

    # stderr until the client is connected, then window/logMessage (server/logs.py); a log file always
    stream = logging.StreamHandler(sys.stderr)
    stream.setFormatter(logging.Formatter(logs.FORMAT))
    handlers: list[logging.Handler] = [logs.ClientLog(None if ns.log_file else stream)]
    if ns.log_file:
        handlers.append(logging.FileHandler(ns.log_file))
    logging.basicConfig(level=ns.log_level, handlers=handlers, format=logs.FORMAT)
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
    ensure_safe_path()
    import argparse

    parser = argparse.ArgumentParser(prog="python -m clperf.server",
                                     description="The clperf language server.")
    _add_flags(parser)
    return _serve(parser.parse_args(argv))
