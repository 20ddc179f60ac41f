"""The GPU memory hierarchy, read from a counting run's access trace: coalescing, ``__local`` bank conflicts,
reuse through L1 and L2, and occupancy.

The trace (``TRACE``) holds every global, constant and ``__local`` access of a few sampled work-groups, in
program order per work-item. The hardware sees warps: ``warp_size`` consecutive work-items of a group (by
linear local id) issue one request per dynamic instance of a memory instruction (a *site*), the n-th
execution of a site in each work-item lining up with the n-th in the others, as a masked warp does. A global
request moves the distinct 32-byte sectors its lanes touch; a ``__local`` request takes as many wavefronts
as the most distinct 4-byte words that fall in one of the 32 banks.

The caches (``memory_traffic``) are modelled on sectors, the unit L2 and DRAM move, with L1 holding
sectors and L2 whole lines (a line one sector of which is in use takes the room of four: measured on the
H200 by bench/gpu_onchip.py, l1_sparse and l2_sparse):
* within a group, a re-touch hits when the distinct sectors (for L2: lines) seen since its last touch
  (its LRU stack distance, from reuse time by the average-footprint conversion of Xiang et al.,
  "All-window profiling and composable models of cache sharing", PPoPP 2011) fit the group's share of
  the cache: L1 is shared by the groups resident on one SM, L2 by all groups running at once; only loads
  hit L1;
* across groups, each buffer's sectors are DRAM traffic once (compulsory; estimated for the grid from the
  traced groups' per-group footprint and the range of the buffer they cover), and a sector another group
  touches again hits L2 when the running groups' working set (in lines, at the share of their sectors
  the launch's lines have in use) fits in L2 (neighbours share a halo while
  both run), or when the distinct sectors the launch touches between the two fit, whichever hits more,
  in proportion beyond. For the second, the launch's touches are taken as spread evenly over its time, so
  a buffer's re-touch comes after (its footprint / its touches) of them all; within that window every
  buffer adds its touches, no more than its footprint: a vector every group gathers from stays in L2
  beside the matrix streaming past it;
* the same rule at one SM, with L1 for L2 and the groups the SM runs one after another, tells which
  first touches within a group another group of the SM read before and L1 still holds (loads only).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

LOAD, STORE, ATOMIC = 0, 1, 2  # ``kind``
GLOBAL, CONSTANT, LOCAL = 1, 2, 3  # ``space``
# One access of a traced work-item: the counting run's 32-byte record (clperf.benchmark.counting's
# TRACE_DTYPE): linear group and local id, memory instruction, ordinal among the work-item's accesses, bytes
# from the buffer's start, kernel argument (-1: none), bytes, kind, space, and the buffer's number within its
# space (which tells __local arrays apart).
TRACE = np.dtype([("group", "<u4"), ("item", "<u4"), ("site", "<u4"), ("seq", "<u4"), ("offset", "<u8"),
                  ("arg", "<i2"), ("size", "<u2"), ("kind", "u1"), ("space", "u1"), ("buffer", "<u2")])
NO_ITEM = 0xFFFFFFFF  # ``item`` of a group's own access (async_work_group_copy)


@dataclass(frozen=True)
class GpuMemory:
    """The memory facts of a GPU: a device profile's ``gpu_memory``, whose notes give each value's source."""

    warp_size: int
    sector_bytes: int  # what a request moves per touched segment
    line_bytes: int  # L1/L2 cache line
    local_banks: int
    bank_bytes: int
    l1_local_bytes: int  # L1 and __local share this per SM
    local_carveouts_kb: tuple[int, ...]  # the __local sizes per SM the driver can pick
    local_reserved_per_group: int  # __local the driver keeps per resident group
    local_alloc_unit: int
    l2_bytes: int
    max_items_per_sm: int
    max_groups_per_sm: int
    registers_per_sm: int
    register_alloc_unit: int  # registers are given per warp in multiples of this
    register_partitions: int  # the register file is split among this many schedulers
    max_registers_per_item: int
    # measured load latencies, (region bytes, ns) rows by region size (bench/gpu_latency.py): one step of a
    # pointer chase, one iteration of a linear search whose exit waits for each load
    chase_ns: tuple[tuple[int, float], ...] = ()
    search_ns: tuple[tuple[int, float], ...] = ()
    # launch time one warp's request of a global atomic adds, device-wide, when no other work-group updates
    # the same addresses (bench/gpu_serial.py); 0: unknown
    atomic_ns: float = 0.0
    # what a warp's request of a global atomic to words no other request updates costs, by the table it
    # updates (bench/gpu_serial.py, global_atomic_table): (table bytes, ns when its lanes reach one line,
    # ns when they reach 32) rows by table size
    atomic_table_ns: tuple[tuple[int, float, float], ...] = ()
    # what a warp's request of a global atomic costs when every work-group updates the same table
    # (bench/atomic_shared.py): ``atomic_word_ns`` for each of its lanes that reach one word (those wait
    # for each other), or by the table's 128-byte lines (lines, ns) rows, whichever is more; 0, (): unknown
    atomic_word_ns: float = 0.0
    atomic_shared_ns: tuple[tuple[int, float], ...] = ()
    # what an update of one word of a work-group's own table costs when the group's warps update it at one
    # program point (bench/gpu_hot_word.py): they are served one after another, each the longer the more
    # groups run at once; (work-groups resident per SM, ns per update) rows; (): unknown
    atomic_group_word_ns: tuple[tuple[float, float], ...] = ()
    # the updates of one line are served one after another even where they reach distinct words, each for
    # a share of a one-word update: (distinct words of the line updated, share) rows; (): unknown
    atomic_group_line_share: tuple[tuple[float, float], ...] = ()
    # measured device-wide read rates (bench/gpu_onchip.py), GB/s: __local (conflict-free, so bytes of
    # wavefronts), global reads that hit L1, and those that miss L1 and hit L2; 0: unknown
    local_gbs: float = 0.0
    l1_gbs: float = 0.0
    l2_gbs: float = 0.0
    # device-wide launch time per line a warp request reaches, when its lanes read a sector of each: served
    # by L2 (bench/gpu_onchip.py, l2_strided) and by DRAM (l2_sparse, past L2); 0: unknown
    l2_line_ns: float = 0.0
    dram_line_ns: float = 0.0
    # L1's clocks for a warp request of global memory (bench/gpu_onchip.py, l1_strided): l1_request_clocks
    # plus its lines over l1_lines_per_clock, or one clock per word its lanes read of the busiest bank
    # (lanes on words of one bank in different lines), whichever is more; 0: a clock per line
    l1_request_clocks: float = 0.0
    l1_lines_per_clock: float = 0.0

    @property
    def onchip_rates(self) -> bool:
        return bool(self.local_gbs and self.l1_gbs and self.l2_gbs)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GpuMemory:
        known: dict[str, Any] = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        rows: dict[str, Any] = {k: tuple(sorted((int(b), float(ns)) for b, ns in known.get(k, ())))
                                for k in ("chase_ns", "search_ns", "atomic_shared_ns")}
        rows["atomic_table_ns"] = tuple(sorted((int(b), float(one), float(spread))
                                               for b, one, spread in known.get("atomic_table_ns", ())))
        for k in ("atomic_group_word_ns", "atomic_group_line_share"):
            rows[k] = tuple(sorted((float(a), float(b)) for a, b in known.get(k, ())))
        return cls(**{**known, "local_carveouts_kb": tuple(known.get("local_carveouts_kb", ())), **rows})

    def atomic_request_ns(self, lines: float, table_bytes: float) -> float:
        """The measured cost of one warp request of a global atomic whose lanes reach ``lines`` distinct
        lines of a table of ``table_bytes`` (the first measured table at least that large, the largest
        beyond), interpolated between one line and a line per lane; ``atomic_ns`` without the rows."""
        if not self.atomic_table_ns:
            return self.atomic_ns
        rows = self.atomic_table_ns
        _, one, spread = next((r for r in rows if r[0] >= table_bytes), rows[-1])
        share = min(1.0, max(0.0, (lines - 1) / max(1, self.warp_size - 1)))
        return one + (spread - one) * share

    def shared_atomic_ns(self, lanes_per_word: float, table_lines: float) -> float:
        """The measured cost of one warp request of a global atomic on a table every work-group updates,
        where at most ``lanes_per_word`` of its lanes reach one word and the table spans ``table_lines``
        lines: two or more lanes on one word one after another, or the table's row (interpolated between rows
        by the logarithm of its lines, beyond the last row in proportion to its lines: each line takes
        its own share of the updates), whichever is more. 0 where the profile has no rows."""
        rows = self.atomic_shared_ns
        if not rows:
            return 0.0
        lines = max(1.0, table_lines)
        if lines >= rows[-1][0]:
            by_lines = rows[-1][1] * rows[-1][0] / lines
        else:
            i = next(k for k, r in enumerate(rows) if r[0] > lines)
            if i == 0:
                by_lines = rows[0][1]
            else:
                (a, na), (b, nb) = rows[i - 1], rows[i]
                w = math.log(lines / a) / math.log(b / a)
                by_lines = na + (nb - na) * w
        return max(self.atomic_word_ns * lanes_per_word if lanes_per_word >= 2 else 0.0, by_lines)

    def group_word_ns(self, groups_per_sm: float) -> float:
        """The measured time of one update of a word a work-group's warps update at one program point, with
        ``groups_per_sm`` groups running on each SM (under one: some SMs idle), interpolated between rows;
        beyond the last row in proportion to the groups (the device's rate of such updates held there).
        0 where the profile has no rows."""
        rows = self.atomic_group_word_ns
        if not rows:
            return 0.0
        if groups_per_sm >= rows[-1][0]:
            return rows[-1][1] * groups_per_sm / rows[-1][0]
        return float(np.interp(groups_per_sm, [g for g, _ in rows], [ns for _, ns in rows]))

    def line_share(self, words: np.ndarray) -> np.ndarray:
        """Per entry of ``words`` (the words of one line a group's warps update at one point, as many
        equally busy ones): the share of a one-word update that each of the line's updates takes,
        interpolated between the measured rows by the logarithm of the words, the last row's beyond it;
        one word's share of the line (its updates served apart from the others') where the profile has
        no rows."""
        rows = self.atomic_group_line_share
        w = np.maximum(np.asarray(words, np.float64), 1.0)
        if not rows:
            return 1.0 / w
        return np.interp(np.log(w), [math.log(a) for a, _ in rows], [b for _, b in rows])

    def wait_ns(self, wait: str, region_bytes: float | None) -> float | None:
        """The measured time one iteration waits for a load that moves as ``wait`` says
        (``analysis.gating``) over a region of ``region_bytes`` (None: unknown, the L2's row): a chase
        step, a search iteration, or for a load of one fixed address a search iteration over the
        smallest region; None without measurements."""
        rows = self.chase_ns if wait == "chase" else self.search_ns
        if not rows:
            return None
        if wait == "fixed":
            return rows[0][1]
        size = region_bytes if region_bytes is not None else self.l2_bytes / 2
        return next((ns for b, ns in rows if b >= size), rows[-1][1])


@dataclass(frozen=True)
class SiteSectors:
    requests: int  # warp-level requests of this site in the traced groups
    sectors: float  # mean distinct sectors per request
    lines: float  # mean distinct cache lines per request


@dataclass(frozen=True)
class Occupancy:
    groups_per_sm: int  # 0: the launch is refused
    warps_per_sm: int
    limit: str  # "items", "groups", "registers", "local", or why the launch is refused
    max_group_items: int  # the most work-items a group may have at this register use


@dataclass(frozen=True)
class MemoryTraffic:
    """What one launch moves at each level, scaled from the traced groups to the grid."""

    issued_bytes: float  # bytes the work-items' global and constant accesses ask for
    l1_bytes: float  # sectors the warps' requests touch (after coalescing), in bytes
    l2_bytes: float  # what misses L1 (and every store and atomic)
    dram_bytes: float  # what misses L2, read or written back
    local_bytes: float  # bytes of __local accesses
    footprint_bytes: float  # distinct sectors of the launch (DRAM's compulsory traffic)
    sectors_per_request: float  # mean over global requests (4 for coalesced 4-byte loads)
    bank_conflict_factor: float  # __local wavefronts over the conflict-free number (1: none)
    group_lines: float  # mean distinct cache lines one work-group touches
    shared_lines: float  # share of a traced group's lines that another traced group also touches
    notes: tuple[str, ...] = ()
    longest_item_loads: int = 0  # global and constant loads of the traced work-item that makes the most
    longest_group: float = 1.0  # the counting run's longest group per work-item over the mean (``Counts``)
    # L1's clocks for the warps' global requests (``l1_clocks``), in bytes of the line L1 moves a clock:
    # what the L1 rate serves them at
    l1_wavefront_bytes: float = 0.0
    # the mean measured cost of a warp's request of the traced global atomics (``_atomic_ns``); 0: none
    atomic_ns: float = 0.0
    # the distinct lines of the warp requests that miss L1 (L2 takes as long for a line of which the lanes
    # read one sector as for two full sectors: bench/gpu_onchip.py, l2_strided), and as many lines per
    # sector of what misses L2 (DRAM's cost per such line: l2_sparse)
    l2_lines: float = 0.0
    dram_lines: float = 0.0


def _rank(x: np.ndarray) -> np.ndarray:
    """The dense rank of each element (0 for the smallest value), in the elements' order."""
    if not len(x):
        return np.zeros(0, np.int64)
    change = np.flatnonzero(x[1:] != x[:-1]) + 1
    if len(change) < len(x) // 64:  # long runs of one value (a group's records): rank the runs
        starts = np.r_[0, change]
        return np.repeat(_rank(x[starts]), np.diff(np.r_[starts, len(x)]))
    if x.min() >= 0 and x.max() < 1 << 22:  # small values: a table, no sort
        return (np.cumsum(np.bincount(x) > 0) - 1)[x]
    o = np.argsort(x)
    rank = np.empty(len(x), np.int64)
    rank[o] = np.cumsum(_starts(x[o])) - 1
    return rank


def _key(*cols: np.ndarray) -> np.ndarray:
    """One int64 per row that orders the rows as the tuples of ``cols`` do (non-negative integer columns)."""
    key = np.zeros(len(cols[0]), np.int64)
    width = 0
    for c in cols:
        bits = int(c.max()).bit_length() if len(c) else 0
        if width + bits > 62:  # too wide to shift in: replace what is packed so far by its dense rank
            key = _rank(key)
            width = int(key.max()).bit_length() if len(key) else 0
            if width + bits > 62:
                c = _rank(c)
                bits = int(c.max()).bit_length() if len(c) else 0
        key <<= bits
        key |= c
        width += bits
    return key


def _starts(sorted_key: np.ndarray) -> np.ndarray:
    """Whether each element of a sorted array begins a run of equal values."""
    return np.r_[True, sorted_key[1:] != sorted_key[:-1]] if len(sorted_key) else np.zeros(0, bool)


def _in_run(sorted_key: np.ndarray) -> np.ndarray:
    """For a sorted array: each element's place in its run of equal values (0 for the first)."""
    idx = np.arange(len(sorted_key))
    return idx - np.maximum.accumulate(np.where(_starts(sorted_key), idx, 0))


def _instances(t: Mapping[str, np.ndarray], warp_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per record (in the returned order): its warp request id, dense and ordered by (group, warp, site,
    occurrence). The n-th execution of a site in a work-item (``seq`` order) is the warp's n-th request."""
    item = t["item"]
    by_site = _key(t["g"], item // warp_size, t["site"])
    by_item = _key(by_site, item % warp_size)
    order = np.argsort(_key(by_item, t["seq"]))
    occ = _in_run(by_item[order])  # a work-item's n-th execution of a site
    block = _starts(by_site[order])  # a warp's executions of a site begin
    per_block = np.maximum.reduceat(occ, np.flatnonzero(block)) + 1  # every occurrence 0..max is there
    req = (np.cumsum(per_block) - per_block)[np.cumsum(block) - 1] + occ
    return req, order


def _units(t: Mapping[str, np.ndarray], req: np.ndarray, order: np.ndarray, unit: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (request, buffer, ``unit``-byte block) triples touched, sorted, as three columns."""
    off = t["offset"][order].astype(np.int64)
    first = off // unit
    span = (off + np.maximum(t["size"][order], 1) - 1) // unit - first + 1
    buf = t["region"][order]
    if span.max() > 1:  # an access over several blocks: one row per block
        rec = np.repeat(np.arange(len(order)), span)
        first = first[rec] + np.arange(len(rec)) - np.repeat(np.cumsum(span) - span, span)
        req, buf = req[rec], buf[rec]
    fb, bb = int(first.max()).bit_length(), int(buf.max()).bit_length()
    if int(req.max()).bit_length() + bb + fb <= 62:  # pack, sort and unpack: no gathers
        key = np.sort((req << (bb + fb)) | (buf << fb) | first)
        key = key[_starts(key)]
        return key >> (bb + fb), (key >> fb) & ((1 << bb) - 1), key & ((1 << fb) - 1)
    key = _key(req, buf, first)
    o = np.argsort(key)
    keep = o[_starts(key[o])]
    return req[keep], buf[keep], first[keep]


def _select(trace: np.ndarray, local: bool) -> dict[str, np.ndarray]:
    """The global and constant (or the __local) accesses, by column; ``region``: one id per buffer."""
    space = trace["space"]
    m = space == LOCAL if local else (space == GLOBAL) | (space == CONSTANT)
    picked = trace if m.all() else trace[m]
    t = {n: np.array(picked[n]) for n in ("group", "item", "site", "seq", "offset", "size", "kind", "space",
                                          "buffer", "arg")}
    copy = np.flatnonzero(t["item"] == NO_ITEM)  # a group's copy is made by its work-items, 32 at a time
    t["item"][copy], t["seq"][copy] = np.arange(len(copy)) % 32, np.arange(len(copy)) // 32
    t["region"] = _rank(_key(t["space"], t["buffer"]))
    t["g"] = _rank(t["group"])
    return t


def warp_sectors(trace: np.ndarray, warp_size: int = 32, sector: int = 32, line: int = 128
                 ) -> dict[int, SiteSectors]:
    """Per global/constant site: its warp requests and the mean distinct sectors and lines per request."""
    t = _select(trace, local=False)
    if not len(t["group"]):
        return {}
    req, order = _instances(t, warp_size)
    sec_req = _units(t, req, order, sector)[0]
    line_req = _units(t, req, order, line)[0]
    site_of = np.zeros(int(req.max()) + 1, np.int64)
    site_of[req] = t["site"][order]
    sites, of = np.unique(site_of, return_inverse=True)
    n, secs, lines = (np.bincount(x) for x in (of, of[sec_req], of[line_req]))  # each request: >= 1 of each
    return {int(s): SiteSectors(int(n[i]), float(secs[i] / n[i]), float(lines[i] / n[i]))
            for i, s in enumerate(sites)}


def _wavefronts(t: Mapping[str, np.ndarray], warp_size: int, banks: int, bank_bytes: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per __local request: its site, the wavefronts it takes, and the fewest it could take."""
    if not len(t["group"]):
        return (np.zeros(0, np.int64),) * 3
    req, order = _instances(t, warp_size)
    wreq, _, word = _units(t, req, order, bank_bytes)
    # distinct words per (request, bank); the request takes the most of any one bank
    per_bank = _key(wreq, word % banks)
    o = np.argsort(per_bank)
    starts = np.flatnonzero(_starts(per_bank[o]))
    counts = np.diff(np.r_[starts, len(o)])
    nreq = int(req.max()) + 1
    waves = np.zeros(nreq, np.int64)
    np.maximum.at(waves, wreq[o][starts], counts)
    ideal = -(-np.bincount(wreq, minlength=nreq) // banks)
    site = np.zeros(nreq, np.int64)
    site[req] = t["site"][order]
    return site, waves, ideal


def bank_conflicts(trace: np.ndarray, warp_size: int = 32, banks: int = 32, bank_bytes: int = 4
                   ) -> dict[int, float]:
    """Per __local site: the mean wavefronts a warp request is served in (1: conflict-free). Lanes reading
    one word are served together; ``banks`` banks of ``bank_bytes`` bytes, each buffer starting at bank 0."""
    site, waves, _ = _wavefronts(_select(trace, local=True), warp_size, banks, bank_bytes)
    return {int(s): float(waves[site == s].mean()) for s in np.unique(site)}


def occupancy(group_items: int, local_bytes: int, mem: GpuMemory, registers_per_item: int = 32,
              max_group_items: int = 1024, max_local_per_group: int = 0) -> Occupancy:
    """Resident work-groups per SM by the CUDA occupancy calculator's rules (warps, groups, registers per warp
    in ``register_alloc_unit`` steps within each scheduler's share, __local in ``local_alloc_unit`` steps and
    the driver's reserve). A group that cannot fit, or is over ``max_local_per_group``, is refused (0)."""
    regs = max(1, min(registers_per_item, mem.max_registers_per_item))
    regs_per_warp = -(-regs * mem.warp_size // mem.register_alloc_unit) * mem.register_alloc_unit
    parts = max(1, mem.register_partitions)
    reg_warps = mem.registers_per_sm // parts // regs_per_warp * parts
    fits = min(max_group_items, reg_warps * mem.warp_size, mem.max_items_per_sm)
    warps = -(-group_items // mem.warp_size)
    if group_items > fits:
        why = "registers" if reg_warps * mem.warp_size < max_group_items else "the device's limit"
        return Occupancy(0, 0, f"refused: {group_items} work-items > {fits} ({why})", fits)
    if max_local_per_group and local_bytes > max_local_per_group:
        return Occupancy(0, 0, f"refused: {local_bytes} B of __local > {max_local_per_group} B", fits)
    unit = mem.local_alloc_unit
    per_group = -(-(local_bytes + mem.local_reserved_per_group) // unit) * unit
    limits = {"items": mem.max_items_per_sm // (warps * mem.warp_size), "groups": mem.max_groups_per_sm,
              "registers": reg_warps // warps, "local": max(mem.local_carveouts_kb) * 1024 // per_group}
    limit = min(limits, key=lambda k: limits[k])
    return Occupancy(limits[limit], limits[limit] * warps, limit, fits)


def l1_capacity(mem: GpuMemory, local_per_sm: int) -> int:
    """Bytes of L1 left for global data on an SM whose resident groups use ``local_per_sm`` of __local: the
    driver picks the smallest carve-out that holds it."""
    fit = [kb * 1024 for kb in sorted(mem.local_carveouts_kb) if kb * 1024 >= local_per_sm]
    return max(0, mem.l1_local_bytes - (fit[0] if fit else max(mem.local_carveouts_kb) * 1024))


def _reuse(elem: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For one group's stream (positions 0..n-1 of element ids): the first-access times, the reverse
    last-access times and the reuse times of its elements (what its footprint is made of), and for every
    access whether it is a re-touch and its reuse time (0 where it is not)."""
    p = np.argsort(_key(elem, np.arange(n)))
    first = _starts(elem[p])
    last = np.r_[first[1:], True]
    gap = p - np.r_[0, p[:-1]]
    retouch, reuse = np.zeros(n, bool), np.zeros(n, np.int64)
    retouch[p[~first]], reuse[p[~first]] = True, gap[~first]
    return p[first] + 1, n - p[last], gap[~first], retouch, reuse


def _footprint(firsts: np.ndarray, lasts: np.ndarray, reuses: np.ndarray, n: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """The all-window average footprint of a stream of length ``n``, fp(w) = m - S(w) / (n - w + 1), S(w)
    the sum over x > w of (x - w) for x the first-access times, the reverse last-access times and the
    reuse times; exact at multiples of a step, as (windows, footprints) to interpolate between."""
    xs = np.concatenate([firsts, lasts, reuses])
    step = max(1, n >> 12)
    b = xs // step
    cnt = np.cumsum(np.bincount(b, minlength=n // step + 2)[::-1])[::-1]
    tot = np.cumsum(np.bincount(b, weights=xs, minlength=n // step + 2)[::-1])[::-1]
    w = np.arange(len(cnt)) * step
    return w, len(firsts) - (tot - w * cnt) / np.maximum(n - w + 1, 1)


def _footprint_distance(elem: np.ndarray, lines: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For one group's stream of sectors (``elem``) and their lines, in time order: for every access
    whether it is a re-touch of its sector and the estimated LRU stack distance since that sector's last
    touch, in sectors and in lines (fp(reuse time - 1), fp being the all-window average footprint of the
    sectors or of the lines), and whether its line was touched before."""
    n = len(elem)
    f, last, reuses, retouch, reuse = _reuse(elem, n)
    lf, llast, lreuses, line_retouch, _ = _reuse(lines, n)
    dist, line_dist = np.zeros(n), np.zeros(n)
    if retouch.any():
        w, fp = _footprint(f, last, reuses, n)
        lw, lfp = _footprint(lf, llast, lreuses, n)
        dist[retouch] = np.interp(reuse[retouch] - 1, w, fp)
        line_dist[retouch] = np.interp(reuse[retouch] - 1, lw, lfp)
    return retouch, dist, line_retouch, line_dist


@dataclass(frozen=True)
class _Stream:
    """The traced groups' sector accesses, one per (request, sector), in each group's modelled order."""

    group: np.ndarray  # dense traced-group index
    cls: np.ndarray  # dense (buffer, written) class: a sector loaded and stored is fetched and written back
    cls_region: np.ndarray  # the buffer of each class
    sector: np.ndarray
    write: np.ndarray
    retouch: np.ndarray  # touched before by the same group
    dist: np.ndarray  # LRU stack distance of a re-touch, in sectors
    requests: int
    req: np.ndarray  # the warp request of each access
    line: np.ndarray  # its line within its buffer
    line_retouch: np.ndarray  # the access's line touched before by the same group
    line_dist: np.ndarray  # LRU stack distance of a re-touch in lines (what a cache of lines holds)


def _stream(t: Mapping[str, np.ndarray], warp_size: int, sector: int, line: int,
            requests: tuple[np.ndarray, np.ndarray]) -> _Stream:
    """The traced groups' sector accesses in modelled time order, with re-touches and their distances
    in sectors and in ``line``-byte lines; ``requests``: ``_instances`` of ``t``."""
    req, order = requests
    ereq, region, sec = _units(t, req, order, sector)
    nreq = int(req.max()) + 1
    rgroup, rwarp, rsite, rkind = (np.zeros(nreq, np.int64) for _ in range(4))
    rgroup[req], rwarp[req] = t["g"][order], t["item"][order] // warp_size
    rsite[req], rkind[req] = t["site"][order], t["kind"][order]
    rseq = np.full(nreq, np.iinfo(np.int64).max)
    np.minimum.at(rseq, req, t["seq"][order].astype(np.int64))
    # a group's warps advance together: its requests run in (program position, warp) order; the elements
    # come grouped by request, and each request's run moves to its place in time
    runs = np.bincount(ereq, minlength=nreq)
    at = np.argsort(_key(rgroup, rseq, rwarp, rsite))
    size = runs[at]
    o = np.repeat((np.cumsum(runs) - runs)[at] - (np.cumsum(size) - size), size) + np.arange(len(ereq))
    ereq, region, sec = ereq[o], region[o], sec[o]
    group, write = rgroup[ereq], rkind[ereq] != LOAD
    cls = _rank(_key(region, write))
    cls_region = np.zeros(int(cls.max()) + 1, np.int64)
    cls_region[cls] = region
    lines = sec // max(1, line // sector)
    elem, line_elem = _key(cls, sec), _key(cls, lines)
    retouch, line_retouch = np.zeros(len(o), bool), np.zeros(len(o), bool)
    dist, line_dist = np.zeros(len(o)), np.zeros(len(o))
    bounds = np.r_[np.flatnonzero(_starts(group)), len(o)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        retouch[a:b], dist[a:b], line_retouch[a:b], line_dist[a:b] = _footprint_distance(elem[a:b],
                                                                                         line_elem[a:b])
    return _Stream(group, cls, cls_region, sec, write, retouch, dist, nreq, ereq, lines, line_retouch,
                   line_dist)


def _launch_footprint(s: _Stream, traced: float, groups_total: int,
                      buffer_sectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per class: distinct sectors per group (mean over the traced groups) and distinct sectors of the whole
    grid. The grid's: the traced groups' union, grown towards what all groups would touch without sharing
    as far as the traced groups touch sectors of their own (none where each touches what the others do;
    one traced group: all), and no further than the class's buffer (``buffer_sectors``, per class; 0 where
    unknown: then no further than the range the traced groups cover, as they are spread over the grid)."""
    ncls = int(s.cls.max()) + 1
    per_group = np.bincount(s.cls[~s.retouch], minlength=ncls) / traced
    key = np.sort(_key(s.cls, s.sector))  # class leads the key: sorted keys and sorted classes line up
    union = np.bincount(np.sort(s.cls)[_starts(key)], minlength=ncls).astype(np.float64)
    if traced >= groups_total:
        return per_group, union
    lo, hi = np.full(ncls, np.iinfo(np.int64).max), np.zeros(ncls, np.int64)
    np.minimum.at(lo, s.cls, s.sector)
    np.maximum.at(hi, s.cls, s.sector)
    span = (hi - lo + 1).astype(np.float64)
    unknown = np.maximum(union, np.minimum(per_group * groups_total, span))
    if traced > 1:
        own = np.clip((union - per_group) / np.maximum(per_group * (traced - 1), 1e-9), 0.0, 1.0)
    else:
        own = np.ones(ncls)
    limit = np.maximum(union, np.minimum(per_group * groups_total, buffer_sectors))
    known = union + (limit - union) * own
    return per_group, np.where(buffer_sectors > 0, known, unknown)


SHIFTS = 64  # neighbouring groups whose windows ``_running`` overlaps one by one


def _running(s: _Stream, group_ids: np.ndarray, per_group: np.ndarray, concurrent: int) -> np.ndarray:
    """Per class: distinct sectors the ``concurrent`` groups running at once hold. Groups start in the
    order of their ids, so the running ones are neighbours; where a class's sectors move with the group
    id by a steady shift (``_steady_shift``: a mesh's gathers from nearby elements, a stencil's halo), the
    neighbours' sectors are the traced groups' shifted group by group, and overlap as far as they do
    (counted over SHIFTS of them, extrapolated at the rate the last half grew). Elsewhere (fewer than
    three traced groups, sectors that stay put: a vector every group gathers from at places of its own)
    each group is taken to hold sectors of its own."""
    own = per_group * concurrent
    if concurrent < 2 or int(s.group.max()) < 2:
        return own
    steps = min(concurrent, SHIFTS)
    for c in range(len(per_group)):
        m = s.cls == c
        g, sec = s.group[m], s.sector[m]
        ranks = np.unique(g)
        if len(ranks) < 3:
            continue
        sets = [np.unique(sec[g == r]) for r in ranks]
        shift = _steady_shift(group_ids[ranks].astype(np.float64), sets)
        if shift is None:
            continue
        held = []
        for own_sectors in sets:
            moved = own_sectors[None, :] + np.round(np.arange(steps) * shift).astype(np.int64)[:, None]
            half, full = len(np.unique(moved[: steps // 2])), len(np.unique(moved))
            rate = (full - half) / max(1, steps - steps // 2)
            held.append(full + rate * (concurrent - steps))
        own[c] = min(own[c], float(np.mean(held)))
    return own


def _steady_shift(x: np.ndarray, sets: list[np.ndarray]) -> float | None:
    """Sectors per group by which the traced groups' sectors (``sets``, of groups ``x``) move: the slope of
    their medians, where it is positive and each median lies off the line by less than a quarter of its
    group's middle half and of the move between the two closest traced groups (a product's column block
    that moves with the group's column, not its id, fails); else None."""
    mid = np.array([np.median(v) for v in sets], np.float64)
    spread = np.array([np.percentile(v, 75) - np.percentile(v, 25) + 1 for v in sets])
    slope, icept = np.polyfit(x, mid, 1)
    if slope <= 0:
        return None
    gap = float(np.diff(np.sort(x)).min())
    if (np.abs(mid - (slope * x + icept)) > 0.25 * np.minimum(spread, slope * gap)).any():
        return None
    return float(slope)


def _inter_group(touches: np.ndarray, unique: np.ndarray, l2: float, wave: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per class (sectors): re-touches of a sector by another group than the one that first touched it,
    and the share of them that hit L2, the larger of two ways to hit. The groups running at once touch
    what their neighbours do while it is in L2 as far as their working set (``wave``) fits (a stencil's
    halo). And with the launch's touches spread evenly over its time, a class's sector comes back after
    ``all touches x unique / touches`` of them, among which each class counts its own touches, no more
    than its distinct sectors (a vector every group gathers from, beside a matrix streaming past)."""
    inter = np.maximum(0.0, touches - unique)
    running = min(1.0, l2 / wave) if wave else 1.0
    total = float(touches.sum())
    if total <= 0:
        return inter, np.ones_like(inter)
    share = unique / np.maximum(touches, 1e-9)  # the window, as a share of the launch's touches
    distinct = np.minimum(unique[None, :], touches[None, :] * share[:, None]).sum(axis=1)
    return inter, np.maximum(running, np.minimum(1.0, l2 / np.maximum(distinct, 1e-9)))


def _shared_l1_hits(s: _Stream, per_group: np.ndarray, unique: np.ndarray, groups_total: int,
                    groups_per_sm: int, sms: int, l1: float) -> np.ndarray:
    """Per class (sectors, the whole launch): first touches within a group that hit L1 because another
    group on the same SM read the sector before, by the rule L2 follows across all groups
    (``_inter_group``) at one SM: its groups, one after another, touch ``per_group`` each of a class and
    at most its ``unique`` sectors (a vector every group gathers from, not a stream's own part), with L1's
    ``l1`` sectors for the groups resident at once. Loads only."""
    ncls = len(unique)
    written = np.zeros(ncls, bool)
    written[s.cls[s.write]] = True
    on_sm = max(1.0, groups_total / max(1, sms))
    touches = per_group * on_sm
    distinct = np.minimum(unique, touches)
    resident = float(np.minimum(distinct, per_group * max(1, groups_per_sm)).sum())
    inter, hit = _inter_group(touches, distinct, l1, resident)
    return np.where(written, 0.0, inter * hit * sms)


def _group_word_ns(t: Mapping[str, np.ndarray], rec: np.ndarray, word: np.ndarray, line: np.ndarray,
                   mem: GpuMemory, groups_per_sm: float, sms: int, fill: float = 1.0) -> np.ndarray:
    """Per atomic record ``rec`` (``word``, ``line``: its dense word and line ids): the launch time its warp
    request takes at least because a group's warps reach the same point of the program (a site's n-th
    execution) together and their lanes' updates of one line are served one after another, each for the
    measured cost of an update of one word at ``groups_per_sm`` groups an SM (``GpuMemory.group_word_ns``)
    times the share the line's words updated give (``GpuMemory.line_share``, 1 for one word; uneven
    updates count as fewer words: the squared updates over their sum of squares per word). The
    point takes its busiest line's time, while ``groups_per_sm`` x ``sms`` groups run: spread over the
    point's warp requests, the launch time of each. ``fill``: the lanes of a whole warp over those the
    trace holds of each, where it holds parts of warps (the lanes not traced update as those traced do)."""
    g, item, site, seq = (t[k][rec] for k in ("g", "item", "site", "seq"))
    by_item = _key(g, item, site)
    o = np.lexsort((seq, by_item))
    occ = np.empty(len(o), np.int64)
    occ[o] = _in_run(by_item[o])  # a work-item's n-th execution of the site
    _, point = np.unique(_key(g, site, occ), return_inverse=True)
    point = point.ravel()
    on_line = _key(point, line)
    lines, at, updates = np.unique(on_line, return_index=True, return_counts=True)
    first_word, per_word = np.unique(_key(on_line, word), return_index=True, return_counts=True)[1:]
    squares = np.bincount(np.searchsorted(lines, on_line[first_word]), minlength=len(lines),
                          weights=per_word.astype(np.float64) ** 2)
    words = updates.astype(np.float64) ** 2 / squares  # as many equally busy words would take as long
    busiest = np.zeros(int(point.max()) + 1)
    np.maximum.at(busiest, point[at], updates * mem.line_share(words))
    warps = np.bincount(point[np.unique(_key(point, item // mem.warp_size), return_index=True)[1]])
    ns = busiest / np.maximum(warps, 1) * fill * mem.group_word_ns(groups_per_sm) / (sms * groups_per_sm)
    return ns[point]


def _atomic_ns(t: Mapping[str, np.ndarray], req: np.ndarray, order: np.ndarray, mem: GpuMemory,
               footprint: np.ndarray, groups_per_sm: float = 0.0, sms: int = 0, fill: float = 1.0) -> float:
    """The mean cost of a warp request of the traced global atomics. A buffer some word of which more
    than one traced work-group updates is a table the whole grid shares (a global histogram, a counter):
    a request's lanes on one word wait for each other, and the table's lines (of its footprint) take all
    the grid's updates (``GpuMemory.shared_atomic_ns``). Else, a lane updating a word that another traced
    update also reaches waits for it (``atomic_ns``, a group's own histogram), or, where a group's warps pile
    on one of its words at once, what that word's updates one after another take (``_group_word_ns``, at
    ``groups_per_sm`` groups running on each of ``sms``), whichever is more; the others cost what a
    request reaching as many lines of a table of its buffer's footprint (``footprint``, bytes per region)
    costs (``GpuMemory.atomic_request_ns``: a graph's scattered updates over a large array pay DRAM's
    price for every lane), which is also the least a shared table's request costs. ``fill``: as
    ``_group_word_ns``'s. 0 where none is traced."""
    a = (t["kind"][order] == ATOMIC) & (t["space"][order] == GLOBAL)
    if not a.any():
        return 0.0
    rec = order[a]
    areq = req[a]
    region = t["region"][rec]
    word = _key(region, t["offset"][rec].astype(np.int64) // 4)
    _, inverse, per_word = np.unique(word, return_inverse=True, return_counts=True)
    pairs = np.unique(np.stack([inverse, t["group"][rec].astype(np.int64)], 1), axis=0)
    groups = np.bincount(pairs[:, 0], minlength=len(per_word))  # the traced groups that update each word
    shared = groups[inverse] > 1
    contended = per_word[inverse] > 1
    reqs, first, at_req = np.unique(areq, return_index=True, return_inverse=True)
    lines = np.unique(_units(t, areq, rec, mem.line_bytes)[0], return_counts=True)[1]  # per request
    regions, at = np.unique(region[first], return_inverse=True)
    one, spread = (np.array([mem.atomic_request_ns(n, float(footprint[r])) for r in regions])
                   for n in (1, mem.warp_size))
    reach = np.clip((lines - 1) / max(1, mem.warp_size - 1), 0.0, 1.0)
    costs = one[at] + (spread[at] - one[at]) * reach
    request_region = region[first]
    on_table = np.isin(request_region, np.unique(region[shared]))  # a table some word of which is shared
    on_contended = np.zeros(len(reqs), bool)
    np.logical_or.at(on_contended, at_req, contended)
    own = on_contended & ~on_table
    costs = np.where(own, mem.atomic_ns, costs)
    if own.any() and mem.atomic_group_word_ns and sms and groups_per_sm > 0:
        line = _rank(_key(region, t["offset"][rec].astype(np.int64) // mem.line_bytes))
        piled = _group_word_ns(t, rec, inverse, line, mem, groups_per_sm, sms, fill)[first]
        costs[own] = np.maximum(costs[own], piled[own])
    if on_table.any() and mem.atomic_shared_ns:
        on_word, lanes = np.unique(np.stack([at_req, inverse], 1), axis=0, return_counts=True)
        busiest = np.zeros(len(reqs))  # a request's lanes on its busiest word
        np.maximum.at(busiest, on_word[:, 0], lanes)
        kinds, which = np.unique(np.stack([busiest[on_table], request_region[on_table]], 1), axis=0,
                                 return_inverse=True)
        priced = np.array([mem.shared_atomic_ns(n, footprint[int(r)] / mem.line_bytes) for n, r in kinds])
        costs[on_table] = np.maximum(costs[on_table], priced[which.ravel()])
    return float(costs.mean())


def partial_atomic_ns(trace: np.ndarray, mem: GpuMemory, groups_per_sm: float, sms: int) -> float:
    """The mean cost of a warp request of the global atomics, from a trace whose work-items make no whole
    warp (a counting run that ran out of time in a group's long loops, which ``memory_traffic`` cannot
    take as a group's share): ``_atomic_ns`` on what they traced, each traced group's warps filled out
    with lanes that update as the traced ones do, the tables' footprints the lines the trace touches.
    0 where it holds no global atomics."""
    t = _select(trace, local=False)
    if not ((t["kind"] == ATOMIC) & (t["space"] == GLOBAL)).any():
        return 0.0
    req, order = _instances(t, mem.warp_size)
    pairs = np.unique(np.stack([t["g"], t["item"]], 1), axis=0)
    items = np.bincount(pairs[:, 0]).astype(np.float64)  # the work-items each traced group holds
    items = items[items > 0]
    fill = float(np.mean(np.ceil(items / mem.warp_size) * mem.warp_size / items))
    footprint = np.zeros(int(t["region"].max()) + 1)
    lines = np.unique(np.stack([t["region"], t["offset"].astype(np.int64) // mem.line_bytes], 1), axis=0)
    np.add.at(footprint, lines[:, 0], mem.line_bytes)
    return _atomic_ns(t, req, order, mem, footprint, groups_per_sm, sms, fill)


def l1_clocks(t: Mapping[str, np.ndarray], req: np.ndarray, order: np.ndarray, mem: GpuMemory) -> float:
    """L1's clocks for the traced warp requests (``_instances``): each takes ``l1_request_clocks`` plus its
    distinct lines over ``l1_lines_per_clock``, or a clock per distinct word its lanes read of the one bank
    they read most words of, whichever is more (a bank holds one word of each line: lanes on one bank in
    different lines are a conflict, lanes on one word a broadcast); a clock per line where the profile
    does not say. Measured on GH100 (bench/gpu_onchip.py, l1_strided): lanes ``stride`` words apart take
    1.3, 1.6, 3.1, 5.2 and 9.0 clocks for 2-32 lines on 32 banks (strides 1, 3, 9, 17, 33), and 2, 4, ...
    32 clocks when the stride is 2, 4, ... 32 words (as many lines, every lane of a line on one bank)."""
    lreq = _units(t, req, order, mem.line_bytes)[0]
    if not mem.l1_lines_per_clock:
        return float(len(lreq))
    lines = np.unique(lreq, return_counts=True)[1]  # per request, in request order
    wreq, _, word = _units(t, req, order, mem.bank_bytes)  # distinct words, by request
    key = _key(wreq, word % mem.local_banks)
    o = np.argsort(key, kind="stable")
    runs = np.flatnonzero(_starts(key[o]))  # one run per (request, bank): its words
    words = np.diff(np.r_[runs, len(o)])
    run_req = wreq[o][runs]
    first = np.flatnonzero(_starts(run_req))
    ways = np.maximum.reduceat(words, first)  # the busiest bank's words, per request in request order
    return float(np.maximum(ways, mem.l1_request_clocks + lines / mem.l1_lines_per_clock).sum())


def _lines(s: _Stream, sectors_per_line: int, groups: float) -> tuple[float, float]:
    """Mean distinct lines per traced group, and the share of those a second traced group also touches."""
    bits = int(s.group.max()).bit_length()  # groups are dense: packing keeps them as they are
    pairs = np.sort(_key(_key(s.cls_region[s.cls], s.sector // sectors_per_line), s.group))
    lines = pairs[_starts(pairs)] >> bits  # the line of each distinct (line, group) pair, in order
    runs = np.diff(np.r_[np.flatnonzero(_starts(lines)), len(lines)])  # traced groups per line
    return len(lines) / groups, float(runs[runs > 1].sum() / len(lines))


def longest_item(trace: np.ndarray) -> int:
    """The global and constant loads of the traced work-item that makes the most: a warp, and a launch of
    one wave, waits for the longest chain. 0 without loads in the trace."""
    m = ((trace["space"] == GLOBAL) | (trace["space"] == CONSTANT)) & (trace["kind"] == LOAD) \
        & (trace["item"] != NO_ITEM)
    if not m.any():
        return 0
    _, per_item = np.unique(_key(trace["group"][m], trace["item"][m]), return_counts=True)
    return int(per_item.max())


def memory_traffic(trace: np.ndarray, groups_total: int, mem: GpuMemory, *, groups_per_sm: int, sms: int,
                   local_bytes_per_group: int = 0, traced_groups: float | None = None,
                   buffer_bytes: Mapping[int, float] | None = None) -> MemoryTraffic:
    """The launch's traffic at each level of the memory hierarchy, from the traced groups' accesses.

    ``groups_total``: work-groups in the launch; ``groups_per_sm`` (``occupancy``) and ``sms`` decide how many
    run at once and share L1 and L2; ``local_bytes_per_group`` sets the __local carve-out, hence L1;
    ``traced_groups``: the groups the trace holds (default: those with an access in it), a part of one
    where it holds a group only as far as it ran; ``buffer_bytes``: the size of each kernel argument's
    buffer, by argument index, where the launch gives it (what the whole grid can touch of it)."""
    t = _select(trace, local=False)
    local = _select(trace, local=True)
    traced = traced_groups or len(np.unique(np.r_[t["group"], local["group"]]))
    scale = groups_total / max(traced, 1e-9)
    _, waves, ideal = _wavefronts(local, mem.warp_size, mem.local_banks, mem.bank_bytes)
    banks = float(waves.sum() / ideal.sum()) if len(waves) else 1.0
    local_bytes = float(local["size"].sum()) * scale
    if not len(t["group"]):
        return MemoryTraffic(0, 0, 0, 0, local_bytes, 0, 0, banks, 0, 0, ("no global accesses traced",))
    sec = mem.sector_bytes
    req, order = _instances(t, mem.warp_size)
    spl = max(1, mem.line_bytes // sec)
    s = _stream(t, mem.warp_size, sec, mem.line_bytes, (req, order))
    wavefront_bytes = l1_clocks(t, req, order, mem) * scale * mem.line_bytes
    region_arg = np.full(int(t["region"].max()) + 1, -1, np.int64)
    region_arg[t["region"]] = t["arg"]
    sizes = buffer_bytes or {}
    cap = np.array([max(0.0, float(sizes.get(int(region_arg[r]), 0.0))) / sec for r in s.cls_region])
    per_group, unique = _launch_footprint(s, traced, groups_total, cap)
    concurrent = max(1, min(groups_total, groups_per_sm * sms))
    running = _running(s, np.unique(t["group"]), per_group, concurrent)
    wave = float(np.minimum(unique, running).sum())  # sectors the running groups hold
    # L1 holds sectors, L2 lines: a line with one sector in use takes the room of four in L2
    # (bench/gpu_onchip.py: l1_sparse, l2_sparse)
    l1 = l1_capacity(mem, groups_per_sm * (local_bytes_per_group + mem.local_reserved_per_group)) / sec
    l2_lines = mem.l2_bytes / mem.line_bytes
    grid_lines = _launch_footprint(replace(s, sector=s.line, retouch=s.line_retouch), traced, groups_total,
                                   np.ceil(cap / spl))[1]
    fill = min(1.0, float(unique.sum()) / max(float(grid_lines.sum()) * spl, 1e-9))  # sectors in use a line
    l1_hit = s.retouch & ~s.write & (s.dist * max(1, groups_per_sm) < l1)
    intra_miss = s.retouch & ~l1_hit & (s.line_dist * wave / max(per_group.sum(), 1e-9) >= l2_lines)
    inter, inter_hit = _inter_group(per_group * groups_total, unique, l2_lines * spl * fill, wave)
    ncls = len(unique)
    dram_cls = unique + inter * (1 - inter_hit) + np.bincount(s.cls[intra_miss], minlength=ncls) * scale
    dram = float(dram_cls.sum())
    missed = ~l1_hit
    first = np.unique(_key(s.req[missed], s.cls[missed], s.line[missed]), return_index=True)[1]
    missed_lines = np.bincount(s.cls[missed][first], minlength=ncls)
    missed_sectors = np.bincount(s.cls[missed], minlength=ncls).astype(np.float64)
    # what a class misses L2 comes in its requests' lines: as many per sector as its L1 misses have
    per_sector = missed_lines / np.maximum(missed_sectors, 1)
    dram_lines = float((dram_cls * per_sector).sum())
    shared_hits = _shared_l1_hits(s, per_group, unique, groups_total, groups_per_sm, sms, l1)
    shared_hits = np.minimum(shared_hits, np.bincount(s.cls[~s.retouch], minlength=ncls) * scale)
    l2_sectors = float(missed_sectors.sum()) * scale - float(shared_hits.sum())
    l2_line_units = float((missed_sectors * scale - shared_hits) @ per_sector)
    group_lines, shared = _lines(s, spl, traced)
    footprint = np.bincount(s.cls_region, weights=unique, minlength=int(t["region"].max()) + 1) * sec
    resident = groups_total / max(1, sms)  # groups running an SM: fewer than one leaves SMs idle
    if groups_per_sm > 0:
        resident = min(resident, groups_per_sm)
    atomic_ns = _atomic_ns(t, req, order, mem, footprint, resident, sms)
    notes = [f"traced {traced:.3g} of {groups_total} work-groups; {concurrent} run at once "
             f"({groups_per_sm}/SM)",
             f"running groups' working set {wave * sec / 2**20:.1f} MiB, L2 {mem.l2_bytes / 2**20:.0f} MiB: "
             f"{float((inter * inter_hit).sum() / max(inter.sum(), 1e-9)):.0%} of re-touches by other groups"
             " hit L2",
             f"{fill:.0%} of the sectors of the launch's lines in use",
             f"{float(shared_hits.sum()) / max(float(missed_sectors.sum()) * scale, 1e-9):.0%} of what misses"
             " L1 within a group hits it across the groups of an SM"]
    return MemoryTraffic(float(t["size"].sum()) * scale, len(s.sector) * scale * sec,
                         l2_sectors * sec, dram * sec, local_bytes,
                         float(unique.sum()) * sec, len(s.sector) / s.requests, banks, group_lines, shared,
                         tuple(notes), longest_item(trace), l1_wavefront_bytes=wavefront_bytes,
                         atomic_ns=atomic_ns, l2_lines=l2_line_units, dram_lines=dram_lines)
