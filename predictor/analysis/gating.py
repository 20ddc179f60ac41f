"""Loads a loop waits for: those its exit decision or its next address depends on.

A GPU issues a warp's loads and runs on until an instruction needs a loaded value. A loop whose exit
condition depends on a value loaded in the same iteration (a linear search that breaks on a match, a
binary search narrowing its bounds by the value at its midpoint, a walk down a tree until a key is found)
cannot start its next iteration before that load returns: each iteration takes a whole load latency, however
many loads other loops keep in flight. ``waited_loads`` finds them: the loads in the backward slice, within
the loop, of the conditions of its exiting branches (through phis, so a bound updated from a loaded value
counts), and the loads whose address is a value loaded in an earlier iteration (``p = next[p]``: the
next load cannot start before this one returns), and in a loop with a barrier the loads whose address is
a value loaded in the same iteration (a tree level's node read through the index another work-item stored
before the barrier: the barrier keeps the next iteration from starting while they wait), each with how
its address moves from one iteration to the next:

* ``walk``: with the loop's own counters (a linear search: consecutive iterations share cache lines);
* ``chase``: through a loaded value (a binary search, a tree or list walk: each address is new);
* ``fixed``: not at all (a bound re-read every iteration, ``j < rowptr[i + 1]`` beside stores that may
  alias it): the same line each time.
"""

from __future__ import annotations

from typing import Literal

from clperf.predictor.analysis.cfg import ControlFlow, Loops
from clperf.predictor.analysis.function import FunctionIR

Wait = Literal["walk", "chase", "fixed"]
_LOADS = ("load", "atomicrmw", "cmpxchg")


def waited_loads(f: FunctionIR, cfg: ControlFlow, loops: Loops,
                 barrier_blocks: frozenset[int] = frozenset()) -> dict[int, Wait]:
    """Load instructions that an exit of their innermost enclosing loop depends on, or whose address
    was loaded in an earlier iteration of it, or (in a loop holding one of ``barrier_blocks``) in the
    same iteration, with how their address moves (module doc). An inner loop's exit slice stays inside
    that loop."""
    out: dict[int, Wait] = {}
    for k, lp in enumerate(loops.loops):
        held = bool(barrier_blocks & lp.blocks)
        seeds = []
        for b in lp.blocks:
            if not f.insts[b] or all(s in lp.blocks for s in cfg.succ[b]):
                continue
            term = f.insts[b][-1]
            if f.opc(term) in ("br", "switch"):
                seeds.append(f.opers(term)[0])
        mine = [v for b in lp.blocks if loops.block_loops[b][-1:] == (k,) for v in f.insts[b]
                if f.opc(v) in _LOADS]
        exit_slice = _slice(f, seeds, lp.blocks)
        for load in mine:
            if load in exit_slice:
                out[load] = _movement(f, load, lp.blocks, lp.header)
            elif _carried(f, load, lp.blocks, lp.header) or held and _indirect(f, load, lp.blocks):
                out[load] = "chase"
    return out


def _indirect(f: FunctionIR, load: int, blocks: set[int]) -> bool:
    """The load's address is a value loaded in this iteration."""
    return any(f.opc(v) in _LOADS for v in _slice(f, [f.opers(load)[0]], blocks) if v != load)


def _slice(f: FunctionIR, seeds: list[int], blocks: set[int]) -> set[int]:
    """The instructions inside ``blocks`` that ``seeds`` depend on, ``seeds`` among them."""
    seen: set[int] = set()
    work = [v for v in seeds if f.inst_block.get(v) in blocks]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        work.extend(o for o in f.opers(v) if f.inst_block.get(o) in blocks and o not in seen)
    return seen


def _carried(f: FunctionIR, load: int, blocks: set[int], header: int) -> bool:
    """The load's address comes from a value loaded in an earlier iteration (through a header phi)."""
    address = _slice(f, [f.opers(load)[0]], blocks)
    return any(f.opc(v) == "phi" and f.inst_block[v] == header
               and any(f.opc(u) in _LOADS for u in _slice(f, f.opers(v), blocks)) for v in address)


def _movement(f: FunctionIR, load: int, blocks: set[int], header: int) -> Wait:
    address = _slice(f, [f.opers(load)[0]], blocks)
    if any(f.opc(v) in _LOADS for v in address):
        return "chase"  # through a loaded value, of this iteration or (through a phi) an earlier one
    if any(f.opc(v) == "phi" for v in address):
        return "walk"
    return "fixed"
