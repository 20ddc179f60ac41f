"""Text edits as the rewrites produce them: 1-based lines and columns (characters), end exclusive.

The same shape as the language server's ``Span``/``Edit`` so the server converts them one to one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TextEdit:
    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "new_text": self.new_text}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TextEdit:
        return cls(int(d["line"]), int(d["column"]), int(d["end_line"]), int(d["end_column"]),
                   str(d["new_text"]))


def _offset(starts: list[int], text: str, line: int, column: int) -> int:
    if line > len(starts):
        return len(text)
    return min(starts[line - 1] + column - 1, len(text))


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (in any order)."""
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    spans = sorted(((_offset(starts, text, e.line, e.column), _offset(starts, text, e.end_line, e.end_column),
                     e.new_text) for e in edits), reverse=True)
    last = len(text) + 1
    for a, b, new in spans:
        if b > last:
            raise ValueError("overlapping edits")
        text = text[:a] + new + text[b:]
        last = a
    return text
