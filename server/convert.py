"""The one place where clperf's plain records become lsprotocol types (and back, for diagnostics a client
returns in a code-action request). Lines: 1-based in records, 0-based in LSP."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clperf.server.views import Action, Edit, Hint, HoverText, Lens, Problem, Span
from lsprotocol import types

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
_SEVERITY_BACK = {v: k for k, v in _SEVERITY.items()}


def position(line: int, column: int) -> types.Position:
    return types.Position(line=max(0, line - 1), character=max(0, column - 1))


def range_(span: Span) -> types.Range:
    return types.Range(start=position(span.line, span.column), end=position(span.end_line, span.end_column))


def span(r: types.Range) -> Span:
    return Span(r.start.line + 1, r.start.character + 1, r.end.line + 1, r.end.character + 1)


def diagnostic(p: Problem) -> types.Diagnostic:
    return types.Diagnostic(
        range=range_(p.span),
        message=p.message,
        severity=_SEVERITY[p.severity],
        code=p.code,
        code_description=types.CodeDescription(href=p.doc_url) if p.doc_url else None,
        source=p.source,
        data=p.data,
    )


def diagnostics(problems: Iterable[Problem]) -> list[types.Diagnostic]:
    return [diagnostic(p) for p in problems]


def problem(d: types.Diagnostic) -> Problem:
    """A diagnostic as the client sends it back in a code-action context."""
    data: Any = d.data if isinstance(d.data, dict) else None
    sev = _SEVERITY_BACK.get(d.severity, "information") if d.severity is not None else "information"
    return Problem(span(d.range), sev, d.message,  # type: ignore[arg-type]
                   code=str(d.code) if d.code is not None else None, data=data, source=d.source or "clperf")


def code_lens(lens: Lens) -> types.CodeLens:
    return types.CodeLens(
        range=range_(Span.at(lens.line, 1)),
        command=types.Command(title=lens.title, command=lens.command, arguments=list(lens.arguments) or None),
    )


def inlay_hint(h: Hint) -> types.InlayHint:
    return types.InlayHint(
        position=position(h.line, h.column),
        label=h.label,
        kind=types.InlayHintKind.Type if h.kind == "type" else types.InlayHintKind.Parameter,
        tooltip=h.tooltip,
        padding_left=h.padding_left or None,
        padding_right=h.padding_right or None,
    )


def hover(h: HoverText) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=h.markdown),
                       range=range_(h.span))


def text_edit(e: Edit) -> types.TextEdit:
    return types.TextEdit(range=range_(e.span), new_text=e.new_text)


def code_action(a: Action, uri: str) -> types.CodeAction:
    return types.CodeAction(
        title=a.title,
        kind=types.CodeActionKind.QuickFix if a.kind == "quickfix" else types.CodeActionKind.RefactorRewrite,
        diagnostics=[diagnostic(p) for p in a.diagnostics] or None,
        edit=types.WorkspaceEdit(changes={uri: [text_edit(e) for e in a.edits]}),
        is_preferred=a.preferred or None,
        disabled=types.CodeActionDisabled(reason=a.disabled) if a.disabled else None,
    )
