"""What the IR analysis finds in one kernel, as frozen records with their JSON shapes.

Counts are per work-item. A loop whose trip count is a kernel argument (``for (r = 0; r < rows; r++)``)
keeps the count as a formula, so a scenario's argument values give exact counts later
(``KernelReport.ops_for``, ``access_counts_for``); without values such a loop counts once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from clperf.core.records import AddressSpace
from clperf.predictor.analysis import poly

Pattern = Literal["contiguous", "strided", "indirect", "uniform", "unknown"]
AccessKind = Literal["load", "store", "atomic"]


@dataclass(frozen=True)
class ParamUse:
    """A kernel parameter (as ``clperf.core.records.Param``) and how the kernel uses it."""

    name: str
    type: str
    address_space: AddressSpace
    pointer: bool
    const: bool
    read: bool
    written: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "address_space": self.address_space,
            "pointer": self.pointer,
            "const": self.const,
            "read": self.read,
            "written": self.written,
        }


@dataclass(frozen=True)
class TripCount:
    """``max(0, ceil(num / (den * den_sym)))`` iterations: ``num`` a polynomial over ``arg:NAME`` symbols
    and launch sizes (``lsz0``, ``gsz0``, ``ngr0``), ``den_sym`` a launch size or empty (``i += lsz``).

    ``bound``: the loop can also leave another way (a ``break``, ``while (x < 4 && it < n)``), so this is
    the most it runs. ``varies``: the count was taken at work-item 0 (``i = get_global_id(0)``).
    ``average``: the bounds are loaded values and the loop walks a buffer; the count is that buffer's
    length over the work-items, what the work-items run on average.
    Evaluate with ``args`` holding kernel arguments by name and launch sizes under ``@lsz0`` and so on
    (``launch_args``)."""

    num: poly.FrozenPoly
    den: int
    den_sym: poly.FrozenPoly = ()
    bound: bool = False
    varies: bool = False
    average: bool = False  # loaded bounds: the buffer it walks shared among the work-items, on average
    # a counter scaled each iteration: (start, multiplier, divisor, icmp predicate that keeps the loop
    # going, bound, compared after the update, compared at the latch); ``num`` and ``den`` are unused
    geometric: tuple[poly.FrozenPoly, int, int, str, poly.FrozenPoly, bool, bool] | None = None
    # the derived symbols (``floor:``, ``pick:``) in ``num`` or the geometric bounds, each after those
    # it uses: (name, operation, operands), as ``Values.derived``
    derived: tuple[tuple[str, str, tuple[poly.FrozenPoly, ...]], ...] = ()

    def value(self, args: Mapping[str, int | float]) -> int | None:
        vals = {(k[1:] if k.startswith("@") else f"arg:{k}"): a for k, a in args.items()}
        for name, op, xs in self.derived:
            v = _derive(op, [poly.evaluate(x, vals) for x in xs])
            if v is None:
                return None
            vals[name] = v
        if self.geometric is not None:
            return _run_geometric(self.geometric, vals)
        v = poly.evaluate(self.num, vals)
        if v is None:
            return None
        den = float(self.den)
        if self.den_sym:
            d = poly.evaluate(self.den_sym, vals)
            if d is None or d <= 0:
                return None
            den *= d
        return max(0, math.ceil(v / den - 1e-9))

    @property
    def constant(self) -> int | None:
        if self.geometric is not None:
            start, bound = self.geometric[0], self.geometric[4]
            known = not poly.symbols(poly.thaw(start)) and not poly.symbols(poly.thaw(bound))
            return _run_geometric(self.geometric, {}) if known else None
        if self.den_sym:
            return None
        c = poly.constant_value(poly.thaw(self.num))
        return None if c is None else max(0, poly.ceil_div(float(c), self.den))

    @property
    def expr(self) -> str:
        if self.geometric is not None:
            start, mul, div, _, bound = self.geometric[:5]
            how = f"x{mul}" if mul > 1 else f"/{div}"
            return f"steps {how} from {poly.format_poly(start)} to {poly.format_poly(bound)}"
        text = poly.format_poly(self.num)
        den = " * ".join(([str(self.den)] if self.den != 1 else []) +
                         [" * ".join(n.removeprefix("arg:") for n in m) for m, _ in self.den_sym])
        if not den:
            return text
        den = f"({den})" if " * " in den else den
        return f"ceil({text} / {den})" if len(self.num) == 1 else f"ceil(({text}) / {den})"


_GEOMETRIC_CAP = 64  # a counter scaled by 2 or more leaves any 64-bit range within 64 steps
# the share of an iteration a work-item stopped at the time limit has done, on average
IN_PROGRESS = 0.5
MIN_SHARE_RUNS = 16.0  # iterations of a loop a stopped counting run must have seen to tell its branches


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _derive(op: str, xs: Sequence[float | None]) -> float | None:
    """A derived symbol's value (``Values.derived``) from its operands' values; None when one is unknown
    or the division is by zero."""
    if any(x is None for x in xs):
        return None
    v = [float(x) for x in xs if x is not None]
    if op == "div":
        return math.trunc(v[0] / v[1]) if v[1] else None
    if op in ("min", "max"):
        return min(v) if op == "min" else max(v)
    if op == "clamp":
        return min(max(v[0], v[1]), v[2])
    if op == "either":  # one of two values, on a condition the analysis cannot evaluate
        return (v[0] + v[1]) / 2
    if op.startswith("select:"):
        pred = op[7:]
        keep = _COMPARE.get(pred[1:] if pred[0] in "su" else pred)
        return None if keep is None else v[2] if keep(v[0], v[1]) else v[3]
    return None


def _run_geometric(g: tuple[Any, ...], vals: Mapping[str, int | float]) -> int | None:
    """Run the counter of a geometric loop; None when it never leaves (or its values are unknown)."""
    start_p, mul, div, pred, bound_p, on_next, at_latch = g
    start, bound = poly.evaluate(start_p, vals), poly.evaluate(bound_p, vals)
    if start is None or bound is None:
        return None
    p = pred[1:] if pred[0] in "su" else pred
    keep = {"lt": lambda x: x < bound, "le": lambda x: x <= bound, "gt": lambda x: x > bound,
            "ge": lambda x: x >= bound, "ne": lambda x: x != bound, "eq": lambda x: x == bound}.get(p)
    if keep is None:
        return None
    s = int(start)
    for n in range(_GEOMETRIC_CAP + 1):
        nxt = s * mul // div
        if at_latch:  # the body has run n + 1 times when the compare is reached
            if not keep(nxt if on_next else s):
                return n + 1
        elif not keep(s):
            return n
        s = nxt
    return None


def launch_args(args: Mapping[str, int | float], global_size: Sequence[int],
                local_size: Sequence[int] | None) -> dict[str, int | float]:
    """Kernel arguments plus the launch sizes trip counts may divide by (``@gsz0``, ``@lsz0``, ``@ngr0``)."""
    out: dict[str, int | float] = dict(args)
    for d, g in enumerate(global_size):
        out[f"@gsz{d}"] = g
        if local_size and d < len(local_size) and local_size[d]:
            out[f"@lsz{d}"] = local_size[d]
            out[f"@ngr{d}"] = -(-g // local_size[d])
    return out


@dataclass(frozen=True)
class LoopInfo:
    line: int  # the for/while/do keyword
    column: int
    depth: int  # 1 for an outermost loop
    trip_count: int | None  # constant trip count
    trip_expr: str | None  # symbolic trip count over kernel argument names ("rows", "n - 1")
    unroll: int | None  # N of `#pragma unroll N` above the loop, 0 for a bare `#pragma unroll`
    parent: int | None = None  # index of the enclosing loop in KernelReport.loops
    trip: TripCount | None = field(default=None, compare=False, repr=False)
    varies: bool = False  # the trip count depends on the work-item or on loaded data
    header: str = field(default="", compare=False)  # the IR block that starts each iteration
    latches: tuple[str, ...] = field(default=(), compare=False)  # the IR blocks that jump back to it
    # iterations per entry as a counting run of the launch measured them (``KernelReport.with_trips``)
    measured: float | None = field(default=None, compare=False)

    def trips_for(self, args: Mapping[str, int | float]) -> float | None:
        if self.measured is not None:
            return self.measured
        if self.trip is None:
            return None
        return self.trip.value(args)

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "depth": self.depth,
            "trip_count": self.trip_count,
            "trip_expr": self.trip_expr,
            "unroll": self.unroll,
            "varies": self.varies,
            **({"measured": self.measured} if self.measured is not None else {}),
        }


@dataclass(frozen=True)
class Access:
    """One load, store or atomic in the kernel, and how neighbouring work-items' addresses relate."""

    param: str | None  # the kernel parameter the address goes through (or a __local array's name)
    kind: AccessKind
    address_space: AddressSpace
    pattern: Pattern  # along work-item dimension 0
    stride: int | None  # elements (of this access's size) between neighbours along dim 0; 0 uniform
    stride_expr: str | None  # symbolic stride ("rows") when it is not a constant
    line: int
    column: int
    in_loop: bool
    element_size: int  # bytes moved by one execution (a float4 load is 16)
    dim1_pattern: Pattern | None = None  # along dimension 1, for kernels that use get_*_id(1)
    dim1_stride: int | None = None
    dim1_stride_expr: str | None = None
    loop_line: int | None = None  # innermost enclosing loop
    loops: tuple[int, ...] = ()  # indices into KernelReport.loops, outermost first
    offset: poly.FrozenPoly = field(default=(), compare=False, repr=False)  # bytes from the base pointer
    wait: str | None = None  # the loop's exit waits for this load: "walk", "chase" or "fixed" (``gating``)
    block: str = field(default="", compare=False)  # the IR block holding it (a counting run counts blocks)

    def to_json(self) -> dict[str, Any]:
        d = {
            "param": self.param,
            "kind": self.kind,
            "address_space": self.address_space,
            "pattern": self.pattern,
            "stride": self.stride,
            "stride_expr": self.stride_expr,
            "line": self.line,
            "column": self.column,
            "in_loop": self.in_loop,
            "element_size": self.element_size,
            "loop_line": self.loop_line,
        }
        if self.wait is not None:
            d["wait"] = self.wait
        if self.dim1_pattern is not None:
            d.update(
                dim1_pattern=self.dim1_pattern,
                dim1_stride=self.dim1_stride,
                dim1_stride_expr=self.dim1_stride_expr,
            )
        return d


@dataclass(frozen=True)
class Ops:
    """Static per-work-item counts. Bytes per address space; flops count an FMA as 2."""

    flops: float = 0
    int_ops: float = 0
    global_load_bytes: float = 0
    global_store_bytes: float = 0
    local_load_bytes: float = 0
    local_store_bytes: float = 0
    constant_load_bytes: float = 0
    atomics: float = 0
    # integer divisions and remainders by a non-constant divisor, also counted in ``int_ops``; the rewrite
    # speedup model weighs them by what the device compiles one to (``profiles.ProfileFacts.int_div_ops``)
    int_divs: float = 0
    # double-precision instructions and special-function results (exp, log, sin, sqrt, pow, divisions...),
    # also counted in ``flops``: the roofline weighs them by the device's costs (``ProfileFacts``)
    fp64_ops: float = 0
    special_ops: float = 0
    # the special functions by what a call compiles to on a GPU (``opcounts.special_class``), and those of
    # them in double precision; the roofline weighs each by the device's measured cost (``math_costs``)
    math_short: float = 0
    math_long: float = 0
    math_pow: float = 0
    math_fp64: float = 0
    # cycles of each block's longest chain of dependent arithmetic, and of all of it
    # (``opcounts.path_cycles``), summed over the blocks a work-item runs: their ratio is how many chains
    # its operations overlap in
    path_cycles: float = 0
    op_cycles: float = 0
    trip_unknown: bool = False  # some loop's trip count was unknown and counted once

    def scaled(self, k: float) -> Ops:
        return Ops(
            **{f.name: getattr(self, f.name) * k for f in fields(self) if f.name != "trip_unknown"},
            trip_unknown=self.trip_unknown,
        )

    def __add__(self, other: Ops) -> Ops:
        return Ops(
            **{
                f.name: getattr(self, f.name) + getattr(other, f.name)
                for f in fields(self)
                if f.name != "trip_unknown"
            },
            trip_unknown=self.trip_unknown or other.trip_unknown,
        )

    def to_json(self) -> dict[str, Any]:
        return {f.name: _num(getattr(self, f.name)) for f in fields(self)}


def _num(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


@dataclass(frozen=True)
class KernelReport:
    name: str
    line: int
    column: int
    params: tuple[ParamUse, ...]
    accesses: tuple[Access, ...]
    loops: tuple[LoopInfo, ...]
    barriers: int
    ops: Ops
    dims: int = 1  # 1 + the highest work-item dimension the kernel asks for
    analyzed: bool = True  # False when clang could not compile the file: only the parse is known
    divergent_barriers: tuple[tuple[int, int, int], ...] = ()  # (line, column, line of the condition)
    staged: tuple[str, ...] = ()  # parameters the kernel already copies into __local memory
    # (loop indices outermost first, ops executed once per iteration of those loops)
    op_groups: tuple[tuple[tuple[int, ...], Ops], ...] = field(default=(), repr=False, compare=False)
    # (IR block, ops of one execution of it), and a counting run's executions per work-item of each block
    # (``with_counts``): then counts come from the blocks, branches and all, not from the loops' trips
    op_blocks: tuple[tuple[str, Ops], ...] = field(default=(), repr=False, compare=False)
    block_runs: Mapping[str, float] | None = field(default=None, repr=False, compare=False)
    # (IR block, its loops outermost first), and the runs so far of each block in a counting run stopped
    # before any work-item finished (``with_shares``; None: a block the run's compiler shaped otherwise): a
    # branch's ops and accesses count the share of the loops' trips that it ran
    block_loops: tuple[tuple[str, tuple[int, ...]], ...] = field(default=(), repr=False, compare=False)
    block_shares: Mapping[str, float | None] | None = field(default=None, repr=False, compare=False)
    required_local: tuple[int, ...] | None = None  # __attribute__((reqd_work_group_size(X, Y, Z)))

    def _weight(self, loops: tuple[int, ...], args: Mapping[str, int | float] | None) -> tuple[float, bool]:
        w, unknown = 1.0, False
        for i in loops:
            lp = self.loops[i]
            n = lp.trips_for(args) if args is not None else lp.trip_count
            if n is None:
                unknown = True
            else:
                w *= n
        return w, unknown

    def ops_for(self, args: Mapping[str, int | float]) -> Ops:
        """Per-work-item counts with loop trip counts evaluated for these argument values.

        A loop whose count cannot be evaluated (it depends on the work-item, on loaded data, or on an
        argument missing from ``args``) counts once, and ``trip_unknown`` is set.
        """
        if self._counted:
            assert self.block_runs is not None
            return sum((ops.scaled(self.block_runs.get(b, 0.0)) for b, ops in self.op_blocks), Ops())
        total = Ops()
        groups: Iterable[tuple[tuple[int, ...], Ops]] = self.op_groups
        if self.block_shares is not None:
            chains, shares = dict(self.block_loops), self._shares(args)
            groups = [(chains.get(b, ()), ops.scaled(shares.get(b, 1.0))) for b, ops in self.op_blocks]
        for loops, ops in groups:
            w, unknown = self._weight(loops, args)
            total = total + ops.scaled(w)
            if unknown:
                total = Ops(
                    **{**{f.name: getattr(total, f.name) for f in fields(total)}, "trip_unknown": True}
                )
        return total

    def trips_from(self, blocks: Mapping[str, float], unmatched: Collection[str] = ()) -> dict[int, float]:
        """Trip counts from a counting run's block counts (IR block -> mean executions per work-item):
        each loop's iterations (its latches' runs: once per iteration whether the loop tests at its top or
        its bottom) per iteration of the loop around it, or per work-item for an outermost loop, so that
        products along a nest give each access's executions per work-item. Loops whose blocks the run did
        not see, or whose header or latches are ``unmatched`` (the run's compiler shaped them otherwise),
        are left out."""
        runs: dict[int, float] = {}
        for i, lp in enumerate(self.loops):
            if lp.header in unmatched or any(b in unmatched for b in lp.latches):
                continue
            if lp.latches and all(b in blocks for b in lp.latches):
                runs[i] = sum(blocks[b] for b in lp.latches)
        out: dict[int, float] = {}
        for i, n in runs.items():
            parent = self.loops[i].parent
            if parent is None:
                out[i] = n
            elif parent in runs and runs[parent] > 0:
                out[i] = n / runs[parent]
        return out

    def inner_trips_from(self, runs: Mapping[str, float],
                         unmatched: Collection[str] = ()) -> dict[int, float]:
        """Trip counts from the block counts of work-items stopped before they finished (a counting run
        whose first group, held at its barriers, outlasted the budget): a nested loop's iterations per
        iteration of the loop around it, that loop's iteration in progress counted as half done (its
        header ran, its latch not yet), and only for loops whose count the static analysis cannot tell
        or took at work-item 0. Outermost loops, whose runs so far say nothing of the whole, keep their
        static counts."""
        out: dict[int, float] = {}
        for i, lp in enumerate(self.loops):
            if lp.parent is None or (lp.trip is not None and not lp.varies):
                continue
            parent = self.loops[lp.parent]
            lost = {lp.header, parent.header, *lp.latches, *parent.latches} & set(unmatched)
            if lost or not lp.latches or not all(b in runs for b in (*lp.latches, *parent.latches)):
                continue
            done = sum(runs[b] for b in parent.latches)
            begun = done + IN_PROGRESS * max(0.0, runs.get(parent.header, 0.0) - done)
            if begun > 0:
                out[i] = sum(runs[b] for b in lp.latches) / begun
        return out

    def with_shares(self, runs: Mapping[str, float], unmatched: Collection[str] = ()) -> KernelReport:
        """This kernel with the branches' shares of a counting run whose work-items were stopped before they
        finished (``inner_trips_from``'s runs): each block in a loop counts the share of the runs it would
        have had on every trip that it had so far (``_shares``). A rare branch (an overflow's fix-up) then
        counts as rarely as it was taken, not on every trip."""
        return replace(self, block_shares={**runs, **{b: None for b in unmatched}})

    def _shares(self, args: Mapping[str, int | float] | None) -> dict[str, float]:
        """Per block in a loop, of ``block_shares``' stopped run: its runs over its outermost loop header's
        runs times the trips of the loops inside that one it is in (measured, or for ``args``), where that
        header ran at least MIN_SHARE_RUNS times, every such trip count is known and both blocks' runs are;
        at most 1."""
        runs = self.block_shares
        if not runs:
            return {}
        out: dict[str, float] = {}
        for block, chain in self.block_loops:
            if not chain or chain[-1] >= len(self.loops):
                continue
            header = self.loops[chain[0]].header
            seen, ran = runs.get(header, 0.0), runs.get(block, 0.0)
            inner, unknown = self._weight(chain[1:], args)
            if seen is None or ran is None or not header or seen < MIN_SHARE_RUNS or unknown or inner <= 0:
                continue
            out[block] = min(1.0, ran / (seen * inner))
        return out

    def with_trips(self, trips: Mapping[int, float]) -> KernelReport:
        """This kernel with the trip counts of a counting run (``trips_from``): every count derived from
        trips (ops, accesses, the roofline's traffic, the model's features) uses them."""
        loops = tuple(replace(lp, measured=float(trips[i])) if i in trips else lp
                      for i, lp in enumerate(self.loops))
        return replace(self, loops=loops)

    def with_counts(self, blocks: Mapping[str, float], unmatched: Collection[str] = ()) -> KernelReport:
        """This kernel with a counting run's block counts (IR block -> mean executions per work-item;
        blocks that never ran absent): the loops' trip counts (``with_trips``), and every operation and
        access counted as often as its block ran, so that a branch counts as often as it was taken. When
        a block of an operation or access is ``unmatched`` (its count unknown), the operations and
        accesses are counted from the loops' trips instead, measured where the run could tell them."""
        lost = set(unmatched)
        whole = not any(b in lost for b, _ in self.op_blocks) and not any(a.block in lost
                                                                           for a in self.accesses)
        return replace(self.with_trips(self.trips_from(blocks, lost)),
                       block_runs=dict(blocks) if whole else None)

    @property
    def _counted(self) -> bool:
        """Whether counts come from a counting run's blocks: it ran, it counted every block of the
        kernel's operations and accesses, and the analysis named them all."""
        return (self.block_runs is not None and bool(self.op_blocks)
                and all(a.block for a in self.accesses))

    @property
    def trips_measured(self) -> bool:
        """Whether a counting run gave this kernel's trip counts."""
        return any(lp.measured is not None for lp in self.loops)

    def access_counts_for(self, args: Mapping[str, int | float]) -> list[tuple[Access, float]]:
        """Each access with how many times one work-item executes it for these argument values (or, after
        a counting run, as often as its block ran)."""
        if self._counted:
            assert self.block_runs is not None
            return [(a, self.block_runs.get(a.block, 0.0)) for a in self.accesses]
        shares = self._shares(args)
        return [(a, self._weight(a.loops, args)[0] * shares.get(a.block, 1.0)) for a in self.accesses]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "line": self.line,
            "column": self.column,
            "dims": self.dims,
            "analyzed": self.analyzed,
            "params": [p.to_json() for p in self.params],
            "accesses": [a.to_json() for a in self.accesses],
            "loops": [lp.to_json() for lp in self.loops],
            "barriers": self.barriers,
            "ops": self.ops.to_json(),
        }
