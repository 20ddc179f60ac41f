"""The server stays up and answers every request: edit storms with garbage, a 5 MB file, junk commands.

(Wrong-typed settings: test_settings.py; a kernel that crashes the OpenCL runtime: test_commands.py.)
"""

from __future__ import annotations

import asyncio
import random

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

GARBAGE = "\x00\x01\x7f\ufffd\u200b{}()[];#/*\"'\\\n\t__kernel void ( __global *"


def _pos(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    return types.Position(line=line, character=offset - (before.rfind("\n") + 1))


def _random_edit(rng: random.Random, text: str) -> tuple[str, types.TextDocumentContentChangePartial]:
    a = rng.randrange(len(text) + 1)
    b = min(len(text), a + rng.choice([0, 0, 1, 3, 20]))
    insert = "".join(rng.choice(GARBAGE) for _ in range(rng.choice([0, 1, 2, 8])))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=_pos(text, a), end=_pos(text, b)), text=insert
    )
    return text[:a] + insert + text[b:], change


async def _all_views(client: LanguageClient, uri: str, line: int) -> list[object]:
    doc = types.TextDocumentIdentifier(uri=uri)
    pos = types.Position(line=line, character=5)
    rng = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=line + 5, character=0)
    )
    return list(
        await asyncio.gather(
            client.text_document_hover_async(types.HoverParams(text_document=doc, position=pos)),
            client.text_document_code_lens_async(types.CodeLensParams(text_document=doc)),
            client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc, range=rng)),
            client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=doc, range=rng, context=types.CodeActionContext(diagnostics=[])
                )
            ),
        )
    )


@pytest.mark.e2e
@pytest.mark.slow
async def test_edit_storm_with_garbage(client: LanguageClient, lsp) -> None:
    rng = random.Random(6)
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    pending = []
    version = 1
    for step in range(300):
        version += 1
        text, change = _random_edit(rng, text)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        if step % 25 == 0:
            client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=lsp.doc_id(uri)))
        if step % 10 == 0:
            pending.append(
                asyncio.ensure_future(_all_views(client, uri, rng.randrange(text.count("\n") + 1)))
            )
    # pure garbage bytes (as a client decodes them), including non-BMP characters and lone surrogates escaped
    junk = bytes(rng.randrange(256) for _ in range(4000)).decode("latin-1") + "\U0001f600" * 10
    version += 1
    lsp.replace_all(client, uri, junk, version=version)
    pending.append(asyncio.ensure_future(_all_views(client, uri, 3)))
    answers = await asyncio.wait_for(asyncio.gather(*pending), 120)
    assert len(answers) == len(pending)  # every request answered (an error response would raise here)
    # and the server is still fully functional on a good file afterwards
    version += 1
    lsp.replace_all(client, uri, lsp.fixture_text("kernels.cl"), version=version)
    await lsp.until(lambda: lsp.published(client, uri, version), what="diagnostics after the storm")
    assert any(d.code == "uncoalesced-access" for d in client.diagnostics[uri])
    hover, lenses, _, _ = await _all_views(client, uri, 3)
    assert lenses and lenses[0].command.title.startswith("≈")


@pytest.mark.e2e
@pytest.mark.slow
async def test_five_megabyte_file(client: LanguageClient, lsp) -> None:
    unit = lsp.fixture_text("kernels.cl")
    text = (unit * (5_000_000 // len(unit) + 1))[:5_000_000]
    uri = await lsp.open_doc(client, text, name="huge.cl")
    diags = client.diagnostics[uri]
    assert len(diags) == 1 and diags[0].severity == types.DiagnosticSeverity.Information
    assert "does not analyse files over" in diags[0].message
    answers = await asyncio.wait_for(_all_views(client, uri, 100), 30)
    assert answers[1] == [] or list(answers[1]) == []  # no lenses for a file this size, but an answer
    # a small edit + save on the huge document is still handled
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                    ),
                    text="// edited\n",
                )
            ],
        )
    )
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=lsp.doc_id(uri)))
    await lsp.until(lambda: lsp.published(client, uri, 2), what="diagnostics of the edited huge file")
    small = await lsp.open_doc(client, unit)  # other documents are unaffected
    assert any(d.code == "uncoalesced-access" for d in client.diagnostics[small])


@pytest.mark.e2e
@pytest.mark.slow
async def test_requests_for_unknown_documents_and_junk_commands(client: LanguageClient) -> None:
    doc = types.TextDocumentIdentifier(uri="file:///never/opened.cl")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=types.Position(line=0, character=0))
    )
    assert hover is None
    assert list(await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))) == []
    for args in ([], [None], [17, "x"], [{"uri": 3}], [{"uri": "file:///never/opened.cl", "line": "x"}]):
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="clperf.benchmark", arguments=args)
        )
        assert "error" in result
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="clperf.selectDevice", arguments=[{"not": "a string"}])
    )
    assert isinstance(result, list)  # treated as "no argument": the list of choices
