"""The one place where clperf's plain records become lsprotocol types (and back, for diagnostics a client
returns in a code-action request). Lines: 1-based in records, 0-based in LSP.

Columns: records count characters (code points); LSP counts code units of the encoding the server and the
client agreed on (UTF-16 unless the client offered another), so an emoji before a column is 2 columns in
UTF-16 and 4 in UTF-8. ``Units`` holds a document's lines and that encoding; every function that makes or
reads a position takes one (without it, columns are passed through, right for ASCII lines only).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.workspace import PositionCodec

from clperf.server.hover import Style, render
from clperf.server.views import Action, Edit, Hint, HoverText, Lens, Problem, Span

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
_SEVERITY_BACK = {v: k for k, v in _SEVERITY.items()}


@dataclass(frozen=True)
class Units:
    """A document's lines and the client's position encoding: character columns <-> LSP columns."""

    lines: Sequence[str]
    codec: PositionCodec

    @classmethod
    def of(cls, doc: Any) -> Units:
        """For a pygls ``TextDocument`` and the encoding the server negotiated. Lines split at ``\n`` as the
        records count them (``str.splitlines`` would also split at form feeds and U+2028)."""
        return cls(doc.source.split("\n"), doc.position_codec)

    def to_client(self, line0: int, char0: int) -> int:
        """0-based character column on 0-based ``line0`` -> the client's code units."""
        if not 0 <= line0 < len(self.lines):
            return char0
        text = self.lines[line0]
        if text.isascii():
            return char0
        return self.codec.client_num_units(text[:char0]) + max(0, char0 - len(text))

    def from_client(self, line0: int, units: int) -> int:
        """The client's code units on 0-based ``line0`` -> 0-based character column."""
        if not 0 <= line0 < len(self.lines) or self.lines[line0].isascii():
            return units
        count = 0
        for i, ch in enumerate(self.lines[line0]):
            if count >= units:
                return i
            count += self.codec.client_num_units(ch)
        return len(self.lines[line0]) + max(0, units - count)


def position(line: int, column: int, units: Units | None = None) -> types.Position:
    line0, char0 = max(0, line - 1), max(0, column - 1)
    return types.Position(line=line0, character=units.to_client(line0, char0) if units else char0)


def column(pos: types.Position, units: Units | None = None) -> int:
    """The 1-based character column of a position the client sent."""
    return (units.from_client(pos.line, pos.character) if units else pos.character) + 1


def range_(span: Span, units: Units | None = None) -> types.Range:
    return types.Range(start=position(span.line, span.column, units),
                       end=position(span.end_line, span.end_column, units))


def span(r: types.Range, units: Units | None = None) -> Span:
    return Span(r.start.line + 1, column(r.start, units), r.end.line + 1, column(r.end, units))


def diagnostic(p: Problem, units: Units | None = None) -> types.Diagnostic:
    return types.Diagnostic(
        range=range_(p.span, units),
        message=p.message,
        severity=_SEVERITY[p.severity],
        code=p.code,
        code_description=types.CodeDescription(href=p.doc_url) if p.doc_url else None,
        source=p.source,
        data=p.data,
    )


def diagnostics(problems: Iterable[Problem], units: Units | None = None) -> list[types.Diagnostic]:
    return [diagnostic(p, units) for p in problems]


def problem(d: types.Diagnostic, units: Units | None = None) -> Problem:
    """A diagnostic as the client sends it back in a code-action context."""
    data: Any = d.data if isinstance(d.data, dict) else None
    sev = _SEVERITY_BACK.get(d.severity, "information") if d.severity is not None else "information"
    return Problem(span(d.range, units), sev, d.message,  # type: ignore[arg-type]
                   code=str(d.code) if d.code is not None else None, data=data, source=d.source or "clperf")


def code_lens(lens: Lens) -> types.CodeLens:
    return types.CodeLens(
        range=range_(Span.at(lens.line, 1)),
        command=types.Command(title=lens.title, command=lens.command, tooltip=lens.tooltip,
                              arguments=list(lens.arguments) or None),
    )


def inlay_hint(h: Hint, units: Units | None = None) -> types.InlayHint:
    return types.InlayHint(
        position=position(h.line, h.column, units),
        label=h.label,
        kind=types.InlayHintKind.Type if h.kind == "type" else types.InlayHintKind.Parameter,
        tooltip=h.tooltip,
        padding_left=h.padding_left or None,
        padding_right=h.padding_right or None,
    )


def hover(h: HoverText, units: Units | None = None, style: Style = "table") -> types.Hover:
    """Markdown (a table or a list, ``hover.render``), or plain text for a client that takes no Markdown."""
    kind = types.MarkupKind.PlainText if style == "plain" else types.MarkupKind.Markdown
    return types.Hover(contents=types.MarkupContent(kind=kind, value=render(h, style)),
                       range=range_(h.span, units))


def text_edit(e: Edit, units: Units | None = None) -> types.TextEdit:
    return types.TextEdit(range=range_(e.span, units), new_text=e.new_text)


def code_action(a: Action, uri: str, units: Units | None = None) -> types.CodeAction:
    return types.CodeAction(
        title=a.title,
        kind=types.CodeActionKind.QuickFix if a.kind == "quickfix" else types.CodeActionKind.RefactorRewrite,
        diagnostics=[diagnostic(p, units) for p in a.diagnostics] or None,
        edit=types.WorkspaceEdit(changes={uri: [text_edit(e, units) for e in a.edits]}),
        is_preferred=a.preferred or None,
        disabled=types.CodeActionDisabled(reason=a.disabled) if a.disabled else None,
    )
