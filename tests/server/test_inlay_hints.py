"""textDocument/inlayHint: share of memory traffic at loops, stride at non-contiguous accesses."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient


async def hints(client: LanguageClient, uri: str, last_line: int = 200) -> list[types.InlayHint]:
    return await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=last_line, character=0)
            ),
        )
    )


@pytest.mark.e2e
@pytest.mark.slow
async def test_stride_and_loop_share(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    found = await hints(client, uri)
    labels = {(h.position.line, h.label) for h in found}
    access_line = lsp.line_of(text, "in[i * 32]")
    assert (access_line, "stride 32:") in labels, labels
    stride = next(h for h in found if h.label == "stride 32:")
    assert stride.position.character == text.split("\n")[access_line].index("in[i * 32]")
    loop_line = lsp.line_of(text, "for (int k = 0; k < 8; k++)")
    share = [h.label for h in found if h.position.line == loop_line]
    assert share and re.fullmatch(r"≈\d+% of memory traffic", share[0]), share
    # contiguous accesses stay quiet
    assert not any(h.position.line == lsp.line_of(text, "a[i] = a[i] * s;") for h in found)


@pytest.mark.e2e
@pytest.mark.slow
async def test_range_is_respected(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    assert list(await hints(client, uri, last_line=2)) == []
