"""One current device: the default (the best local device), the commands that show and choose it, and the
peaks of a local device measured in the background on first use (real PoCL, a private state folder per
test so that no test finds peaks another one measured)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from clperf.server.lenses import short_device

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
POCL = "Portable Computing Language"


async def command(client: LanguageClient, name: str, *args: object) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(args) or None))


async def titles(client: LanguageClient, uri: str) -> list[str]:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    return [lens.command.title for lens in lenses if lens.command]


async def until_lens(client: LanguageClient, uri: str, lsp: Any, wanted: str,
                     timeout_s: float = 90) -> list[str]:
    """Lens titles once the first one contains ``wanted``, asking as a client does after a refresh."""
    deadline = time.monotonic() + timeout_s
    found = await titles(client, uri)
    while wanted not in found[0] and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        found = await titles(client, uri)
    assert wanted in found[0], found
    return found


def peak_files(home: Path) -> list[Path]:
    return sorted((home / "devices").glob("*.json")) if (home / "devices").exists() else []


def progress(client: LanguageClient, kind: str) -> list[Any]:
    return [r for token, rs in client.progress_reports.items() if kind in str(token) for r in rs]


async def test_the_default_device_is_the_local_one_and_its_peaks_are_measured_on_first_use(
        unprofiled: LanguageClient, lsp: Any, tmp_path: Path) -> None:
    home = tmp_path / "state"
    await lsp.start(unprofiled, "visual-studio-code", {"cacheDirectory": str(home)})
    current = await command(unprofiled, "clperf.currentDevice")
    assert current["source"] == "discovered" and current["platform"] == POCL, current
    assert current["label"] == current["text"] and current["benchmarkOn"] == current["text"]
    choices = await command(unprofiled, "clperf.selectDevice")
    assert [c["text"] for c in choices if c["current"]] == [current["text"]], choices
    uri = await lsp.open_doc(unprofiled, lsp.fixture_text("kernels.cl"))
    # no peaks cached in this state folder: the first lens says they are being measured, not "no estimate"
    first = await titles(unprofiled, uri)
    assert first[0] == f"clperf: measuring the peaks of {current['text']} (once, a few seconds)…", first
    assert first[1] == "Benchmark"  # the estimate's device is local: the benchmark runs on it
    # without an edit or a save, the estimate arrives once they are measured
    found = await until_lens(unprofiled, uri, lsp, f"-bound on {short_device(current['text'])}")
    assert found[0].startswith("≈ "), found
    reports = progress(unprofiled, "peaks")
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable, reports
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and "GB/s" in (reports[-1].message or "")
    assert len(peak_files(home)) == 1  # cached for every later run
    assert not (home / "measurements.jsonl").exists()  # no kernel of the user's ran
    assert unprofiled.refreshes > 0  # type: ignore[attr-defined]


async def test_a_cancelled_measurement_says_so_and_a_benchmark_measures_the_peaks(
        unprofiled: LanguageClient, lsp: Any, tmp_path: Path) -> None:
    home = tmp_path / "state"
    await lsp.start(unprofiled, "visual-studio-code", {**lsp.settings, "device": "portable",
                                                       "cacheDirectory": str(home)})
    uri = await lsp.open_doc(unprofiled, lsp.fixture_text("kernels.cl"))
    token = await lsp.until(lambda: next((t for t in unprofiled.progress_reports if "peaks" in str(t)), None),
                            what="the peaks' progress")
    unprofiled.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    found = await until_lens(unprofiled, uri, lsp, "was cancelled")
    assert "a benchmark measures them" in found[0], found
    assert unprofiled.progress_reports[token][-1].message == "cancelled"
    assert peak_files(home) == []  # the measuring worker was stopped before it wrote anything
    # the benchmark measures them first and puts its estimate beside the measurement; the estimate lens
    # follows without a restart
    result = await command(unprofiled, "clperf.benchmark", {"uri": uri, "kernel": "scale"})
    assert result[0]["status"] == "ok" and result[0]["estimate_ms"] is not None, result
    assert result[0]["summary"].startswith("scale: measured "), result
    scale = lsp.line_of(lsp.fixture_text("kernels.cl"), "void scale(")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lenses = await unprofiled.text_document_code_lens_async(
            types.CodeLensParams(text_document=lsp.doc_id(uri)))
        mine = [lens.command.title for lens in lenses if lens.command and lens.range.start.line == scale]
        if mine[0].startswith("≈ "):
            break
        assert not mine[0].startswith("clperf: no estimate") or not mine[1].startswith("measured"), mine
        await asyncio.sleep(0.2)
    assert mine[0].startswith("≈ ") and mine[1].startswith("measured "), mine
    tips = [lens.command.tooltip or "" for lens in lenses if lens.command and lens.range.start.line == scale]
    assert "(est. " in tips[1], tips
    assert len(peak_files(home)) == 1


async def test_with_measure_peaks_off_nothing_runs_until_a_benchmark(
        unprofiled: LanguageClient, lsp: Any, tmp_path: Path) -> None:
    home = tmp_path / "state"
    await lsp.start(unprofiled, "neovim", {**lsp.settings, "device": "portable", "measurePeaks": False,
                                           "cacheDirectory": str(home)})
    uri = await lsp.open_doc(unprofiled, lsp.fixture_text("kernels.cl"))
    found = await titles(unprofiled, uri)
    assert "has no measured peaks (clperf.measurePeaks is off)" in found[0], found
    assert progress(unprofiled, "peaks") == [] and peak_files(home) == []
    await command(unprofiled, "clperf.benchmark", {"uri": uri, "kernel": "fir8"})
    found = await until_lens(unprofiled, uri, lsp, "-bound on pthread")  # the benchmark's peaks, at once
    assert len(peak_files(home)) == 1


async def test_the_setting_replaces_a_selection_and_bad_names_are_reported(
        unprofiled: LanguageClient, lsp: Any) -> None:
    await lsp.start(unprofiled, "visual-studio-code", lsp.settings)  # clperf.device = "h200"
    assert (await command(unprofiled, "clperf.currentDevice"))["label"] == "NVIDIA H200 (profile)"
    selected = await command(unprofiled, "clperf.selectDevice", "portable")
    assert selected["platform"] == POCL, selected
    assert (await command(unprofiled, "clperf.currentDevice"))["platform"] == POCL
    # the user edits clperf.device: it is the one source of truth again, the selection is gone
    unprofiled.set_configuration({"clperf": {**lsp.settings, "device": "no-such-device"}})
    unprofiled.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    error: dict[str, Any] | None = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        error = await command(unprofiled, "clperf.currentDevice")
        if "error" in error:
            break
        await asyncio.sleep(0.05)
    assert error is not None, "clperf.device never took over from the selection"
    assert error["error"].startswith("no device matches 'no-such-device' (known: "), error
    assert not any(c["current"] for c in await command(unprofiled, "clperf.selectDevice"))


async def test_a_profile_benchmarks_on_the_local_device_its_lens_names(
        unprofiled: LanguageClient, lsp: Any) -> None:
    await lsp.start(unprofiled, "visual-studio-code", lsp.settings)  # the H200 profile
    uri = await lsp.open_doc(unprofiled, lsp.fixture_text("kernels.cl"))
    current = await command(unprofiled, "clperf.currentDevice")
    found = await titles(unprofiled, uri)
    assert "-bound on NVIDIA H200" in found[0], found
    assert found[1] == f"Benchmark on {short_device(current['benchmarkOn'])}", found
    lenses = await unprofiled.text_document_code_lens_async(
        types.CodeLensParams(text_document=lsp.doc_id(uri)))
    run = await command(unprofiled, "clperf.benchmark", *lenses[1].command.arguments)
    assert run[0]["device"] == current["benchmarkOn"], run


async def test_listing_devices_does_not_wait_for_a_running_benchmark(unprofiled: LanguageClient,
                                                                     lsp: Any) -> None:
    await lsp.start(unprofiled, "visual-studio-code", {**lsp.settings, "benchmarkPolicy": "interactive"})
    uri = await lsp.open_doc(unprofiled, lsp.fixture_text("kernels.cl"))
    task = asyncio.ensure_future(command(unprofiled, "clperf.benchmark", uri))  # three kernels, seconds each
    await lsp.until(lambda: any(isinstance(r, types.WorkDoneProgressReport)
                                for r in progress(unprofiled, "benchmark")), what="the benchmark running")
    start = time.monotonic()
    choices = await command(unprofiled, "clperf.selectDevice")
    current = await command(unprofiled, "clperf.currentDevice")
    waited = time.monotonic() - start
    assert choices and current["label"] == "NVIDIA H200 (profile)"
    assert not task.done(), "the benchmark ended first: nothing was tested"
    assert waited < 2.0, f"the device list waited {waited:.1f} s"
    assert len(await asyncio.wait_for(task, 120)) == 3
