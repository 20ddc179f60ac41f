"""From the plugin's report to ``Counts``: per-work-item means, the sampling error, clperf's names.

The groups that ran are a sample of the launch's groups (``n`` of ``N``, spread over the grid). A
block's mean per work-item is its executions over the work-items of those groups; the launch's
instruction total is estimated by the ratio estimator (instructions per work-item of the sample times
the launch's work-items), whose standard error, with the finite-population correction ``1 - n/N``,
is ``Counts.rel_error`` relative to the estimate. When not one group finished within the time limit
(a launch whose every group outlasts the budget), the work-items those groups did finish are the sample
(``groups_run`` 0, ``rel_error`` 1.0): Oclgrind runs a group's work-items one after another between
barriers, so they are the first ones of their groups.
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
    groups = [(int(g), int(items), int(instr)) for g, items, instr in report["groups"]]
    total = math.prod(int(x) for x in report["num_groups"])
    # without a finished group, the finished work-items of the groups abandoned at the time limit
    partial = not groups
    ran_items = int(report["partial_items"]) if partial else sum(g[1] for g in groups)
    counted = [(i, str(fn), str(name), int(whole if not partial else part), (int(line), int(col)))
               for i, (fn, name, whole, line, col, part) in enumerate(report["blocks"]) if fn == kernel]
    ours = [blocks.Block(name, pos if pos[0] else None) for _, _, name, _, pos in counted]
    if clperf_ir is not None:
        names = blocks.match(ours, blocks.ir_blocks(clperf_ir, kernel))
    else:
        names = {k: b.name for k, b in enumerate(ours) if b.name}
    renamed = {counted[k][0]: name for k, name in names.items()}  # report block index -> clperf name
    per_item = {renamed[i]: n / ran_items for i, _, _, n, _ in counted if n and i in renamed}
    lines = source.split("\n")
    sites: dict[int, Site] = {}
    for s, (block, line, col, _opcode) in enumerate(report["sites"]):
        if int(block) in renamed:
            sites[s] = (renamed[int(block)], int(line), char_column(lines, int(line), int(col)))
    lx, ly, lz = (int(x) for x in report["local_size"])
    return Counts(
        kernel=kernel, blocks=per_item, work_items=work_items, groups_run=len(groups), groups_total=total,
        rel_error=UNKNOWN_ERROR if partial else sampling_error(groups, total), elapsed_s=elapsed_s,
        trace=trace if trace is not None and report.get("traced") else None, sites=sites,
        local_size=(lx, ly, lz), errors=tuple(report.get("messages", ())),
        error_count=int(report.get("errors", 0)), trace_truncated=bool(report.get("trace_truncated")),
        items_run=ran_items,
    )
