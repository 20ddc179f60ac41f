"""The ``clperf`` command. Each part of the package registers its own subcommands:

* ``clperf.cli.predict``: analyze, check, predict, fix, train, evaluate
* ``clperf.cli.bench``: devices, bench, sweep
* ``clperf.server.cli``: serve

This module holds the flags several commands share and the one error boundary: a ``ClperfError`` becomes
one line on stderr and exit status 2; nothing prints a traceback unless ``CLPERF_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from clperf import __version__
from clperf.core import children
from clperf.core.errors import ClperfError, ScenarioError
from clperf.core.scenario import ScenarioSpec, make_spec

EXIT_USAGE = 2
EXIT_INTERNAL = 70
DASH_VALUED = ("--build-options",)  # flags whose value may start with a dash


def add_json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def add_build_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--build-options", default="", metavar="OPTS",
                   help='extra compiler options, e.g. "-DBLOCK=16 -I inc -cl-std=CL2.0" '
                        "(paths relative to the kernel file's folder); added to clperf.toml and the "
                        "file's // clperf-build: directive")


def add_scenario_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scenario (override the // clperf: directive and clperf.toml)")
    g.add_argument("--global", dest="global_size", metavar="G[,G,G]", help="global work size per dimension")
    g.add_argument("--local", dest="local_size", metavar="L[,L,L]", help="local work size per dimension")
    g.add_argument("--arg", dest="args", action="append", default=[], metavar="NAME=EXPR",
                   help="a scalar's value or a buffer's length in elements (may use other arguments)")
    g.add_argument("--fill", dest="fills", action="append", default=[], metavar="NAME=KIND",
                   help="how a buffer is filled: random|zeros|ones|range:LO:HI")


def scenario_from_args(ns: argparse.Namespace) -> ScenarioSpec:
    return make_spec(ns.global_size, ns.local_size, ns.args, ns.fills)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clperf",
                                     description="OpenCL kernel performance, before you run it.")
    parser.add_argument("--version", action="version", version=f"clperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from clperf.cli import bench as benchmark_cli
    from clperf.cli import predict as predictor_cli
    from clperf.server import cli as server_cli

    predictor_cli.register(sub)
    benchmark_cli.register(sub)
    server_cli.register(sub)
    return parser


def join_dash_values(argv: Sequence[str]) -> list[str]:
    """``--build-options -DN=4`` as ``--build-options=-DN=4``: argparse takes a value that starts with a
    dash for a flag, and compiler options always do."""
    out: list[str] = []
    it = iter(argv)
    for a in it:
        if a in DASH_VALUED:
            v = next(it, None)
            out.append(a if v is None else f"{a}={v}")
        else:
            out.append(a)
    return out


class _Stopped(BaseException):
    """A signal that ends clperf; a BaseException, so that no ``except Exception`` boundary keeps going."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOP_SIGNALS: dict[int, str] = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up",
                                 signal.SIGINT: "interrupted"}
_EXIT_GRACE_S = 5.0  # for the unwinding after a stop signal (temporary folders removed), then a hard exit
_stopping: list[int] = []


def _on_stop_signal(signum: int, frame: object) -> None:
    """End every child first (clang, workers: each in its own process group, so the signal did not reach
    them), then unwind; a second signal, or an unwinding that hangs, exits at once."""
    children.terminate_all()
    if _stopping:
        os._exit(128 + signum)
    _stopping.append(signum)
    watchdog = threading.Timer(_EXIT_GRACE_S, os._exit, (128 + signum,))
    watchdog.daemon = True
    watchdog.start()
    raise _Stopped(signum)


def _install_stop_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}  # signal handlers belong to the main thread; a caller elsewhere keeps its own
    _stopping.clear()
    return {sig: signal.signal(sig, _on_stop_signal) for sig in _STOP_SIGNALS}


def main(argv: Sequence[str] | None = None) -> int:
    previous = _install_stop_handlers()
    try:
        parser = build_parser()
        ns = parser.parse_args(join_dash_values(sys.argv[1:] if argv is None else argv))
        return _run(ns)
    except _Stopped as e:
        name = signal.Signals(e.signum).name
        print(f"clperf: {_STOP_SIGNALS.get(e.signum, 'stopped')} ({name}); its child processes were ended",
              file=sys.stderr)
        return 128 + e.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(ns: argparse.Namespace) -> int:
    try:
        return int(ns.run(ns) or 0)
    except ScenarioError as e:
        print(f"clperf: invalid scenario: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ClperfError as e:
        print(f"clperf: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("clperf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the boundary: one line for the user, the traceback only on request
        if os.environ.get("CLPERF_DEBUG"):
            raise
        print(f"clperf: internal error: {type(e).__name__}: {e} (set CLPERF_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL
