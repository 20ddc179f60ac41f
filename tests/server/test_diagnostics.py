"""textDocument/publishDiagnostics: compile errors, findings with rule links and fix data, always published,
late results dropped, rapid saves coalesced."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

FIXED = """__kernel void broken(__global float *a)
{
    int i = get_global_id(0);
    a[i] = a[i] * 2.0f;
}
"""


@pytest.mark.e2e
@pytest.mark.slow
async def test_compile_error_then_fixed_clears(client: LanguageClient, lsp) -> None:
    uri = await lsp.open_doc(client, lsp.fixture_text("broken.cl"))
    diags = client.diagnostics[uri]
    errors = [d for d in diags if d.severity == types.DiagnosticSeverity.Error]
    assert errors and errors[0].source == "clang", diags
    assert errors[0].range.start.line == 3  # 0-based: line 4 of the file
    assert "undefined_name" in errors[0].message
    lsp.replace_all(client, uri, FIXED, version=2)
    await lsp.until(lambda: lsp.published(client, uri, 2), what="diagnostics of v2")
    assert list(client.diagnostics[uri]) == []  # published, and empty: the stale error is gone


@pytest.mark.e2e
@pytest.mark.slow
async def test_findings_carry_code_link_and_data(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    by_code = {d.code: d for d in client.diagnostics[uri]}
    stride = by_code["uncoalesced-access"]
    assert stride.severity in (types.DiagnosticSeverity.Warning, types.DiagnosticSeverity.Information)
    assert stride.range.start.line == lsp.line_of(text, "in[i * 32]")
    assert stride.data["stride"] == 32 and stride.data["kernel"] == "strided"
    unroll = by_code["unroll-candidate"]
    assert unroll.data["trip_count"] == 8
    assert unroll.severity == types.DiagnosticSeverity.Information  # listed in VS Code's Problems panel
    page = lsp.data.parents[2] / "docs" / "rules" / "uncoalesced-access.md"
    if page.exists():
        assert stride.code_description.href == page.as_uri()


@pytest.mark.e2e
@pytest.mark.slow
async def test_a_finding_underlines_its_whole_expression_in_plain_text(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    lines = text.split("\n")

    def underlined(d: types.Diagnostic) -> str:
        assert d.range.start.line == d.range.end.line, d.range
        return lines[d.range.start.line][d.range.start.character:d.range.end.character]

    by_code = {d.code: d for d in client.diagnostics[uri]}
    assert underlined(by_code["uncoalesced-access"]) == "in[i * 32]"  # the access, not its first letter
    assert underlined(by_code["unroll-candidate"]) == "for (int k = 0; k < 8; k++)"  # the loop header
    assert underlined(by_code["local-cache-candidate"]) == "x[i + k]"
    for d in client.diagnostics[uri]:  # a diagnostic is shown as it is: no Markdown quoting
        assert "`" not in d.message and "**" not in d.message, d.message
    assert "'in' is read with a stride of 32 elements" in by_code["uncoalesced-access"].message


@pytest.mark.e2e
@pytest.mark.slow
async def test_docs_base_url_setting(lsp, bare: LanguageClient) -> None:
    await lsp.start(bare, "neovim", {"docsBaseUrl": "https://example.org/clperf/rules/"})
    uri = await lsp.open_doc(bare, lsp.fixture_text("kernels.cl"))
    hrefs = {d.code: d.code_description.href for d in bare.diagnostics[uri] if d.code_description}
    assert hrefs["uncoalesced-access"] == "https://example.org/clperf/rules/uncoalesced-access.md"


@pytest.mark.e2e
@pytest.mark.slow
async def test_late_result_for_old_version_is_dropped(client: LanguageClient, lsp) -> None:
    uri = await lsp.open_doc(client, lsp.fixture_text("broken.cl"), wait=False)
    # v1's analysis is under way; the document moves on before it finishes (no save yet)
    lsp.replace_all(client, uri, FIXED, version=2, save=False)
    lsp.replace_all(client, uri, FIXED, version=3, save=True)
    await lsp.until(lambda: lsp.published(client, uri, 3), what="diagnostics of v3")
    assert lsp.published(client, uri, 1) == []
    assert list(client.diagnostics[uri]) == []


@pytest.mark.e2e
@pytest.mark.slow
async def test_rapid_saves_are_coalesced(client: LanguageClient, lsp) -> None:
    uri = await lsp.open_doc(client, lsp.fixture_text("kernels.cl"))
    for _ in range(15):
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=lsp.doc_id(uri)))
    await lsp.until(lambda: len(lsp.published(client, uri)) >= 2, what="diagnostics after the saves")
    await client.text_document_hover_async(
        types.HoverParams(text_document=lsp.doc_id(uri), position=types.Position(line=0, character=0))
    )
    import asyncio

    await asyncio.sleep(1.0)  # anything still queued would publish by now
    assert len(lsp.published(client, uri)) <= 3, len(lsp.published(client, uri))


@pytest.mark.e2e
@pytest.mark.slow
async def test_close_clears_diagnostics(client: LanguageClient, lsp) -> None:
    uri = await lsp.open_doc(client, lsp.fixture_text("broken.cl"))
    assert client.diagnostics[uri]
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=lsp.doc_id(uri)))
    await lsp.until(lambda: list(client.diagnostics[uri]) == [], what="empty diagnostics after close")
