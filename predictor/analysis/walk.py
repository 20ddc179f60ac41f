"""The IR walk over one kernel: values as polynomials, loops and trip counts, accesses, ops, barriers.

Every integer value the kernel computes is turned into a polynomial (``poly``) over work-item ids, kernel
arguments, loop iteration numbers and opaque values; pointers are ``base:NAME + byte offset``. From an
access's byte offset, the coefficient of ``gid0``/``lid0`` is the distance between neighbouring work-items'
addresses. A loop header's induction phi ``i = start, start + step, ...`` becomes ``start + step * it:K``
with ``it:K`` the iteration number, and the loop's exit compare, solved for ``it:K``, gives the trip count.

Each opaque symbol carries the set of work-item dimensions it varies along (``deps``): a value loaded
through an address that varies along dimension 0 makes every address built from it *indirect* there, and
a branch on anything that varies is work-item dependent control flow (what ``barrier-divergence`` needs).
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from clperf.predictor.analysis import poly
from clperf.predictor.analysis.irtext import FunctionText, IRText, TypeLayout, dbg_id, loop_id
from clperf.predictor.analysis.poly import Poly
from clperf.predictor.analysis.records import Access, LoopInfo, Ops, Pattern, TripCount

_WORK_ITEM = {
    "_Z13get_global_idj": "gid",
    "_Z12get_local_idj": "lid",
    "_Z12get_group_idj": "grp",
    "_Z14get_local_sizej": "lsz",
    "_Z15get_global_sizej": "gsz",
    "_Z14get_num_groupsj": "ngr",
    "_Z17get_global_offsetj": "goff",
    "_Z23get_enqueued_local_sizej": "lsz",
}
_BARRIERS = (
    "_Z7barrierj",
    "_Z18work_group_barrierj",
    "_Z18work_group_barrierj12memory_scope",
    "_Z22sub_group_barrierj",
)
_ATOMIC_CALL = re.compile(r"^_Z\d+(atomic|atom)_")
_SPACES = {0: "private", 1: "global", 2: "constant", 3: "local", 4: "global"}
_ADDRSPACE = re.compile(r"ptr(?: addrspace\((\d+)\))?")
_GEP = re.compile(r"getelementptr (?:(?:inbounds|nuw|nusw|inrange\([^)]*\))\s+)*(.*)$")
_ICMP = re.compile(r"icmp (?:samesign )?(\w+) ")
_SELECT_I1 = re.compile(r"select i1 [^,]+, i1 ([^,]+), i1 ([^,\s]+)")
_FLOAT_TYPES = ("float", "double", "half", "<")
_INT_OPS = {
    "add",
    "sub",
    "mul",
    "udiv",
    "sdiv",
    "urem",
    "srem",
    "shl",
    "lshr",
    "ashr",
    "and",
    "or",
    "xor",
    "icmp",
}
# divisions by a run-time value: one IR op, but no GPU has an integer divider (``Ops.int_divs``)
_DIVS = {"udiv", "sdiv", "urem", "srem"}
_FLOAT_OPS = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg"}
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
_MAX_DEPTH = 120


def _is_launch_symbol(name: str) -> bool:
    """``lsz0``, ``gsz1``, ``ngr2``: a launch size, known from the scenario."""
    return name[:3] in ("lsz", "gsz", "ngr") and name[3:].isdigit()


def _is_work_item_symbol(name: str) -> bool:
    return name[:3] in ("gid", "lid", "grp") and name[3:].isdigit()

_CALLEE = re.compile(r" @([\w.$\"-]+)\(")
_OPCODE = re.compile(r"^(?:%[\w.$\"-]+ = )?(?:tail |musttail |notail )?([a-z]+)\b")
_VECTOR_RESULT = re.compile(
    r"^%[\w.$\"-]+ = (?:tail )?[a-z]+"
    r"(?: (?:nsw|nuw|exact|disjoint|fast|nnan|ninf|nsz|arcp|contract|afn|reassoc))*"
    r"(?: spir_func)? <(\d+) x ")
_FLOAT_RESULT = re.compile(
    r"^%[\w.$\"-]+ = (?:tail )?call [^@]*?(?:float|double|half|x (?:float|double|half)>) @"
)


@dataclass
class _Loop:
    header: int
    blocks: set[int]
    latches: list[int]
    parent: int | None = None
    depth: int = 1
    line: int = 0
    column: int = 0
    trip: TripCount | None = None
    varies: bool = False
    data_bound: bool = False  # its bounds are loaded values (``for (e = rowptr[v]; e < rowptr[v + 1]; ...)``)
    bound_buffers: set[str] = field(default_factory=set)  # the parameters those bounds are loaded from


@dataclass
class WalkResult:
    accesses: list[Access]
    loops: list[LoopInfo]
    barriers: int
    op_groups: list[tuple[tuple[int, ...], Ops]]
    divergent_barriers: list[tuple[int, int, int]]  # (barrier line, column, condition line)
    staged: set[str]  # parameters whose loaded values are stored to __local memory
    dims: int
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)


class KernelWalk:
    """One pass over one kernel function. Create, call ``run()``, read the WalkResult."""

    def __init__(
        self, fn: Any, ftext: FunctionText, txt: IRText, layout: TypeLayout, param_elem_sizes: dict[str, int]
    ):
        self.fn = fn
        self.txt = txt
        self.layout = layout
        self.param_elem_sizes = param_elem_sizes
        # Values are ints (the LLVM pointer) inside the walk: a llvmlite ValueRef hashes through ctypes, which
        # dominated the run time. ``self.ref`` maps back for the few questions only llvmlite answers.
        self.ref: dict[int, Any] = {}
        self.blocks = list(fn.blocks)
        self.block_index = {self._key(b): i for i, b in enumerate(self.blocks)}
        self.insts: list[list[int]] = [[self._key(i) for i in b.instructions] for b in self.blocks]
        flat = [i for bl in self.insts for i in bl]
        lines = ftext.lines if len(ftext.lines) == len(flat) else [str(self.ref[i]).strip() for i in flat]
        self.text: dict[int, str] = {}
        self.inst_block: dict[int, int] = {}
        k = 0
        for bi, bl in enumerate(self.insts):
            for inst in bl:
                self.text[inst] = lines[k]
                self.inst_block[inst] = bi
                k += 1
        # opcodes and result types come from the text line; operands are read from llvmlite when needed
        self._opcode: dict[int, str] = {}
        self._operands: dict[int, list[int]] = {}
        self._tstr: dict[int, str] = {}
        for inst in flat:
            m = _OPCODE.match(self.text[inst])
            self._opcode[inst] = m.group(1) if m else self.ref[inst].opcode
        self.dbg_ok = len(ftext.lines) == len(flat)
        self.args = {self._key(a): a.name for a in fn.arguments}
        self.arg_pointer = {a.name: str(a.type).startswith("ptr") for a in fn.arguments}
        self.memo: dict[Any, Poly] = {}
        self.sym_deps: dict[str, frozenset[int]] = {}
        self.sym_load: set[str] = set()  # symbols that are loaded values
        self.sym_block: dict[str, int] = {}
        self.slow_deps: dict[str, frozenset[int]] = {}  # q: symbols (floor divisions) and what they vary on
        # floor: symbols, C's division of scenario values, as (dividend, divisor): ``r = w / 2``, and
        # ``(n + gsz - 1) / gsz`` (each work-item's share of the launch)
        self.floors: dict[str, tuple[Poly, Poly]] = {}
        self.load_base: dict[str, str] = {}  # ld: symbol -> the parameter it was loaded from
        self.counter = 0
        self.depth = 0
        self.loop_of_header: dict[int, int] = {}
        self.loops: list[_Loop] = []
        self.dims_used = 1

    def _key(self, v: Any) -> int:
        k: int = ctypes.cast(v._ptr, ctypes.c_void_p).value or 0
        if k not in self.ref:
            self.ref[k] = v
        return k

    def opc(self, v: Any) -> str:
        return self._opcode.get(v, "")

    def opers(self, v: Any) -> list[Any]:
        ops = self._operands.get(v)
        if ops is None:
            ops = self._operands[v] = [self._key(o) for o in self.ref[v].operands]
        return ops

    def _callee(self, inst: Any) -> str:
        m = _CALLEE.search(self.text[inst])
        return m.group(1).strip('"') if m else self.ref[self.opers(inst)[-1]].name

    def _lanes(self, inst: Any) -> int:
        m = _VECTOR_RESULT.match(self.text[inst])
        return int(m.group(1)) if m else 1

    def tstr(self, v: Any) -> str:
        t = self._tstr.get(v)
        if t is None:
            t = self._tstr[v] = str(self.ref[v].type)
        return t

    # ---- CFG -----------------------------------------------------------------------------------------

    def _successors(self, bi: int) -> list[int]:
        term = self.insts[bi][-1] if self.insts[bi] else None
        if term is None:
            return []
        out = []
        for o in self.opers(term):
            j = self.block_index.get(o)
            if j is not None and j not in out:
                out.append(j)
        return out

    def _cfg(self) -> None:
        n = len(self.blocks)
        self.succ = [self._successors(i) for i in range(n)]
        self.pred: list[list[int]] = [[] for _ in range(n)]
        for i, ss in enumerate(self.succ):
            for s in ss:
                self.pred[s].append(i)
        # reverse postorder from the entry
        order: list[int] = []
        seen = [False] * n
        stack: list[tuple[int, int]] = [(0, 0)]
        seen[0] = True
        while stack:
            b, k = stack.pop()
            if k < len(self.succ[b]):
                stack.append((b, k + 1))
                s = self.succ[b][k]
                if not seen[s]:
                    seen[s] = True
                    stack.append((s, 0))
            else:
                order.append(b)
        self.rpo = order[::-1]
        self.reachable = seen
        self.idom = self._dominators(self.rpo, self.pred)

    @staticmethod
    def _dominators(rpo: list[int], pred: list[list[int]]) -> dict[int, int]:
        """Cooper-Harvey-Kennedy iterative dominators."""
        pos = {b: i for i, b in enumerate(rpo)}
        idom: dict[int, int] = {rpo[0]: rpo[0]}

        def intersect(a: int, b: int) -> int:
            while a != b:
                while pos[a] > pos[b]:
                    a = idom[a]
                while pos[b] > pos[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for b in rpo[1:]:
                ps = [p for p in pred[b] if p in idom]
                if not ps:
                    continue
                new = ps[0]
                for p in ps[1:]:
                    new = intersect(p, new)
                if idom.get(b) != new:
                    idom[b] = new
                    changed = True
        return idom

    def _dominates(self, a: int, b: int) -> bool:
        while True:
            if a == b:
                return True
            nb = self.idom.get(b)
            if nb is None or nb == b:
                return False
            b = nb

    def _find_loops(self) -> None:
        by_header: dict[int, _Loop] = {}
        for b in self.rpo:
            for s in self.succ[b]:
                if self._dominates(s, b):  # back edge b -> s
                    lp = by_header.setdefault(s, _Loop(s, {s}, []))
                    lp.latches.append(b)
                    work = [b]
                    while work:
                        x = work.pop()
                        if x in lp.blocks:
                            continue
                        lp.blocks.add(x)
                        work.extend(p for p in self.pred[x] if self.reachable[p])
        loops = sorted(by_header.values(), key=lambda lp: -len(lp.blocks))
        for i, lp in enumerate(loops):
            for j in range(i - 1, -1, -1):  # smallest enclosing loop comes last among the bigger ones
                if lp.header in loops[j].blocks:
                    lp.parent = j
                    lp.depth = loops[j].depth + 1
                    break
        # order by source position later; keep indices stable now
        self.loops = loops
        self.loop_of_header = {lp.header: i for i, lp in enumerate(loops)}
        self.block_loops: list[tuple[int, ...]] = []
        for b in range(len(self.blocks)):
            inner = None
            for i, lp in enumerate(loops):
                if b in lp.blocks and (inner is None or len(lp.blocks) < len(loops[inner].blocks)):
                    inner = i
            chain: list[int] = []
            while inner is not None:
                chain.append(inner)
                inner = loops[inner].parent
            self.block_loops.append(tuple(reversed(chain)))

    # ---- values as polynomials -----------------------------------------------------------------------

    def _opaque(self, v: Any, deps: frozenset[int], load: bool = False) -> Poly:
        self.counter += 1
        name = f"{'ld' if load else 'v'}:{self.counter}"
        self.sym_deps[name] = deps
        if load:
            self.sym_load.add(name)
        b = self.inst_block.get(v)
        if b is not None:
            self.sym_block[name] = b
        return poly.sym(name)

    def deps(self, p: Poly) -> frozenset[int]:
        out: set[int] = set()
        for s in poly.symbols(p):
            d = self.sym_deps.get(s)
            if d is None:
                if s[:3] in ("gid", "lid") and s[3:].isdigit():
                    out.add(int(s[3:]))
            else:
                out |= d
        return frozenset(out)

    def value(self, v: Any) -> Poly:
        hit = self.memo.get(v)
        if hit is not None:
            return hit
        if self.depth > _MAX_DEPTH:
            return self._opaque(v, frozenset({0, 1, 2}))
        self.depth += 1
        try:
            p = self._value(v)
        finally:
            self.depth -= 1
        self.memo[v] = p
        return p

    def _const(self, v: Any) -> int | None:
        try:
            r = self.ref[v]
            t = self.tstr(v)
            if r.is_constant and t.startswith("i") and t[1:].isdigit():
                c = r.get_constant_value()
                if not isinstance(c, int):
                    return None
                bits = int(t[1:])  # llvmlite reads whole 64-bit words: sign-extend from the type's width
                c &= (1 << bits) - 1
                return c - (1 << bits) if bits > 1 and c >> (bits - 1) else c
        except Exception:  # noqa: BLE001 - poison/undef/constant expressions: not a plain integer
            return None
        return None

    def _value(self, v: Any) -> Poly:
        if v in self.args:
            name = self.args[v]
            return poly.sym(f"base:{name}" if self.arg_pointer.get(name) else f"arg:{name}")
        c = self._const(v)
        if c is not None:
            return poly.const(c)
        if v not in self.inst_block:
            r = self.ref[v]
            name = r.name
            if name and name in self.txt.globals:  # operand refs report is_global False
                return poly.sym(f"base:@{name}")
            if r.is_constant and self.tstr(v).startswith("ptr") and "null" in str(r):
                return {}
            return self._opaque(v, frozenset())
        op = self.opc(v)
        ops = self.opers(v)
        text = self.text.get(v, "")
        if op in ("sext", "zext", "trunc", "freeze", "bitcast", "addrspacecast", "ptrtoint", "inttoptr"):
            return self.value(ops[0])
        if op == "add":
            return poly.add(self.value(ops[0]), self.value(ops[1]))
        if op == "or" and " disjoint " in text:
            return poly.add(self.value(ops[0]), self.value(ops[1]))
        if op == "sub":
            return poly.sub(self.value(ops[0]), self.value(ops[1]))
        if op == "xor" and self._const(ops[1]) == -1:  # ~x == -x - 1 (clang's form of ``n - 1 - i``)
            return poly.sub(poly.const(-1), self.value(ops[0]))
        if op == "mul":
            return poly.mul(self.value(ops[0]), self.value(ops[1]))
        if op == "shl":
            k = self._const(ops[1])
            if k is not None and 0 <= k < 64:
                return poly.scale(self.value(ops[0]), 1 << k)
        if op in ("lshr", "ashr", "udiv", "sdiv"):
            k = self._const(ops[1])
            if k is not None and k > 0:
                div = (1 << k) if op in ("lshr", "ashr") and k < 64 else k
                return self._floor_div(v, self.value(ops[0]), div)
            if op in ("udiv", "sdiv"):
                q = self._launch_quotient(self.value(ops[0]), self.value(ops[1]))
                if q is not None:
                    return q
        if op in ("urem", "srem"):
            # i % w: neighbours still step by 1 within a row; good enough for strides, not for values
            return self._like(v, self.value(ops[0]), ops)
        if op == "and":
            k = self._const(ops[1])
            if k is not None and k > 0 and (k & (k + 1)) == 0:  # x & (2^n - 1) == x % 2^n
                return self._like(v, self.value(ops[0]), ops)
            if k is not None and k < 0 and (-k & (-k - 1)) == 0:  # x & -2^n == 2^n * floor(x / 2^n)
                return poly.scale(self._floor_div(v, self.value(ops[0]), -k), -k)
        if op == "getelementptr":
            return self._gep(v, ops, text)
        if op == "call":
            callee = self._callee(v)
            kind = _WORK_ITEM.get(callee)
            if kind is not None:
                d = self._const(ops[0])
                if d is not None and 0 <= d <= 2:
                    if kind in ("gid", "lid"):
                        self.dims_used = max(self.dims_used, d + 1)
                    return poly.sym(f"{kind}{d}")
            if callee.startswith(("_Z5mul24", "_Z5mad24")) and len(ops) >= 2:  # 24-bit integer multiply
                prod = poly.mul(self.value(ops[0]), self.value(ops[1]))
                return poly.add(prod, self.value(ops[2])) if callee.startswith("_Z5mad24") else prod
            if callee.startswith(("llvm.smin", "llvm.smax", "llvm.umin", "llvm.umax")):
                return self._choose(v, ops[0], ops[1])
            if callee.startswith(("_Z3min", "_Z3max", "_Z5clamp")) and self.tstr(v).startswith("i"):
                return self._choose(v, ops[0], ops[1])
        if op == "select":
            return self._choose(v, ops[1], ops[2], cond=ops[0])
        if op == "phi":
            return self._phi(v, ops)
        if op == "load":
            addr = self.value(ops[0])
            sym = self._opaque(v, self.deps(addr), load=True)
            base = next((s[5:] for s in poly.symbols(addr) if s.startswith("base:")), None)
            if base is not None:
                self.load_base[next(iter(sym))[0]] = base
            return sym
        deps: frozenset[int] = frozenset()
        for o in ops:
            if o in self.inst_block or o in self.args:
                deps |= self.deps(self.value(o))
        return self._opaque(v, deps)

    def _floor_div(self, v: Any, x: Poly, d: int) -> Poly:
        """``floor(x / d)``: exact enough as ``x / d`` for small ``d``; for ``d >= 16`` neighbouring
        work-items share the value, so it becomes a symbol that is uniform for strides (but still varies
        for control flow: ``if (lid / 32 == 0)`` is divergent)."""
        c = poly.constant_value(x)
        if c is not None:
            return poly.const(c // d)
        syms = poly.symbols(x)
        if (not self.deps(x) and any(s.startswith("arg:") for s in syms)
                and all(s.startswith("arg:") or _is_launch_symbol(s) for s in syms)
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
        if coef != 1 or not mono or any(not _is_launch_symbol(n) for n in mono):
            return None
        if any(not (s.startswith("arg:") or _is_launch_symbol(s)) for s in poly.symbols(x)):
            return None
        return self._floor_symbol(x, d)

    def _floor_symbol(self, x: Poly, d: Poly) -> Poly:
        """A uniform symbol for C's ``x / d``, which trip counts evaluate for the scenario
        (``TripCount.floors``)."""
        text, dtext = poly.format_poly(x), poly.format_poly(d)
        name = f"floor:{f'({text})' if ' ' in text else text} / {f'({dtext})' if ' ' in dtext else dtext}"
        self.floors[name] = (x, d)
        self.sym_deps[name] = frozenset()
        return poly.sym(name)

    def _like(self, v: Any, approx: Poly, ops: list[Any]) -> Poly:
        return approx

    def _choose(self, v: Any, a: Any, b: Any, cond: Any = None) -> Poly:
        """min/max/select: keep the side that varies when the other is a uniform bound (a clamp)."""
        pa, pb = self.value(a), self.value(b)
        if pa == pb:
            return pa
        da, db = self.deps(pa), self.deps(pb)
        if da and not db:
            return pa
        if db and not da:
            return pb
        extra = self.deps(self.value(cond)) if cond is not None else frozenset()
        return self._opaque(v, da | db | extra)

    def _gep(self, v: Any, ops: list[Any], text: str) -> Poly:
        m = _GEP.search(text)
        base = self.value(ops[0])
        if not m:
            return poly.add(base, self._opaque(v, self.deps(base)))
        try:
            src_type, _ = self.layout.split_first_type(m.group(1))
            offset = poly.scale(self.value(ops[1]), self.layout.layout(src_type)[0]) if len(ops) > 1 else {}
            cur = src_type
            for idx in ops[2:]:
                size, field_off, cur = self.layout.index_step(cur, self._const(idx))
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
            return poly.add(base, self._opaque(v, deps))
        return poly.add(base, offset)

    def _phi(self, v: Any, ops: list[Any]) -> Poly:
        bi = self.inst_block[v]
        incoming = [self.block_index.get(self._key(b)) for b in self.ref[v].incoming_blocks]
        k = self.loop_of_header.get(bi)
        if k is not None and len(ops) == 2:
            lp = self.loops[k]
            inside = [i for i, b in enumerate(incoming) if b in lp.blocks]
            if len(inside) == 1:
                start_op, latch_op = ops[1 - inside[0]], ops[inside[0]]
                step = self._induction_step(v, latch_op, k)
                if step is not None:
                    return poly.add(self.value(start_op), poly.mul(step, poly.sym(f"it:{k}")))
        if k is not None:
            # a loop-carried value that is not an induction: an opaque symbol, placed in the memo before
            # the values coming round the back edge are computed (they may depend on it)
            lp = self.loops[k]
            start = [self.value(o) for o, b in zip(ops, incoming, strict=False) if b not in lp.blocks]
            sym = self._opaque(v, frozenset().union(*(self.deps(p) for p in start)))
            name = next(iter(sym))[0]
            self.memo[v] = sym
            for o, b in zip(ops, incoming, strict=False):
                p = start[0] if b not in lp.blocks and start else self.value(o)
                self.sym_deps[name] = self.sym_deps[name] | self.deps(p)
                if any(s_ in self.sym_load for s_ in poly.symbols(p)):
                    self.sym_load.add(name)
            return sym
        polys = [self.value(o) for o in ops]
        if all(p == polys[0] for p in polys[1:]):
            return polys[0]
        deps = frozenset().union(*(self.deps(p) for p in polys))
        sym = self._opaque(v, deps)
        if any(s_ in self.sym_load for p in polys for s_ in poly.symbols(p)):
            self.sym_load.add(next(iter(sym))[0])
        return sym

    def _induction_step(self, phi: Any, latch_op: Any, k: int) -> Poly | None:
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
        blocks = self.loops[k].blocks
        if any(self.sym_block.get(s) in blocks for s in names):
            return None
        if not step:
            return None
        return step

    # ---- trip counts ---------------------------------------------------------------------------------

    def _trip(self, k: int) -> tuple[TripCount | None, bool]:
        """The loop's trip count from an exit compare on its induction variable, and whether it varies.

        Every exiting block is tried, the latch and the header first. A loop that can also leave another
        way (a ``break``, or ``while (x < 4 && it < maxit)``) gets its induction variable's count as an
        upper bound (``TripCount.bound``): the work it can do, which the data may cut short."""
        lp = self.loops[k]
        exiting = [b for b in sorted(lp.blocks) if any(s not in lp.blocks for s in self.succ[b])]
        order = ([lp.latches[0]] if len(lp.latches) == 1 else []) + [lp.header]
        order += [b for b in exiting if b not in order]
        varies = False
        for eb in order:
            for cond, stay_if_true, combined in self._exit_conditions(eb, lp):
                single = not combined and len(exiting) == 1
                trip, v = self._solve_trip(k, eb, cond, stay_if_true, single)
                varies = varies or v
                if trip is None:
                    trip = self._geometric_trip(k, eb, cond, stay_if_true)
                if trip is not None:
                    bound = combined or len(exiting) > 1
                    if bound:
                        trip = replace(trip, bound=True)
                    return trip, varies or bound or trip.varies
        return None, varies

    def _geometric_trip(self, k: int, eb: int, cond: Any, stay_if_true: bool) -> TripCount | None:
        """A counter multiplied or divided by a constant each iteration (``for (s = lsz / 2; s > 0;
        s >>= 1)``, ``for (d = 1; d < n; d <<= 1)``: tree reductions, scans, sorting networks), compared
        with a bound known from the scenario. The count is found by running the counter
        (``TripCount.geometric``)."""
        lp = self.loops[k]
        m = _ICMP.search(self.text.get(cond, ""))
        if not m:
            return None
        pred = m.group(1) if stay_if_true else _INVERT[m.group(1)]
        cops = self.opers(cond)
        for side in (0, 1):
            g = self._geometric_counter(cops[side], lp)
            if g is None:
                continue
            start, mul, div, on_next = g
            bound = self.value(cops[1 - side])
            if any(not (s.startswith("arg:") or _is_launch_symbol(s) or s in self.floors)
                   for s in poly.symbols(start) | poly.symbols(bound)):
                return None
            at_latch = eb in lp.latches
            if on_next and not at_latch:
                return None
            p = pred if side == 0 else _SWAP[pred]
            return TripCount((), 1, geometric=(poly.freeze(start), mul, div, p, poly.freeze(bound), on_next,
                                               at_latch), floors=self._floors_of(start, bound))
        return None

    def _geometric_counter(self, v: Any, lp: _Loop) -> tuple[Poly, int, int, bool] | None:
        """(start, multiplier, divisor, compared after the update) when ``v`` is a header phi updated by a
        constant factor, or that update itself."""
        while v in self.inst_block and self.opc(v) in ("zext", "sext", "trunc"):
            v = self.opers(v)[0]
        if v not in self.inst_block:
            return None
        compared, on_next = v, False
        if self.opc(v) != "phi":  # the update itself (``s >> 1 > 0``): its first operand is the counter
            ops = self.opers(v)
            if not ops or ops[0] not in self.inst_block or self.opc(ops[0]) != "phi":
                return None
            v, on_next = ops[0], True
        if self.inst_block.get(v) != lp.header:
            return None
        ops = self.opers(v)
        blocks = [self.block_index.get(self._key(b)) for b in self.ref[v].incoming_blocks]
        if len(ops) != 2:
            return None
        inside = [i for i, b in enumerate(blocks) if b in lp.blocks]
        if len(inside) != 1:
            return None
        start_op, nxt = ops[1 - inside[0]], ops[inside[0]]
        nops = self.opers(nxt) if nxt in self.inst_block else []
        if len(nops) != 2 or nops[0] != v:
            return None
        c = self._const(nops[1])
        op = self.opc(nxt)
        if c is None or c <= 0 or c >= 31:
            return None
        mul, div = {"shl": (1 << c, 1), "mul": (c, 1), "lshr": (1, 1 << c), "ashr": (1, 1 << c),
                    "udiv": (1, c), "sdiv": (1, c)}.get(op, (1, 1))
        if mul == div or (on_next and compared != nxt):
            return None
        return self.value(start_op), mul, div, on_next

    def _exit_conditions(self, eb: int, lp: _Loop) -> list[tuple[Any, bool, bool]]:
        """(icmp, the loop goes on when it is true, one of several conditions) for the exit branch of
        block ``eb``; a logical and (or) of compares that keeps (leaves) the loop gives each compare."""
        term = self.insts[eb][-1]
        if self.opc(term) != "br":
            return []
        ops = self.opers(term)
        if len(ops) != 3:
            return []
        cond, false_b, true_b = ops
        fb, tb = self.block_index.get(false_b), self.block_index.get(true_b)
        if (tb in lp.blocks) == (fb in lp.blocks):
            return []
        stay_if_true = tb in lp.blocks
        if cond in self.inst_block and self.opc(cond) == "icmp":
            return [(cond, stay_if_true, False)]
        parts = self._logical_parts(cond, "and" if stay_if_true else "or")
        return [(c, stay_if_true, True) for c in parts]

    def _logical_parts(self, cond: Any, kind: str, depth: int = 0) -> list[Any]:
        """The compares under a chain of ``and`` (``or``) of i1 values, ``select`` forms included."""
        if cond not in self.inst_block or depth > 8:
            return []
        op = self.opc(cond)
        if op == "icmp":
            return [cond]
        ops = self.opers(cond)
        text = self.text.get(cond, "")
        if op == kind and len(ops) == 2:
            pair = list(ops)
        elif op == "select" and len(ops) == 3:
            # a && b is `select i1 a, i1 b, i1 false`; a || b is `select i1 a, i1 true, i1 b`
            m = _SELECT_I1.search(text)
            if m and kind == "and" and m.group(2) == "false":
                pair = [ops[0], ops[1]]
            elif m and kind == "or" and m.group(1) == "true":
                pair = [ops[0], ops[2]]
            else:
                return []
        else:
            return []
        return [c for o in pair for c in self._logical_parts(o, kind, depth + 1)]

    def _solve_trip(self, k: int, eb: int, cond: Any, stay_if_true: bool,
                    single_exit: bool = True) -> tuple[TripCount | None, bool]:
        """Solve ``cond`` (an icmp that keeps loop ``k`` going when it equals ``stay_if_true``) for the
        iteration count. The step may be a launch size (``i += get_local_size(0)``); a start that depends
        on the work-item (``i = get_global_id(0)``) is taken at work-item 0, the most iterations."""
        lp = self.loops[k]
        it = f"it:{k}"
        m = _ICMP.search(self.text.get(cond, ""))
        if not m:
            return None, False
        pred = m.group(1)
        if not stay_if_true:
            pred = _INVERT[pred]
        cops = self.opers(cond)
        x, b = self.value(cops[0]), self.value(cops[1])
        if it not in poly.symbols(x):
            x, b, pred = b, x, _SWAP[pred]
        s = poly.coefficient(x, it)
        if s is None or it in poly.symbols(b):
            return None, bool(self.deps(x) or self.deps(b))
        s_val = poly.constant_value(s)
        den_sym: poly.FrozenPoly = ()
        per_sym = Fraction(1)  # the step is per_sym x den_sym (``row += get_global_size(0) / 32``)
        if s_val is None:
            # a step of a launch size or an argument (``i += stride``): one monomial of those symbols
            if len(s) != 1:
                return None, bool(self.deps(x) or self.deps(b))
            (mono, coef), = s.items()
            if not mono or any(not (_is_launch_symbol(n) or n.startswith("arg:")) for n in mono) \
                    or coef <= 0:
                return None, bool(self.deps(x) or self.deps(b))
            den_sym = poly.freeze({mono: Fraction(1)})
            per_sym = Fraction(coef)
            s_val = Fraction(coef.numerator)
        if s_val == 0 or s_val.denominator != 1:
            return None, bool(self.deps(x) or self.deps(b))
        a = poly.without(x, [it])
        # a range that moves with the work-group or work-item (``for (i = base; i < base + n; ...)``,
        # ``base = n * get_group_id(1)``): the terms shared by start and bound cancel. Not for a loop
        # that can leave another way: a search over such a range (a tile loader looking for the lane
        # that holds an element) stops long before its bound
        shared = {mono: c for mono, c in a.items()
                  if single_exit and any(_is_work_item_symbol(n) for n in mono) and b.get(mono) == c}
        if shared:
            a = {mono: c for mono, c in a.items() if mono not in shared}
            b = {mono: c for mono, c in b.items() if mono not in shared}
        varies = False
        sign = 1 if int(s_val) > 0 else -1
        work_item = [n for n in poly.symbols(a) if _is_work_item_symbol(n) or self.slow_deps.get(n)]
        if work_item:
            # the first work-item runs the most iterations when the start grows with the id
            if any(sign * c < 0 for mono, c in a.items() if any(n in work_item for n in mono)):
                return None, True
            a = {mono: c for mono, c in a.items() if not any(n in work_item for n in mono)}
            varies = True
        bound_item = [n for n in poly.symbols(b) if _is_work_item_symbol(n) or self.slow_deps.get(n)]
        if bound_item and single_exit:
            # ... and when the bound shrinks as the id grows (``j < n - 1 - i``, triangular loops)
            if any(sign * c > 0 for mono, c in b.items() if any(n in bound_item for n in mono)):
                return None, True
            b = {mono: c for mono, c in b.items() if not any(n in bound_item for n in mono)}
            varies = True
        delta = 1 if eb in lp.latches else 0
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
            return None, varies
        step_poly = poly.scale(poly.thaw(den_sym), per_sym) if den_sym else poly.const(step * delta)
        num = poly.add(poly.sub(b, a), step_poly if delta else {})
        num = poly.scale(num, per_sym.denominator)  # count num / (per_sym x den_sym)
        if any(not (s_.startswith("arg:") or _is_launch_symbol(s_) or s_ in self.floors)
               for s_ in poly.symbols(num)):
            if any(s_.startswith("ld:") for s_ in poly.symbols(num)):
                lp.data_bound = True
                lp.bound_buffers |= {self.load_base[s_] for s_ in poly.symbols(num) if s_ in self.load_base}
            return None, bool(self.deps(num) or any(s_ in self.sym_load for s_ in poly.symbols(num)))
        # fractions left (``lsz0 / 2``: a launch size, not a floor symbol) scale numerator and step alike
        scale = math.lcm(*(c.denominator for c in num.values())) if num else 1
        return TripCount(poly.freeze(poly.scale(num, scale)), step * scale, den_sym, varies=varies,
                         floors=self._floors_of(num)), varies

    def _floors_of(self, *polys: Poly) -> tuple[tuple[str, poly.FrozenPoly, poly.FrozenPoly], ...]:
        names = sorted({s for p in polys for s in poly.symbols(p) if s in self.floors})
        return tuple((n, poly.freeze(self.floors[n][0]), poly.freeze(self.floors[n][1])) for n in names)

    def _varies(self, v: Any) -> bool:
        p = self.value(v)
        return bool(self.deps(p)) or any(self.slow_deps.get(s) for s in poly.symbols(p))

    # ---- positions -----------------------------------------------------------------------------------

    def _pos(self, inst: Any) -> tuple[int, int] | None:
        if not self.dbg_ok:
            return None
        return self.txt.location(dbg_id(self.text.get(inst, "")))

    def _block_pos(self, bi: int) -> tuple[int, int] | None:
        for inst in self.insts[bi]:
            p = self._pos(inst)
            if p is not None:
                return p
        return None

    # ---- the walk ------------------------------------------------------------------------------------

    def run(self) -> WalkResult:
        self._cfg()
        self._find_loops()
        for k, lp in enumerate(self.loops):
            pos = None
            for latch in lp.latches:
                md = loop_id(self.text.get(self.insts[latch][-1], "")) if self.dbg_ok else None
                if md is not None:
                    pos = self.txt.loop_start(md)
                    if pos:
                        break
            pos = pos or self._block_pos(lp.header) or (0, 0)
            lp.line, lp.column = pos
            lp.trip, lp.varies = self._trip(k)
        accesses: list[Access] = []
        groups: dict[tuple[int, ...], dict[str, float]] = {}
        barriers = 0
        barrier_blocks: list[tuple[int, Any]] = []
        staged: set[str] = set()
        read: set[str] = set()
        written: set[str] = set()
        for bi in self.rpo:
            chain = self.block_loops[bi]
            g = groups.setdefault(chain, {})
            for inst in self.insts[bi]:
                op = self.opc(inst)
                if op in _FLOAT_OPS:
                    _bump(g, "flops", self._lanes(inst))
                    if op in ("fdiv", "frem"):
                        _bump(g, "special_ops", self._lanes(inst))
                    if "double" in self.tstr(inst):
                        _bump(g, "fp64_ops", self._lanes(inst))
                elif op in _INT_OPS:
                    _bump(g, "int_ops", self._lanes(inst) if op != "icmp" else 1)
                    if op in _DIVS and self._const(self.opers(inst)[1]) is None:
                        _bump(g, "int_divs", self._lanes(inst))
                elif op == "load":
                    self._access(inst, "load", self.opers(inst)[0], self.tstr(inst), chain, accesses, g)
                elif op == "store":
                    ops = self.opers(inst)
                    self._access(inst, "store", ops[1], self.tstr(ops[0]), chain, accesses, g)
                    vo = ops[0]
                    to_local = _space(self.tstr(ops[1])) == "local"
                    if to_local and vo in self.inst_block and self.opc(vo) == "load":
                        base, _ = self._base(self.value(self.opers(vo)[0]))
                        if base:
                            staged.add(base)
                elif op in ("atomicrmw", "cmpxchg"):
                    ops = self.opers(inst)
                    self._access(inst, "atomic", ops[0], self.tstr(ops[1]), chain, accesses, g)
                elif op == "call":
                    callee = self._callee(inst)
                    if callee in _WORK_ITEM:
                        continue
                    ops = self.opers(inst)
                    if callee in _BARRIERS:
                        barriers += 1
                        barrier_blocks.append((bi, inst))
                    elif _ATOMIC_CALL.match(callee) and ops and self.tstr(ops[0]).startswith("ptr"):
                        t = self.tstr(inst)
                        t = t if t != "void" else self.tstr(ops[1])
                        self._access(inst, "atomic", ops[0], t, chain, accesses, g)
                    elif callee.startswith(("llvm.memcpy", "llvm.memmove")):
                        n = self._const(ops[2]) or 0
                        self._access(inst, "load", ops[1], f"[{n} x i8]", chain, accesses, g)
                        self._access(inst, "store", ops[0], f"[{n} x i8]", chain, accesses, g)
                    elif callee.startswith("llvm.memset"):
                        n = self._const(ops[2]) or 0
                        self._access(inst, "store", ops[0], f"[{n} x i8]", chain, accesses, g)
                    elif callee.startswith(("llvm.fmuladd", "llvm.fma", "_Z3mad", "_Z3fma")):
                        _bump(g, "flops", 2 * self._lanes(inst))
                        if "double" in self.tstr(inst):
                            _bump(g, "fp64_ops", self._lanes(inst))
                    elif _FLOAT_RESULT.match(self.text[inst]) and callee not in _WORK_ITEM:
                        _bump(g, "flops", self._lanes(inst))
                        if "double" in self.tstr(inst):
                            _bump(g, "fp64_ops", self._lanes(inst))
                        if _is_special(callee):
                            _bump(g, "special_ops", self._lanes(inst))
                    elif not callee.startswith("llvm.") and callee not in _WORK_ITEM:
                        for o in ops[:-1]:  # an opaque call may read and write any buffer it is given
                            if self.tstr(o).startswith("ptr"):
                                base, _ = self._base(self.value(o))
                                if base:
                                    read.add(base)
                                    written.add(base)
        for a in accesses:
            if a.param:
                if a.kind in ("load", "atomic"):
                    read.add(a.param)
                if a.kind in ("store", "atomic"):
                    written.add(a.param)
        self._partition_trips(accesses)
        loops = self._loop_infos()
        order = self._loop_order
        accesses = [_renumber(a, order, loops) for a in accesses]
        accesses.sort(key=lambda a: (a.line, a.column))
        op_groups = [(tuple(order[i] for i in chain), _ops(g)) for chain, g in groups.items() if g]
        return WalkResult(
            accesses,
            loops,
            barriers,
            op_groups,
            self._divergent(barrier_blocks),
            staged,
            self.dims_used,
            read,
            written,
        )

    def _partition_trips(self, accesses: list[Access]) -> None:
        """A loop between loaded bounds that walks a buffer (``for (e = rowptr[v]; e < rowptr[v + 1]; ++e)
        ... adj[e]``: CSR rows, graph adjacency, segments) runs on average one segment of that buffer
        (``TripCount.average``): ``len(buffer) / len(offsets)`` when the bounds come from one offsets
        table (a BFS frontier visits a few of its segments), divided by the step when lanes interleave
        (``e += 32``: a warp per row); otherwise ``len(buffer) / work-items``."""
        gsz = tuple(f"gsz{d}" for d in range(max(1, self.dims_used)))
        for k, lp in enumerate(self.loops):
            if lp.trip is not None or not lp.data_bound:
                continue
            it = f"it:{k}"
            acc = next((a for a in accesses
                        if a.param and a.address_space == "global" and k in a.loops and a.offset
                        and self.arg_pointer.get(a.param) and self._steps_with(a, it)), None)
            if acc is None:
                continue
            walked = str(acc.param)
            tables = [b for b in lp.bound_buffers if self.arg_pointer.get(b) and b != walked]
            if len(tables) == 1:
                c = poly.constant_value(poly.coefficient(poly.thaw(acc.offset), it) or {}) or 1
                step = max(1, round(abs(float(c)) / float(acc.element_size or 4)))
                den, den_sym = step, poly.freeze({(f"arg:{tables[0]}",): Fraction(1)})
            else:  # every element is visited once in all, whatever the step
                den, den_sym = 1, poly.freeze({gsz: Fraction(1)})
            lp.trip = TripCount(poly.freeze({(f"arg:{walked}",): Fraction(1)}), den, den_sym, varies=True,
                                average=True)
            lp.varies = True

    @staticmethod
    def _steps_with(a: Access, it: str) -> bool:
        """The access's address moves by a constant with iteration ``it``."""
        c = poly.coefficient(poly.thaw(a.offset), it)
        return c is not None and poly.constant_value(c) not in (None, 0)

    def _loop_infos(self) -> list[LoopInfo]:
        idx = sorted(range(len(self.loops)), key=lambda i: (self.loops[i].line, self.loops[i].column))
        self._loop_order = {old: new for new, old in enumerate(idx)}
        out = []
        for old in idx:
            lp = self.loops[old]
            trip = lp.trip
            # a constant bound stays the count (a loop that can break out may still be worth unrolling)
            count = trip.constant if trip is not None else None
            expr = None if trip is None or count is not None else \
                (f"at most {trip.expr}" if trip.bound else f"about {trip.expr} on average" if trip.average
                 else trip.expr)
            out.append(
                LoopInfo(
                    lp.line,
                    lp.column,
                    lp.depth,
                    count,
                    expr,
                    None,
                    self._loop_order[lp.parent] if lp.parent is not None else None,
                    trip,
                    lp.varies,
                )
            )
        return out

    def _base(self, p: Poly) -> tuple[str | None, Poly]:
        bases = [m for m in p if len(m) == 1 and m[0].startswith("base:") and p[m] == 1]
        if len(bases) != 1 or any(s.startswith("base:") for m in p if m != bases[0] for s in m):
            return None, p
        name = bases[0][0][5:]
        off = dict(p)
        del off[bases[0]]
        if name.startswith("@"):
            name = name[1:]
            fn = self.fn.name
            if name.startswith(fn + "."):
                name = name[len(fn) + 1 :]
        return name, off

    def _access(
        self,
        inst: Any,
        kind: str,
        ptr: Any,
        type_text: str,
        chain: tuple[int, ...],
        out: list[Access],
        g: dict[str, float],
    ) -> None:
        space = _space(self.tstr(ptr))
        size = self.layout.size(type_text) or 0
        if space == "private":
            return
        if kind == "atomic":
            _bump(g, "atomics", 1)
        elif space == "global":
            _bump(g, "global_load_bytes" if kind == "load" else "global_store_bytes", size)
        elif space == "local":
            _bump(g, "local_load_bytes" if kind == "load" else "local_store_bytes", size)
        elif space == "constant" and kind == "load":
            _bump(g, "constant_load_bytes", size)
        base, off = self._base(self.value(ptr))
        unit = max(size, self.param_elem_sizes.get(base or "", 0)) or 1
        pattern, stride, expr = self.classify(off, 0, unit)
        d1: tuple[Pattern | None, int | None, str | None] = (None, None, None)
        if self.dims_used >= 2 or self._mentions_dim(off, 1):
            d1 = self.classify(off, 1, unit)
        pos = self._pos(inst)
        if pos is None:  # hoisted out of a loop, its location dropped: the address computation has one
            pptr = ptr if ptr in self.inst_block else None
            pos = (self._pos(pptr) if pptr is not None else None) or self._block_pos(self.inst_block[inst])
        pos = pos or (0, 0)
        if kind == "store":  # a store's location is its '='; the subscript it writes reads better
            pptr = ptr if ptr in self.inst_block else None
            ppos = self._pos(pptr) if pptr is not None else None
            if ppos is not None and ppos[0] == pos[0]:
                pos = ppos
        out.append(
            Access(
                base,
                kind,
                space,
                pattern,
                stride,
                expr,
                pos[0],
                pos[1],
                bool(chain),
                size,  # type: ignore[arg-type]
                d1[0],
                d1[1],
                d1[2],
                None,
                chain,
                offset=poly.freeze(off),
            )
        )

    def _mentions_dim(self, p: Poly, dim: int) -> bool:
        return dim in self.deps(p)

    def classify(self, off: Poly, dim: int, unit: int) -> tuple[Pattern, int | None, str | None]:
        """Pattern of a byte offset along work-item dimension ``dim``, stride in ``unit``-byte elements."""
        ids = (f"gid{dim}", f"lid{dim}")
        indirect = unknown = False
        for m in off:
            for s in m:
                if s in ids:
                    continue
                d = self.sym_deps.get(s)
                if d is not None and dim in d:
                    if s in self.sym_load:
                        indirect = True
                    else:
                        unknown = True
        if indirect:
            return "indirect", None, None
        if unknown:
            return "unknown", None, None
        coef: Poly = {}
        for s in ids:
            c = poly.coefficient(off, s)
            if c is None:
                return "unknown", None, None
            coef = poly.add(coef, c)
        if self.deps(coef) or any(s.startswith(("it:", "v:", "ld:")) for s in poly.symbols(coef)):
            return "unknown", None, None
        stride = poly.scale(coef, Fraction(1, unit))
        c = poly.constant_value(stride)
        if c is None:
            return "strided", None, poly.format_poly(stride)
        if c == 0:
            return "uniform", 0, None
        if c.denominator != 1:
            return ("contiguous" if abs(c) < 1 else "strided"), None, str(c)
        n = int(c)
        return ("contiguous" if abs(n) == 1 else "strided"), n, None

    # ---- barrier divergence --------------------------------------------------------------------------

    def _divergent(self, barriers: list[tuple[int, Any]]) -> list[tuple[int, int, int]]:
        if not barriers:
            return []
        n = len(self.blocks)
        full = set(range(n))
        pdom: list[set[int]] = [set(full) for _ in range(n)]
        exits = [b for b in range(n) if not self.succ[b]]
        for b in exits:
            pdom[b] = {b}
        changed = True
        while changed:
            changed = False
            for b in reversed(self.rpo):
                if not self.succ[b]:
                    continue
                new = set.intersection(*(pdom[s] for s in self.succ[b])) | {b}
                if new != pdom[b]:
                    pdom[b] = new
                    changed = True
        def control_deps(b: int) -> list[int]:
            """Branches that decide whether ``b`` runs: b post-dominates one successor, not the branch."""
            return [c for c in self.rpo if len(self.succ[c]) >= 2 and b not in pdom[c]
                    and any(b in pdom[s] for s in self.succ[c])]

        out = []
        for bb, inst in barriers:
            todo, seen = control_deps(bb), set()
            while todo:
                c = todo.pop(0)
                if c in seen:
                    continue
                seen.add(c)
                term = self.insts[c][-1]
                cond = self.opers(term)[0]
                if self._varies(cond):
                    bpos = self._pos(inst) or (0, 0)
                    cpos = self._pos(term) or (self._pos(cond) if cond in self.inst_block else None)
                    out.append((bpos[0], bpos[1], (cpos or (0, 0))[0]))
                    break
                todo += control_deps(c)
        return out

    def _reaches(self, a: int, b: int) -> bool:
        seen = {a}
        work = list(self.succ[a])
        while work:
            x = work.pop()
            if x == b:
                return True
            if x in seen:
                continue
            seen.add(x)
            work.extend(self.succ[x])
        return False


def _renumber(a: Access, order: dict[int, int], loops: list[LoopInfo]) -> Access:
    from dataclasses import replace

    chain = tuple(order[i] for i in a.loops)

    def rename(s: str) -> str:
        return f"it:{order[int(s[3:])]}" if s.startswith("it:") else s

    offset = poly.freeze({tuple(sorted(rename(s) for s in m)): c for m, c in a.offset})
    return replace(a, loops=chain, loop_line=loops[chain[-1]].line if chain else None, offset=offset)


def _space(type_text: str) -> str:
    m = _ADDRSPACE.search(type_text)
    return _SPACES.get(int(m.group(1)) if m and m.group(1) else 0, "global")


def _lanes(type_text: str) -> int:
    m = re.match(r"<(\d+) x ", type_text)
    return int(m.group(1)) if m else 1


# OpenCL built-ins that are not one FMA-class instruction on any device: a GPU runs them on its special
# function units (or as a longer sequence when full precision is asked for), a CPU calls a vector library
_SPECIAL = {
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "pow", "pown", "powr", "rootn",
    "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi", "atan2pi",
    "erf", "erfc", "tgamma", "lgamma", "lgamma_r", "hypot", "fmod", "remainder", "remquo", "divide", "recip",
}
_MANGLED = re.compile(r"_Z(\d+)(\w+)")


def _is_special(callee: str) -> bool:
    """``_Z3expf`` / ``_Z10native_sinDv4_f`` / ``llvm.sqrt.f32``: a special function?"""
    if callee.startswith("llvm."):
        return callee.split(".")[1] in _SPECIAL
    m = _MANGLED.match(callee)
    if not m:
        return False
    name = m.group(2)[: int(m.group(1))]
    for prefix in ("native_", "half_"):
        name = name.removeprefix(prefix)
    return name in _SPECIAL


def _bump(g: dict[str, float], key: str, n: float) -> None:
    g[key] = g.get(key, 0) + n


def _ops(g: dict[str, float]) -> Ops:
    return Ops(**{k: v for k, v in g.items()})
