"""The ``workspace/executeCommand`` handlers: ``clperf.selectDevice``, ``clperf.currentDevice`` and
``clperf.benchmark`` (docs/server.md#commands).

Device questions run on the server's device pool, never behind a benchmark: a client asks for the
current device after every settings change, and a benchmark can take minutes. Benchmarks run on their
own one-thread pool, one after the other, on the current device when it is local (else the local device
``Targets.runnable`` names), its peaks measured first where they are missing. A stored measurement
calibrates the estimates of its device (predictor/model/calibration.py), so the open documents are
analysed again after it: the lenses show the new estimate without a restart.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from clperf.core.errors import ClperfError
from clperf.server import benchmarking
from clperf.server.guard import guarded
from clperf.server.progress import Progress
from clperf.server.targets import Choice

if TYPE_CHECKING:
    from clperf.server.wiring import ClperfServer
else:
    ClperfServer = Any  # pygls reads the handlers' annotations when they run; wiring imports this module

FAILED = {"error": "internal error, see the server log"}


def register(server: ClperfServer) -> None:
    @server.command("clperf.selectDevice")
    @guarded("clperf.selectDevice", FAILED)
    async def select_device(ls: ClperfServer, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        await ls.settled()
        if not args or not isinstance(args[0], str) or not args[0].strip():
            choices = await loop.run_in_executor(ls.device_pool, ls.targets.choices, ls.settings.device)
            return [c.__dict__ for c in choices]
        text = args[0].strip()
        previous, ls.targets.override = ls.targets.override, text
        try:
            device = await loop.run_in_executor(ls.device_pool, ls.targets.target, ls.settings.device)
        except ClperfError as e:
            ls.targets.override = previous
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"clperf: {e}"))
            return {"error": str(e)}
        ls.reanalyze_all()
        return {"device": device.name, "platform": device.platform, "source": device.source}

    @server.command("clperf.currentDevice")
    @guarded("clperf.currentDevice", FAILED)
    async def current_device(ls: ClperfServer, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        await ls.settled()
        try:
            device = await loop.run_in_executor(ls.device_pool, ls.targets.target, ls.settings.device)
        except ClperfError as e:
            return {"error": str(e)}
        bench = await loop.run_in_executor(ls.device_pool, ls.targets.bench_device, device)
        c = Choice.of(device, True)
        return {"label": c.label, "text": c.text, "type": c.type, "source": c.source, "platform": c.platform,
                "benchmarkOn": bench.name if bench is not None else None}

    @server.command("clperf.benchmark")
    @guarded("clperf.benchmark", FAILED)
    async def benchmark(ls: ClperfServer, *args: Any) -> Any:
        uri, name, line = _benchmark_target(args)
        doc = ls.document(uri) if uri else None
        if doc is None:
            return {"error": "clperf.benchmark needs the URI of an open document"}
        chosen = benchmarking.pick_kernels(ls.kernels(doc), name, line)
        if not chosen:
            return {"error": f"no kernel {'named ' + name if name else 'there'} in {uri}"}
        return await _run_benchmarks(ls, doc, chosen)


def _benchmark_target(args: tuple[Any, ...]) -> tuple[str | None, str | None, int | None]:
    """Accepts ``{"uri", "kernel"?, "line"?}`` (0-based line, as LSP positions are) or ``uri[, kernel]``."""
    if not args:
        return None, None, None
    first = args[0]
    if isinstance(first, dict):
        line = first.get("line")
        return (first.get("uri") if isinstance(first.get("uri"), str) else None,
                first.get("kernel") if isinstance(first.get("kernel"), str) else None,
                line + 1 if isinstance(line, int) else None)
    name = args[1] if len(args) > 1 and isinstance(args[1], str) else None
    return (first if isinstance(first, str) else None), name, None


async def _run_benchmarks(ls: ClperfServer, doc: Any, chosen: list[Any]) -> Any:
    loop = asyncio.get_running_loop()
    progress = Progress(ls, "benchmark", "clperf benchmark")
    await progress.begin(", ".join(k.name for k in chosen), percentage=0)
    cancel = progress.cancel

    def work() -> list[benchmarking.Outcome]:
        def report(fraction: float, message: str) -> None:
            loop.call_soon_threadsafe(progress.report, fraction, message)

        # the current device when it is local; a bad clperf.device is an error, not another device
        device = ls.targets.runnable(ls.targets.target(ls.settings.device))
        device = ls.peaks.ensure(device, cancel, report)
        path = to_fs_path(doc.uri) or ""
        return benchmarking.run(doc.source, path, chosen, device, ls.settings, root=ls.root_for(path),
                                policy_name=ls.settings.benchmark_policy,
                                timeout_s=ls.settings.benchmark_timeout_s, on_progress=report, cancel=cancel)

    outcomes: list[benchmarking.Outcome] = []
    try:
        outcomes = await loop.run_in_executor(ls.bench_pool, work)
    except ClperfError as e:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"clperf: {e}"))
        return {"error": str(e)}
    except asyncio.CancelledError:
        cancel.set()
        raise
    finally:
        progress.end("cancelled" if cancel.is_set() else f"{len(outcomes)} kernel(s) measured")
    st = ls.docs.state(doc.uri)
    for o in outcomes:
        st.measured[o.kernel] = o.measured
    ls.refresh_views()
    if any(o.stored for o in outcomes):
        ls.reanalyze_all()  # a stored measurement calibrates later estimates of its device
    return [o.to_json() for o in outcomes]
