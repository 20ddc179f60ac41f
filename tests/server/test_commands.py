"""workspace/executeCommand: clperf.selectDevice and clperf.benchmark (real PoCL runs, isolated)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient


async def command(client: LanguageClient, name: str, *args: object) -> object:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(args) or None)
    )


@pytest.mark.e2e
@pytest.mark.slow
async def test_select_device_lists_profiles_and_local_devices(client: LanguageClient) -> None:
    choices = await command(client, "clperf.selectDevice")
    assert isinstance(choices, list)
    sources = {c["source"] for c in choices}
    assert "profile" in sources and "discovered" in sources, choices
    assert any("H200" in c["label"] for c in choices)
    # exactly one is the current device: the tests' clperf.device names the H200 profile (the default,
    # the best local device, is tested in test_devices.py)
    current = [c for c in choices if c["current"]]
    assert len(current) == 1 and "H200" in current[0]["label"] and current[0]["source"] == "profile", choices
    now = await command(client, "clperf.currentDevice")
    assert {k: now[k] for k in ("label", "text", "source", "platform")} == {
        k: current[0][k] for k in ("label", "text", "source", "platform")}


@pytest.mark.e2e
@pytest.mark.slow
async def test_select_device_by_text_and_unknown(client: LanguageClient, lsp) -> None:
    uri = await lsp.open_doc(client, lsp.fixture_text("kernels.cl"))
    result = await command(client, "clperf.selectDevice", "portable")
    assert isinstance(result, dict) and result.get("platform") == "Portable Computing Language", result
    bad = await command(client, "clperf.selectDevice", "no-such-device-xyz")
    assert "no device matches" in bad["error"]
    assert any("no-such-device-xyz" in m.message for m in client.messages)
    # the failed selection keeps the previous one: estimates now target the local PoCL device
    await lsp.until(lambda: len(lsp.published(client, uri)) >= 2, what="re-analysis after selectDevice")


@pytest.mark.e2e
@pytest.mark.slow
async def test_benchmark_kernel_updates_lens_and_store(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    result = await command(client, "clperf.benchmark", {"uri": uri, "kernel": "fir8"})
    assert isinstance(result, list) and len(result) == 1, result
    run = result[0]
    assert run["kernel"] == "fir8" and run["status"] == "ok", run
    assert run["median_ms"] > 0 and run["repetitions"] >= 5
    # progress: begin ... end, on a token the server created
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        reports = [
            r for token, rs in client.progress_reports.items() if "benchmark" in str(token) for r in rs
        ]
        assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    titles = [lens.command.title for lens in lenses if lens.command]
    measured = [lens.command for lens in lenses
                if lens.command and lens.command.title.startswith("measured ")]
    assert len(measured) == 1, titles
    # the estimate beside the measurement: in the title unless the estimate lens shows the same time
    assert "(est. " in (measured[0].tooltip or "") or run["estimate_ms"] is None, measured
    line = lsp.line_of(text, "void fir8(")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=lsp.doc_id(uri), position=types.Position(line=line, character=16))
    )
    assert f"median of {run['repetitions']} runs on {run['device']}" in hover.contents.value
    stored = [json.loads(line) for line in (lsp.home / "measurements.jsonl").read_text().splitlines()]
    assert any(m["kernel"] == "fir8" and m["median_ms"] == run["median_ms"] for m in stored)
    # an edit elsewhere leaves the measurement current; an edit of fir8 marks it as older than the text
    lsp.replace_all(client, uri, text.replace("}", "}\n", 1) + "\n// a comment\n", 2, save=False)
    assert not await _stale_lens(client, lsp, uri)
    lsp.replace_all(client, uri, text.replace("acc += x[i + k]", "acc -= x[i + k]"), 3, save=False)
    assert await _stale_lens(client, lsp, uri)


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("spec", ["visual-studio-code", "neovim"])
async def test_a_stored_measurement_recalibrates_the_estimate_lens(bare: LanguageClient, lsp, tmp_path,
                                                                  spec: str) -> None:
    # a state folder of its own: the first stored measurement of the device, not one more of many (whose
    # median correction may already sit at its cap and not move)
    await lsp.start(bare, spec, {**lsp.settings, "cacheDirectory": str(tmp_path / "state")})
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(bare, text)
    # on the local device the benchmark runs on, whose stored measurements calibrate its estimates
    await command(bare, "clperf.selectDevice", "portable")
    line = lsp.line_of(text, "void fir8(")
    before = await _estimate_lens(bare, lsp, uri, line, "pthread", what="a PoCL estimate lens")
    result = await command(bare, "clperf.benchmark", {"uri": uri, "kernel": "fir8"})
    assert isinstance(result, list) and result[0]["status"] == "ok" and not result[0]["not_stored"], result
    after = await _estimate_lens(bare, lsp, uri, line, "pthread", other_than=before,
                                 what="the estimate lens to take the measurement in, with no restart")
    assert after.startswith("≈"), after


async def _estimate_lens(client: LanguageClient, lsp, uri: str, line: int, device: str, *, what: str,
                         other_than: str | None = None, timeout_s: float = 120.0) -> str:
    """The estimate lens of the kernel at ``line`` once it names ``device`` (and differs from
    ``other_than``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        params = types.CodeLensParams(text_document=lsp.doc_id(uri))
        titles = [lens.command.title for lens in await client.text_document_code_lens_async(params)
                  if lens.command and lens.command.title.startswith("≈") and lens.range.start.line == line]
        if titles and device in titles[0] and titles[0] != other_than:
            return titles[0]
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


async def _stale_lens(client: LanguageClient, lsp, uri: str) -> bool:
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    measured = [lens.command.title for lens in lenses if lens.command and "measured" in lens.command.title]
    assert len(measured) == 1, measured
    return "before your last edit" in measured[0]


@pytest.mark.e2e
@pytest.mark.slow
async def test_benchmark_at_cursor_picks_the_kernel_there(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    line = lsp.line_of(text, "a[i] = a[i] * s;")
    result = await command(client, "clperf.benchmark", {"uri": uri, "line": line})
    assert [r["kernel"] for r in result] == ["scale"], result


@pytest.mark.e2e
@pytest.mark.slow
async def test_crashing_kernel_leaves_the_server_answering(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("crash.cl")
    uri = await lsp.open_doc(client, text)
    result = await command(client, "clperf.benchmark", uri)
    assert result[0]["status"] in ("crash", "timeout"), result
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=lsp.doc_id(uri),
            position=types.Position(line=lsp.line_of(text, "wild_write"), character=20),
        )
    )
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    assert (
        any(lens.command and lens.command.title.startswith("benchmark crash") for lens in lenses)
        or result[0]["status"] == "timeout"
    )
    assert hover is None or "wild_write" in hover.contents.value


@pytest.mark.e2e
@pytest.mark.slow
async def test_benchmark_can_be_cancelled(client: LanguageClient, lsp) -> None:
    if not (client.capabilities.window and client.capabilities.window.work_done_progress):
        pytest.skip("client has no work-done progress to cancel")
    import asyncio

    uri = await lsp.open_doc(client, lsp.fixture_text("kernels.cl"))
    client.set_configuration({"clperf": {**lsp.settings, "benchmarkPolicy": "interactive"}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    task = asyncio.ensure_future(command(client, "clperf.benchmark", uri))
    token = await lsp.until(lambda: next((t for t in client.progress_reports if "benchmark" in str(t)), None))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, 30)
    assert len(result) < 3 or any(r["status"] == "timeout" for r in result), result
    assert isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)
    assert client.progress_reports[token][-1].message == "cancelled"


@pytest.mark.e2e
@pytest.mark.slow
async def test_benchmark_without_a_document_is_an_error_not_a_crash(client: LanguageClient) -> None:
    result = await command(client, "clperf.benchmark")
    assert "needs the URI" in result["error"]
    result = await command(client, "clperf.benchmark", {"uri": "file:///nope.cl", "kernel": 3})
    assert "error" in result


@pytest.mark.e2e
@pytest.mark.slow
async def test_no_kernel_runs_without_the_benchmark_command(unprofiled: LanguageClient, lsp,
                                                            tmp_path) -> None:
    home = tmp_path / "state"
    # measurePeaks off: not even clperf's own peak kernels (test_devices.py has them measured)
    await lsp.start(unprofiled, "visual-studio-code", {"cacheDirectory": str(home), "device": "portable",
                                                       "measurePeaks": False})
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(unprofiled, text)
    lsp.replace_all(unprofiled, uri, text + "\n", version=2)
    await lsp.until(lambda: lsp.published(unprofiled, uri, 2))
    for line in range(0, 25, 3):
        await unprofiled.text_document_hover_async(
            types.HoverParams(text_document=lsp.doc_id(uri), position=types.Position(line=line, character=16))
        )
    lenses = await unprofiled.text_document_code_lens_async(
        types.CodeLensParams(text_document=lsp.doc_id(uri)))
    assert "clperf.measurePeaks is off" in lenses[0].command.title, lenses[0].command.title
    await command(unprofiled, "clperf.selectDevice")
    await command(unprofiled, "clperf.currentDevice")
    # no benchmark worker was started, no device peaks were measured, nothing was stored
    assert [n for n in lsp.children(unprofiled._server.pid) if n != "clang-19"] == []  # type: ignore[union-attr]
    assert not (home / "devices").exists() and not (home / "measurements.jsonl").exists()
