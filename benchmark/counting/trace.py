"""The accesses of a counting run's traced work-groups, and what a GPU's memory system makes of them.

One record per global, constant or ``__local`` access of a work-item (or of a work-group, for
``async_work_group_copy``), in program order per work-item (``TRACE_DTYPE``, 32 bytes, as the plugin
writes them). ``sectors`` groups the records the way an NVIDIA GPU issues them: the lanes of one warp
(32 consecutive linear local ids of a group) executing one memory instruction together; lanes are
paired by how many times each has executed that instruction, so lanes that took different paths
through a loop still line up with their own iterations.
"""

from __future__ import annotations

import numpy as np

NO_ITEM = 0xFFFFFFFF  # ``item`` of a group's own access (async_work_group_copy); ``site`` when unknown

TRACE_DTYPE = np.dtype([
    ("group", "<u4"),  # linear work-group index: x + nx * (y + ny * z)
    ("item", "<u4"),  # linear local id: x + lx * (y + ly * z) (Counts.local_size); NO_ITEM for a group copy
    ("site", "<u4"),  # memory instruction: a key of Counts.sites (NO_ITEM when unknown)
    ("seq", "<u4"),  # ordinal of the access among its work-item's accesses
    ("offset", "<u8"),  # bytes from the start of the buffer (an argument's, or the __local array's)
    ("arg", "<i2"),  # index of the kernel argument whose buffer it is; -1 for a kernel's own __local array
    ("size", "<u2"),  # bytes accessed
    ("kind", "u1"),  # KINDS: 0 load, 1 store, 2 atomic
    ("space", "u1"),  # SPACES: 1 global, 2 constant, 3 local
    ("buffer", "<u2"),  # Oclgrind's buffer number in that address space (tells __local arrays apart)
])
KINDS = ("load", "store", "atomic")
SPACES = {1: "global", 2: "constant", 3: "local"}


def _occurrence(records: np.ndarray) -> np.ndarray:
    """For each record, how many earlier records of the same (group, item, site) there are."""
    key = np.stack([records["group"], records["item"], records["site"]]).astype(np.int64)
    order = np.lexsort((records["seq"], key[2], key[1], key[0]))
    k = key[:, order]
    new = np.r_[True, np.any(k[:, 1:] != k[:, :-1], axis=0)]
    starts = np.flatnonzero(new)
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    out = np.empty(len(order), np.int64)
    out[order] = rank
    return out


def sectors(trace: np.ndarray, *, warp: int = 32, sector: int = 32) -> dict[int, float]:
    """Per memory instruction (``site``): the mean number of distinct ``sector``-byte pieces of memory one
    warp-wide execution of it touches. 4 for a warp reading 32 consecutive floats, 32 when each lane
    reads a float 8 floats apart. Group copies (``item == NO_ITEM``) are left out."""
    t = trace[(trace["item"] != NO_ITEM) & (trace["site"] != NO_ITEM)]
    if len(t) == 0:
        return {}
    first = (t["offset"] // sector).astype(np.int64)
    span = ((t["offset"] + np.maximum(t["size"], 1) - 1) // sector).astype(np.int64) - first + 1
    instance = np.stack([t["site"].astype(np.int64), t["group"].astype(np.int64),
                         (t["item"] // warp).astype(np.int64), _occurrence(t),
                         t["arg"].astype(np.int64), t["buffer"].astype(np.int64)], axis=1)
    # a piece is (execution, buffer, sector); an access spanning several sectors counts each
    rows = np.repeat(np.arange(len(t)), span)
    within = np.arange(len(rows)) - np.repeat(np.cumsum(span) - span, span)
    pieces = np.unique(np.c_[instance[rows], first[rows] + within], axis=0)
    executions = np.unique(instance[:, :4], axis=0)
    per_site_pieces = np.bincount(pieces[:, 0])
    per_site_exec = np.bincount(executions[:, 0])
    return {int(s): float(per_site_pieces[s] / per_site_exec[s]) for s in np.flatnonzero(per_site_exec)}
