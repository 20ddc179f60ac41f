"""What a counting run returns: ``Counts``, and its JSON shape for the cache (the trace travels apart)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from clperf.core.cache import finite

FORMAT = "7"  # of Counts' JSON shape, part of a counting run's cache key
Site = tuple[str, int, int]  # (block name in clperf's IR, line, column) of a memory instruction


@dataclass(frozen=True)
class Counts:
    """A counting run of one launch: per-work-item block counts over the sampled work-groups.

    ``blocks`` maps a block of clperf's IR of the kernel (clang-19 ``-O1 -fno-unroll-loops`` names, as
    ``KernelReport``'s loops name their headers and latches) to its mean executions per work-item over
    the work-items of the groups that ran; blocks that never ran are absent. ``unmatched``: the blocks of
    clperf's IR that no block of Oclgrind's matched (its LLVM 14 shaped a loop otherwise than clang-19):
    their counts are unknown, not zero. Whole-launch totals are
    ``blocks[b] * work_items``. ``rel_error`` is the standard error of the whole launch's instruction
    total estimated from the sample, relative to that total: 0 when every group ran, 1.0 when one
    group of several ran (no spread to judge from) or when not one group finished within the budget
    and ``blocks`` averages the work-items that did (``groups_run`` 0, ``items_run`` of them).
    ``trace`` (``trace.TRACE_DTYPE``) holds the accesses of the traced groups (the first groups of the
    run order): of those that finished, or when none did, of those abandoned at the time limit as far as
    they got (``abandoned``: each abandoned group's finished work-items, by linear group id), of each
    work-item the first accesses up to a cap (``trace_made``: per traced group, the accesses each of its
    work-items made, by linear local id, the kept ones and those past the cap); ``sites``
    each memory instruction's block and source position (the line and column, in characters, of
    ``Access.line``/``Access.column``). ``errors``: Oclgrind's reports (an invalid read
    or write, a divergent barrier), the first few. ``longest_group``: the instructions per work-item of
    the group that ran with the most, or of the work-item that ran the most, over the mean (1.0 with one
    group of alike work-items): the last wave of a launch waits for its longest work-items, which a trace
    of the first groups may miss.
    ``unfinished``: when not one work-item finished (a group whose barriers hold every work-item until
    all reach them, outlasting the budget), each block's executions so far per work-item that had
    started, over ``unfinished_items`` of them: ``blocks`` is then empty, and only the trips of loops
    nested in a loop that ran can be read from it (``KernelReport.inner_trips_from``).
    """

    kernel: str
    blocks: dict[str, float]
    work_items: int  # of the whole launch
    groups_run: int
    groups_total: int
    rel_error: float
    elapsed_s: float
    trace: np.ndarray | None = field(compare=False)  # compare with numpy.array_equal
    sites: dict[int, Site]
    local_size: tuple[int, int, int] = (1, 1, 1)  # the group size that ran (Oclgrind's when unset)
    errors: tuple[str, ...] = ()
    error_count: int = 0
    trace_truncated: bool = False  # the trace cap was reached: later accesses are missing
    items_run: int = 0  # work-items whose counts ``blocks`` averages
    longest_group: float = 1.0
    unmatched: tuple[str, ...] = ()
    abandoned: dict[int, int] = field(default_factory=dict)
    unfinished: dict[str, float] = field(default_factory=dict)
    unfinished_items: int = 0
    trace_made: dict[int, tuple[int, ...]] = field(default_factory=dict)
    trace_weight: float = 1.0  # the traced groups' accesses per work-item over the sample's
    cached: bool = field(default=False, compare=False)

    @property
    def unfinished_only(self) -> bool:
        """Not one work-item finished: only ``unfinished`` tells, and only inner loops' trips."""
        return not self.items_run and bool(self.unfinished)

    @property
    def complete(self) -> bool:
        """Every work-group of the launch ran."""
        return self.groups_run == self.groups_total

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "blocks": dict(self.blocks),
            "work_items": self.work_items,
            "groups_run": self.groups_run,
            "groups_total": self.groups_total,
            "rel_error": self.rel_error,
            "elapsed_s": self.elapsed_s,
            "sites": {str(k): list(v) for k, v in self.sites.items()},
            "local_size": list(self.local_size),
            "errors": list(self.errors),
            "error_count": self.error_count,
            "trace_truncated": self.trace_truncated,
            "items_run": self.items_run,
            "longest_group": self.longest_group,
            "unmatched": list(self.unmatched),
            "abandoned": [[g, n] for g, n in self.abandoned.items()],
            "unfinished": dict(self.unfinished),
            "unfinished_items": self.unfinished_items,
            "trace_made": [[g, list(made)] for g, made in self.trace_made.items()],
            "trace_weight": self.trace_weight,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], trace: np.ndarray | None) -> Counts:
        """The Counts a cache row holds; ValueError/TypeError/KeyError for a row of another shape."""
        lx, ly, lz = (int(x) for x in d["local_size"])
        return cls(
            kernel=str(d["kernel"]),
            blocks={str(k): finite(v, "block count") for k, v in d["blocks"].items()},
            work_items=int(d["work_items"]),
            groups_run=int(d["groups_run"]),
            groups_total=int(d["groups_total"]),
            rel_error=finite(d["rel_error"], "rel_error"),
            elapsed_s=finite(d["elapsed_s"], "elapsed_s"),
            trace=trace,
            sites={int(k): (str(b), int(line), int(col)) for k, (b, line, col) in d["sites"].items()},
            local_size=(lx, ly, lz),
            errors=tuple(str(e) for e in d["errors"]),
            error_count=int(d["error_count"]),
            trace_truncated=bool(d["trace_truncated"]),
            items_run=int(d["items_run"]),
            longest_group=finite(d["longest_group"], "longest_group"),
            unmatched=tuple(str(b) for b in d["unmatched"]),
            abandoned={int(g): int(n) for g, n in d["abandoned"]},
            unfinished={str(k): finite(v, "block count") for k, v in d["unfinished"].items()},
            unfinished_items=int(d["unfinished_items"]),
            trace_made={int(g): tuple(int(n) for n in made) for g, made in d["trace_made"]},
            trace_weight=finite(d["trace_weight"], "trace_weight"),
        )

    def as_cached(self) -> Counts:
        return replace(self, cached=True)
