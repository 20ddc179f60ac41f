"""textDocument/codeLens: an estimate and a Benchmark action per kernel, following the text between saves."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

ESTIMATE = re.compile(
    r"^≈ [\d.]+ (s|ms|µs), (memory|compute|latency)-bound on NVIDIA H200"
)


async def lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


@pytest.mark.e2e
@pytest.mark.slow
async def test_estimate_and_benchmark_lens_per_kernel(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    found = await lenses(client, uri)
    by_line: dict[int, list[types.CodeLens]] = {}
    for lens in found:
        by_line.setdefault(lens.range.start.line, []).append(lens)
    heads = [lsp.line_of(text, f"void {k}(") for k in ("strided", "fir8", "scale")]
    assert sorted(by_line) == heads
    for line, name in zip(heads, ("strided", "fir8", "scale"), strict=True):
        titles = [lens.command.title for lens in by_line[line]]
        assert ESTIMATE.match(titles[0]), titles
        bench = by_line[line][-1].command
        # the estimates are for a profile: the lens names the local device a benchmark runs on
        assert bench.title.startswith("Benchmark on pthread-") and bench.command == "clperf.benchmark"
        assert bench.tooltip.startswith(f"run {name} on pthread-"), bench.tooltip
        # one kernel's lenses share a line: together they fit a 100-column editor
        assert len(" | ".join(titles)) <= 90, titles
        assert "cycles on NVIDIA H200" in by_line[line][0].command.tooltip  # the detail left out
        assert list(bench.arguments) == [{"uri": uri, "kernel": name}]
    scale = by_line[heads[2]][0].command
    # no directive: the estimate says so (in fewer words where the line is full), its tooltip in full
    assert scale.title.endswith((" · default scenario", " · defaults")), scale.title
    assert "the launch size is the default scenario" in scale.tooltip, scale.tooltip


@pytest.mark.e2e
@pytest.mark.slow
async def test_lenses_follow_edits_before_save(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    lsp.replace_all(client, uri, "\n\n\n" + text, version=2, save=False)
    found = await lenses(client, uri)
    lines = sorted({lens.range.start.line for lens in found})
    assert lines[0] == lsp.line_of(text, "void strided(") + 3
    assert ESTIMATE.match(found[0].command.title)  # the last analysis, re-anchored by kernel name


@pytest.mark.e2e
@pytest.mark.slow
async def test_estimate_is_real_and_scales_with_the_scenario(client: LanguageClient, lsp) -> None:
    """A 64x bigger launch of a memory-bound kernel must not predict the same time (no hard-coding)."""
    small = lsp.fixture_text("kernels.cl")
    big = small.replace("--arg n=65536 --arg in=n*32", "--arg n=4194304 --arg in=n*32")
    uri = await lsp.open_doc(client, small)
    t1 = (await lenses(client, uri))[0].command.title
    lsp.replace_all(client, uri, big, version=2)
    await lsp.until(lambda: lsp.published(client, uri, 2))
    t2 = (await lenses(client, uri))[0].command.title
    assert t1 != t2 and "memory-bound" in t2, (t1, t2)
