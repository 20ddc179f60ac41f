"""Loop trip counts: each loop's exit compare on its induction variable, solved for the iteration number.

With the header phi ``i = start + step * it:K`` (``values``), ``i < bound`` keeps the loop going while
``it:K < (bound - start) / step``: a ``TripCount`` over kernel arguments and launch sizes that a
scenario evaluates. A counter scaled each iteration (``s >>= 1``) is run instead, and so is the range of
a binary search (``while (hi > lo + 1)`` with ``lo`` or ``hi`` set to their midpoint), halved each
iteration; a loop between loaded bounds that walks a buffer (CSR rows) runs, on average, its share of
that buffer.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from fractions import Fraction

from clperf.predictor.analysis import poly
from clperf.predictor.analysis.cfg import ControlFlow, Loop
from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.poly import Poly
from clperf.predictor.analysis.records import Access, TripCount
from clperf.predictor.analysis.values import Values, is_launch_symbol, is_work_item_symbol

_SELECT_I1 = re.compile(r"select i1 [^,]+, i1 ([^,]+), i1 ([^,\s]+)")
_SWAP = {
    "slt": "sgt",
    "sgt": "slt",
    "sle": "sge",
    "sge": "sle",
    "ult": "ugt",
    "ugt": "ult",
    "ule": "uge",
    "uge": "ule",
    "eq": "eq",
    "ne": "ne",
}
_INVERT = {
    "slt": "sge",
    "sge": "slt",
    "sle": "sgt",
    "sgt": "sle",
    "ult": "uge",
    "uge": "ult",
    "ule": "ugt",
    "ugt": "ule",
    "eq": "ne",
    "ne": "eq",
}


def _known(name: str, derived: dict[str, tuple[str, tuple[Poly, ...]]]) -> bool:
    """A symbol a scenario gives a value: an argument, a launch size, or one derived from those (C's
    division, min, max, a select)."""
    return name.startswith("arg:") or is_launch_symbol(name) or name in derived


class TripCounts:
    """Trip counts of the loops of one function."""

    def __init__(self, f: FunctionIR, cfg: ControlFlow, values: Values, loops: list[Loop]):
        self.f = f
        self.cfg = cfg
        self.values = values
        self.loops = loops

    def trip(self, k: int) -> tuple[TripCount | None, bool]:
        """The loop's trip count from an exit compare on its induction variable, and whether it varies.

        Every exiting block is tried, the latch and the header first. A loop that can also leave another
        way (a ``break``, or ``while (x < 4 && it < maxit)``) gets its induction variable's count as an
        upper bound (``TripCount.bound``): the work it can do, which the data may cut short."""
        lp = self.loops[k]
        exiting = [b for b in sorted(lp.blocks) if any(s not in lp.blocks for s in self.cfg.succ[b])]
        order = ([lp.latches[0]] if len(lp.latches) == 1 else []) + [lp.header]
        order += [b for b in exiting if b not in order]
        varies = False
        for eb in order:
            for cond, stay_if_true, combined in self._exit_conditions(eb, lp):
                single = not combined and len(exiting) == 1
                trip, v = self._solve(k, eb, cond, stay_if_true, single)
                varies = varies or v
                if trip is None:
                    trip = self._geometric(k, eb, cond, stay_if_true)
                if trip is None:
                    trip = self._bisection(k, eb, cond, stay_if_true)
                if trip is not None:
                    bound = combined or len(exiting) > 1
                    if bound:
                        trip = replace(trip, bound=True)
                    return trip, varies or bound or trip.varies
        return None, varies

    # ---- exit conditions -----------------------------------------------------------------------------

    def _exit_conditions(self, eb: int, lp: Loop) -> list[tuple[int, bool, bool]]:
        """(icmp, the loop goes on when it is true, one of several conditions) for the exit branch of
        block ``eb``; a logical and (or) of compares that keeps (leaves) the loop gives each compare."""
        f = self.f
        term = f.insts[eb][-1]
        if f.opc(term) != "br":
            return []
        ops = f.opers(term)
        if len(ops) != 3:
            return []
        cond, false_b, true_b = ops
        fb, tb = f.block_index.get(false_b), f.block_index.get(true_b)
        if (tb in lp.blocks) == (fb in lp.blocks):
            return []
        stay_if_true = tb in lp.blocks
        if cond in f.inst_block and f.opc(cond) == "icmp":
            return [(cond, stay_if_true, False)]
        parts = self._logical_parts(cond, "and" if stay_if_true else "or")
        return [(c, stay_if_true, True) for c in parts]

    def _logical_parts(self, cond: int, kind: str, depth: int = 0) -> list[int]:
        """The compares under a chain of ``and`` (``or``) of i1 values, ``select`` forms included."""
        f = self.f
        if cond not in f.inst_block or depth > 8:
            return []
        op = f.opc(cond)
        if op == "icmp":
            return [cond]
        ops = f.opers(cond)
        if op == kind and len(ops) == 2:
            pair = list(ops)
        elif op == "select" and len(ops) == 3:
            # a && b is `select i1 a, i1 b, i1 false`; a || b is `select i1 a, i1 true, i1 b`
            m = _SELECT_I1.search(f.text.get(cond, ""))
            if m and kind == "and" and m.group(2) == "false":
                pair = [ops[0], ops[1]]
            elif m and kind == "or" and m.group(1) == "true":
                pair = [ops[0], ops[2]]
            else:
                return []
        else:
            return []
        return [c for o in pair for c in self._logical_parts(o, kind, depth + 1)]

    # ---- an induction variable against a bound -------------------------------------------------------

    def _solve(self, k: int, eb: int, cond: int, stay_if_true: bool,
               single_exit: bool = True) -> tuple[TripCount | None, bool]:
        """Solve ``cond`` (an icmp that keeps loop ``k`` going when it equals ``stay_if_true``) for the
        iteration count. The step may be a launch size (``i += get_local_size(0)``); a start that depends
        on the work-item (``i = get_global_id(0)``) is taken at work-item 0, the most iterations."""
        it = f"it:{k}"
        icmp = self.f.predicate(cond)
        if icmp is None:
            return None, False
        pred = icmp if stay_if_true else _INVERT[icmp]
        cops = self.f.opers(cond)
        x, b = self.values.value(cops[0]), self.values.value(cops[1])
        if it not in poly.symbols(x):
            x, b, pred = b, x, _SWAP[pred]
        s = poly.coefficient(x, it)
        step = None if s is None or it in poly.symbols(b) else _step(s)
        if step is None:
            return None, bool(self.values.deps(x) or self.values.deps(b))
        s_val, den_sym, per_sym = step
        ranged = self._at_first_work_item(poly.without(x, [it]), b, 1 if s_val > 0 else -1, single_exit)
        if ranged is None:
            return None, True
        a, b, varies = ranged
        delta = 1 if eb in self.loops[k].latches else 0
        less = _as_less_than(pred, a, b, s_val)
        if less is None:
            return None, varies
        a, b, step_n = less
        step_poly = poly.scale(poly.thaw(den_sym), per_sym) if den_sym else poly.const(step_n * delta)
        num = poly.add(poly.sub(b, a), step_poly if delta else {})
        num = poly.scale(num, per_sym.denominator)  # count num / (per_sym x den_sym)
        return self._count(self.loops[k], num, step_n, den_sym, varies)

    def _at_first_work_item(self, a: Poly, b: Poly, sign: int,
                            single_exit: bool) -> tuple[Poly, Poly, bool] | None:
        """Start ``a`` and bound ``b`` with the work-item's terms dropped (those of work-item 0), and
        whether any were; None when work-item 0 would not run the most iterations."""
        # a range that moves with the work-group or work-item (``for (i = base; i < base + n; ...)``,
        # ``base = n * get_group_id(1)``): the terms shared by start and bound cancel. Not for a loop
        # that can leave another way: a search over such a range (a tile loader looking for the lane
        # that holds an element) stops long before its bound
        shared = {mono: c for mono, c in a.items()
                  if single_exit and any(is_work_item_symbol(n) for n in mono) and b.get(mono) == c}
        if shared:
            a = {mono: c for mono, c in a.items() if mono not in shared}
            b = {mono: c for mono, c in b.items() if mono not in shared}
        varies = False
        slow = self.values.slow_deps
        work_item = [n for n in poly.symbols(a) if is_work_item_symbol(n) or slow.get(n)]
        if work_item:
            # the first work-item runs the most iterations when the start grows with the id
            if any(sign * c < 0 for mono, c in a.items() if any(n in work_item for n in mono)):
                return None
            a = {mono: c for mono, c in a.items() if not any(n in work_item for n in mono)}
            varies = True
        bound_item = [n for n in poly.symbols(b) if is_work_item_symbol(n) or slow.get(n)]
        if bound_item and single_exit:
            # ... and when the bound shrinks as the id grows (``j < n - 1 - i``, triangular loops)
            if any(sign * c > 0 for mono, c in b.items() if any(n in bound_item for n in mono)):
                return None
            b = {mono: c for mono, c in b.items() if not any(n in bound_item for n in mono)}
            varies = True
        return a, b, varies

    def _count(self, lp: Loop, num: Poly, step: int, den_sym: poly.FrozenPoly,
               varies: bool) -> tuple[TripCount | None, bool]:
        """``ceil(num / (step x den_sym))`` when the scenario knows every symbol of ``num``."""
        values = self.values
        if any(not _known(s_, values.derived) for s_ in poly.symbols(num)):
            names = poly.symbols(num)
            if any(s_.startswith("ld:") for s_ in names):
                lp.data_bound = True
                lp.bound_buffers |= {values.load_base[s_] for s_ in names if s_ in values.load_base}
            return None, bool(values.deps(num) or any(s_ in values.sym_load for s_ in names))
        # fractions left (``lsz0 / 2``: a launch size, not a floor symbol) scale numerator and step alike
        scale = math.lcm(*(c.denominator for c in num.values())) if num else 1
        return TripCount(num=poly.freeze(poly.scale(num, scale)), den=step * scale, den_sym=den_sym,
                         varies=varies, derived=values.derived_of(num)), varies

    # ---- a counter scaled each iteration -------------------------------------------------------------

    def _geometric(self, k: int, eb: int, cond: int, stay_if_true: bool) -> TripCount | None:
        """A counter multiplied or divided by a constant each iteration (``for (s = lsz / 2; s > 0;
        s >>= 1)``, ``for (d = 1; d < n; d <<= 1)``: tree reductions, scans, sorting networks), compared
        with a bound known from the scenario. The count is found by running the counter
        (``TripCount.geometric``)."""
        lp = self.loops[k]
        icmp = self.f.predicate(cond)
        if icmp is None:
            return None
        pred = icmp if stay_if_true else _INVERT[icmp]
        cops = self.f.opers(cond)
        for side in (0, 1):
            g = self._geometric_counter(cops[side], lp)
            if g is None:
                continue
            start, mul, div, on_next = g
            bound = self.values.value(cops[1 - side])
            if any(not _known(s, self.values.derived) for s in poly.symbols(start) | poly.symbols(bound)):
                return None
            at_latch = eb in lp.latches
            if on_next and not at_latch:
                return None
            p = pred if side == 0 else _SWAP[pred]
            geometric = (poly.freeze(start), mul, div, p, poly.freeze(bound), on_next, at_latch)
            return TripCount(num=(), den=1, geometric=geometric, derived=self.values.derived_of(start, bound))
        return None

    def _geometric_counter(self, v: int, lp: Loop) -> tuple[Poly, int, int, bool] | None:
        """(start, multiplier, divisor, compared after the update) when ``v`` is a header phi updated by a
        constant factor, or that update itself."""
        f = self.f
        while v in f.inst_block and f.opc(v) in ("zext", "sext", "trunc"):
            v = f.opers(v)[0]
        if v not in f.inst_block:
            return None
        compared, on_next = v, False
        if f.opc(v) != "phi":  # the update itself (``s >> 1 > 0``): its first operand is the counter
            ops = f.opers(v)
            if not ops or ops[0] not in f.inst_block or f.opc(ops[0]) != "phi":
                return None
            v, on_next = ops[0], True
        if f.inst_block.get(v) != lp.header:
            return None
        inside, outside = self._incoming(v, lp, inside=True), self._incoming(v, lp, inside=False)
        if len(inside) != 1 or len(outside) != 1:
            return None
        start_op, nxt = outside[0], inside[0]
        factor = self._scaling(v, nxt)
        if factor is None or (on_next and compared != nxt):
            return None
        return self.values.value(start_op), factor[0], factor[1], on_next

    def _scaling(self, phi: int, nxt: int) -> tuple[int, int] | None:
        """(multiplier, divisor) when ``nxt`` is ``phi`` scaled by a constant (``phi << 1``, ``phi / 2``)."""
        f = self.f
        nops = f.opers(nxt) if nxt in f.inst_block else []
        if len(nops) != 2 or nops[0] != phi:
            return None
        c = f.const(nops[1])
        if c is None or c <= 0 or c >= 31:
            return None
        mul, div = {"shl": (1 << c, 1), "mul": (c, 1), "lshr": (1, 1 << c), "ashr": (1, 1 << c),
                    "udiv": (1, c), "sdiv": (1, c)}.get(f.opc(nxt), (1, 1))
        return None if mul == div else (mul, div)

    # ---- a range halved each iteration -----------------------------------------------------------------

    def _bisection(self, k: int, eb: int, cond: int, stay_if_true: bool) -> TripCount | None:
        """A binary search: ``lo < hi`` (``hi > lo + 1``, ``lo <= hi``) on two header phis, each set to
        itself or to their midpoint (``(lo + hi) / 2``, ``lo + (hi - lo) / 2``, plus or minus a constant)
        every iteration, from starts the scenario knows. The range ``hi - lo`` halves each iteration, so
        the loop runs about log2 of the first range (rounded down: the midpoint's side with fewer
        entries; a search that finds its key early leaves sooner, which ``trip`` marks as a bound). The
        count is found by running the range as a geometric counter (``TripCount.geometric``)."""
        f, lp = self.f, self.loops[k]
        icmp = f.predicate(cond)
        ops = f.opers(cond)
        if icmp is None or len(ops) != 2:
            return None
        pred = icmp if stay_if_true else _INVERT[icmp]
        p = pred[1:] if pred[0] in "su" else pred
        x, y = ops
        if p in ("gt", "ge"):
            x, y, p = y, x, "lt" if p == "gt" else "le"
        if p not in ("lt", "le"):
            return None
        (px, cx, next_x), (py, cy, next_y) = self._range_end(x, lp), self._range_end(y, lp)
        if px is None or py is None or px == py or next_x != next_y:
            return None
        if next_x and eb not in lp.latches:
            return None
        # the loop goes on while (py + cy) - (px + cx) > 0 (lt) or >= 0 (le): while the entries left,
        # py - px less the threshold, are more than none
        threshold = cx - cy - (1 if p == "le" else 0)
        if not (self._halves(px, px, py, lp) and self._halves(py, px, py, lp)):
            return None
        starts = []
        for phi in (px, py):
            outside = self._incoming(phi, lp, inside=False)
            if len(outside) != 1:
                return None
            starts.append(self.values.value(outside[0]))
        if any(not _known(s, self.values.derived) for st in starts for s in poly.symbols(st)):
            return None
        entries = poly.sub(poly.sub(starts[1], starts[0]), poly.const(threshold))
        geometric = (poly.freeze(entries), 1, 2, "sgt", poly.freeze(poly.const(0)), next_x, eb in lp.latches)
        return TripCount(num=(), den=1, geometric=geometric, varies=True,
                         derived=self.values.derived_of(*starts))

    def _range_end(self, v: int, lp: Loop) -> tuple[int | None, int, bool]:
        """(header phi, constant added, whether it is the phi's next value) for a compare's operand
        ``phi + c`` or ``next + c`` (``next``: the phi's value from the loop's latch)."""
        f = self.f
        c = 0
        for _ in range(4):
            while v in f.inst_block and f.opc(v) in ("zext", "sext", "trunc"):
                v = f.opers(v)[0]
            if v not in f.inst_block or f.opc(v) not in ("add", "sub"):
                break
            a, b = f.opers(v)
            n = f.const(b)
            if n is None:
                break
            c, v = c + (n if f.opc(v) == "add" else -n), a
        if v not in f.inst_block:
            return None, 0, False
        if f.opc(v) == "phi" and f.inst_block[v] == lp.header:
            return v, c, False
        phis = [ph for ph in f.insts[lp.header] if f.opc(ph) == "phi"
                and v in self._incoming(ph, lp, inside=True)]
        return (phis[0], c, True) if len(phis) == 1 else (None, 0, False)

    def _incoming(self, phi: int, lp: Loop, inside: bool) -> list[int]:
        """The values a phi takes from blocks inside (or outside) loop ``lp``."""
        pairs = zip(self.f.opers(phi), self.f.incoming(phi), strict=True)
        return [o for o, b in pairs if (b in lp.blocks) == inside]

    def _halves(self, phi: int, lo: int, hi: int, lp: Loop) -> bool:
        """Every value the loop gives ``phi`` is ``phi`` itself or the midpoint of ``lo`` and ``hi`` (plus
        or minus a constant), and at least one is the midpoint."""
        f = self.f
        seen: set[int] = set()
        leaves: list[int] = []
        todo = self._incoming(phi, lp, inside=True)
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            if len(seen) > 16:
                return False
            seen.add(v)
            inner = v != phi and f.inst_block.get(v, -1) in lp.blocks
            if inner and f.opc(v) == "select":
                todo += f.opers(v)[1:]
            elif inner and f.opc(v) == "phi" and f.inst_block[v] != lp.header:
                todo += f.opers(v)
            else:
                leaves.append(v)
        mids = [v for v in leaves if v != phi]
        return bool(mids) and all(self._midpoint(v, lo, hi) for v in mids)

    def _midpoint(self, v: int, lo: int, hi: int) -> bool:
        """``v`` is ``(lo + hi) / 2`` or ``lo + (hi - lo) / 2`` (any halving, plus or minus a constant)."""
        f = self.f
        found: set[int] = set()
        halved = False
        todo, steps = [v], 0
        while todo and steps < 24:
            u = todo.pop()
            steps += 1
            if u in (lo, hi):
                found.add(u)
                continue
            if u not in f.inst_block:
                continue
            op = f.opc(u)
            ops = f.opers(u)
            if op in ("lshr", "ashr") and len(ops) == 2 and f.const(ops[1]) == 1 or \
                    op in ("sdiv", "udiv") and len(ops) == 2 and f.const(ops[1]) == 2:
                halved = True
                todo.append(ops[0])
            elif op in ("add", "sub", "zext", "sext", "trunc", "and"):
                todo += [o for o in ops if f.const(o) is None]
        return halved and found == {lo, hi}


def _step(s: Poly) -> tuple[Fraction, poly.FrozenPoly, Fraction] | None:
    """The induction step as (its constant factor, a launch size or argument it is a multiple of, or
    empty, the factor before scaling to an integer): ``4`` -> (4, (), 1), ``lsz0 / 2`` -> (1, lsz0, 1/2)."""
    s_val = poly.constant_value(s)
    den_sym: poly.FrozenPoly = ()
    per_sym = Fraction(1)  # the step is per_sym x den_sym (``row += get_global_size(0) / 32``)
    if s_val is None:
        # a step of a launch size or an argument (``i += stride``): one monomial of those symbols
        if len(s) != 1:
            return None
        (mono, coef), = s.items()
        if not mono or any(not (is_launch_symbol(n) or n.startswith("arg:")) for n in mono) or coef <= 0:
            return None
        den_sym = poly.freeze({mono: Fraction(1)})
        per_sym = Fraction(coef)
        s_val = Fraction(coef.numerator)
    if s_val == 0 or s_val.denominator != 1:
        return None
    return s_val, den_sym, per_sym


def _as_less_than(pred: str, a: Poly, b: Poly, s_val: Fraction) -> tuple[Poly, Poly, int] | None:
    """The compare ``a + step * it PRED b`` rewritten as ``a' + step' * it < b'`` with a positive step."""
    step = int(s_val)
    p = pred[1:] if pred[0] in "su" else pred
    if p == "ne":
        p = "lt" if step > 0 else "gt"
    if p in ("le", "ge"):
        b = poly.add(b, poly.const(1 if p == "le" else -1))
        p = "lt" if p == "le" else "gt"
    if p == "gt":
        a, b, step = poly.scale(a, -1), poly.scale(b, -1), -step
        p = "lt"
    if p != "lt" or step <= 0:
        return None
    return a, b, step


def partition_trips(f: FunctionIR, values: Values, loops: list[Loop], accesses: list[Access]) -> None:
    """A loop between loaded bounds that walks a buffer (``for (e = rowptr[v]; e < rowptr[v + 1]; ++e)
    ... adj[e]``: CSR rows, graph adjacency, segments) runs on average one segment of that buffer
    (``TripCount.average``): ``len(buffer) / len(offsets)`` when the bounds come from one offsets
    table (a BFS frontier visits a few of its segments), divided by the step when lanes interleave
    (``e += 32``: a warp per row); otherwise ``len(buffer) / work-items``."""
    gsz = tuple(f"gsz{d}" for d in range(max(1, values.dims_used)))
    for k, lp in enumerate(loops):
        if lp.trip is not None or not lp.data_bound:
            continue
        it = f"it:{k}"
        acc = next((a for a in accesses
                    if a.param and a.address_space == "global" and k in a.loops and a.offset
                    and f.arg_pointer.get(a.param) and _steps_with(a, it)), None)
        if acc is None:
            continue
        walked = str(acc.param)
        tables = [b for b in lp.bound_buffers if f.arg_pointer.get(b) and b != walked]
        if len(tables) == 1:
            c = poly.constant_value(poly.coefficient(poly.thaw(acc.offset), it) or {}) or 1
            step = max(1, round(abs(float(c)) / float(acc.element_size or 4)))
            den, den_sym = step, poly.freeze({(f"arg:{tables[0]}",): Fraction(1)})
        else:  # every element is visited once in all, whatever the step
            den, den_sym = 1, poly.freeze({gsz: Fraction(1)})
        lp.trip = TripCount(num=poly.freeze({(f"arg:{walked}",): Fraction(1)}), den=den, den_sym=den_sym,
                            varies=True, average=True)
        lp.varies = True


def _steps_with(a: Access, it: str) -> bool:
    """The access's address moves by a constant with iteration ``it``."""
    c = poly.coefficient(poly.thaw(a.offset), it)
    return c is not None and poly.constant_value(c) not in (None, 0)
