"""From the plugin's report to ``Counts``: per-work-item means, the sampling error, clperf's names.

The groups that ran are a sample of the launch's groups (``n`` of ``N``, spread over the grid). A
block's mean per work-item is its executions over the work-items that finished: those of the groups
that ran, and those that the groups abandoned at the time limit had finished (Oclgrind runs a group's
work-items one after another between barriers, so they are the first ones of their groups). Leaving
the abandoned groups out would keep exactly the groups that run longest out of the sample. The launch's
instruction total is estimated by the ratio estimator (instructions per work-item of the sample times
the launch's work-items), whose standard error over the groups that ran, with the finite-population
correction ``1 - n/N``, is ``Counts.rel_error`` relative to the estimate (1.0 when fewer than two
groups finished). When not one work-item finished, the blocks' executions so far per started work-item
are kept apart (``Counts.unfinished``). ``Counts.longest_group`` is the most instructions per work-item
of one group, whole or abandoned, or of one work-item, finished or not, over that mean.

The groups that finish within the budget are the quicker ones: where the work-items still running in the
abandoned groups had already run more instructions each than the finished ones ran in all (a grid whose
work grows along it, its middle group cut short), they enter the means with their blocks so far, a
lower bound of theirs. ``Counts.trace_weight`` is the traced groups' accesses per work-item over the
sample's: the trace stands for groups as busy as its own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clperf.benchmark.counting import blocks
from clperf.benchmark.counting.records import Counts, Site
from clperf.core.compile import char_column

UNKNOWN_ERROR = 1.0  # rel_error when a single group of several ran: no spread to judge from


def sampling_error(groups: list[tuple[int, int, int]], total: int) -> float:
    """Relative standard error of the launch's instruction total from (group, work-items, instructions)
    of the groups that ran, ``total`` groups in the launch."""
    n = len(groups)
    if n >= total:
        return 0.0
    if n < 2:
        return UNKNOWN_ERROR
    items = np.array([g[1] for g in groups], dtype=float)
    instr = np.array([g[2] for g in groups], dtype=float)
    ratio = instr.sum() / items.sum()
    if ratio <= 0:
        return 0.0
    spread = float(((instr - ratio * items) ** 2).sum() / (n - 1))
    var = (1 - n / total) * spread / (n * items.mean() ** 2)
    return math.sqrt(max(var, 0.0)) / ratio


def summarize(report: dict[str, Any], trace: np.ndarray | None, *, work_items: int, clperf_ir: str | None,
              source: str, elapsed_s: float) -> Counts:
    """``Counts`` from the plugin's report. ``clperf_ir``: clperf's IR of the program (clang-19), whose
    block names the counts take; without it Oclgrind's names are kept."""
    kernel = str(report["kernel"])
    groups = [(int(g), int(items), int(instr)) for g, items, instr, _ in report["groups"]]
    abandoned = [(int(g), int(items), int(instr)) for g, items, instr, _ in report.get("partial_groups", ())]
    accesses = sum(int(a) for *_, a in [*report["groups"], *report.get("partial_groups", ())])
    total = math.prod(int(x) for x in report["num_groups"])
    partial = not groups
    ran_items = int(report["partial_items"]) + sum(g[1] for g in groups)
    counted = [(i, str(fn), str(name), int(whole) + int(part), (int(line), int(col)))
               for i, (fn, name, whole, line, col, part, _) in enumerate(report["blocks"]) if fn == kernel]
    started = int(report.get("unfinished_items", 0))
    so_far = {i: int(rest) for i, (fn, _, _, _, _, _, rest) in enumerate(report["blocks"]) if fn == kernel}
    ours = [blocks.Block(name, pos if pos[0] else None) for _, _, name, _, pos in counted]
    unmatched: tuple[str, ...] = ()
    if clperf_ir is not None:
        theirs = blocks.ir_blocks(clperf_ir, kernel)
        names = blocks.match(ours, theirs)
        found = set(names.values())
        unmatched = tuple(b.name for b in theirs if b.name and b.name not in found)
    else:
        names = {k: b.name for k, b in enumerate(ours) if b.name}
    renamed = {counted[k][0]: name for k, name in names.items()}  # report block index -> clperf name
    instructions = sum(g[2] for g in groups + abandoned)
    lower = bool(started and ran_items) and (instructions + int(report.get("unfinished_instructions", 0))) \
        * ran_items > instructions * (ran_items + started)
    if lower:  # the unfinished work-items, as far as they got, ran more than the finished ones on average
        counted = [(i, fn, name, n + so_far.get(i, 0), pos) for i, fn, name, n, pos in counted]
        accesses += int(report.get("unfinished_accesses", 0))
        ran_items += started
    per_item = {renamed[i]: n / ran_items for i, _, _, n, _ in counted if n and i in renamed}
    unfinished = ({renamed[i]: n / started for i, n in so_far.items() if n and i in renamed}
                  if not ran_items and started else {})
    lines = source.split("\n")
    sites: dict[int, Site] = {}
    for s, (block, line, col, _opcode) in enumerate(report["sites"]):
        if int(block) in renamed:
            sites[s] = (renamed[int(block)], int(line), char_column(lines, int(line), int(col)))
    lx, ly, lz = (int(x) for x in report["local_size"])
    sample = groups + abandoned
    per_group = [instr / items for _, items, instr in sample if items]
    traced = {int(g) for g in report.get("traced", ())}
    traced_runs = [(int(items), int(a)) for g, items, _, a in report["groups"] if int(g) in traced]
    traced_items = sum(n for n, _ in traced_runs)
    weight = 1.0
    if traced_items and accesses and ran_items:
        weight = sum(a for _, a in traced_runs) / traced_items / (accesses / ran_items) or 1.0
    mean = (instructions + (int(report.get("unfinished_instructions", 0)) if lower else 0)) / ran_items \
        if ran_items else 0.0
    longest = max([*per_group, float(report.get("longest_item", 0))])
    return Counts(
        kernel=kernel, blocks=per_item, work_items=work_items, groups_run=len(groups), groups_total=total,
        rel_error=UNKNOWN_ERROR if partial else sampling_error(groups, total), elapsed_s=elapsed_s,
        trace=trace if trace is not None and report.get("traced") else None, sites=sites,
        local_size=(lx, ly, lz), errors=tuple(report.get("messages", ())),
        error_count=int(report.get("errors", 0)), trace_truncated=bool(report.get("trace_truncated")),
        items_run=ran_items, longest_group=max(1.0, longest / mean) if per_group and mean else 1.0,
        unmatched=unmatched, abandoned={g: items for g, items, _ in abandoned},
        unfinished=unfinished, unfinished_items=started if unfinished else 0, trace_weight=weight,
        trace_made={int(g): tuple(int(n) for n in made)
                    for g, made in zip(report.get("traced", ()), report.get("traced_made", ()), strict=True)},
    )
