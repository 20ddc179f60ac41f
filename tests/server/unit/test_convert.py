"""Records to LSP (``clperf.server.convert``): 1-based lines become 0-based, character columns become the
code units of the encoding the client agreed on."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import PositionCodec

from clperf.server import convert
from clperf.server.views import Action, Edit, Hint, HoverText, Lens, Problem, Span

# "é" is one UTF-16 unit and two UTF-8 bytes; "😀" is two UTF-16 units (a surrogate pair) and four bytes
LINES = ["__kernel void k(__global float *a)", "    a[0] = 1.0f; // é😀 done", ""]


def units(encoding: types.PositionEncodingKind) -> convert.Units:
    return convert.Units(LINES, PositionCodec(encoding))


UTF16 = units(types.PositionEncodingKind.Utf16)
UTF8 = units(types.PositionEncodingKind.Utf8)
UTF32 = units(types.PositionEncodingKind.Utf32)
AFTER_EMOJI = LINES[1].index("😀") + 1  # 0-based character column of the space after the emoji


def test_a_column_after_non_ascii_characters_counts_the_clients_code_units() -> None:
    assert UTF16.to_client(1, AFTER_EMOJI) == AFTER_EMOJI + 1  # the emoji takes two UTF-16 units
    assert UTF8.to_client(1, AFTER_EMOJI) == AFTER_EMOJI + 1 + 3  # é two bytes, the emoji four
    assert UTF32.to_client(1, AFTER_EMOJI) == AFTER_EMOJI
    before = LINES[1].index("é")
    assert UTF16.to_client(1, before) == UTF8.to_client(1, before) == before  # ASCII before it


def test_client_columns_come_back_to_the_same_character_column() -> None:
    for codec in (UTF16, UTF8, UTF32):
        for char0 in range(len(LINES[1]) + 1):
            assert codec.from_client(1, codec.to_client(1, char0)) == char0
    # a column between the two halves of a surrogate pair moves to the character after it
    emoji = LINES[1].index("😀")
    assert UTF16.from_client(1, UTF16.to_client(1, emoji) + 1) == emoji + 1


def test_ascii_lines_and_columns_past_the_end_pass_through() -> None:
    assert UTF8.to_client(0, 20) == UTF8.from_client(0, 20) == 20
    end = len(LINES[1])
    assert UTF16.to_client(1, end + 3) == end + 1 + 3  # the line's units, then the overshoot
    assert UTF16.from_client(1, end + 1 + 3) == end + 3
    assert UTF16.to_client(7, 5) == 5  # a line the document does not have


def test_an_inlay_hint_after_an_emoji_lands_after_it_in_utf16() -> None:
    hint = Hint(2, AFTER_EMOJI + 1, "≈62% of memory traffic", padding_left=True)
    lsp = convert.inlay_hint(hint, UTF16)
    assert lsp.position == types.Position(line=1, character=AFTER_EMOJI + 1)
    assert lsp.kind == types.InlayHintKind.Type and lsp.padding_left is True and lsp.padding_right is None
    assert convert.inlay_hint(hint).position.character == AFTER_EMOJI  # no Units: characters as they are


def test_a_finding_becomes_a_diagnostic_and_comes_back_from_a_code_action_request() -> None:
    p = Problem(
        Span(2, 5, 2, 9),
        "information",
        "strided access",
        code="strided-access",
        doc_url="https://example.org/rules/strided-access.md",
        data={"rule": "strided-access"},
    )
    d = convert.diagnostic(p, UTF16)
    assert d.range == types.Range(
        start=types.Position(line=1, character=4), end=types.Position(line=1, character=8)
    )
    assert d.severity == types.DiagnosticSeverity.Information and d.source == "clperf"
    assert d.code_description == types.CodeDescription(href="https://example.org/rules/strided-access.md")
    back = convert.problem(d, UTF16)
    assert back == Problem(
        Span(2, 5, 2, 9),
        "information",
        "strided access",
        code="strided-access",
        data={"rule": "strided-access"},
    )  # the link is not sent back


def test_a_lens_sits_at_the_start_of_its_line_and_a_title_only_lens_has_no_arguments() -> None:
    lens = convert.code_lens(
        Lens(7, "Benchmark", "clperf.benchmark", ({"uri": "file:///k.cl", "kernel": "k"},))
    )
    assert lens.range == types.Range(
        start=types.Position(line=6, character=0), end=types.Position(line=6, character=0)
    )
    assert lens.command == types.Command(
        title="Benchmark", command="clperf.benchmark", arguments=[{"uri": "file:///k.cl", "kernel": "k"}]
    )
    assert convert.code_lens(Lens(1, "≈ 6.54 µs")).command == types.Command(title="≈ 6.54 µs", command="")


def test_a_hover_is_markdown_over_its_span_or_plain_text_for_a_client_without_markdown() -> None:
    h = convert.hover(HoverText(Span(1, 15, 1, 16), "k", " on NVIDIA H200"))
    assert h.contents == types.MarkupContent(kind=types.MarkupKind.Markdown, value="**k** on NVIDIA H200")
    plain = convert.hover(HoverText(Span(1, 15, 1, 16), "k", " on NVIDIA H200"), style="plain")
    assert plain.contents == types.MarkupContent(kind=types.MarkupKind.PlainText, value="k on NVIDIA H200")
    assert h.range == types.Range(
        start=types.Position(line=0, character=14), end=types.Position(line=0, character=15)
    )


def test_a_code_action_carries_its_edit_for_the_document_and_why_it_is_disabled() -> None:
    edit = Edit(Span.at(1, 1), "// clperf: --global 4096\n")
    action = convert.code_action(Action("Add a scenario directive", "quickfix", (edit,)), "file:///k.cl")
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred is None
    assert action.diagnostics is None and action.disabled is None
    assert action.edit == types.WorkspaceEdit(
        changes={
            "file:///k.cl": [
                types.TextEdit(
                    range=types.Range(
                        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                    ),
                    new_text="// clperf: --global 4096\n",
                )
            ]
        }
    )
    disabled = convert.code_action(
        Action("Tile in __local", "refactor.rewrite", (), disabled="not equivalent"), "file:///k.cl"
    )
    assert disabled.kind == types.CodeActionKind.RefactorRewrite
    assert disabled.disabled == types.CodeActionDisabled(reason="not equivalent")
