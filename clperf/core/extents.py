"""Where a finding's expression ends: a line and column from LLVM's debug info name one character (the
start of ``a[i * n + j]``, the ``for`` of a loop, the ``=`` of a store); an editor underlines the whole
slow expression, which the C source says.

``Extents(text).of(line, column)`` -> ``(line, column, end_line, end_column)``, 1-based and ``end_column``
exclusive, from tree-sitter's tree of the text (``frontend.parse_tree``: offsets are characters):

* an array access runs to its closing bracket (``a[i][j]``, ``p[i].x`` included), a call to its ``)``;
* a loop is its header: ``for (...)``, ``while (...)``, the ``do`` keyword;
* a store reported at its ``=`` is the assigned expression left of it;
* anything else is the token at the column (at least one character).
"""

from __future__ import annotations

import tree_sitter as ts

from clperf.core import frontend

Extent = tuple[int, int, int, int]
_GROWS = frozenset({"subscript_expression", "field_expression", "call_expression"})
_HEADERS = frozenset({"for_statement", "while_statement", "do_statement"})


class Extents:
    """One parse of a text, asked for the extent of any number of positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        _, self.tree = frontend.parse_tree(text)
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def _offset(self, line: int, column: int) -> int | None:
        if not 1 <= line <= len(self.starts):
            return None
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        off = start + column - 1
        return off if start <= off < end else None

    def _pos(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:  # the last line start at or before offset
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo] + 1

    def of(self, line: int, column: int) -> Extent:
        off = self._offset(line, column)
        if off is None:
            return line, column, line, column + 1
        node = self.tree.root_node.named_descendant_for_byte_range(off, off)
        start, end = (_extent(node, off) if node is not None else None) or (off, off + 1)
        return (*self._pos(start), *self._pos(max(end, start + 1)))


def _header_end(node: ts.Node) -> int:
    """A loop's header: up to the ``)`` before its body (the ``do`` keyword of a do loop)."""
    if node.type == "do_statement":
        return node.start_byte + 2
    body = node.child_by_field_name("body")
    before = body.prev_sibling if body is not None else None
    return before.end_byte if before is not None else node.end_byte


def _extent(node: ts.Node, off: int) -> tuple[int, int] | None:
    """Start and end offsets of the expression reported at ``off``; ``node``: the deepest node there."""
    if node.type in _HEADERS and node.start_byte == off:
        return off, _header_end(node)
    if node.type == "assignment_expression":  # a store reported at its operator: the assigned place
        left = node.child_by_field_name("left")
        op = node.child_by_field_name("operator")
        if left is not None and op is not None and op.start_byte <= off < op.end_byte:
            node, off = left, left.start_byte
    if node.start_byte != off:  # inside a token or between tokens: that character only
        return None
    while node.parent is not None and node.parent.start_byte == node.start_byte \
            and node.parent.type in _GROWS:
        node = node.parent
    return off, node.end_byte


def extend(text: str, positions: list[tuple[int, int]]) -> list[Extent]:
    """``Extents(text).of`` for each ``(line, column)``: one parse for all of them."""
    ex = Extents(text)
    return [ex.of(line, column) for line, column in positions]
