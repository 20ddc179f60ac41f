"""The IR walk over one kernel: loops and their trip counts, accesses, op counts and barriers, in one
pass over its blocks in reverse postorder.

The pieces live in modules of their own: ``function`` (the instructions), ``cfg`` (dominators, loops),
``values`` (values as polynomials), ``trips`` (trip counts), ``accesses`` (access patterns),
``opcounts`` (operation counts) and ``divergence`` (barriers under varying branches). This module runs
them in order and gathers a ``WalkResult``, with loops numbered in source order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from clperf.predictor.analysis import poly
from clperf.predictor.analysis.accesses import Accesses, space
from clperf.predictor.analysis.cfg import Loop, control_flow, find_loops
from clperf.predictor.analysis.divergence import divergent_barriers
from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.gating import waited_loads
from clperf.predictor.analysis.irtext import FunctionText, IRText, TypeLayout, loop_id
from clperf.predictor.analysis.opcounts import (
    FLOAT_OPS,
    INT_OPS,
    Tally,
    bump,
    count_operation,
    path_cycles,
    to_ops,
)
from clperf.predictor.analysis.records import Access, LoopInfo, Ops
from clperf.predictor.analysis.trips import TripCounts, partition_trips
from clperf.predictor.analysis.values import WORK_ITEM, Values

_BARRIERS = (
    "_Z7barrierj",
    "_Z18work_group_barrierj",
    "_Z18work_group_barrierj12memory_scope",
    "_Z22sub_group_barrierj",
)
_ATOMIC_CALL = re.compile(r"^_Z\d+(atomic|atom)_")


@dataclass
class WalkResult:
    accesses: list[Access]
    loops: list[LoopInfo]
    barriers: int
    op_groups: list[tuple[tuple[int, ...], Ops]]
    op_blocks: list[tuple[str, Ops]]  # each block's ops per execution, for a counting run's block counts
    block_loops: list[tuple[str, tuple[int, ...]]]  # each block's loops, outermost first
    divergent_barriers: list[tuple[int, int, int]]  # (barrier line, column, condition line)
    staged: set[str]  # parameters whose loaded values are stored to __local memory
    dims: int
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)


@dataclass
class _Seen:
    """What the walk gathers besides the accesses."""

    groups: dict[tuple[int, ...], Tally] = field(default_factory=dict)  # loop chain -> op tally
    blocks: dict[int, Tally] = field(default_factory=dict)  # block -> op tally of one execution
    barriers: list[tuple[int, int]] = field(default_factory=list)  # (block, call)
    staged: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)


class KernelWalk:
    """One pass over one kernel function. Create, call ``run()`` once, read the WalkResult."""

    def __init__(
        self, fn: Any, ftext: FunctionText, txt: IRText, layout: TypeLayout, param_elem_sizes: dict[str, int]
    ):
        self.f = FunctionIR(fn, ftext, txt)
        self.txt = txt
        self.cfg = control_flow(self.f)
        self.loops = find_loops(self.cfg)
        self.values = Values(self.f, layout, self.loops)
        self.accesses = Accesses(self.f, self.values, layout, param_elem_sizes)
        self.seen = _Seen()

    def run(self) -> WalkResult:
        trips = TripCounts(self.f, self.cfg, self.values, self.loops.loops)
        for k, lp in enumerate(self.loops.loops):
            lp.line, lp.column = self._loop_position(lp)
            lp.trip, lp.varies = trips.trip(k)
        for bi in self.cfg.rpo:
            chain = self.loops.block_loops[bi]
            g = self.seen.groups.setdefault(chain, {})
            b = self.seen.blocks.setdefault(bi, {})
            for inst in self.f.insts[bi]:
                self._instruction(bi, inst, chain, b)
            path, every = path_cycles(self.f, bi)
            if every:
                bump(b, "path_cycles", path)
                bump(b, "op_cycles", every)
            for k, v in b.items():
                g[k] = g.get(k, 0) + v
        seen = self.seen
        waits = waited_loads(self.f, self.cfg, self.loops, frozenset(bi for bi, _ in seen.barriers))
        names = [blk.name for blk in self.f.blocks]
        found = [replace(a, wait=waits[i] if i in waits and a.kind == "load" else a.wait,
                         block=names[self.f.inst_block[i]])
                 for a, i in zip(self.accesses.found, self.accesses.found_insts, strict=True)]
        for a in found:
            if a.param:
                if a.kind in ("load", "atomic"):
                    seen.read.add(a.param)
                if a.kind in ("store", "atomic"):
                    seen.written.add(a.param)
        partition_trips(self.f, self.values, self.loops.loops, found)
        loops, order = _loop_infos(self.loops.loops, names)
        accesses = sorted((_renumber(a, order, loops) for a in found), key=lambda a: (a.line, a.column))
        op_groups = [(tuple(order[i] for i in chain), to_ops(g)) for chain, g in seen.groups.items() if g]
        op_blocks = [(names[bi], to_ops(b)) for bi, b in seen.blocks.items() if b]
        block_loops = [(names[bi], tuple(order[i] for i in self.loops.block_loops[bi]))
                       for bi in self.cfg.rpo]
        # before reading dims: a branch condition may be the first use of get_local_id(1)
        divergent = divergent_barriers(self.f, self.cfg, self.values, seen.barriers)
        return WalkResult(accesses=accesses, loops=loops, barriers=len(seen.barriers), op_groups=op_groups,
                          op_blocks=op_blocks, block_loops=block_loops,
                          divergent_barriers=divergent, staged=seen.staged, dims=self.values.dims_used,
                          read=seen.read, written=seen.written)

    def _loop_position(self, lp: Loop) -> tuple[int, int]:
        """The loop's keyword from its ``!llvm.loop`` metadata, else its header's first location."""
        f = self.f
        pos = None
        for latch in lp.latches:
            md = loop_id(f.text.get(f.insts[latch][-1], "")) if f.dbg_ok else None
            if md is not None:
                pos = self.txt.loop_start(md)
                if pos:
                    break
        return pos or f.block_pos(lp.header) or (0, 0)

    def _instruction(self, bi: int, inst: int, chain: tuple[int, ...], g: Tally) -> None:
        f, record = self.f, self.accesses.record
        op = f.opc(inst)
        if op in FLOAT_OPS or op in INT_OPS:
            count_operation(f, inst, g)
        elif op == "load":
            record(inst, "load", f.opers(inst)[0], f.tstr(inst), chain, g)
        elif op == "store":
            self._store(inst, chain, g)
        elif op in ("atomicrmw", "cmpxchg"):
            ops = f.opers(inst)
            record(inst, "atomic", ops[0], f.tstr(ops[1]), chain, g)
        elif op == "call":
            self._call(bi, inst, chain, g)

    def _store(self, inst: int, chain: tuple[int, ...], g: Tally) -> None:
        f = self.f
        ops = f.opers(inst)
        self.accesses.record(inst, "store", ops[1], f.tstr(ops[0]), chain, g)
        vo = ops[0]
        if space(f.tstr(ops[1])) == "local" and vo in f.inst_block and f.opc(vo) == "load":
            base, _ = self.values.base(self.values.value(f.opers(vo)[0]))
            if base:
                self.seen.staged.add(base)

    def _call(self, bi: int, inst: int, chain: tuple[int, ...], g: Tally) -> None:
        f, record = self.f, self.accesses.record
        callee = f.callee(inst)
        if callee in WORK_ITEM:
            return
        ops = f.opers(inst)
        if callee in _BARRIERS:
            self.seen.barriers.append((bi, inst))
        elif _ATOMIC_CALL.match(callee) and ops and f.tstr(ops[0]).startswith("ptr"):
            t = f.tstr(inst)
            record(inst, "atomic", ops[0], t if t != "void" else f.tstr(ops[1]), chain, g)
        elif callee.startswith(("llvm.memcpy", "llvm.memmove")):
            n = f.const(ops[2]) or 0
            record(inst, "load", ops[1], f"[{n} x i8]", chain, g)
            record(inst, "store", ops[0], f"[{n} x i8]", chain, g)
        elif callee.startswith("llvm.memset"):
            record(inst, "store", ops[0], f"[{f.const(ops[2]) or 0} x i8]", chain, g)
        elif not count_operation(f, inst, g) and not callee.startswith("llvm."):
            for o in ops[:-1]:  # an opaque call may read and write any buffer it is given
                if f.tstr(o).startswith("ptr"):
                    base, _ = self.values.base(self.values.value(o))
                    if base:
                        self.seen.read.add(base)
                        self.seen.written.add(base)


def _loop_infos(loops: list[Loop], blocks: list[str]) -> tuple[list[LoopInfo], dict[int, int]]:
    """The loops in source order, and each loop's new index by its old one (``blocks``: the function's
    block names, by index)."""
    idx = sorted(range(len(loops)), key=lambda i: (loops[i].line, loops[i].column))
    order = {old: new for new, old in enumerate(idx)}
    out = []
    for old in idx:
        lp = loops[old]
        trip = lp.trip
        # a constant bound stays the count (a loop that can break out may still be worth unrolling)
        count = trip.constant if trip is not None else None
        expr = None if trip is None or count is not None else \
            (f"at most {trip.expr}" if trip.bound else f"about {trip.expr} on average" if trip.average
             else trip.expr)
        out.append(LoopInfo(line=lp.line, column=lp.column, depth=lp.depth, trip_count=count, trip_expr=expr,
                            unroll=None, parent=order[lp.parent] if lp.parent is not None else None,
                            trip=trip, varies=lp.varies, header=blocks[lp.header],
                            latches=tuple(blocks[b] for b in lp.latches)))
    return out, order


def _renumber(a: Access, order: dict[int, int], loops: list[LoopInfo]) -> Access:
    chain = tuple(order[i] for i in a.loops)

    def rename(s: str) -> str:
        return f"it:{order[int(s[3:])]}" if s.startswith("it:") else s

    offset = poly.freeze({tuple(sorted(rename(s) for s in m)): c for m, c in a.offset})
    return replace(a, loops=chain, loop_line=loops[chain[-1]].line if chain else None, offset=offset)
