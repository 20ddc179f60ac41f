"""textDocument/hover: the estimate's breakdown on a kernel name, the pattern on an access."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient


async def hover(client: LanguageClient, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )


@pytest.mark.e2e
@pytest.mark.slow
async def test_kernel_breakdown(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    line = lsp.line_of(text, "void strided(")
    h = await hover(client, uri, line, text.split("\n")[line].index("strided") + 2)
    md = h.contents.value
    rows = dict(lsp.rows(md))
    head = md.split("\n")
    # the summary: estimate, device, bound and the kernel's top finding, before the detail section
    assert head[0].startswith("**strided** ≈ ") and head[0].rstrip().endswith(" on NVIDIA H200"), md
    assert "-bound · " in head[1] and " cycles · " in head[1], md
    assert head[2].startswith("uncoalesced-access at line 7: 'in' is read with a stride of 32 elements"), md
    assert head[3:6] == ["", "---", ""], md
    assert rows["scenario"].startswith("global 65536, local 64; arguments "), rows
    assert "defaulted" not in rows, rows  # the scenario is fully written
    assert {"traffic", "model", "last measured"} <= set(rows)
    # the shipped learned model answers for the H200 it was trained on; the roofline where there is none
    assert "clperf-perfnet" in rows["model"] or "roofline" in rows["model"], rows["model"]
    assert h.range.start.line == line
    # short enough for a hover window without scrolling
    assert len([x for x in md.split("\n") if x.strip()]) <= 13, md
    # VS Code names its Markdown parser and gets a table; Neovim shows a table's pipes as they are
    if client.spec == "neovim":  # type: ignore[attr-defined]
        assert "|" not in md and "- **model**: " in md, md
    else:
        assert "| model | " in md, md


@pytest.mark.e2e
@pytest.mark.slow
async def test_defaulted_scenario_is_named(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    line = lsp.line_of(text, "void scale(")
    md = (await hover(client, uri, line, text.split("\n")[line].index("scale"))).contents.value
    assert dict(lsp.rows(md))["defaulted"].startswith("global, a, s"), md


@pytest.mark.e2e
@pytest.mark.slow
async def test_access_pattern(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    line = lsp.line_of(text, "in[i * 32]")
    h = await hover(client, uri, line, text.split("\n")[line].index("in[i * 32]") + 1)
    assert "strided" in h.contents.value and "32 elements" in h.contents.value
    assert await hover(client, uri, 0, 3) is None  # a comment: nothing to say


@pytest.mark.e2e
@pytest.mark.slow
async def test_a_loop_the_analysis_cannot_count_is_named_as_a_caution(client: LanguageClient, lsp) -> None:
    text = ("// clperf: --global 4096 --local 64\n"
            "__kernel void spin(__global const int *flag, __global float *out) {\n"
            "    float v = 0.0f;\n"
            "    while (1) { v += 1.0f; if (flag[0] == 7) break; }\n"
            "    out[get_global_id(0)] = v;\n"
            "}\n")
    uri = await lsp.open_doc(client, text)
    md = (await hover(client, uri, 1, text.split("\n")[1].index("spin"))).contents.value
    caution = next(v for k, v in lsp.rows(md) if k == "caution")
    assert "line 4" in caution and "lower bound" in caution, md


@pytest.mark.e2e
@pytest.mark.slow
async def test_with_pocl_code_on_the_estimate_turns_into_pocls_counted_code_by_itself(
        bare: LanguageClient, lsp, tmp_path, pocl) -> None:
    import shutil

    from clperf.core.paths import state_dir

    # the peaks the pocl fixture measured (as `clperf devices` does): none to measure here first
    shutil.copytree(state_dir() / "devices", tmp_path / "state" / "devices")
    await lsp.start(bare, "visual-studio-code", {**lsp.settings, "device": "portable", "poclCode": True,
                                                 "cacheDirectory": str(tmp_path / "state")})
    text = ("// clperf: --global 65536 --local 64 --arg a=65536 --arg b=65536\n"
            "__kernel void twice(__global const float* a, __global float* b) {\n"
            "    int i = get_global_id(0);\n    b[i] = 2.0f * a[i] + 1.0f;\n}\n")
    uri = await lsp.open_doc(bare, text)

    async def model() -> str:
        h = await hover(bare, uri, 1, text.split("\n")[1].index("twice") + 2)
        assert h is not None
        return next(v for k, v in lsp.rows(h.contents.value) if k == "model")

    # no edit, no save: the server analyses the document again while PoCL's code is being costed
    deadline = time.monotonic() + 60
    row = await model()
    while "pocl-code" not in row and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        row = await model()
    assert "pocl-code" in row, row
