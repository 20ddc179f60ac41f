"""The counting run on the real Oclgrind: exact block counts, names as clperf's analysis sees them,
budgets that stop runaway kernels, Oclgrind's error reports, the cache and the access trace.

Each kernel is small enough to run whole in well under a second; the expected counts are written
beside it or computed with NumPy from the same data.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import time
from pathlib import Path

import numpy as np
import pytest

from clperf.api import Workspace, select_device
from clperf.benchmark import counting
from clperf.benchmark.counting import blocks, launch, oclgrind
from clperf.benchmark.counting.store import CountStore
from clperf.benchmark.counting.trace import TRACE_DTYPE, sectors
from clperf.benchmark.runner import kernel_params
from clperf.core.cache import JsonCache
from clperf.core.records import Scenario
from clperf.core.scenario import parse_flags, resolve
from clperf.predictor.analysis.pipeline import analyze_text

SPMV = Path(__file__).parent / "data" / "realdata" / "spmv.cl"

STEPS = """
__kernel void steps(__global const int* n, __global float* out) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < n[i]; ++k)
        s += k * 0.5f;
    out[i] = s;
}
"""

REDUCE = """
__kernel void reduce(__global const float* in, __global float* out, __local float* tmp) {
    int lid = get_local_id(0);
    tmp[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            tmp[lid] += tmp[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = tmp[0];
}
"""

FOREVER = """
__kernel void spin(__global float* out) {
    int i = get_global_id(0);
    while (out[0] >= 0.0f)
        out[i] += 1.0f;
}
"""

UNROLLED = """
__kernel void unrolled(__global const int* n, __global float* out) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < n[i]; ++k) {
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            s += sin(s + (float)(j * k));
    }
    out[i] = s;
}
"""

OVERRUN = """
__kernel void overrun(__global float* out, int n) {
    int i = get_global_id(0);
    out[i + n] = 1.0f;
}
"""

ACCESS = """
__kernel void access(__global const float* a, __global const float* b, __global float* c) {
    int i = get_global_id(0);
    float x = a[i];
    float y = b[i * 8];
    c[i] = x + y;
}
"""


@pytest.fixture(scope="session")
def plugin() -> Path:
    """The counting plugin, built once per session (a few seconds); skips where Oclgrind is missing."""
    try:
        tc = oclgrind.toolchain()
    except oclgrind.Unavailable as e:
        pytest.skip(str(e))
    return oclgrind.plugin(tc)


@pytest.fixture
def store(tmp_path: Path) -> CountStore:
    """A cache of this test's own, so no test reads another's runs."""
    return CountStore(JsonCache(tmp_path / "rows"), tmp_path / "traces")


def scenario_of(source: str, kernel: str, flags: str, root: Path | None = None) -> Scenario:
    params, dims = kernel_params(source, kernel)
    return resolve(parse_flags(flags), params, dims, data_root=root)


def trips(source: str, kernel: str, counts: counting.Counts, path: Path | None = None) -> dict[int, float]:
    """clperf's analysis of the kernel, its loops' trip counts read from the counting run's blocks."""
    report = analyze_text(source, path).kernel(kernel)
    assert report is not None
    return report.trips_from(counts.blocks)


def test_a_loop_bounded_by_buffer_values_counts_every_trip(plugin, store):
    n = np.random.default_rng(3).integers(0, 40, 2048).astype(np.int32)
    sc = Scenario((2048,), (64,), {"n": 2048, "out": 2048})
    c = counting.count(STEPS, "steps", sc, data={"n": n}, store=store)
    assert c is not None
    assert (c.groups_run, c.groups_total, c.work_items, c.rel_error) == (32, 32, 2048, 0.0)
    assert c.blocks["entry"] == 1.0
    assert c.blocks["for.body"] * c.work_items == n.sum()  # one execution per iteration
    # the names are clperf's IR's: the analysis finds its loop's latch among them
    assert trips(STEPS, "steps", c) == {0: pytest.approx(n.mean())}
    assert not c.errors and c.local_size == (64, 1, 1)


def test_a_store_keeps_the_newest_traces_within_its_size_and_counts_an_evicted_one_again(plugin, store,
                                                                                         tmp_path):
    n = np.full(256, 3, np.int32)
    c = counting.count(STEPS, "steps", Scenario((256,), (64,), {"n": 256, "out": 256}), data={"n": n},
                       store=store)
    assert c is not None and c.trace is not None
    one = c.trace.nbytes + 4096  # one trace file and its header, not two
    small = CountStore(JsonCache(tmp_path / "small-rows"), tmp_path / "small", max_bytes=one)
    small.put("first", c)
    small.put("second", c)
    assert small.get("first") is None  # its trace was deleted: the counts alone are made again
    kept = small.get("second")
    assert isinstance(kept, counting.Counts) and kept.trace is not None and len(kept.trace) == len(c.trace)
    assert sorted(p.name for p in (tmp_path / "small").glob("*.npy")) == ["second.npy"]


def test_csr_spmv_counts_the_nonzeros_of_its_generated_matrix(plugin, store):
    source = SPMV.read_text()
    flags = ("--global rows --local 64 --arg rows=4096 --fill m=csr:rows:rows:16:1 --fill rowptr=m.rowptr "
             "--fill colidx=m.colidx --fill vals=m.values --arg cols=m.cols --arg nnz=m.nnz --arg x=cols "
             "--arg y=rows")
    sc = scenario_of(source, "spmv_csr", flags, SPMV.parent)
    c = counting.count(source, "spmv_csr", sc, path=SPMV, store=store)
    assert c is not None and c.complete
    (loop,) = trips(source, "spmv_csr", c, SPMV).values()
    assert loop * 4096 == pytest.approx(sc.args["nnz"], abs=1e-6)  # rowptr's real row lengths, summed
    assert 4096 * 8 < sc.args["nnz"] < 4096 * 24  # rows of 16 +- spread, not a constant


def test_a_pragma_unroll_loop_is_counted_as_the_analysis_keeps_it(plugin, store):
    # both compilers are given the source without its ``#pragma unroll`` lines: Oclgrind's LLVM would
    # unroll the inner loop that clperf's analysis keeps, and its blocks would match none of the analysis's
    n = np.random.default_rng(5).integers(0, 20, 256).astype(np.int32)
    sc = Scenario((256,), (64,), {"n": 256, "out": 256})
    c = counting.count(UNROLLED, "unrolled", sc, data={"n": n}, store=store)
    assert c is not None and c.complete and not c.unmatched
    report = analyze_text(UNROLLED).kernel("unrolled")
    assert report is not None
    outer, inner = report.loops
    assert inner.trips_for({}) == 4 and inner.latches[0] in c.blocks
    counted = report.with_counts(c.blocks, c.unmatched)
    assert counted.ops_for({}).special_ops == pytest.approx(4 * n.mean())
    assert counted.loops[0].measured == pytest.approx(n.mean())
    # a run whose compiler shaped the inner loop otherwise (its blocks unmatched, counts unknown): the
    # operations are counted from the trips, the outer loop's measured and the inner loop's static 4
    lost = (inner.header, *inner.latches)
    partial = report.with_counts({b: v for b, v in c.blocks.items() if b not in lost}, lost)
    assert partial.loops[0].measured == pytest.approx(n.mean()) and partial.loops[1].measured is None
    assert partial.ops_for({}).special_ops == pytest.approx(4 * n.mean())


def test_a_barrier_and_local_memory(plugin, store):
    sc = Scenario((1024,), (64,), {"in": 1024, "out": 16, "tmp": 64})
    c = counting.count(REDUCE, "reduce", sc, store=store)
    assert c is not None and c.complete and not c.errors
    (loop,) = trips(REDUCE, "reduce", c).values()
    assert loop == 6  # s = 32, 16, ..., 1 in every work-item
    assert c.blocks["if.then"] == pytest.approx(63 / 64)  # 32 + 16 + ... + 1 work-items per group
    t = c.trace
    assert t is not None and t.dtype == TRACE_DTYPE
    local = t[t["space"] == 3]
    assert len(local) and (local["arg"] == 2).all()  # the __local argument, by index
    stores = t[(t["space"] == 1) & (t["kind"] == 1)]
    assert (stores["item"] == 0).all() and (stores["arg"] == 1).all()  # one result per group, into out


def test_a_kernel_that_never_ends_is_stopped_at_its_budget(plugin, store, caplog):
    sc = Scenario((256,), (64,), {"out": 256})
    start = time.monotonic()
    with caplog.at_level(logging.INFO, logger="clperf.benchmark.counting"):
        c = counting.count(FOREVER, "spin", sc, data={"out": np.zeros(256, np.float32)}, budget_s=1.5,
                           store=store)
    assert time.monotonic() - start < 1.5 + launch.GRACE_S + 5  # the budget, the grace, start-up
    # its work-items ran and none finished: no per-work-item count, and its one loop, outermost, tells
    # nothing of the whole, so the static count stands
    assert c is not None and c.unfinished_only and c.blocks == {} and c.unfinished_items > 0
    report = analyze_text(FOREVER).kernel("spin")
    assert Workspace.counted(report, c).loops == report.loops
    # the run is cached: asking again costs nothing
    start = time.monotonic()
    again = counting.count(FOREVER, "spin", sc, data={"out": np.zeros(256, np.float32)}, budget_s=1.5,
                           store=store)
    assert again is not None and again.cached and again.unfinished_items == c.unfinished_items
    assert time.monotonic() - start < 1.0


TILES = """
__kernel void tiles(__global const int* n, __global float* out, __local float* tile) {
    int lid = get_local_id(0);
    float s = 0.0f;
    for (int t = 0; t < 64; ++t) {
        tile[lid] = t;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < n[t]; ++k)
            s += tile[(lid + k) & 255] * 0.5f;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = s;
}
"""


def test_a_group_held_at_its_barriers_past_the_budget_still_counts_its_inner_loops(plugin, store):
    # ~4e8 instructions a group: no work-item can finish before the others reach each barrier, and the
    # budget ends the first group a few tile steps in. The inner loop's trips (n[t], data) are read per
    # step begun; the outer loop keeps its static 64.
    sc = Scenario((512,), (256,), {"n": 64, "out": 512, "tile": 256})
    n = np.full(64, 3000, np.int32)
    c = counting.count(TILES, "tiles", sc, data={"n": n}, budget_s=2.0, trace_groups=0, store=store)
    assert c is not None and c.unfinished_only and c.groups_run == 0 and c.items_run == 0
    report = analyze_text(TILES).kernel("tiles")
    counted = Workspace.counted(report, c)
    outer, inner = counted.loops
    assert outer.measured is None and outer.trip_count == 64
    assert inner.measured is not None and 0.75 * 3000 < inner.measured < 1.33 * 3000, inner.measured
    assert report.loops[1].trips_for({}) is None  # what the static analysis alone could not tell


def test_groups_longer_than_the_budget_count_their_finished_work_items(plugin, store):
    sc = Scenario((1024,), (256,), {"n": 1024, "out": 1024})
    n = np.full(1024, 100_000, np.int32)  # ~1e6 instructions a work-item, ~3e8 a group: minutes
    c = counting.count(STEPS, "steps", sc, data={"n": n}, budget_s=1.5, trace_groups=0, store=store)
    assert c is not None
    assert c.groups_run == 0 and 0 < c.items_run < 512 and c.rel_error == 1.0
    assert c.blocks["for.body"] == 100_000 and c.blocks["entry"] == 1.0


def test_a_trace_of_groups_cut_short_scales_as_far_as_they_ran(plugin, store):
    # no group finishes: the trace holds the first group's finished work-items (and the one running), so
    # the launch's traffic is that share of a group scaled to the grid, not a whole group's; the first 64
    # work-items of the first group of the run order, the middle one, are short, so well over a warp
    # finishes however loaded the machine is
    sc = Scenario((1024,), (256,), {"n": 1024, "out": 1024})
    n = np.full(1024, 100_000, np.int32)
    n[512:576] = 10
    c = counting.count(STEPS, "steps", sc, data={"n": n}, budget_s=1.5, trace_groups=1, store=store)
    assert c is not None and c.groups_run == 0 and c.trace is not None
    assert 64 <= c.abandoned[int(c.trace["group"][0])] < 256
    traffic = Workspace.memory(analyze_text(STEPS).kernel("steps"), sc, select_device("h200"), c)
    assert traffic is not None
    issued = 1024 * 8  # each work-item reads n[i] and writes out[i]
    assert issued * 0.9 < traffic.issued_bytes < issued * 1.3, traffic.issued_bytes


def test_a_capped_trace_keeps_each_work_items_first_accesses_and_scales_by_those_it_made(plugin, store):
    # each work-item loads 20,000 times: the cap keeps the first 1,000,000 / 1,024 accesses of each, and
    # the plugin counts all it made; about a hundred of the group's 1,024 work-items finish within the
    # budget on 2 cores, so the share of the group is its finished whole warps times the part kept
    walk = """
    __kernel void walk(__global const int* n, __global const float* x, __global float* out) {
        int i = get_global_id(0);
        float s = 0.0f;
        for (int k = 0; k < n[i]; ++k)
            s += x[(i + k) & 1023];
        out[i] = s;
    }
    """
    sc = Scenario((4096,), (1024,), {"n": 4096, "x": 1024, "out": 4096})
    n = np.full(4096, 20_000, np.int32)
    c = counting.count(walk, "walk", sc, data={"n": n}, budget_s=2.0, trace_groups=1, trace_cap=1_000_000,
                       store=store)
    assert c is not None and c.groups_run == 0 and c.trace_truncated
    group = int(c.trace["group"][0])
    finished = c.abandoned[group]
    assert finished > 32
    _, kept = np.unique(c.trace["item"], return_counts=True)
    assert kept.max() <= 1_000_000 // 1024
    assert c.trace_made[group][:finished] == (20_002,) * finished  # n[i], 20,000 loads of x, out[i]
    traffic = Workspace.memory(analyze_text(walk).kernel("walk"), sc, select_device("h200"), c)
    assert traffic is not None
    issued = 4096 * (4 + 20_000 * 4 + 4)
    assert issued * 0.8 < traffic.issued_bytes < issued * 1.25, traffic.issued_bytes / issued


def test_a_finished_group_traced_in_part_scales_by_the_accesses_its_work_items_made(plugin, store):
    # 2,000 loads a work-item, 391 of them kept (100,000 records over 256 work-items): every lane of each
    # warp holds its first ones alike, and the group counts for the part of its accesses kept
    walk = """
    __kernel void walk(__global const float* x, __global float* out, int n) {
        int i = get_global_id(0);
        float s = 0.0f;
        for (int k = 0; k < n; ++k)
            s += x[(i + 32 * k) & 65535];
        out[i] = s;
    }
    """
    sc = Scenario((512,), (256,), {"x": 65536, "out": 512, "n": 2000})
    c = counting.count(walk, "walk", sc, budget_s=20.0, trace_groups=2, trace_cap=200_000, store=store)
    assert c is not None and c.groups_run == 2 and c.trace_truncated
    _, kept = np.unique(c.trace[["group", "item"]], return_counts=True)
    assert len(kept) == 512 and (kept == 200_000 // 512).all()
    traffic = Workspace.memory(analyze_text(walk).kernel("walk"), sc, select_device("h200"), c)
    assert traffic is not None
    issued = 512 * (2000 * 4 + 4)
    assert issued * 0.95 < traffic.issued_bytes < issued * 1.05, traffic.issued_bytes / issued


def test_a_trace_of_a_group_held_in_step_by_its_barriers_scales_by_the_share_it_ran(plugin, store):
    # no work-item of the group finishes, but its barriers keep them in step: the trace holds as many
    # accesses of each, a share of what the analysis counts for the whole group (n is the launch's)
    stepped = """
    __kernel void stepped(__global const float* x, __global float* out, int n) {
        __local float tile[256];
        int l = get_local_id(0);
        float s = 0.0f;
        for (int k = 0; k < n; ++k) {
            tile[l] = x[(k * 256 + l) & 65535];
            barrier(CLK_LOCAL_MEM_FENCE);
            s += tile[(l + 1) & 255];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        out[get_global_id(0)] = s;
    }
    """
    n = 200_000
    sc = Scenario((1024,), (256,), {"x": 65536, "out": 1024, "n": n})
    c = counting.count(stepped, "stepped", sc, budget_s=1.5, trace_groups=1, store=store)
    assert c is not None and c.groups_run == 0 and c.items_run == 0 and c.trace is not None
    traffic = Workspace.memory(analyze_text(stepped).kernel("stepped"), sc, select_device("h200"), c)
    assert traffic is not None
    issued = 1024 * (n * 4 + 4)
    assert issued * 0.8 < traffic.issued_bytes < issued * 1.25, traffic.issued_bytes / issued
    assert 1024 * n * 8 * 0.8 < traffic.local_bytes < 1024 * n * 8 * 1.25
    # where a trip count hangs on data the analysis cannot count a group's accesses: no traffic
    sc = Scenario((512,), (256,), {"n": 64, "out": 512, "tile": 256})
    c = counting.count(TILES, "tiles", sc, data={"n": np.full(64, 3000, np.int32)}, budget_s=1.5,
                       trace_groups=1, store=store)
    assert c is not None and c.groups_run == 0 and c.items_run == 0 and c.trace is not None
    assert Workspace.memory(analyze_text(TILES).kernel("tiles"), sc, select_device("h200"), c) is None


def test_a_trace_of_less_than_a_warp_tells_no_traffic(plugin, store):
    # a work-item of 1,000,000 steps takes about half a second: the budget ends the first group with a few
    # of its work-items finished, whose requests, a warp's few lanes, would misstate its coalescing
    sc = Scenario((1024,), (256,), {"n": 1024, "out": 1024})
    n = np.full(1024, 1_000_000, np.int32)
    c = counting.count(STEPS, "steps", sc, data={"n": n}, budget_s=1.5, trace_groups=1, store=store)
    assert c is not None and c.groups_run == 0 and 0 < c.items_run < 32
    assert Workspace.memory(analyze_text(STEPS).kernel("steps"), sc, select_device("h200"), c) is None


def test_the_groups_the_budget_cuts_short_stay_in_the_sample_with_their_finished_work_items(plugin, store):
    # group 0 is short (5 steps a work-item), the last group, second in the run order, is long
    sc = Scenario((512,), (256,), {"n": 512, "out": 512})
    n = np.where(np.arange(512) < 256, 5, 100_000).astype(np.int32)
    c = counting.count(STEPS, "steps", sc, data={"n": n}, budget_s=2.0, trace_groups=0, store=store)
    assert c is not None
    assert c.groups_run == 1 and 256 < c.items_run < 512  # group 0, and part of group 1
    long_items = c.items_run - 256  # those finished, and the one cut short as far as it got
    loops = c.blocks["for.body"] * c.items_run
    assert 256 * 5 + (long_items - 1) * 100_000 <= loops <= 256 * 5 + long_items * 100_000
    # the long group's work-items run ~20,000 times longer than the mean's share of them
    assert c.longest_group > 0.9 * 100_000 / c.blocks["for.body"]


def test_an_out_of_bounds_write_is_reported_and_the_run_goes_on(plugin, store):
    sc = Scenario((256,), (64,), {"out": 256, "n": 200})
    c = counting.count(OVERRUN, "overrun", sc, store=store)
    assert c is not None and c.complete
    assert c.error_count == 200  # work-items 56..255 write past the 256 floats
    assert c.errors[0].startswith("Invalid write of size 4 at global memory") and "At line 4" in c.errors[0]
    again = counting.count(OVERRUN, "overrun", Scenario((256,), (64,), {"out": 256, "n": 0}), store=store)
    assert again is not None and again.error_count == 0


def test_the_cache_answers_without_running_oclgrind(plugin, store, monkeypatch):
    sc = Scenario((512,), (64,), {"in": 512, "out": 8, "tmp": 64})
    first = counting.count(REDUCE, "reduce", sc, store=store)
    assert first is not None and not first.cached

    def no_run(*args, **kwargs):
        raise AssertionError("Oclgrind ran again")

    monkeypatch.setattr(launch, "run", no_run)
    second = counting.count(REDUCE, "reduce", sc, store=store)
    assert second is not None and second.cached
    assert second == first and np.array_equal(second.trace, first.trace)
    # other data is another run
    with pytest.raises(AssertionError, match="ran again"):
        counting.count(REDUCE, "reduce", sc, data={"in": np.ones(512, np.float32)}, store=store)


def test_sectors_of_a_coalesced_and_a_strided_access(plugin, store):
    sc = Scenario((1024,), (128,), {"a": 1024, "b": 8192, "c": 1024})
    c = counting.count(ACCESS, "access", sc, trace_groups=2, store=store)
    assert c is not None and c.trace is not None
    assert set(np.unique(c.trace["group"])) == {4, 0}  # the first groups of the run order: middle, first
    by_line = {line: site for site, (_, line, _) in c.sites.items()}
    per_site = sectors(c.trace)
    assert per_site[by_line[4]] == 4  # a[i]: 32 floats, 128 bytes, 4 sectors per warp
    assert per_site[by_line[5]] == 32  # b[8 i]: one sector per lane
    assert per_site[by_line[6]] == 4  # the store c[i]


def test_a_sample_of_groups_of_a_uniform_kernel_is_exact(plugin, store):
    n = np.full(8192, 5, np.int32)
    sc = Scenario((8192,), (64,), {"n": 8192, "out": 8192})
    c = counting.count(STEPS, "steps", sc, data={"n": n}, sample_groups=16, trace_groups=0, store=store)
    assert c is not None
    assert (c.groups_run, c.groups_total, c.trace) == (16, 128, None)
    assert c.blocks["for.body"] == 5 and c.rel_error == 0.0


def test_no_counts_for_a_kernel_that_does_not_build(plugin, store, caplog):
    sc = Scenario((64,), (64,), {"out": 64})
    with caplog.at_level(logging.INFO, logger="clperf.benchmark.counting"):
        assert counting.count("__kernel void k(__global float* out) { out[0] = nope; }", "k", sc,
                              store=store) is None
    assert "no counting run of k" in caplog.text


def test_blocks_are_matched_by_name_then_by_position():
    ir = """define spir_kernel void @k(ptr addrspace(1) %a) !dbg !5 {
entry:
  br label %for.body, !dbg !10
for.body:                                         ; preds = %for.body, %entry
  br i1 %c, label %for.body, label %12, !dbg !11
12:
  ret void, !dbg !12
}
!10 = !DILocation(line: 3, column: 5, scope: !5)
!11 = !DILocation(line: 3, column: 22, scope: !5)
!12 = !DILocation(line: 6, column: 1, scope: !5)
"""
    theirs = blocks.ir_blocks(ir, "k")
    assert theirs == [blocks.Block("entry", (3, 5)), blocks.Block("for.body", (3, 22)),
                      blocks.Block("", (6, 1))]
    ours = [blocks.Block("entry", (3, 5)), blocks.Block("for.body.renamed", (3, 22)),
            blocks.Block("for.body", (9, 9)), blocks.Block("exit", (6, 1))]
    # a name at another position is not the same block; an unnamed clperf block cannot be named
    assert blocks.match(ours, theirs) == {0: "entry", 1: "for.body"}


STRUCTS = """
typedef struct { float x, y, z; uchar w; } point;
__kernel void weigh(__global const point* p, __global const float3* shift, __global float* out, int n) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < (int)p[i].w; ++k)
        s += p[i].x + shift[0].y;
    out[i] = s;
}
"""


def test_a_hosts_flat_arrays_fill_struct_and_float3_buffers(plugin, store):
    # a host program's arrays: the structs' bytes (three floats and a byte, padded to 16), a float3
    # allocated as its three floats
    pts = np.zeros((256, 4), np.float32)
    w = pts.view(np.uint8)[:, 12]
    w[:] = np.arange(256) % 7
    sc = Scenario((256,), (64,), {"p": 256, "shift": 1, "out": 256, "n": 256})
    c = counting.count(STRUCTS, "weigh", sc, data={"p": pts.ravel(), "shift": np.ones(3, np.float32)},
                       store=store)
    assert c is not None and not c.errors
    assert trips(STRUCTS, "weigh", c) == {0: pytest.approx(w.mean())}


def test_a_budget_spent_before_the_kernel_starts_is_said_and_not_cached(plugin):
    # the budget counts from the call: when compiling for the analysis has used it all, no child starts,
    # and the outcome is this machine's state (a rerun may fit), not the kernel's
    run = launch.Launch(STEPS, "steps", "", (64,), (64,), [], 1, 0, 0)
    out = launch.run(run, plugin, oclgrind.toolchain().icd, budget_s=2.0, start=time.time() - 3.0)
    assert out.report is None and not out.cacheable
    assert out.failure == "the 2 s budget was spent before the kernel started"


def test_the_kernel_runs_on_a_private_map_of_the_inputs_and_leaves_the_callers_data(plugin, store):
    # Oclgrind runs on a copy-on-write map of each input file: the kernel's stores to out never reach the
    # caller's array
    n = np.arange(64, dtype=np.int32) % 5
    out = np.full(64, -1.0, np.float32)
    sc = Scenario((64,), (64,), {"n": 64, "out": 64})
    c = counting.count(STEPS, "steps", sc, data={"n": n, "out": out}, store=store)
    assert c is not None and c.items_run == 64
    assert trips(STEPS, "steps", c) == {0: pytest.approx(n.mean())}
    assert (out == -1.0).all() and (n == np.arange(64) % 5).all()


def test_input_folders_left_in_memory_by_a_killed_run_are_deleted(tmp_path, monkeypatch):
    # a tmpfs keeps a folder's memory until it is deleted: the next run deletes those whose process is gone
    monkeypatch.setattr(launch, "RAM_FOLDER", str(tmp_path))
    dead = tmp_path / f"{launch.INPUTS_PREFIX}{2**22 + 12345}-x"  # above any pid this machine hands out
    live = tmp_path / f"{launch.INPUTS_PREFIX}{os.getpid()}-y"
    other = tmp_path / "someone-else"
    for d in (dead, live, other):
        d.mkdir()
        (d / "arg0.npy").write_bytes(b"x")
    launch._sweep_inputs()
    assert not dead.exists() and live.exists() and other.exists()


def test_a_share_of_the_budget_is_left_to_run_groups_after_the_inputs_are_written(plugin):
    # all but 0.1 s of a 20 s budget spent before the inputs were written: a quarter of it (5 s) is still
    # left to the groups, and 64 short groups all run, not the first alone
    n = np.arange(4096, dtype=np.int32) % 5
    args = [launch.Argument(buffer=n), launch.Argument(buffer=np.zeros(4096, np.float32))]
    run = launch.Launch(STEPS, "steps", " ".join(counting.ANALYSIS_OPTIONS), (4096,), (64,), args, 0, 0, 0)
    out = launch.run(run, plugin, oclgrind.toolchain().icd, budget_s=20.0, start=time.time() - 19.9)
    assert out.report is not None and len(out.report["groups"]) == 64


def test_a_helper_inlined_at_several_calls_counts_each_call_where_it_ran(plugin, store):
    # Oclgrind is told to inline walk() (it takes no inlining option); its three copies end at the same
    # source positions under each compiler's own names: the copy of the call that ran gets the counts
    from tests.predictor.test_analysis import HELPER
    report = analyze_text(HELPER).kernel("three")
    static = report.ops_for({"n": 50}).flops
    ran = set()
    for mode in (0, 1, 2):
        sc = Scenario((64,), (32,), {"x": 4096, "out": 64, "n": 50, "mode": mode})
        c = counting.count(HELPER, "three", sc, budget_s=10.0, trace_groups=0, store=store)
        assert c is not None and c.groups_run == 2 and not c.unmatched
        counted = Workspace.counted(report, c)
        assert counted.block_runs is not None
        assert counted.ops_for({"n": 50}).flops == pytest.approx(static / 3, rel=0.05)
        runs = [counted.block_runs.get(lp.header, 0.0) for lp in report.loops]
        assert sorted(runs) == [0.0, 0.0, 50.0]
        ran.add(runs.index(50.0))
    assert ran == {0, 1, 2}  # each call's own copy


RARE = """
__kernel void rare(__global const int* v, __global float* out, int n) {
    __local float t[64];
    int l = get_local_id(0);
    float s = 0.0f;
    for (int k = 0; k < n; ++k) {
        t[l] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        int x = v[(k * 64 + l) & 4095];
        if (x == 255) {  // an overflow's fix-up: one element in 512
            float y = (float)x;
            for (int j = 0; j < 64; ++j) y = y * 1.0001f + native_sin(y) * 0.5f + s;
            s += y;
        }
        s += t[(l + 1) & 63];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = s;
}
"""


def test_a_run_stopped_before_any_work_item_finished_counts_a_rare_branch_as_often_as_it_was_taken(
        plugin, store):
    sc = Scenario((128,), (64,), {"v": 4096, "out": 128, "n": 10_000_000})
    v = np.zeros(4096, np.int32)
    v[::512] = 255
    c = counting.count(RARE, "rare", sc, data={"v": v}, budget_s=1.5, trace_groups=0, store=store)
    assert c is not None and c.unfinished_only and c.groups_run == 0
    report = analyze_text(RARE).kernel("rare")
    args = {"n": 10_000_000}
    static, counted = report.ops_for(args).flops, Workspace.counted(report, c).ops_for(args).flops
    # statically every iteration runs the 64-step fix-up; the run saw one iteration in 512 take it
    assert counted < static / 50, counted / static
    assert counted > static / 2000  # the branch is not left out: it was taken
    # a block the run's compiler shaped otherwise has no count, not a count of 0: it counts on every trip
    fix_up = report.loops[1].header
    lost = dataclasses.replace(c, unmatched=(fix_up,), unfinished={b: n for b, n in c.unfinished.items()
                                                                   if b != fix_up})
    assert Workspace.counted(report, lost).ops_for(args).flops > 0.9 * static


def load_child():
    spec = importlib.util.spec_from_file_location("counting_child", launch.CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_intrinsics_oclgrind_lacks_are_written_out_under_the_calls_name_and_place():
    child = load_child()
    ir = "\n".join([
        "  %0 = tail call i32 @llvm.abs.i32(i32 %d, i1 true) #5, !dbg !20",
        "  %r = call <2 x i32> @llvm.fshl.v2i32(<2 x i32> %a, <2 x i32> %a, <2 x i32> <i32 5, i32 33>),"
        " !dbg !7",
        "  %q = call noundef i64 @llvm.fshr.i64(i64 noundef %x, i64 %y, i64 3)",
        "  %s = add i32 %0, 1",
    ])
    out = child.lower_intrinsics(ir).split("\n")
    assert not any("@llvm." in line for line in out)
    assert out[-1] == "  %s = add i32 %0, 1"
    abs_lines = [line for line in out if "lower0." in line]
    assert abs_lines[-1] == "  %0 = select i1 %clperf.lower0.neg, i32 %clperf.lower0.sub, i32 %d, !dbg !20"
    assert all(line.endswith(", !dbg !20") for line in abs_lines)
    assert "  %clperf.lower1.s = urem <2 x i32> <i32 5, i32 33>, <i32 32, i32 32>, !dbg !7" in out
    assert ("  %r = select <2 x i1> %clperf.lower1.zero, <2 x i32> %a, <2 x i32> %clperf.lower1.or, !dbg !7"
            in out)
    assert "  %clperf.lower2.hi = lshr i64 %y, %clperf.lower2.s" in out  # fshr: the second shifts down
    assert "  %q = select i1 %clperf.lower2.zero, i64 %y, i64 %clperf.lower2.or" in out


SIGN_FLIP = """
static int mirror(int d, int n) { if (d >= n) d = 2 * n - 2 - d; else if (d < 0) d = -d; return d; }
__kernel void flip(__global const uint* x, __global uint* out, int n) {
    int i = get_global_id(0);
    uint v = x[mirror(i - 3, n)];
    out[i] = (v << 5 | v >> 27) ^ rotate(v, (uint)i);
}
"""


def test_a_kernel_whose_sign_flip_and_rotate_oclgrind_cannot_run_is_counted(plugin, store):
    # Oclgrind's clang makes llvm.abs and llvm.fshl of them, which Oclgrind does not implement
    sc = Scenario((256,), (64,), {"x": 256, "out": 256, "n": 256})
    x = (np.arange(256, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    c = counting.count(SIGN_FLIP, "flip", sc, data={"x": x}, store=store)
    assert c is not None and c.groups_run == 4
    assert c.blocks["entry"] == 1.0
    loads = c.trace[c.trace["kind"] == 0]["offset"] // 4
    mirrored = np.abs(np.arange(256) - 3)
    assert sorted(loads) == sorted(np.where(mirrored >= 256, 2 * 256 - 2 - mirrored, mirrored))


def test_work_items_cut_short_in_groups_that_outlast_the_budget_count_as_far_as_they_got(plugin, store):
    # the first group has no work, the others 100,000 iterations a work-item: only the first finishes
    # within the budget, and the barrier keeps every work-item of the others from finishing; counting the
    # finished group alone would make the launch's loop run 0 times
    grow = """
    __kernel void grow(__global const int* n, __global float* out) {
        int i = get_global_id(0);
        float s = 0.0f;
        for (int k = 0; k < n[i]; ++k)
            s += sin((float)k);
        barrier(CLK_GLOBAL_MEM_FENCE);
        out[i] = s;
    }
    """
    sc = Scenario((512,), (64,), {"n": 512, "out": 512})
    n = np.full(512, 100_000, np.int32)
    n[:64] = 0
    c = counting.count(grow, "grow", sc, data={"n": n}, budget_s=2.0, store=store)
    assert c is not None and c.groups_run == 1
    assert c.items_run > 64 and c.blocks["for.body"] > 1_000
    # a work-item that ran on, against the mean (the finished group alone would make it 1); how far it ran
    # in the budget depends on the machine's load, hence no tighter bound
    assert c.longest_group > 1.5
