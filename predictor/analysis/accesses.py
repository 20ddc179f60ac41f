"""Memory accesses: which buffer each load, store or atomic goes through, the bytes it moves, and how
neighbouring work-items' addresses relate.

From an access's byte offset (``values``), the coefficient of ``gid0``/``lid0`` is the distance between
neighbouring work-items' addresses: one element is contiguous, more is strided, an offset built from a
loaded value that varies is indirect.
"""

from __future__ import annotations

import re
from fractions import Fraction

from clperf.core.records import AddressSpace
from clperf.predictor.analysis import poly
from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.irtext import TypeLayout
from clperf.predictor.analysis.opcounts import Tally, bump
from clperf.predictor.analysis.poly import Poly
from clperf.predictor.analysis.records import Access, AccessKind, Pattern
from clperf.predictor.analysis.values import Values

# LLVM's address space numbers on spir64 (4, the generic space, is taken for global memory)
SPACES: dict[int, AddressSpace] = {0: "private", 1: "global", 2: "constant", 3: "local", 4: "global"}
_ADDRSPACE = re.compile(r"ptr(?: addrspace\((\d+)\))?")
_NOT_STRIDES = ("it:", "v:", "ld:")  # symbols a stride cannot be given in

Classified = tuple[Pattern, int | None, str | None]  # pattern, stride in elements, symbolic stride


def space(type_text: str) -> AddressSpace:
    """The OpenCL address space of a pointer type (``ptr addrspace(3)`` is __local)."""
    m = _ADDRSPACE.search(type_text)
    return SPACES.get(int(m.group(1)) if m and m.group(1) else 0, "global")


class Accesses:
    """The accesses of one function, in the order the walk meets them."""

    def __init__(self, f: FunctionIR, values: Values, layout: TypeLayout, param_elem_sizes: dict[str, int]):
        self.f = f
        self.values = values
        self.layout = layout
        self.param_elem_sizes = param_elem_sizes
        self.found: list[Access] = []
        self.found_insts: list[int] = []  # the instruction of each of ``found``

    def record(self, inst: int, kind: AccessKind, ptr: int, type_text: str, chain: tuple[int, ...],
               g: Tally) -> None:
        """``inst`` moves a ``type_text`` through ``ptr``; its bytes go to tally ``g``. Private memory
        (registers, once the optimiser is done) is left out."""
        where = space(self.f.tstr(ptr))
        size = self.layout.size(type_text) or 0
        if where == "private":
            return
        _count_bytes(g, kind, where, size)
        base, off = self.values.base(self.values.value(ptr))
        unit = max(size, self.param_elem_sizes.get(base or "", 0)) or 1
        pattern, stride, expr = classify(self.values, off, 0, unit)
        d1: tuple[Pattern | None, int | None, str | None] = (None, None, None)
        if self.values.dims_used >= 2 or 1 in self.values.deps(off):
            d1 = classify(self.values, off, 1, unit)
        line, column = self._position(inst, kind, ptr)
        self.found.append(Access(
            param=base, kind=kind, address_space=where, pattern=pattern, stride=stride, stride_expr=expr,
            line=line, column=column, in_loop=bool(chain), element_size=size,
            dim1_pattern=d1[0], dim1_stride=d1[1], dim1_stride_expr=d1[2],
            loop_line=None, loops=chain, offset=poly.freeze(off),
        ))
        self.found_insts.append(inst)

    def _position(self, inst: int, kind: AccessKind, ptr: int) -> tuple[int, int]:
        f = self.f
        pptr = ptr if ptr in f.inst_block else None
        pos = f.pos(inst)
        if pos is None:  # hoisted out of a loop, its location dropped: the address computation has one
            pos = (f.pos(pptr) if pptr is not None else None) or f.block_pos(f.inst_block[inst])
        pos = pos or (0, 0)
        if kind == "store":  # a store's location is its '='; the subscript it writes reads better
            ppos = f.pos(pptr) if pptr is not None else None
            if ppos is not None and ppos[0] == pos[0]:
                pos = ppos
        return pos


def _count_bytes(g: Tally, kind: AccessKind, where: AddressSpace, size: int) -> None:
    if kind == "atomic":
        bump(g, "atomics", 1)
    elif where == "global":
        bump(g, "global_load_bytes" if kind == "load" else "global_store_bytes", size)
    elif where == "local":
        bump(g, "local_load_bytes" if kind == "load" else "local_store_bytes", size)
    elif where == "constant" and kind == "load":
        bump(g, "constant_load_bytes", size)


def classify(values: Values, off: Poly, dim: int, unit: int) -> Classified:
    """Pattern of a byte offset along work-item dimension ``dim``, stride in ``unit``-byte elements."""
    ids = (f"gid{dim}", f"lid{dim}")
    hidden = _hidden_variation(values, off, dim, ids)
    if hidden is not None:
        return hidden, None, None
    coef: Poly = {}
    for s in ids:
        c = poly.coefficient(off, s)
        if c is None:
            return "unknown", None, None
        coef = poly.add(coef, c)
    if values.deps(coef) or any(s.startswith(_NOT_STRIDES) for s in poly.symbols(coef)):
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


def _hidden_variation(values: Values, off: Poly, dim: int, ids: tuple[str, str]) -> Pattern | None:
    """"indirect" when the offset holds a loaded value that varies along ``dim``, "unknown" when it holds
    another symbol that does, None when only the work-item ids themselves vary."""
    indirect = unknown = False
    for m in off:
        for s in m:
            if s in ids:
                continue
            d = values.sym_deps.get(s)
            if d is not None and dim in d:
                if s in values.sym_load:
                    indirect = True
                else:
                    unknown = True
    if indirect:
        return "indirect"
    return "unknown" if unknown else None
