"""The GPU memory-hierarchy model on hand-made access traces, each expected answer written beside its trace.

Traces are built the way the counting run records them: one row per access of a traced work-item, with its
group, local linear id, site, program position and byte offset. The device is the shipped H200 profile.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from clperf.benchmark.counting.trace import TRACE_DTYPE
from clperf.predictor.model import memory, profiles
from clperf.predictor.model.memory import ATOMIC, GLOBAL, LOAD, LOCAL, STORE, TRACE

H200 = next(d for d in profiles.shipped() if d.name == "NVIDIA H200")
MEM = profiles.facts(H200).gpu_memory
assert MEM is not None


def trace(group=0, item=0, site=0, seq=0, offset=0, size=4, kind=LOAD, space=GLOBAL, buffer=0) -> np.ndarray:
    """Records of the counting run's layout; a global buffer's number is its argument's index here."""
    names = ("group", "item", "site", "seq", "offset", "size", "kind", "space", "buffer")
    cols = np.broadcast_arrays(*(np.asarray(x) for x in (group, item, site, seq, offset, size, kind, space,
                                                        buffer)))
    t = np.zeros(cols[0].size, TRACE)
    for name, c in zip(names, cols, strict=True):
        t[name] = c.ravel()
    t["arg"] = np.where(t["space"] == LOCAL, -1, t["buffer"])
    return t


LANES = np.arange(64)  # two warps of one group


# --- coalescing: a warp request moves the distinct 32-byte sectors (128-byte lines) its lanes touch

@pytest.mark.parametrize(("offsets", "size", "sectors", "lines"), [
    (4 * LANES, 4, 4, 1),  # float a[i]: 32 lanes x 4 B = 128 B = 4 sectors, one line
    (8 * LANES, 4, 8, 2),  # a[2i]: 256 B span, every sector touched
    (128 * LANES, 4, 32, 32),  # a[32i]: one sector and one line per lane
    (0 * LANES, 4, 1, 1),  # a[0] for all: broadcast
    (16 * LANES, 16, 16, 4),  # float4 a[i]: 512 B
    (4 * LANES + 16, 4, 5, 2),  # a[i + 4]: 128 B starting mid-sector straddle 5 sectors and 2 lines
])
def test_sectors_and_lines_per_request(offsets, size, sectors, lines):
    got = memory.warp_sectors(trace(item=LANES, offset=offsets, size=size))
    assert got == {0: memory.SiteSectors(requests=2, sectors=sectors, lines=lines)}


def test_requests_pair_the_nth_execution_of_a_site_across_diverged_lanes():
    # every lane loads a[lane] then a[32 + lane] at site 0; lane 0 also runs site 1 in between, so its second
    # load has program position 2 where the others have 1: still one request of 4 sectors per execution
    lanes = np.arange(32)
    first = trace(item=lanes, seq=0, offset=4 * lanes)
    second = trace(item=lanes, seq=np.where(lanes == 0, 2, 1), offset=128 + 4 * lanes)
    extra = trace(item=0, site=1, seq=1, offset=4096)
    got = memory.warp_sectors(np.concatenate([second, extra, first]))  # record order does not matter
    assert got[0] == memory.SiteSectors(requests=2, sectors=4, lines=1)
    assert got[1] == memory.SiteSectors(requests=1, sectors=1, lines=1)


def test_a_group_copy_is_made_by_the_groups_work_items():
    # async_work_group_copy of 64 floats: 64 records of the group itself (no work-item), made as 2 requests
    t = trace(item=memory.NO_ITEM, site=memory.NO_ITEM, seq=0, offset=4 * LANES)
    assert memory.warp_sectors(t) == {memory.NO_ITEM: memory.SiteSectors(requests=2, sectors=4, lines=1)}


def test_the_trace_layout_is_the_counting_runs():
    assert TRACE == TRACE_DTYPE


# --- __local bank conflicts: wavefronts per warp request, 32 banks of 4 bytes

@pytest.mark.parametrize(("offsets", "size", "wavefronts"), [
    (4 * LANES, 4, 1),  # s[i]: 32 banks, one word each
    (8 * LANES, 4, 2),  # s[2i]: two words in each even bank
    (128 * LANES, 4, 32),  # s[32i]: every lane in bank 0
    (132 * LANES, 4, 1),  # s[33i]: the padded column walk, conflict-free
    (0 * LANES, 4, 1),  # s[0]: broadcast
    (16 * LANES, 16, 4),  # float4 s[i]: 512 B need 4 wavefronts at best, and take 4
])
def test_local_bank_wavefronts(offsets, size, wavefronts):
    t = trace(item=LANES, offset=offsets, size=size, space=LOCAL)
    assert memory.bank_conflicts(t) == {0: wavefronts}


def test_launch_bank_conflict_factor_compares_with_the_fewest_wavefronts():
    row = trace(item=LANES, offset=16 * LANES, size=16, space=LOCAL)  # 4 wavefronts, 4 at best
    column = trace(item=LANES, site=1, seq=1, offset=128 * LANES, space=LOCAL)  # 32 for 1
    out = memory.memory_traffic(np.concatenate([row, column]), 1, MEM, groups_per_sm=1, sms=132)
    assert out.bank_conflict_factor == pytest.approx((2 * 4 + 2 * 32) / (2 * 4 + 2 * 1))
    assert out.local_bytes == 64 * 16 + 64 * 4
    assert out.dram_bytes == 0


# --- occupancy on the H200

@pytest.mark.parametrize(("items", "local", "regs", "groups", "limit"), [
    (256, 0, 32, 8, "items"),  # 2048 work-items per SM / 256
    (32, 0, 32, 32, "groups"),  # 64 would fit by threads; 32 groups per SM at most
    (256, 48 * 1024, 32, 4, "local"),  # (48 KiB + 1 KiB reserved) into 228 KiB
    (256, 0, 128, 2, "registers"),  # 4096 registers a warp: 4 warps per scheduler, 16 per SM
])
def test_occupancy(items, local, regs, groups, limit):
    occ = memory.occupancy(items, local, MEM, registers_per_item=regs)
    assert (occ.groups_per_sm, occ.limit) == (groups, limit)
    assert occ.warps_per_sm == groups * items // 32


def test_occupancy_refuses_a_group_the_registers_cannot_hold():
    # 255 registers a work-item: 8192 a warp, 2 warps per scheduler, 8 per SM = 256 work-items per group
    occ = memory.occupancy(512, 0, MEM, registers_per_item=255)
    assert occ.groups_per_sm == 0 and occ.max_group_items == 256 and "registers" in occ.limit
    assert memory.occupancy(256, 0, MEM, registers_per_item=255).groups_per_sm == 1


def test_occupancy_refuses_more_local_memory_than_a_group_may_have():
    occ = memory.occupancy(64, 64 * 1024, MEM, max_local_per_group=H200.local_mem_bytes)
    assert occ.groups_per_sm == 0 and "__local" in occ.limit


@pytest.mark.parametrize(("local_per_sm", "l1_kib"), [(0, 256), (32 * 1024, 224), (100 * 1024, 156),
                                                      (229 * 1024, 28)])
def test_l1_is_what_the_carveout_leaves(local_per_sm, l1_kib):
    assert memory.l1_capacity(MEM, local_per_sm) == l1_kib * 1024


def test_h200_profile_carries_its_caches():
    assert MEM.l2_bytes == 60 * 2**20  # cudaDeviceProp.l2CacheSize on the H200
    assert MEM.l1_local_bytes == 256 * 1024 and max(MEM.local_carveouts_kb) == 228


# --- caches over the launch

def streaming_trace(groups_total: int, traced: list[int], items: int = 256) -> np.ndarray:
    """out[i] = a[i] + b[i], one float per work-item: loads at sites 0, 1 and the store at site 2."""
    g, lid = np.meshgrid(traced, np.arange(items), indexing="ij")
    off = 4 * (g * items + lid)
    return np.concatenate([trace(group=g, item=lid, site=s, seq=s, offset=off, buffer=s,
                                 kind=STORE if s == 2 else LOAD) for s in range(3)])


def test_streaming_past_l2_moves_every_issued_byte_once():
    groups = 2**18  # 64 Mi floats per buffer: 768 MiB in all, far past the 60 MiB L2
    t = streaming_trace(groups, [0, groups - 1, 100_003, 200_001])
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132)
    issued = 3 * 4 * groups * 256
    assert out.issued_bytes == issued
    assert out.l1_bytes == issued and out.l2_bytes == issued  # coalesced, nothing re-read
    assert out.dram_bytes == pytest.approx(issued, rel=1e-6)
    assert out.sectors_per_request == 4
    assert out.group_lines == 3 * 256 * 4 / 128 and out.shared_lines == 0
    assert out.l1_wavefront_bytes == issued  # a request of 32 floats: one line


@pytest.mark.parametrize(("offsets", "size", "clocks"), [
    (4 * 32 * LANES, 4, 32),  # a[32 i]: 32 lines, every lane on bank 0: a clock per word of it
    (4 * 2 * LANES, 4, 2),  # a[2 i]: 2 lines, two lanes on each even bank
    (4 * 33 * LANES, 4, 0.75 + 32 / 4),  # a[33 i]: 32 lines, each lane on a bank of its own
    (4 * 9 * LANES, 4, 0.75 + 9 / 4),  # a[9 i]: lanes 288 words apart in all, 9 lines, one word a bank
    (4 * LANES, 4, 1),  # a[i]: one line
    (0 * LANES, 4, 1),  # a[0]: one word for every lane
    (16 * LANES, 16, 4),  # float4 a[i]: 4 lines, four words on each bank
])
def test_l1_takes_a_clock_per_four_lines_or_per_word_of_its_busiest_bank(offsets, size, clocks):
    # bench/gpu_onchip.py, l1_strided: 0.75 + lines / 4 clocks, or a clock per word on the busiest bank
    t = trace(item=LANES, offset=offsets, size=size)
    out = memory.memory_traffic(t, 1, MEM, groups_per_sm=1, sms=132)
    assert out.l1_wavefront_bytes == pytest.approx(2 * clocks * 128)  # two warps


def test_one_traced_group_of_a_stream_grows_to_the_buffers_the_launch_gives():
    groups = 2**18
    t = streaming_trace(groups, [0])
    issued = 3 * 4 * groups * 256
    alone = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132)
    assert alone.dram_bytes == pytest.approx(3 * 4 * 256)  # no spread to see the grid's range in
    sizes = {0: 4.0 * groups * 256, 1: 4.0 * groups * 256, 2: 4.0 * groups * 256}
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132, buffer_bytes=sizes)
    assert out.dram_bytes == pytest.approx(issued, rel=1e-6)
    # every group reading the same table: it stays one table however large its buffer is
    shared = np.concatenate([trace(group=g, item=LANES, offset=4 * LANES) for g in (0, 5, 9)])
    table = memory.memory_traffic(shared, groups, MEM, groups_per_sm=8, sms=132, buffer_bytes={0: 2.0**30})
    assert table.dram_bytes == pytest.approx(4 * 64)


def tiled_matmul_trace(n: int, traced: list[int], tile: int = 16) -> np.ndarray:
    """C = A B with tile x tile work-groups staging tiles of A and B in __local: per tile step a work-item
    loads A[row, t*tile + tx] and B[t*tile + ty, col] and stores them to __local; it stores C at the end."""
    steps = n // tile
    gx = n // tile
    g, ty, tx, t = np.meshgrid(traced, np.arange(tile), np.arange(tile), np.arange(steps), indexing="ij")
    row, col = (g // gx) * tile + ty, (g % gx) * tile + tx
    lid = ty * tile + tx
    seq = 4 * t
    parts = [trace(group=g, item=lid, site=0, seq=seq, offset=4 * (row * n + t * tile + tx), buffer=0),
             trace(group=g, item=lid, site=1, seq=seq + 1, offset=4 * lid, kind=STORE, space=LOCAL),
             trace(group=g, item=lid, site=2, seq=seq + 2, offset=4 * ((t * tile + ty) * n + col), buffer=1),
             trace(group=g, item=lid, site=3, seq=seq + 3, offset=4 * lid, kind=STORE, space=LOCAL, buffer=1)]
    g1, row1, col1 = g[..., 0], row[..., 0], col[..., 0]
    parts.append(trace(group=g1, item=lid[..., 0], site=4, seq=4 * steps, offset=4 * (row1 * n + col1),
                       kind=STORE, buffer=2))
    return np.concatenate(parts)


def test_tiled_reuse_that_fits_l2_reads_each_matrix_once():
    n = 512  # A, B and C: 1 MiB each; 1024 groups, 8 traced
    groups = (n // 16) ** 2
    t = tiled_matmul_trace(n, [0, groups - 1, 633, 242, 875, 484, 95, 728])
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132, local_bytes_per_group=2048)
    footprint = 3 * n * n * 4
    assert out.issued_bytes == 2 * 4 * n**3 // 16 + n * n * 4  # 65 MiB
    assert out.footprint_bytes == footprint
    assert out.dram_bytes == pytest.approx(footprint)  # << issued
    assert out.bank_conflict_factor == 1


def test_tiled_reuse_traced_in_one_group_reads_each_matrix_once_given_their_sizes():
    n = 512
    groups = (n // 16) ** 2
    t = tiled_matmul_trace(n, [633])
    sizes = {i: 4.0 * n * n for i in range(3)}
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132, local_bytes_per_group=2048,
                                buffer_bytes=sizes)
    assert out.footprint_bytes == pytest.approx(3 * n * n * 4)


def test_tiled_reuse_that_does_not_fit_l2_goes_back_to_dram():
    n = 512
    groups = (n // 16) ** 2
    t = tiled_matmul_trace(n, [0, groups - 1, 633, 242])
    small = replace(MEM, l2_bytes=512 * 1024)  # A and B, 1 MiB each, no longer fit
    out = memory.memory_traffic(t, groups, small, groups_per_sm=8, sms=132, local_bytes_per_group=2048)
    fits = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132, local_bytes_per_group=2048)
    re_touched = out.l2_bytes - out.footprint_bytes  # sectors other groups read again
    # a sector of A (or B) comes back after 1/32 of the launch's touches (each is read by 32 groups):
    # A's and B's MiB, and the 1/32 of C's MiB written meanwhile, against 512 KiB
    window_kib = 1024 + 1024 + 1024 / 32
    assert out.dram_bytes == pytest.approx(out.footprint_bytes + re_touched * (1 - 512 / window_kib),
                                           rel=1e-3)
    assert fits.dram_bytes < out.dram_bytes < out.l2_bytes


def test_a_table_every_group_gathers_from_stays_in_l2_beside_a_stream():
    # 16 groups each stream 64 KiB of their own past a 128 KiB L2 while gathering from one 4 KiB table:
    # the running groups' 1 MiB does not fit, but a table sector comes back after a few hundred sectors
    g, item, k = np.meshgrid([0, 5, 9], np.arange(256), np.arange(64), indexing="ij")
    stream = trace(group=g, item=item, site=0, seq=2 * k, offset=4 * (g * 256 * 64 + k * 256 + item))
    table = trace(group=g, item=item, site=1, seq=2 * k + 1, offset=4 * ((item * 31 + k * 17 + g * 7) % 1024),
                  buffer=1)
    t = np.concatenate([stream.ravel(), table.ravel()])
    small = replace(MEM, l2_bytes=128 * 1024)
    out = memory.memory_traffic(t, 16, small, groups_per_sm=8, sms=132, buffer_bytes={0: 16 * 65536.0})
    assert out.footprint_bytes == pytest.approx(16 * 65536 + 4096)
    # every other group's re-touch of the table hits; by the running groups' working set alone, 7 in 8 of
    # those 15 x 4 KiB would miss (5% more DRAM traffic)
    assert out.dram_bytes == pytest.approx(out.footprint_bytes, rel=0.005)


def naive_matmul_trace(n: int, traced: list[int], tile: int = 16) -> np.ndarray:
    """C = A B with one work-item per C element and no __local: a work-item reads A[row, k], B[k, col]."""
    gx = n // tile
    g, ty, tx, k = np.meshgrid(traced, np.arange(tile), np.arange(tile), np.arange(n), indexing="ij")
    row, col = (g // gx) * tile + ty, (g % gx) * tile + tx
    lid = ty * tile + tx
    a = trace(group=g, item=lid, site=0, seq=2 * k, offset=4 * (row * n + k), buffer=0)
    b = trace(group=g, item=lid, site=1, seq=2 * k + 1, offset=4 * (k * n + col), buffer=1)
    return np.concatenate([a, b])


def test_naive_matmul_reuse_within_a_group_is_served_by_l1():
    n = 256
    groups = (n // 16) ** 2
    t = naive_matmul_trace(n, [0, groups - 1, 158, 61])
    # a warp covers two rows of 16: A gives 2 sectors (one word per row), B one 64-byte run = 2 sectors
    assert memory.warp_sectors(t) == {0: memory.SiteSectors(4 * 8 * n, 2, 2),
                                      1: memory.SiteSectors(4 * 8 * n, 2, 1)}
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132)
    touches = 8 * n * 4  # per group: 8 warps x n steps x 4 sectors
    distinct = 16 * n * 4 // 32 + n * 2  # per group: 16 rows of A, a 64-byte strip of B per row
    assert out.l1_bytes == groups * touches * 32
    assert out.l2_bytes == groups * distinct * 32  # every re-touch within the group hits L1
    assert out.dram_bytes == pytest.approx(2 * n * n * 4)  # A and B once: the 512 KiB fit L2


def rereads(groups: list[int], lane_bytes: int) -> np.ndarray:
    """Work-groups of 1,024 work-items, each reading 4 words of its own, 256 MiB apart, twice over: lanes
    ``lane_bytes`` apart (128: a line each, one sector of it used; 32: four lanes' sectors share a line).
    A round of a group touches 4,096 sectors, more than L1 holds for the two groups of an SM."""
    g, item, r, k = np.meshgrid(groups, np.arange(1024), np.arange(2), np.arange(4), indexing="ij")
    offset = (g * 1024 + item) * lane_bytes + k * 2**28
    return trace(group=g.ravel(), item=item.ravel(), site=k.ravel(), seq=(4 * r + k).ravel(),
                 offset=offset.ravel())


def test_l2_holds_lines_so_a_sector_a_line_fills_it_four_times_as_fast():
    # 264 groups run at once: 1,081,344 sectors a round, 34 MiB of sectors, L2 60 MiB. A line a sector
    # (132 MiB of lines): the second round goes back to DRAM; four sectors a line (33 MiB): it hits L2
    groups = 1024
    sparse = memory.memory_traffic(rereads([0, 700], 128), groups, MEM, groups_per_sm=2, sms=132)
    dense = memory.memory_traffic(rereads([0, 700], 32), groups, MEM, groups_per_sm=2, sms=132)
    touches = groups * 1024 * 8  # sectors, either way
    assert sparse.l2_bytes == dense.l2_bytes == touches * 32  # no L1 hits
    assert sparse.footprint_bytes == dense.footprint_bytes == touches // 2 * 32
    assert dense.dram_bytes == pytest.approx(dense.footprint_bytes, rel=1e-3)
    assert sparse.dram_bytes == pytest.approx(2 * sparse.footprint_bytes, rel=1e-3)
    # the lines of what misses L1: every sector its own line, or a line per four
    assert sparse.l2_lines == touches and dense.l2_lines == touches / 4
    assert sparse.dram_lines == pytest.approx(sparse.dram_bytes / 32)
    assert dense.dram_lines == pytest.approx(dense.dram_bytes / 32 / 4)


def gathers(groups: list[int], table_words: int) -> np.ndarray:
    """Groups of 256 work-items each reading 8 words of one table at hashed places."""
    g, item, r = np.meshgrid(groups, np.arange(256), np.arange(8), indexing="ij")
    word = ((g * 256 + item) * 8 + r) * 2654435761 % table_words
    return trace(group=g.ravel(), item=item.ravel(), site=0, seq=r.ravel(), offset=4 * word.ravel())


def test_a_table_the_groups_of_an_sm_gather_from_is_served_by_its_l1():
    groups = 132 * 64  # 64 groups per SM, one after another, 8 at a time
    traced = [0, 2000, 4000, 8000]
    small = memory.memory_traffic(gathers(traced, 16384), groups, MEM, groups_per_sm=8, sms=132)
    large = memory.memory_traffic(gathers(traced, 2**24), groups, MEM, groups_per_sm=8, sms=132)
    assert small.l1_bytes == large.l1_bytes == groups * 2048 * 32  # a sector per lane and load
    # 64 KiB: the SM reads each sector from L2 about once; 64 MiB: every gather misses L1
    assert small.l2_bytes < 0.05 * small.l1_bytes
    assert large.l2_bytes == pytest.approx(large.l1_bytes, rel=0.01)


def mesh_gathers(groups: list[int], n: int, window: int | None) -> np.ndarray:
    """Groups of 256 work-items, each reading 16 floats of an n-float array at hashed places within
    ``window`` elements of its own index (a mesh numbered so that neighbours are near), or anywhere."""
    g, item, k = np.meshgrid(groups, np.arange(256), np.arange(16), indexing="ij")
    own = g * 256 + item
    h = own * 2654435761 + k * 40503
    at = h % n if window is None else (own + h % (2 * window + 1) - window).clip(0, n - 1)
    return trace(group=g.ravel(), item=item.ravel(), site=0, seq=k.ravel(), offset=4 * at.ravel())


def test_gathers_from_nearby_elements_share_the_running_groups_sectors():
    # 128 MiB past an 8 MiB L2; the 1,056 groups running at once gather from a window of 1.1 MiB, which
    # counted as sectors of each group's own (1,000 each) would be 33 MiB
    n = 2**25
    groups = n // 256
    traced = counting_spread(groups, 4)
    small = replace(MEM, l2_bytes=8 << 20)
    near = memory.memory_traffic(mesh_gathers(traced, n, 4096), groups, small, groups_per_sm=8, sms=132,
                                 buffer_bytes={0: 4.0 * n})
    anywhere = memory.memory_traffic(mesh_gathers(traced, n, None), groups, small, groups_per_sm=8, sms=132,
                                     buffer_bytes={0: 4.0 * n})
    # near: each sector comes from DRAM about once; anywhere: most of a sector's 128 touches miss L2
    assert near.dram_bytes == pytest.approx(4.0 * n, rel=0.1)
    assert anywhere.dram_bytes > 10 * 4.0 * n


def test_atomics_and_stores_are_not_served_by_l1():
    lanes = np.arange(32)
    t = np.concatenate([trace(item=lanes, seq=s, site=s, offset=4 * lanes, kind=ATOMIC) for s in range(4)])
    out = memory.memory_traffic(t, 1, MEM, groups_per_sm=1, sms=132)
    assert out.l1_bytes == 4 * 128 and out.l2_bytes == 4 * 128  # the same 4 sectors, 4 times, at L2
    assert out.dram_bytes == 128  # read once from DRAM ... stays in L2


# --- global atomics: each warp request at the H200's measured cost for the lines it reaches and where

def scattered_atomics(groups: list[int], lines: int, lanes_apart: bool) -> np.ndarray:
    """Each work-item of 256 makes 4 updates of a table of ``lines`` 128-byte lines, at places a
    permutation spreads over it, no two updates on one word: each lane a line of its own
    (``lanes_apart``) or its warp's 32 consecutive words (one line)."""
    g, item, r = np.meshgrid(groups, np.arange(256), np.arange(4), indexing="ij")
    who = (g * 256 + item) if lanes_apart else (g * 256 + item) // 32
    line = (who * 4 + r) * 7919 % lines
    word = line * 32 + (0 if lanes_apart else item % 32)
    return trace(group=g.ravel(), item=item.ravel(), seq=r.ravel(), offset=4 * word.ravel(), kind=ATOMIC)


@pytest.mark.parametrize(("table", "lanes_apart", "ns"), [
    (2**20, False, 0.036), (2**20, True, 0.307),  # a 1 MiB table: L2 serves the updates
    (2**28, False, 0.097), (2**28, True, 1.726),  # 256 MiB: every lane's update goes to DRAM
])
def test_atomics_on_words_of_their_own_cost_what_their_lines_and_table_do(table, lanes_apart, ns):
    lines = table // 128
    groups = lines // 1024 if lanes_apart else lines // 32  # the grid's updates fill the table
    t = scattered_atomics([0, groups // 3, groups - 1], lines, lanes_apart)
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132, buffer_bytes={0: float(table)})
    assert out.atomic_ns == pytest.approx(ns, rel=0.02)


def test_atomics_on_a_group_histogram_cost_the_contended_rate():
    # every work-item adds twice to a bin of its own in its group's 256-bin table: each word is updated
    # again, each line by 32 lanes at a time
    item, k = np.meshgrid(np.arange(256), np.arange(2), indexing="ij")
    t = trace(item=item.ravel(), seq=k.ravel(), offset=4 * item.ravel(), kind=ATOMIC)
    out = memory.memory_traffic(t, 100, MEM, groups_per_sm=8, sms=132)
    assert out.atomic_ns == MEM.atomic_ns == 0.48
    assert memory.memory_traffic(trace(item=item.ravel()), 100, MEM, groups_per_sm=8, sms=132).atomic_ns == 0


def piled_histogram(groups: list[int], warps: int, iterations: int) -> np.ndarray:
    """Each iteration, every work-item of a group of ``warps`` warps adds to the same bin of the group's
    own 20-bin table (bench/gpu_hot_word.py's kernel at spread 1)."""
    g, item, k = np.meshgrid(groups, np.arange(32 * warps), np.arange(iterations), indexing="ij")
    bins = k * 7 % 20
    return trace(group=g.ravel(), item=item.ravel(), seq=k.ravel(), offset=4 * (g * 20 + bins).ravel(),
                 kind=ATOMIC)


@pytest.mark.parametrize(("groups", "warps", "measured"), [
    # the launch's time per iteration, ns, on the H200 (data/h200/gpu_hot_word.json, spread 1)
    (1, 16, 533),  # one group alone: its 512 updates of one word an iteration, one after another
    (132, 8, 1314),
    (201, 8, 1516),
    (528, 8, 3622),
])
def test_a_group_piling_on_one_word_of_its_own_table_costs_that_words_updates(groups, warps, measured):
    t = piled_histogram([0, groups // 2, groups - 1], warps, 4)
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=4, sms=132, buffer_bytes={0: 80.0 * groups})
    requests = groups * warps  # an iteration's
    assert out.atomic_ns * requests == pytest.approx(measured, rel=0.25)
    assert out.atomic_ns > MEM.atomic_ns


def test_a_trace_of_part_of_a_warp_prices_the_groups_piled_updates_as_whole_warps():
    # a counting run that ran out of time: 21 work-items of each traced group finished their long loop of
    # updates to one word of the group's own table; the lanes not traced pile on it as the traced ones do
    whole = memory.memory_traffic(piled_histogram([0, 100, 200], 8, 4), 201, MEM, groups_per_sm=2, sms=132,
                                  buffer_bytes={0: 80.0 * 201})
    part = piled_histogram([0, 100, 200], 1, 4)
    part = part[part["item"] < 21]
    assert memory.partial_atomic_ns(part, MEM, 2, 132) == pytest.approx(whole.atomic_ns, rel=0.05)
    assert memory.partial_atomic_ns(part, MEM, 2, 132) > 1.5 * MEM.atomic_ns  # more than an update alone
    # none traced: nothing to price
    assert memory.partial_atomic_ns(trace(group=0, item=np.arange(21), kind=LOAD), MEM, 2, 132) == 0.0


@pytest.mark.parametrize(("words", "measured"), [
    # the launch's time per iteration, ns, on the H200, 201 groups of 8 warps (data/h200/gpu_hot_word.json)
    (8, 1059),
    (32, 743),  # a line's updates one after another though no two lanes of a warp share a word
])
def test_a_groups_updates_of_distinct_words_of_one_line_are_served_one_after_another(words, measured):
    g, item, k = np.meshgrid([0, 100, 200], np.arange(256), np.arange(4), indexing="ij")
    t = trace(group=g.ravel(), item=item.ravel(), seq=k.ravel(), offset=4 * (g * 32 + item % words).ravel(),
              kind=ATOMIC)  # each group's own 32-word table: one line
    out = memory.memory_traffic(t, 201, MEM, groups_per_sm=2, sms=132, buffer_bytes={0: 128.0 * 201})
    assert out.atomic_ns * 201 * 8 == pytest.approx(measured, rel=0.1)


def test_no_global_accesses():
    out = memory.memory_traffic(np.zeros(0, TRACE), 10, MEM, groups_per_sm=8, sms=132)
    assert out.dram_bytes == 0 and out.notes == ("no global accesses traced",)


@pytest.mark.slow
def test_two_million_records_take_well_under_a_second():
    n = 1024
    groups = (n // 16) ** 2
    t = naive_matmul_trace(n, [0, groups - 1, 2531, 1012])  # 4 x 256 x 2048 = 2.1e6 records
    assert len(t) > 2_000_000
    cpu, wall = [], []
    for _ in range(3):  # processor time, best of three: the test machine is shared
        c, w = time.process_time(), time.perf_counter()
        memory.memory_traffic(t, groups, MEM, groups_per_sm=8, sms=132)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    print(f"memory_traffic on {len(t):,} records: {min(cpu):.2f} s processor, {min(wall):.2f} s wall")
    assert min(cpu) < 1.0


# Hardware counters of the same kernels (bench/memory_kernels.cu: one CUDA thread per work-item, 16 x 16
# blocks) on the H200, read with Nsight Compute 2026-12-02: (L1 sectors requested, L2 sectors requested,
# DRAM bytes read + written) for the streaming add of 2^26 floats and the naive and tiled products.
H200_COUNTERS = {
    ("stream", 0): (25_165_824, 25_165_824, 536_879_872 + 256_177_664),
    ("naive", 2048): (1_073_741_824, 127_739_787, 33_605_376),  # reads: this trace stores no C
    ("tiled", 2048): (134_742_016, 112_543_146, 33_624_320 + 11_776_256),
    ("naive", 4096): (8_589_934_592, 986_595_700, 10_259_755_776),
    ("tiled", 4096): (1_075_838_976, 1_025_764_962, 16_681_850_112 + 69_488_384),
}


def counting_spread(groups: int, n: int) -> list[int]:
    """The counting run's sample: first, last, then a golden-ratio stride over the grid."""
    stride = max(1, round(groups * 0.6180339887))
    while np.gcd(stride, groups) != 1:
        stride += 1
    return [0, groups - 1] + [int(k * stride % groups) for k in range(1, n - 1)]


@pytest.mark.slow
@pytest.mark.parametrize(("kernel", "n"), list(H200_COUNTERS))
def test_traffic_against_the_h200s_counters(kernel, n):
    groups = 2**18 if kernel == "stream" else (n // 16) ** 2
    traced = counting_spread(groups, 2 if n == 4096 and kernel == "naive" else 8)
    t = {"stream": lambda: streaming_trace(groups, traced), "naive": lambda: naive_matmul_trace(n, traced),
         "tiled": lambda: tiled_matmul_trace(n, traced)}[kernel]()
    local = 2048 if kernel == "tiled" else 0
    occ = memory.occupancy(256, local, MEM)
    out = memory.memory_traffic(t, groups, MEM, groups_per_sm=occ.groups_per_sm, sms=H200.compute_units,
                                local_bytes_per_group=local)
    l1, l2, dram = H200_COUNTERS[kernel, n]
    assert out.l1_bytes / 32 == pytest.approx(l1, rel=1e-3)  # coalescing as the hardware counts it
    assert out.l2_bytes / 32 == pytest.approx(l2, rel=0.25)
    # DRAM within 25%, except the naive product past L2: the hardware keeps more of it than the running
    # groups' working set suggests (model 18.3 GB, counters 10.3 GB: within 1.8x)
    assert out.dram_bytes == pytest.approx(dram, rel=0.8 if (kernel, n) == ("naive", 4096) else 0.25)


# --- the longest work-item: a warp, and a launch of one wave, waits for its longest chain

def test_the_longest_work_item_is_the_one_with_the_most_loads():
    # the first 32 work-items of a group walk a row of 100 loads, the others none (a loop bound the data
    # sets) and store once
    items, steps = np.meshgrid(np.arange(32), np.arange(100), indexing="ij")
    rows = trace(item=items.ravel(), seq=steps.ravel(), offset=4 * (100 * items + steps).ravel())
    t = np.concatenate([rows, trace(item=np.arange(64), seq=100, kind=STORE, buffer=1)])
    assert memory.longest_item(t) == 100
    assert memory.memory_traffic(t, 1, MEM, groups_per_sm=1, sms=132).longest_item_loads == 100
    assert memory.longest_item(trace(item=np.arange(64), kind=STORE)) == 0  # no loads to tell by


@pytest.mark.parametrize(("bins", "ns"), [
    (1, 32 * MEM.atomic_word_ns),  # every lane of every warp on one word: one after another
    (2, 16 * MEM.atomic_word_ns),
    (32, 5.93),  # 32 words of one line: the one-line table's measured cost
    (1024, 2.72),  # 32 lines
    (2**16, 2.72 * 32 / 2048),  # 2,048 lines: each line takes its share; the table's own price binds
])
def test_a_table_every_traced_group_updates_costs_its_measured_shared_rate(bins, ns):
    # three traced groups of 256 work-items, each making 4 updates at hashed places of one table of
    # ``bins`` words (bench/atomic_shared.py measured ca_inc_hashed so on the H200)
    g, item, r = np.meshgrid([0, 40, 99], np.arange(256), np.arange(4), indexing="ij")
    word = ((g * 256 + item) * 2654435761 + r * 40503) % 2**32 % bins
    t = trace(group=g.ravel(), item=item.ravel(), seq=r.ravel(), offset=4 * word.ravel(), kind=ATOMIC)
    out = memory.memory_traffic(t, 100, MEM, groups_per_sm=8, sms=132, buffer_bytes={0: 4.0 * bins})
    assert out.atomic_ns == pytest.approx(max(ns, MEM.atomic_request_ns(32, 4.0 * bins)), rel=0.1)


def test_a_group_table_and_a_grid_table_are_told_apart_by_the_traced_groups():
    # three groups, each updating 20 bins of its own table: its line's updates one after another, not shared
    g, item = np.meshgrid([0, 40, 99], np.arange(256), indexing="ij")
    own = trace(group=g.ravel(), item=item.ravel(), offset=4 * (g * 20 + item % 20).ravel(), kind=ATOMIC)
    out = memory.memory_traffic(own, 100, MEM, groups_per_sm=8, sms=132, buffer_bytes={0: 8000.0})
    assert MEM.atomic_ns < out.atomic_ns < MEM.shared_atomic_ns(2, 1) / 5
    # the same updates on one table of 20 bins all groups share: 1-2 lanes of a warp on a word, one line
    grid = trace(group=g.ravel(), item=item.ravel(), offset=4 * (item % 20).ravel(), kind=ATOMIC)
    out = memory.memory_traffic(grid, 100, MEM, groups_per_sm=8, sms=132, buffer_bytes={0: 80.0})
    assert out.atomic_ns == pytest.approx(MEM.shared_atomic_ns(2, 1)) and out.atomic_ns > 10 * MEM.atomic_ns
