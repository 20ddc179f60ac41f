"""What the features produce: plain frozen records, never lsprotocol types (``convert`` does that).

Lines and columns are 1-based like every predictor record; ``end_column`` is exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def at(cls, line: int, column: int = 1, length: int = 0) -> Span:
        return cls(line, column, line, column + length)

    def contains(self, line: int, column: int) -> bool:
        if line < self.line or line > self.end_line:
            return False
        if line == self.line and column < self.column:
            return False
        return not (line == self.end_line and column > self.end_column)


@dataclass(frozen=True)
class Problem:
    """A diagnostic: a compile error, a finding, or a scenario that cannot be used."""

    span: Span
    severity: Severity
    message: str
    code: str | None = None
    doc_url: str | None = None
    data: dict[str, Any] | None = None
    source: str = "clperf"  # "clang" for compile errors


@dataclass(frozen=True)
class Lens:
    line: int
    title: str
    command: str = ""  # "" shows the title as plain text
    arguments: tuple[Any, ...] = ()
    tooltip: str | None = None  # the full text where the title is short (editors show it on hover)


@dataclass(frozen=True)
class Hint:
    line: int
    column: int
    label: str
    tooltip: str | None = None
    kind: Literal["type", "parameter"] = "type"
    padding_left: bool = False
    padding_right: bool = False


@dataclass(frozen=True)
class HoverText:
    """A hover in plain text: a heading (``name``, shown in bold where the client takes Markdown, then
    ``rest``), summary lines under it, and rows of label and value (the detail, a second section).
    ``hover.render`` writes it for the client."""

    span: Span
    name: str
    rest: str = ""
    rows: tuple[tuple[str, str], ...] = ()
    summary: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Action:
    title: str
    kind: Literal["quickfix", "refactor.rewrite"]
    edits: tuple[Edit, ...]
    diagnostics: tuple[Problem, ...] = field(default_factory=tuple)
    preferred: bool = False
    disabled: str | None = None  # why the action cannot be applied (shown greyed out)
