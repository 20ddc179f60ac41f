"""The fill language of scenarios: how a buffer (or one field of a struct buffer) is filled.

``--fill NAME=FILL`` where ``NAME`` is a buffer parameter, ``PARAM.FIELD`` (a member of a struct buffer,
``PARAM.A.B`` for nested ones) or a new name that a matrix or graph definition gives a name to. Fills:

* ``random`` (default), ``zeros``, ``ones``; ``range:LO:HI`` (integers in ``[LO, HI)``);
* ``arange:START:STEP[:PERIOD]``: ``START + STEP * (i % PERIOD)`` for the ``i``-th value;
* ``sorted:LO:HI``: random values in ``[LO, HI)`` in ascending order (sorted keys);
* ``perm[:N]``: a random permutation of ``0..N-1`` (N: the buffer's length; longer buffers repeat it);
* ``hist:BINS[:SKEW]``: bin indices in ``[0, BINS)``, bin ``k`` drawn in proportion to ``1/(k+1)**SKEW``;
* ``file:PATH``: a NumPy ``.npy`` file, relative to the kernel file (see ``clperf.core.datafiles``);
* ``NAME=csr:ROWS:COLS:NNZ_PER_ROW[:SPREAD]`` and ``NAME=graph:NODES:DEGREE[:SPREAD[:FRONTIER]]`` name
  one random sparse matrix or graph (``clperf.core.sparse``); buffers take its views, ``m.rowptr``, and
  expressions its sizes, ``m.nnz``.

Every number may be an expression of ``--arg`` values. A fill as written (``FillText``) is checked when
the scenario is read; ``resolve`` turns it into numbers (``Fill``), whose ``text`` is what a resolved
``Scenario`` stores and what the benchmark worker reads back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from clperf.core.errors import ScenarioError
from clperf.core.sparse import GRAPH_VIEWS, VIEWS, Shape, view_length, width

# kind -> (fewest, most) numbers after the kind
SIMPLE: dict[str, tuple[int, int]] = {"random": (0, 0), "zeros": (0, 0), "ones": (0, 0), "range": (2, 2),
                                      "arange": (2, 3), "sorted": (2, 2), "perm": (0, 1), "hist": (1, 2)}
STRUCTURES: dict[str, tuple[int, int]] = {"csr": (3, 4), "graph": (2, 4)}
PROPERTIES = {"rows", "cols", "nnz", "width", "nodes", "edges", "frontier"}
MAX_ELEMENTS = 2**31 - 1  # indices of every view fit an int
MAX_SHAPE_ROWS = 2**25  # row lengths are drawn when a scenario is read (server too): 256 MiB of weights
MAX_BINS = 2**24
MAX_SKEW = 16.0
USAGE = ("random, zeros, ones, range:LO:HI, arange:START:STEP[:PERIOD], sorted:LO:HI, perm[:N], "
         "hist:BINS[:SKEW], file:PATH, a matrix's view M.VIEW, or csr:ROWS:COLS:NNZ_PER_ROW[:SPREAD] / "
         "graph:NODES:DEGREE[:SPREAD[:FRONTIER]] under a name of its own")
_VIEW = re.compile(r"^([A-Za-z_]\w*)\.([A-Za-z_]\w*)$")

Number = int | float


@dataclass(frozen=True)
class FillText:
    """A fill as written: its kind and the expressions (or the path, or the matrix and view) after it."""

    kind: str  # a SIMPLE or STRUCTURES kind, "file" or "view"
    parts: tuple[str, ...] = ()

    @property
    def defines_structure(self) -> bool:
        return self.kind in STRUCTURES


def parse_fill(name: str, text: str) -> FillText:
    """Check a fill's syntax (not its numbers). ScenarioError says what is allowed."""
    text = text.strip()
    if text.startswith("file:"):
        path = text[5:].strip()
        if not path:
            raise ScenarioError(f"--fill {name}: file: needs a path (file:data/x.npy)")
        return FillText("file", (path,))
    if m := _VIEW.match(text):
        if m.group(2) not in VIEWS:
            raise ScenarioError(f"--fill {name}: {m.group(2)!r} is not a view of a matrix; views: "
                                + ", ".join(sorted(VIEWS)))
        return FillText("view", (m.group(1), m.group(2)))
    kind, *parts = [p.strip() for p in text.split(":")]
    bounds = SIMPLE.get(kind) or STRUCTURES.get(kind)
    if bounds is None:
        raise ScenarioError(f"--fill {name}: unknown fill {text!r}; use {USAGE}")
    lo, hi = bounds
    if not lo <= len(parts) <= hi or not all(parts):
        shape = {"range": "range:LO:HI", "arange": "arange:START:STEP[:PERIOD]", "sorted": "sorted:LO:HI",
                 "perm": "perm[:N]", "hist": "hist:BINS[:SKEW]", "csr": "csr:ROWS:COLS:NNZ_PER_ROW[:SPREAD]",
                 "graph": "graph:NODES:DEGREE[:SPREAD[:FRONTIER]]"}.get(kind, kind)
        if hi == 0:
            raise ScenarioError(f"--fill {name}: {kind} takes no bounds, got {text!r}")
        raise ScenarioError(f"--fill {name}: {kind} is written {shape}, got {text!r}")
    return FillText(kind, tuple(parts))


@dataclass(frozen=True)
class Structure:
    """A named random matrix or graph, resolved to numbers."""

    name: str
    kind: str  # "csr" | "graph"
    rows: int
    cols: int
    per_row: int
    spread: float = 0.0
    frontier: int = 1  # graphs only: nodes in the frontier

    @property
    def shape(self) -> Shape:
        return Shape(self.name, self.rows, self.cols, self.per_row, float(self.spread))

    @property
    def text(self) -> str:
        if self.kind == "graph":
            return f"graph:{self.rows}:{self.per_row}:{_num(self.spread)}:{self.frontier}"
        return f"csr:{self.rows}:{self.cols}:{self.per_row}:{_num(self.spread)}"

    def prop(self, what: str) -> int:
        """``m.rows``, ``m.nnz``, ... as an expression reads them."""
        values = {"rows": self.rows, "cols": self.cols, "nnz": self.shape.nnz, "nodes": self.rows,
                  "edges": self.shape.nnz}
        if what in values:
            return values[what]
        if what == "width":
            return width(self.shape)
        if what == "frontier" and self.kind == "graph":
            return self.frontier
        raise ScenarioError(f"{self.name}.{what}: a {self.kind} has "
                            + ", ".join(sorted(p for p in PROPERTIES if self.kind == "graph"
                                               or p not in ("nodes", "edges", "frontier"))))

    def view_length(self, view: str) -> int:
        if view in GRAPH_VIEWS and self.kind != "graph":
            raise ScenarioError(f"{self.name}.{view}: only a graph has a frontier (graph:NODES:DEGREE:...)")
        n = view_length(self.shape, view, self.frontier)
        if n > MAX_ELEMENTS:  # ELLPACK of a skewed matrix: rows x its longest row
            raise ScenarioError(f"{self.name}.{view} would hold {n} values ({self.rows} rows x width "
                                f"{width(self.shape)}), more than {MAX_ELEMENTS}; use a smaller SPREAD")
        return n


@dataclass(frozen=True)
class Fill:
    """A fill resolved to numbers: what the data generator reads."""

    kind: str
    args: tuple[Number, ...] = ()
    path: str = ""  # file
    structure: Structure | None = None  # view
    view: str = ""

    @property
    def text(self) -> str:
        if self.kind == "file":
            return f"file:{self.path}"
        if self.kind == "view":
            assert self.structure is not None
            return f"{self.structure.name}.{self.view}"
        return ":".join([self.kind, *(_num(a) for a in self.args)])

    @property
    def key(self) -> tuple[object, ...]:
        """Identity of the data (a view names its matrix's definition too), for caches."""
        return (self.kind, self.args, self.path, self.structure.text if self.structure else "", self.view)


RANDOM = Fill("random")


def _num(v: Number) -> str:
    return str(int(v)) if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 2**53) \
        else repr(float(v))


def _count(name: str, what: str, v: Number, low: int = 1, high: int = MAX_ELEMENTS) -> int:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or not low <= v <= high:
        raise ScenarioError(f"--fill {name}: {what} must be an integer from {low} to {high}, got {v!r}")
    return v


def structure(name: str, ft: FillText, ev: Callable[[str], Number]) -> Structure:
    """A ``csr:`` or ``graph:`` definition with its expressions evaluated and its sizes checked."""
    nums = [ev(p) for p in ft.parts]
    if ft.kind == "graph":
        nodes = _count(name, "NODES", nums[0])
        rows, cols, per_row = nodes, nodes, _count(name, "DEGREE", nums[1], 1, nodes)
        spread = nums[2] if len(nums) > 2 else 0.0
        front = _count(name, "FRONTIER", nums[3], 1, nodes) if len(nums) > 3 else 1
    else:
        rows, cols = _count(name, "ROWS", nums[0]), _count(name, "COLS", nums[1])
        per_row = _count(name, "NNZ_PER_ROW", nums[2], 1, cols)
        spread, front = (nums[3] if len(nums) > 3 else 0.0), 1
    if not 0 <= spread <= 4:
        raise ScenarioError(f"--fill {name}: SPREAD goes from 0 (equal rows) to 4, got {spread!r}")
    if rows * per_row > MAX_ELEMENTS:
        raise ScenarioError(f"--fill {name}: {rows} x {per_row} non-zeros is more than {MAX_ELEMENTS}")
    if spread and rows > MAX_SHAPE_ROWS:
        raise ScenarioError(f"--fill {name}: a SPREAD over {MAX_SHAPE_ROWS} rows is not drawn; use SPREAD 0")
    return Structure(name, ft.kind, rows, cols, per_row, spread, front)


def simple(name: str, ft: FillText, ev: Callable[[str], Number]) -> Fill:
    """A simple fill with its expressions evaluated and checked."""
    nums = tuple(ev(p) for p in ft.parts)
    if ft.kind in ("range", "sorted") and nums[0] >= nums[1]:
        raise ScenarioError(f"--fill {name}: empty range {ft.kind}:{_num(nums[0])}:{_num(nums[1])}")
    if ft.kind == "arange" and len(nums) == 3:
        nums = (*nums[:2], _count(name, "PERIOD", nums[2]))
    if ft.kind == "perm" and nums:
        nums = (_count(name, "N", nums[0]),)
    if ft.kind == "hist":
        bins = _count(name, "BINS", nums[0], 1, MAX_BINS)
        skew = float(nums[1]) if len(nums) > 1 else 0.0
        if not 0 <= skew <= MAX_SKEW:
            raise ScenarioError(f"--fill {name}: SKEW goes from 0 (uniform) to {MAX_SKEW:g}, got {skew!r}")
        nums = (bins, skew)
    return Fill(ft.kind, nums)


def read_fills(texts: dict[str, str]) -> tuple[dict[str, Fill], dict[str, Structure]]:
    """A resolved scenario's fills read back: per buffer (or ``buffer.field``), and the structures."""
    parsed = {n: parse_fill(n, t) for n, t in texts.items()}

    def number(expr: str) -> Number:
        try:
            return int(expr)
        except ValueError:
            try:
                return float(expr)
            except ValueError as e:
                raise ScenarioError(f"a resolved fill holds numbers only, got {expr!r}") from e

    structures = {n: structure(n, ft, number) for n, ft in parsed.items() if ft.defines_structure}
    fills: dict[str, Fill] = {}
    for n, ft in parsed.items():
        if ft.defines_structure:
            continue
        if ft.kind == "view":
            found = structures.get(ft.parts[0])
            if found is None:
                raise ScenarioError(f"--fill {n}: no matrix or graph named {ft.parts[0]!r}")
            fills[n] = Fill("view", structure=found, view=ft.parts[1])
        elif ft.kind == "file":
            fills[n] = Fill("file", path=ft.parts[0])
        else:
            fills[n] = simple(n, ft, number)
    return fills, structures
