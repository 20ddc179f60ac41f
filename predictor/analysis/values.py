"""A kernel's integer values as polynomials (``poly``) over work-item ids, kernel arguments, loop
iteration numbers and opaque values; pointers as ``base:NAME + byte offset``.

A loop header's induction phi ``i = start, start + step, ...`` becomes ``start + step * it:K`` with
``it:K`` the iteration number. Each opaque symbol carries the set of work-item dimensions it varies along
(``deps``): a value loaded through an address that varies along dimension 0 makes every address built from
it *indirect* there, and a branch on anything that varies is work-item dependent control flow.

Symbol names beyond ``poly``'s: ``q:N`` a floor division that neighbouring work-items share (uniform for
strides, still varying for control flow), ``floor:X / D`` C's division of scenario values and
``pick:...`` a ``min``, ``max``, ``clamp`` or select (``c ? a : b``, or ``a or b`` where the analysis
cannot evaluate ``c``: their mean) of them, kept so trip counts can evaluate them (``Values.derived``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from clperf.predictor.analysis import poly
from clperf.predictor.analysis.cfg import Loops
from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.irtext import TypeLayout
from clperf.predictor.analysis.poly import Poly

WORK_ITEM = {
    "_Z13get_global_idj": "gid",
    "_Z12get_local_idj": "lid",
    "_Z12get_group_idj": "grp",
    "_Z14get_local_sizej": "lsz",
    "_Z15get_global_sizej": "gsz",
    "_Z14get_num_groupsj": "ngr",
    "_Z17get_global_offsetj": "goff",
    "_Z23get_enqueued_local_sizej": "lsz",
}
_CASTS = ("sext", "zext", "trunc", "freeze", "bitcast", "addrspacecast", "ptrtoint", "inttoptr")
_GEP = re.compile(r"getelementptr (?:(?:inbounds|nuw|nusw|inrange\([^)]*\))\s+)*(.*)$")
_MAX_DEPTH = 120
_ALL_DIMS = frozenset({0, 1, 2})


def is_launch_symbol(name: str) -> bool:
    """``lsz0``, ``gsz1``, ``ngr2``: a launch size, known from the scenario."""
    return name[:3] in ("lsz", "gsz", "ngr") and name[3:].isdigit()


def is_work_item_symbol(name: str) -> bool:
    return name[:3] in ("gid", "lid", "grp") and name[3:].isdigit()


class Values:
    """The polynomial of each value of one function, computed on demand and remembered."""

    def __init__(self, f: FunctionIR, layout: TypeLayout, loops: Loops):
        self.f = f
        self.layout = layout
        self.loops = loops
        self.memo: dict[int, Poly] = {}
        self.sym_deps: dict[str, frozenset[int]] = {}
        self.sym_load: set[str] = set()  # symbols that are loaded values
        self.sym_block: dict[str, int] = {}
        self.slow_deps: dict[str, frozenset[int]] = {}  # q: symbols (floor divisions) and what they vary on
        # floor: and pick: symbols, values a scenario gives by C's division (``r = w / 2``, ``(n + gsz -
        # 1) / gsz``: each work-item's share of the launch), min, max, clamp or a select of its values
        # (``n_size = lda == m ? n : m``), as (operation, operands), in the order they were made
        self.derived: dict[str, tuple[str, tuple[Poly, ...]]] = {}
        self.load_base: dict[str, str] = {}  # ld: symbol -> the parameter it was loaded from
        self._preds: dict[int, list[int]] | None = None  # block -> the blocks branching to it
        self.counter = 0
        self.depth = 0
        self.dims_used = 1  # 1 + the highest dimension of a get_global_id / get_local_id seen so far

    # ---- symbols -------------------------------------------------------------------------------------

    def opaque(self, v: int, deps: frozenset[int], load: bool = False) -> Poly:
        self.counter += 1
        name = f"{'ld' if load else 'v'}:{self.counter}"
        self.sym_deps[name] = deps
        if load:
            self.sym_load.add(name)
        b = self.f.inst_block.get(v)
        if b is not None:
            self.sym_block[name] = b
        return poly.sym(name)

    def deps(self, p: Poly) -> frozenset[int]:
        """The work-item dimensions ``p`` varies along."""
        out: set[int] = set()
        for s in poly.symbols(p):
            d = self.sym_deps.get(s)
            if d is None:
                if s[:3] in ("gid", "lid") and s[3:].isdigit():
                    out.add(int(s[3:]))
            else:
                out |= d
        return frozenset(out)

    def varies(self, v: int) -> bool:
        """The value differs between work-items (floor divisions they share included)."""
        p = self.value(v)
        return bool(self.deps(p)) or any(self.slow_deps.get(s) for s in poly.symbols(p))

    def derived_of(self, *polys: Poly) -> tuple[tuple[str, str, tuple[poly.FrozenPoly, ...]], ...]:
        """The derived symbols ``polys`` use, and those these use, in an order that evaluates each after
        its operands (``TripCount.derived``)."""
        todo = [s for p in polys for s in poly.symbols(p) if s in self.derived]
        names: set[str] = set()
        while todo:
            n = todo.pop()
            if n not in names:
                names.add(n)
                todo += [s for x in self.derived[n][1] for s in poly.symbols(x) if s in self.derived]
        return tuple((n, op, tuple(poly.freeze(x) for x in xs))
                     for n, (op, xs) in self.derived.items() if n in names)

    def known(self, p: Poly) -> bool:
        """``p`` is a value the scenario gives: over arguments, launch sizes and derived symbols."""
        return all(s.startswith("arg:") or is_launch_symbol(s) or s in self.derived for s in poly.symbols(p))

    def base(self, p: Poly) -> tuple[str | None, Poly]:
        """(the parameter or __local array a pointer goes through, the byte offset from it)."""
        bases = [m for m in p if len(m) == 1 and m[0].startswith("base:") and p[m] == 1]
        if len(bases) != 1 or any(s.startswith("base:") for m in p if m != bases[0] for s in m):
            return None, p
        name = bases[0][0][5:]
        off = dict(p)
        del off[bases[0]]
        if name.startswith("@"):
            name = name[1:]
            if name.startswith(self.f.name + "."):
                name = name[len(self.f.name) + 1 :]
        return name, off

    # ---- values --------------------------------------------------------------------------------------

    def value(self, v: int) -> Poly:
        hit = self.memo.get(v)
        if hit is not None:
            return hit
        if self.depth > _MAX_DEPTH:
            return self.opaque(v, _ALL_DIMS)
        self.depth += 1
        try:
            p = self._value(v)
        finally:
            self.depth -= 1
        self.memo[v] = p
        return p

    def _value(self, v: int) -> Poly:
        f = self.f
        if v in f.args:
            name = f.args[v]
            return poly.sym(f"base:{name}" if f.arg_pointer.get(name) else f"arg:{name}")
        c = f.const(v)
        if c is not None:
            return poly.const(c)
        if v not in f.inst_block:
            return self._outside(v)
        ops = f.opers(v)
        rule = _RULES.get(f.opc(v))
        p = rule(self, v, ops) if rule is not None else None
        if p is not None:
            return p
        deps: frozenset[int] = frozenset()
        for o in ops:
            if o in f.inst_block or o in f.args:
                deps |= self.deps(self.value(o))
        return self.opaque(v, deps)

    def _outside(self, v: int) -> Poly:
        """A value that is neither an argument nor an instruction: a global, null, or a constant."""
        r = self.f.ref[v]
        name = r.name
        if name and name in self.f.txt.globals:  # operand refs report is_global False
            return poly.sym(f"base:@{name}")
        if r.is_constant and self.f.tstr(v).startswith("ptr") and "null" in str(r):
            return {}
        return self.opaque(v, frozenset())

    # Each rule gives the value of one opcode, or None when the general case (an opaque symbol that
    # varies as its operands do) applies.

    def _cast(self, v: int, ops: list[int]) -> Poly | None:
        return self.value(ops[0])

    def _add(self, v: int, ops: list[int]) -> Poly | None:
        return poly.add(self.value(ops[0]), self.value(ops[1]))

    def _or(self, v: int, ops: list[int]) -> Poly | None:
        return self._add(v, ops) if " disjoint " in self.f.text.get(v, "") else None

    def _sub(self, v: int, ops: list[int]) -> Poly | None:
        return poly.sub(self.value(ops[0]), self.value(ops[1]))

    def _xor(self, v: int, ops: list[int]) -> Poly | None:
        if self.f.const(ops[1]) == -1:  # ~x == -x - 1 (clang's form of ``n - 1 - i``)
            return poly.sub(poly.const(-1), self.value(ops[0]))
        return None

    def _mul(self, v: int, ops: list[int]) -> Poly | None:
        return poly.mul(self.value(ops[0]), self.value(ops[1]))

    def _shl(self, v: int, ops: list[int]) -> Poly | None:
        k = self.f.const(ops[1])
        return poly.scale(self.value(ops[0]), 1 << k) if k is not None and 0 <= k < 64 else None

    def _divide(self, v: int, ops: list[int]) -> Poly | None:
        """lshr, ashr, udiv, sdiv."""
        op = self.f.opc(v)
        k = self.f.const(ops[1])
        if k is not None and k > 0:
            div = (1 << k) if op in ("lshr", "ashr") and k < 64 else k
            return self._floor_div(self.value(ops[0]), div)
        if op in ("udiv", "sdiv"):
            return self._launch_quotient(self.value(ops[0]), self.value(ops[1]))
        return None

    def _rem(self, v: int, ops: list[int]) -> Poly | None:
        # i % w: neighbours still step by 1 within a row; good enough for strides, not for values
        return self.value(ops[0])

    def _and(self, v: int, ops: list[int]) -> Poly | None:
        k = self.f.const(ops[1])
        if k is not None and k > 0 and (k & (k + 1)) == 0:  # x & (2^n - 1) == x % 2^n, as for _rem
            return self.value(ops[0])
        if k is not None and k < 0 and (-k & (-k - 1)) == 0:  # x & -2^n == 2^n * floor(x / 2^n)
            return poly.scale(self._floor_div(self.value(ops[0]), -k), -k)
        return None

    def _call(self, v: int, ops: list[int]) -> Poly | None:
        callee = self.f.callee(v)
        kind = WORK_ITEM.get(callee)
        if kind is not None:
            d = self.f.const(ops[0])
            if d is not None and 0 <= d <= 2:
                if kind in ("gid", "lid"):
                    self.dims_used = max(self.dims_used, d + 1)
                return poly.sym(f"{kind}{d}")
        if callee.startswith(("_Z5mul24", "_Z5mad24")) and len(ops) >= 2:  # 24-bit integer multiply
            prod = poly.mul(self.value(ops[0]), self.value(ops[1]))
            return poly.add(prod, self.value(ops[2])) if callee.startswith("_Z5mad24") else prod
        if callee.startswith(("llvm.smin", "llvm.smax", "llvm.umin", "llvm.umax")):
            return self._choose(v, ops[0], ops[1], kind=callee[6:9])
        if callee.startswith(("_Z3min", "_Z3max", "_Z5clamp")) and self.f.tstr(v).startswith("i"):
            kind = callee[3:6] if callee.startswith("_Z3") else "clamp"
            return self._choose(v, ops[0], ops[1], kind=kind, bound=ops[2] if kind == "clamp" else None)
        return None

    def _select(self, v: int, ops: list[int]) -> Poly | None:
        return self._choose(v, ops[1], ops[2], cond=ops[0])

    def _load(self, v: int, ops: list[int]) -> Poly | None:
        addr = self.value(ops[0])
        sym = self.opaque(v, self.deps(addr), load=True)
        base = next((s[5:] for s in poly.symbols(addr) if s.startswith("base:")), None)
        if base is not None:
            self.load_base[next(iter(sym))[0]] = base
        return sym

    # ---- divisions -----------------------------------------------------------------------------------

    def _floor_div(self, x: Poly, d: int) -> Poly:
        """``floor(x / d)``: exact enough as ``x / d`` for small ``d``; for ``d >= 16`` neighbouring
        work-items share the value, so it becomes a symbol that is uniform for strides (but still varies
        for control flow: ``if (lid / 32 == 0)`` is divergent)."""
        c = poly.constant_value(x)
        if c is not None:
            return poly.const(c // d)
        syms = poly.symbols(x)
        if (not self.deps(x) and any(s.startswith("arg:") for s in syms)
                and all(s.startswith("arg:") or is_launch_symbol(s) for s in syms)
                and any((cf / d).denominator != 1 for cf in x.values())):
            # a scenario value divided by a constant (``r = w / 2``): kept exact for trip counts, where
            # ``for (j = -r; j <= r; j++)`` runs w times for an odd w, not w + 1
            return self._floor_symbol(x, poly.const(d))
        if d < 16 or not self.deps(x) or all((cf / d).denominator == 1 for cf in x.values()):
            return poly.scale(x, Fraction(1, d))
        self.counter += 1
        name = f"q:{self.counter}"
        self.sym_deps[name] = frozenset()
        self.slow_deps[name] = self.deps(x)
        return poly.sym(name)

    def _launch_quotient(self, x: Poly, d: Poly) -> Poly | None:
        """``x / d`` for ``d`` one launch size and ``x`` known from the scenario (``per = (n + gsz - 1) /
        gsz``: each work-item's share of the work)."""
        if len(d) != 1:
            return None
        (mono, coef), = d.items()
        if coef != 1 or not mono or any(not is_launch_symbol(n) for n in mono):
            return None
        if any(not (s.startswith("arg:") or is_launch_symbol(s)) for s in poly.symbols(x)):
            return None
        return self._floor_symbol(x, d)

    def _floor_symbol(self, x: Poly, d: Poly) -> Poly:
        """A uniform symbol for C's ``x / d``, which trip counts evaluate for the scenario
        (``TripCount.derived``)."""
        text, dtext = poly.format_poly(x), poly.format_poly(d)
        name = f"floor:{f'({text})' if ' ' in text else text} / {f'({dtext})' if ' ' in dtext else dtext}"
        self.derived[name] = ("div", (x, d))
        self.sym_deps[name] = frozenset()
        return poly.sym(name)

    # ---- choices, addresses, phis --------------------------------------------------------------------

    def _choose(self, v: int, a: int, b: int, cond: int | None = None, kind: str = "select",
                bound: int | None = None) -> Poly:
        """min/max/clamp/select: keep the side that varies when the other is a uniform bound (a clamp);
        one of values the scenario gives is a derived symbol (``pick:``) it evaluates."""
        pa, pb = self.value(a), self.value(b)
        if pa == pb and bound is None:
            return pa
        da, db = self.deps(pa), self.deps(pb)
        if da and not db:
            return pa
        if db and not da:
            return pb
        extra = self.deps(self.value(cond)) if cond is not None else frozenset()
        picked = self._pick(kind, pa, pb, cond, bound) if not (da or db or extra) else None
        return picked if picked is not None else self.opaque(v, da | db | extra)

    def _pick(self, kind: str, pa: Poly, pb: Poly, cond: int | None, bound: int | None) -> Poly | None:
        """A ``pick:`` symbol for ``kind`` (min, max, clamp, or a select on a compare) of values the
        scenario gives; None when one of them is not such a value."""
        xs: tuple[Poly, ...] = (pa, pb)
        if bound is not None:
            xs += (self.value(bound),)
        if kind == "select":
            icmp = self.f.predicate(cond) if cond is not None else None
            # a compare of values this analysis reads only roughly (``x % 2`` as ``x``) is not evaluated:
            # either value may be taken, and the scenario gets their mean
            if icmp is not None and cond is not None and not any(
                    self.f.opc(o) in ("and", "urem", "srem") for o in self.f.opers(cond)[:2]):
                kind = f"select:{icmp}"
                xs = tuple(self.value(o) for o in self.f.opers(cond)[:2]) + xs
            else:
                kind = "either"
        if not all(self.known(x) for x in xs):
            return None
        text = [poly.format_poly(x) for x in xs]
        if kind == "either":
            name = f"pick:({text[0]} or {text[1]})"
        elif kind.startswith("select:"):
            pred = kind[8:] if kind[7] in "su" else kind[7:]
            op = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}.get(pred, pred)
            name = f"pick:({text[0]} {op} {text[1]} ? {text[2]} : {text[3]})"
        else:
            name = f"pick:{kind}({', '.join(text)})"
        self.derived.setdefault(name, (kind, xs))
        self.sym_deps[name] = frozenset()
        return poly.sym(name)

    def _gep(self, v: int, ops: list[int]) -> Poly | None:
        m = _GEP.search(self.f.text.get(v, ""))
        base = self.value(ops[0])
        if not m:
            return poly.add(base, self.opaque(v, self.deps(base)))
        try:
            src_type, _ = self.layout.split_first_type(m.group(1))
            offset = poly.scale(self.value(ops[1]), self.layout.layout(src_type)[0]) if len(ops) > 1 else {}
            cur = src_type
            for idx in ops[2:]:
                size, field_off, cur = self.layout.index_step(cur, self.f.const(idx))
                if size is None:
                    offset = poly.add(offset, poly.const(field_off))
                else:
                    offset = poly.add(offset, poly.scale(self.value(idx), size))
        except (ValueError, KeyError, IndexError):
            deps = (
                frozenset().union(*(self.deps(self.value(o)) for o in ops[1:]))
                if len(ops) > 1
                else frozenset()
            )
            return poly.add(base, self.opaque(v, deps))
        return poly.add(base, offset)

    def _phi(self, v: int, ops: list[int]) -> Poly | None:
        incoming = self.f.incoming(v)
        k = self.loops.of_header.get(self.f.inst_block[v])
        if k is None:
            return self._merge(v, ops)
        blocks = self.loops.loops[k].blocks
        if len(ops) == 2:
            inside = [i for i, b in enumerate(incoming) if b in blocks]
            if len(inside) == 1:
                start_op, latch_op = ops[1 - inside[0]], ops[inside[0]]
                step = self._induction_step(v, latch_op, k)
                if step is not None:
                    return poly.add(self.value(start_op), poly.mul(step, poly.sym(f"it:{k}")))
        return self._carried(v, ops, incoming, blocks)

    def _carried(self, v: int, ops: list[int], incoming: list[int | None], blocks: set[int]) -> Poly:
        """A loop-carried value that is not an induction: an opaque symbol, placed in the memo before the
        values coming round the back edge are computed (they may depend on it)."""
        start = [self.value(o) for o, b in zip(ops, incoming, strict=False) if b not in blocks]
        sym = self.opaque(v, frozenset().union(*(self.deps(p) for p in start)))
        name = next(iter(sym))[0]
        self.memo[v] = sym
        for o, b in zip(ops, incoming, strict=False):
            p = start[0] if b not in blocks and start else self.value(o)
            self.sym_deps[name] = self.sym_deps[name] | self.deps(p)
            if any(s_ in self.sym_load for s_ in poly.symbols(p)):
                self.sym_load.add(name)
        return sym

    def _merge(self, v: int, ops: list[int]) -> Poly:
        """A phi outside a loop header: the value when every way in agrees, the ``pick:`` of an ``if``
        between values the scenario gives (``if (numK % 2) k = 1;``), else an opaque symbol."""
        polys = [self.value(o) for o in ops]
        if all(p == polys[0] for p in polys[1:]):
            return polys[0]
        deps = frozenset().union(*(self.deps(p) for p in polys))
        branch = self._branch(v) if len(ops) == 2 and not deps else None
        if branch is not None:
            cond, first_if_true = branch
            pa, pb = polys if first_if_true else polys[::-1]
            picked = self._pick("select", pa, pb, cond, None) if not self.deps(self.value(cond)) else None
            if picked is not None:
                return picked
        sym = self.opaque(v, deps)
        if any(s_ in self.sym_load for p in polys for s_ in poly.symbols(p)):
            self.sym_load.add(next(iter(sym))[0])
        return sym

    def _branch(self, phi: int) -> tuple[int, bool] | None:
        """(the condition, whether the phi's first value is the one when it holds) for a phi joining the
        two ways of one conditional branch: ``D -> T -> B`` and ``D -> B`` (an ``if``), or ``D -> T -> B``
        and ``D -> E -> B`` (an ``if``/``else``), T and E entered from D alone."""
        f = self.f
        if self._preds is None:
            self._preds = {}
            for b, insts in enumerate(f.insts):
                for o in f.opers(insts[-1]) if insts and f.opc(insts[-1]) == "br" else []:
                    t = f.block_index.get(o)
                    if t is not None:
                        self._preds.setdefault(t, []).append(b)
        came = f.incoming(phi)
        if len(came) != 2 or None in came:
            return None
        into = self._preds

        def way(b: int) -> int | None:  # the one block b is entered from, when b leaves by a plain jump
            preds = into.get(b, [])
            return preds[0] if len(preds) == 1 and len(f.opers(f.insts[b][-1])) == 1 else None

        here = f.inst_block[phi]

        def reached(c: int, d: int, target: int | None) -> bool:  # d branches to target, reaching here from c
            return (c == d and target == here) or (c == target and way(c) == d)

        a, b = came[0], came[1]
        for d in {x for x in (a, b, way(a), way(b)) if x is not None}:
            term = f.insts[d][-1]
            ops = f.opers(term) if f.opc(term) == "br" else []
            if len(ops) != 3 or f.opc(ops[0]) != "icmp":
                continue
            on_false, on_true = f.block_index.get(ops[1]), f.block_index.get(ops[2])
            if reached(a, d, on_true) and reached(b, d, on_false):
                return ops[0], True
            if reached(a, d, on_false) and reached(b, d, on_true):
                return ops[0], False
        return None

    def _induction_step(self, phi: int, latch_op: int, k: int) -> Poly | None:
        """``phi_next - phi`` when it is loop-invariant, computed with ``phi`` as a placeholder symbol."""
        saved = self.memo
        self.memo = dict(saved)
        marker = f"~phi:{phi}"
        self.memo[phi] = poly.sym(marker)
        try:
            nxt = self.value(latch_op)
        finally:
            self.memo = saved
        step = poly.sub(nxt, poly.sym(marker))
        names = poly.symbols(step)
        if any(s.startswith("~phi:") for s in names):
            return None
        blocks = self.loops.loops[k].blocks
        if any(self.sym_block.get(s) in blocks for s in names):
            return None
        if not step:
            return None
        return step


_Rule = Callable[[Values, int, list[int]], "Poly | None"]
_RULES: dict[str, _Rule] = {
    **dict.fromkeys(_CASTS, Values._cast),
    "add": Values._add,
    "or": Values._or,
    "sub": Values._sub,
    "xor": Values._xor,
    "mul": Values._mul,
    "shl": Values._shl,
    **dict.fromkeys(("lshr", "ashr", "udiv", "sdiv"), Values._divide),
    **dict.fromkeys(("urem", "srem"), Values._rem),
    "and": Values._and,
    "getelementptr": Values._gep,
    "call": Values._call,
    "select": Values._select,
    "phi": Values._phi,
    "load": Values._load,
}
