"""A kernel's control-flow graph: successors, reverse postorder, dominators and natural loops.

Blocks are numbered by their position in the function. A loop is found from its back edges (an edge to a
block that dominates its source); loops nest by containment of their blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.records import TripCount


@dataclass
class ControlFlow:
    succ: list[list[int]]
    pred: list[list[int]]
    rpo: list[int]  # reverse postorder from the entry block
    reachable: list[bool]
    idom: dict[int, int]  # immediate dominator of each reachable block (the entry's is itself)

    def dominates(self, a: int, b: int) -> bool:
        while True:
            if a == b:
                return True
            nb = self.idom.get(b)
            if nb is None or nb == b:
                return False
            b = nb


@dataclass
class Loop:
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
class Loops:
    loops: list[Loop]  # biggest first, so an enclosing loop comes before the loops inside it
    of_header: dict[int, int]  # header block -> index into ``loops``
    block_loops: list[tuple[int, ...]]  # each block's enclosing loops, outermost first


def control_flow(f: FunctionIR) -> ControlFlow:
    n = len(f.blocks)
    succ = [_successors(f, i) for i in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for i, ss in enumerate(succ):
        for s in ss:
            pred[s].append(i)
    order: list[int] = []
    seen = [False] * n
    stack: list[tuple[int, int]] = [(0, 0)]
    seen[0] = True
    while stack:
        b, k = stack.pop()
        if k < len(succ[b]):
            stack.append((b, k + 1))
            s = succ[b][k]
            if not seen[s]:
                seen[s] = True
                stack.append((s, 0))
        else:
            order.append(b)
    rpo = order[::-1]
    return ControlFlow(succ, pred, rpo, seen, _dominators(rpo, pred))


def _successors(f: FunctionIR, bi: int) -> list[int]:
    if not f.insts[bi]:
        return []
    out = []
    for o in f.opers(f.insts[bi][-1]):
        j = f.block_index.get(o)
        if j is not None and j not in out:
            out.append(j)
    return out


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


def find_loops(cfg: ControlFlow) -> Loops:
    by_header: dict[int, Loop] = {}
    for b in cfg.rpo:
        for s in cfg.succ[b]:
            if cfg.dominates(s, b):  # back edge b -> s
                lp = by_header.setdefault(s, Loop(s, {s}, []))
                lp.latches.append(b)
                _add_body(cfg, lp, b)
    loops = sorted(by_header.values(), key=lambda lp: -len(lp.blocks))
    for i, lp in enumerate(loops):
        for j in range(i - 1, -1, -1):  # smallest enclosing loop comes last among the bigger ones
            if lp.header in loops[j].blocks:
                lp.parent = j
                lp.depth = loops[j].depth + 1
                break
    of_header = {lp.header: i for i, lp in enumerate(loops)}
    return Loops(loops, of_header, [_enclosing(loops, b) for b in range(len(cfg.succ))])


def _add_body(cfg: ControlFlow, lp: Loop, latch: int) -> None:
    """The blocks that reach ``latch`` without passing the header."""
    work = [latch]
    while work:
        x = work.pop()
        if x in lp.blocks:
            continue
        lp.blocks.add(x)
        work.extend(p for p in cfg.pred[x] if cfg.reachable[p])


def _enclosing(loops: list[Loop], b: int) -> tuple[int, ...]:
    inner = None
    for i, lp in enumerate(loops):
        if b in lp.blocks and (inner is None or len(lp.blocks) < len(loops[inner].blocks)):
            inner = i
    chain: list[int] = []
    while inner is not None:
        chain.append(inner)
        inner = loops[inner].parent
    return tuple(reversed(chain))
