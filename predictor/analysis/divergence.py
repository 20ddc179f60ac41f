"""Barriers under work-item dependent control flow: a barrier that some work-items of a group skip
hangs the group or is undefined behaviour (what ``barrier-divergence`` reports).

A block runs under a branch when it post-dominates one of the branch's successors but not the branch;
the barrier is divergent when such a branch, or one the branch itself runs under, tests a value that
differs between work-items.
"""

from __future__ import annotations

from clperf.predictor.analysis.cfg import ControlFlow
from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.values import Values

Divergent = tuple[int, int, int]  # (barrier line, column, line of the condition)


def divergent_barriers(f: FunctionIR, cfg: ControlFlow, values: Values,
                       barriers: list[tuple[int, int]]) -> list[Divergent]:
    """The barriers (block, call instruction) that run under a condition that varies."""
    if not barriers:
        return []
    pdom = _post_dominators(cfg)

    def control_deps(b: int) -> list[int]:
        """Branches that decide whether ``b`` runs: b post-dominates one successor, not the branch."""
        return [c for c in cfg.rpo if len(cfg.succ[c]) >= 2 and b not in pdom[c]
                and any(b in pdom[s] for s in cfg.succ[c])]

    out = []
    for bb, inst in barriers:
        todo, seen = control_deps(bb), set()
        while todo:
            c = todo.pop(0)
            if c in seen:
                continue
            seen.add(c)
            term = f.insts[c][-1]
            cond = f.opers(term)[0]
            if values.varies(cond):
                bpos = f.pos(inst) or (0, 0)
                cpos = f.pos(term) or (f.pos(cond) if cond in f.inst_block else None)
                out.append((bpos[0], bpos[1], (cpos or (0, 0))[0]))
                break
            todo += control_deps(c)
    return out


def _post_dominators(cfg: ControlFlow) -> list[set[int]]:
    """Each block's post-dominators (itself included), by iteration to a fixed point."""
    n = len(cfg.succ)
    full = set(range(n))
    pdom: list[set[int]] = [set(full) for _ in range(n)]
    for b in range(n):
        if not cfg.succ[b]:
            pdom[b] = {b}
    changed = True
    while changed:
        changed = False
        for b in reversed(cfg.rpo):
            if not cfg.succ[b]:
                continue
            new = set.intersection(*(pdom[s] for s in cfg.succ[b])) | {b}
            if new != pdom[b]:
                pdom[b] = new
                changed = True
    return pdom
