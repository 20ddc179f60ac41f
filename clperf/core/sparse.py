"""Random sparse matrices and graphs for structured fills, and their CSR, ELLPACK and JDS layouts.

A matrix has ``rows`` rows, ``cols`` columns and exactly ``rows * per_row`` non-zeros. ``spread`` shapes
its row lengths: 0 gives every row ``per_row``; above 0 the lengths follow a lognormal of that sigma
(1 gives a long tail, a few rows ten times the mean), drawn as a multinomial so the total stays exact and
capped at ``cols``. The row lengths depend only on the matrix's name and parameters, never on the run's
seed, so every quantity a scenario can name (``m.nnz``, ``m.width``) is known before anything runs; the
seed picks the columns and the values.

Columns of a row are distinct and sorted: row ``r`` of length ``L`` takes one column at random from each
of ``L`` equal slices of ``0..cols-1``. ELLPACK is column-major (entry ``k`` of row ``r`` at
``k * rows + r``), padded with column 0 and value 0, so a kernel reading the padding stays in bounds.
JDS sorts rows by decreasing length (stable): ``jds_perm[i]`` is the row at sorted position ``i``,
diagonal ``d`` holds entry ``d`` of every row longer than ``d``, from ``jds_ptr[d]`` to ``jds_ptr[d+1]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

INDEX_VIEWS = {"rowptr", "colidx", "rowidx", "rowlen", "ell_colidx", "jds_perm", "jds_ptr", "jds_rowlen",
               "jds_colidx", "frontier", "mask", "levels"}
VALUE_VIEWS = {"values", "ell_values", "jds_values"}
GRAPH_VIEWS = {"frontier", "mask", "levels"}
VIEWS = INDEX_VIEWS | VALUE_VIEWS


def name_seed(name: str, base_seed: int) -> int:
    """A seed per name (parameter, field, matrix) that does not depend on Python's hash randomisation."""
    h = base_seed & 0xFFFFFFFF
    for ch in name.encode():
        h = (h * 1000003 ^ ch) & 0xFFFFFFFFFFFF
    return h


@dataclass(frozen=True)
class Shape:
    """What a matrix is before its columns and values are drawn."""

    name: str
    rows: int
    cols: int
    per_row: int
    spread: float

    @property
    def nnz(self) -> int:
        return self.rows * self.per_row


@lru_cache(maxsize=8)
def row_lengths(shape: Shape) -> np.ndarray:
    """Each row's number of non-zeros (int64, summing to ``shape.nnz``, each at most ``shape.cols``)."""
    if shape.spread <= 0 or shape.rows == 1:
        out = np.full(shape.rows, shape.per_row, np.int64)
    else:
        rng = np.random.default_rng(name_seed(f"shape:{shape.name}", 0x5EED))
        weights = rng.lognormal(0.0, shape.spread, shape.rows)
        out = rng.multinomial(shape.nnz, weights / weights.sum()).astype(np.int64)
        over = int(np.maximum(out - shape.cols, 0).sum())
        while over:  # rows past ``cols`` give their excess to rows with room, in proportion to the room
            np.minimum(out, shape.cols, out=out)
            room = (shape.cols - out).astype(np.float64)
            out += rng.multinomial(over, room / room.sum())
            over = int(np.maximum(out - shape.cols, 0).sum())
    out.setflags(write=False)
    return out


def width(shape: Shape) -> int:
    """The longest row: ELLPACK's width, JDS's number of diagonals."""
    return shape.per_row if shape.spread <= 0 or shape.rows == 1 else int(row_lengths(shape).max())


@dataclass(frozen=True)
class Matrix:
    """One drawn matrix in CSR form (int64 indices, float64 values)."""

    shape: Shape
    rowptr: np.ndarray
    colidx: np.ndarray
    values: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.rowptr)

    def rowidx(self) -> np.ndarray:
        return np.repeat(np.arange(self.shape.rows, dtype=np.int64), self.lengths)


@lru_cache(maxsize=2)
def matrix(shape: Shape, seed: int) -> Matrix:
    """The matrix of ``shape`` for ``seed`` (cached: the views of one matrix are asked for in turn)."""
    lengths = row_lengths(shape)
    rowptr = np.zeros(shape.rows + 1, np.int64)
    np.cumsum(lengths, out=rowptr[1:])
    rng = np.random.default_rng(seed)
    row = np.repeat(np.arange(shape.rows, dtype=np.int64), lengths)
    pos = np.arange(shape.nnz, dtype=np.int64)
    pos -= rowptr[row]  # each entry's place in its row; in place: these arrays are nnz long
    length = lengths[row] if shape.spread > 0 else shape.per_row
    lo = pos * shape.cols
    lo //= length
    pos += 1
    pos *= shape.cols
    pos //= length
    pos -= lo  # the slice's width, at least 1
    draw = rng.random(shape.nnz)
    draw *= pos
    lo += draw.astype(np.int64)
    cols = lo
    values = rng.random(shape.nnz)
    for a in (rowptr, cols, values):
        a.setflags(write=False)
    return Matrix(shape, rowptr, cols, values)


def ell(m: Matrix, what: str) -> np.ndarray:
    """ELLPACK's ``colidx`` or ``values`` (``rows * width`` entries, column-major, padded with 0)."""
    w = width(m.shape)
    row = m.rowidx()
    pos = np.arange(m.shape.nnz, dtype=np.int64) - m.rowptr[row]
    src = m.colidx if what == "colidx" else m.values
    out = np.zeros(m.shape.rows * w, src.dtype)
    out[pos * m.shape.rows + row] = src
    return out


def jds(m: Matrix, what: str) -> np.ndarray:
    """A JDS array: ``perm``, ``rowlen`` (sorted), ``ptr`` (width + 1 offsets), ``colidx`` or ``values``."""
    lengths = m.lengths
    order = np.argsort(-lengths, kind="stable")
    if what == "perm":
        return order
    if what == "rowlen":
        return lengths[order]
    per_diagonal = np.bincount(lengths, minlength=width(m.shape) + 1)[::-1].cumsum()[::-1][1:]
    ptr = np.zeros(width(m.shape) + 1, np.int64)
    np.cumsum(per_diagonal, out=ptr[1:])  # rows longer than d, for each diagonal d
    if what == "ptr":
        return ptr
    rank = np.empty(m.shape.rows, np.int64)
    rank[order] = np.arange(m.shape.rows)
    row = m.rowidx()
    pos = np.arange(m.shape.nnz, dtype=np.int64) - m.rowptr[row]
    src = m.colidx if what == "colidx" else m.values
    out = np.empty(m.shape.nnz, src.dtype)
    out[ptr[pos] + rank[row]] = src
    return out


def frontier(nodes: int, size: int, seed: int) -> np.ndarray:
    """``size`` distinct nodes, sorted: the frontier a BFS step starts from."""
    rng = np.random.default_rng(name_seed("frontier", seed))
    return np.sort(rng.choice(nodes, size, replace=False)).astype(np.int64)


def view(m: Matrix, name: str, frontier_size: int, seed: int) -> np.ndarray:
    """One named view of a drawn matrix or graph (see the module docstring and docs/scenarios.md)."""
    plain = {"rowptr": lambda: m.rowptr, "colidx": lambda: m.colidx, "values": lambda: m.values,
             "rowidx": m.rowidx, "rowlen": lambda: m.lengths}
    if name in plain:
        return plain[name]()
    if name.startswith("ell_"):
        return ell(m, name[4:])
    if name.startswith("jds_"):
        return jds(m, name[4:])
    nodes = frontier(m.shape.rows, frontier_size, seed)
    if name == "frontier":
        return nodes
    out = np.zeros(m.shape.rows, np.int64) if name == "mask" else np.full(m.shape.rows, -1, np.int64)
    out[nodes] = 1 if name == "mask" else 0
    return out


def view_length(shape: Shape, name: str, frontier_size: int) -> int:
    """Elements in a view, known without drawing the matrix."""
    if name == "rowptr":
        return shape.rows + 1
    if name in ("colidx", "values", "rowidx", "jds_colidx", "jds_values"):
        return shape.nnz
    if name in ("ell_colidx", "ell_values"):
        return shape.rows * width(shape)
    if name == "jds_ptr":
        return width(shape) + 1
    if name == "frontier":
        return frontier_size
    return shape.rows  # rowlen, jds_perm, jds_rowlen, mask, levels


def view_bound(shape: Shape, name: str) -> int | None:
    """One past the largest value of an index view (what a buffer it indexes must hold), None for values."""
    return {"rowptr": shape.nnz + 1, "colidx": shape.cols, "ell_colidx": shape.cols, "jds_colidx": shape.cols,
            "rowidx": shape.rows, "jds_perm": shape.rows, "frontier": shape.rows, "jds_ptr": shape.nnz + 1,
            "rowlen": shape.cols + 1, "jds_rowlen": shape.cols + 1, "mask": 2, "levels": 1}.get(name)
