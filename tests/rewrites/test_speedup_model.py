"""The rewrite speedup model: the device compiler's own unrolling, SIMD across work-items on PoCL, and the
cost of an integer division. Real clang, the shipped device profiles, and one made-up device that knows
nothing about its compiler."""

from __future__ import annotations

import time

import pytest

from clperf.benchmark import pocl_code
from clperf.core.records import Device
from clperf.core.scenario import parse_flags
from clperf.predictor import rewrites
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import profiles
from clperf.predictor.model import speedup as speedup_model

# A fixed 8-iteration loop whose unrolled form is loop-free (Horner's rule, compute only).
HORNER = """
// clperf: --global 65536 --local 64 --arg x=65536 --arg y=65536
__kernel void horner(__global const float* x, __global float* y) {
    int i = get_global_id(0);
    float v = x[i];
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) {
        acc = acc * v + 0.5f * (float)k + acc * acc;
    }
    y[i] = acc;
}
"""

# The same loop, but its trip count is an argument: no compiler can unroll it fully.
HORNER_N = HORNER.replace("k < 8", "k < n").replace("__global float* y)", "__global float* y, int n)") \
    .replace("--arg y=65536", "--arg y=65536 --arg n=8")

# Nothing known about its compiler (no shipped profile), peaks given so the roofline can run.
PLAIN = Device(name="Plain GPU", platform="none", type="gpu", compute_units=100, clock_mhz=1500,
               local_mem_bytes=49152, max_work_group_size=1024, driver="1", peak_bandwidth_gbs=1000.0,
               peak_gflops=1000.0)


def _h200() -> Device:
    return profiles.select_device("h200")


def _pocl() -> Device:
    return profiles.select_device("Portable Computing Language")


def _unroll_speedups(text: str, device: Device) -> dict[str, float]:
    report = analyze_text(text)
    f = next(f for f in report.findings if f.rule == "unroll-candidate")
    k = report.kernel(f.kernel)
    scenario = rewrites.scenario_for(text, k, parse_flags("--global 1048576 --local 256 --arg x=1048576 "
                                                          "--arg y=1048576"))
    out = {}
    for rw in rewrites.available(text, report, f, device=device, scenario=scenario):
        assert rw.enabled and rw.predicted_speedup is not None, rw.disabled_reason
        out[rw.kind] = rw.predicted_speedup
    return out


def test_profiles_say_what_their_compiler_does() -> None:
    h200, pocl = profiles.facts(_h200()), profiles.facts(_pocl())
    assert h200.compiler_unroll_threshold > 0 and h200.int_div_ops > 1
    assert pocl.compiler_unroll_threshold == 0 and pocl.loop_free_simd_lanes == 8
    plain = profiles.facts(PLAIN)
    assert (plain.compiler_unroll_threshold, plain.loop_free_simd_lanes, plain.int_div_ops) == (0, 1, 1.0)


def test_the_h200_compiler_unrolls_a_constant_loop_itself() -> None:
    k = analyze_text(HORNER).kernel("horner")
    assert speedup_model.has_loops(k)  # the analysis keeps loops rolled so trip counts can be read
    compiled = speedup_model.as_compiled(HORNER, k, _h200())
    assert not speedup_model.has_loops(compiled)
    # the same memory work without the loop; unrolled, `0.5f * (float)k` folds to constants
    assert compiled.ops.global_load_bytes == k.ops.global_load_bytes == 4
    assert 0 < compiled.ops.flops <= k.ops.flops
    kn = analyze_text(HORNER_N).kernel("horner")
    assert speedup_model.has_loops(speedup_model.as_compiled(HORNER_N, kn, _h200()))


def test_a_device_without_its_own_unrolling_keeps_the_loop() -> None:
    k = analyze_text(HORNER).kernel("horner")
    assert speedup_model.as_compiled(HORNER, k, PLAIN) is k
    assert speedup_model.as_compiled(HORNER, k, _pocl()) is k


def test_unrolling_gains_nothing_where_the_compiler_unrolls_already() -> None:
    for kind, s in _unroll_speedups(HORNER, _h200()).items():
        assert s == pytest.approx(1.0, abs=0.03), kind


def test_unrolling_gains_where_the_compiler_keeps_the_loop() -> None:
    plain = _unroll_speedups(HORNER, PLAIN)
    assert plain["pragma-unroll"] > 1.1 and plain["manual-unroll"] > 1.1
    # on PoCL the unrolled kernel is loop-free, so it runs SIMD-wide: far more than the loop overhead
    pocl = _unroll_speedups(HORNER, _pocl())
    assert pocl["pragma-unroll"] > 3 * plain["pragma-unroll"]


def test_simd_lanes_apply_only_without_a_loop() -> None:
    pocl = _pocl()
    flags = "--global 1048576 --local 256 --arg x=1048576 --arg y=1048576"
    kn = analyze_text(HORNER_N).kernel("horner")  # a loop is left
    ku = _unrolled(HORNER)  # loop-free
    scn = rewrites.scenario_for(HORNER_N, kn, parse_flags(flags + " --arg n=8"))
    scu = rewrites.scenario_for(HORNER, ku, parse_flags(flags))

    def ratio(k, sc) -> float:  # noqa: ANN001 - the PoCL compute time over the plain device's
        return (speedup_model.roofline_for(k, sc, pocl).compute_ms
                / speedup_model.roofline_for(k, sc, PLAIN).compute_ms)

    # the same counts on a device that knows nothing: only the PoCL lanes differ between the two ratios
    assert ratio(ku, scu) == pytest.approx(ratio(kn, scn) / 8, rel=1e-6)


def test_pocls_own_code_replaces_the_compute_guess() -> None:
    from clperf.predictor.model.cpu_code import CompiledCode

    pocl = _pocl()
    ku = _unrolled(HORNER)  # loop-free in the analysis
    sc = rewrites.scenario_for(HORNER, ku, parse_flags("--global 1048576 --local 256 --arg x=1048576 "
                                                       "--arg y=1048576"))
    # the cycles of PoCL's code for the launch are its compute time: 2 cores at the profile's clock
    code = CompiledCode(cycles=1048576 * 2.0, work_items=1048576)
    costed = speedup_model.roofline_for(ku, sc, pocl, code)
    assert costed.compute_ms == pytest.approx(1048576 * 2.0 / (2 * pocl.clock_mhz * 1e3))
    assert costed.time_ms == pytest.approx(costed.floor_ms + max(costed.memory_ms, costed.compute_ms))
    # the memory side is the roofline's own, with or without the code
    assert costed.memory_ms == pytest.approx(speedup_model.roofline_for(ku, sc, pocl).memory_ms)
    # the code is asked for only on the PoCL device at hand, not for a profile's
    assert pocl_code.cached(HORNER, "horner", sc, pocl) is None


GATHER = """
__kernel void gather(__global const int* idx, __global const float* x, __global float* y) {
    int i = get_global_id(0);
    y[i] = x[idx[i]];
}
"""


def test_a_stream_that_stays_in_the_cache_moves_at_the_caches_bandwidth() -> None:
    from dataclasses import replace

    from clperf.predictor.model.cpu_code import CompiledCode

    pocl = replace(_pocl(), peak_bandwidth_gbs=30.0, peak_gflops=25.0, cache_bytes=32 << 20,
                   cache_bandwidth_gbs=100.0)
    ku = _unrolled(HORNER)
    code = CompiledCode(cycles=1.0, work_items=1)  # compute negligible: the memory side decides

    def memory_ms(text: str, k, n: int, device: Device) -> float:
        args = " ".join(f"--arg {p.name}={n}" for p in k.params)
        sc = rewrites.scenario_for(text, k, parse_flags(f"--global {n} --local 256 {args}"))
        return speedup_model.roofline_for(k, sc, device, code).memory_ms

    # 1M floats in and out (8 MB): within half the 32 MB cache, at its 100 GB/s, not memory's 30
    assert memory_ms(HORNER, ku, 1 << 20, pocl) == pytest.approx(8 * 2**20 / 100e6, rel=0.01)
    # 8M floats (64 MB) do not stay in it; nor does anything on a device whose cache was not measured
    assert memory_ms(HORNER, ku, 1 << 23, pocl) == pytest.approx(64 * 2**20 / 30e6, rel=0.01)
    unmeasured = replace(pocl, cache_bandwidth_gbs=None)
    assert memory_ms(HORNER, ku, 1 << 20, unmeasured) == pytest.approx(8 * 2**20 / 30e6, rel=0.01)
    # a gather is bound by each line's latency, not by a stream: it keeps memory's bandwidth
    kg = analyze_text(GATHER).kernel("gather")
    assert kg is not None
    cached = memory_ms(GATHER, kg, 1 << 16, pocl)
    assert cached == pytest.approx(memory_ms(GATHER, kg, 1 << 16, unmeasured))


# each work-item sums its own row of 10 ints: strided across work-items, contiguous along its loop
ROWSUM = """
__kernel void rowsum(__global const int* a, __global int* out) {
    int i = get_global_id(0);
    int s = 0;
    for (int j = 0; j < 10; j++) {
        s += a[i * 10 + j];
    }
    out[i] = s;
}
"""


def test_on_the_counted_code_the_memory_side_is_what_reaches_memory() -> None:
    from dataclasses import replace

    from clperf.predictor.model.cpu_code import CompiledCode

    pocl = replace(_pocl(), peak_bandwidth_gbs=30.0, peak_gflops=25.0, cache_bytes=0,
                   cache_bandwidth_gbs=None)
    k = analyze_text(ROWSUM).kernel("rowsum")
    assert k is not None
    n = 1 << 20
    flags = f"--global {n} --local 256 --arg a={10 * n} --arg out={n}"
    sc = rewrites.scenario_for(ROWSUM, k, parse_flags(flags))
    guessed = speedup_model.roofline_for(k, sc, pocl)
    counted = speedup_model.roofline_for(k, sc, pocl, CompiledCode(cycles=1.0, work_items=n))
    # the roofline's issued bytes charge each strided read a GPU's segment share (40 of its 4 bytes);
    # the CPU's loads are in the code's cycles, and what reaches memory is the 44 MB of a and out
    assert counted.memory_ms == pytest.approx(44 * n / 30e6, rel=0.01)
    assert guessed.memory_ms > 2 * counted.memory_ms


# C = A B with a constant inner dimension: B is read down a column, N floats apart
COLUMN = """
#define K 32
__kernel void mm(__global const float* A, __global const float* B, __global float* C, int N) {
    int col = get_global_id(0);
    int row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = acc;
}
"""


def test_a_column_read_with_a_power_of_two_pitch_refills_the_l1_cache_every_time() -> None:
    from clperf.predictor.model import cpu_code as compiled
    cache = compiled.l1_data_cache()
    if cache is None:
        pytest.skip("no L1 data cache geometry in sysfs here")
    # 32 lines 2 KB apart: on a 64-set, 8-way L1, 16 lines share each of 2 sets and every read misses
    assert compiled.conflict_misses([2048 * k for k in range(32)], (64, 8, 64)) == 32
    assert compiled.conflict_misses([2048 * k for k in range(16)], (64, 8, 64)) == 0  # 8 lines a set: fit
    assert compiled.conflict_misses([4 * k for k in range(4096)], (64, 8, 64)) == 0  # a row: no refills
    k = analyze_text(COLUMN).kernel("mm")
    assert k is not None

    def refills(n: int) -> float:
        sc = rewrites.scenario_for(COLUMN, k, parse_flags(
            f"--global {n},64 --local 16,16 --arg N={n} --arg A={64 * 32} --arg B={32 * n} --arg C={64 * n}"))
        return speedup_model.refill_cycles(k, sc) / sc.work_items

    # the reads of B, 4 N bytes apart, followed through this machine's L1 cache, at the measured cost each
    for n in (512, 528):
        column = compiled.conflict_misses([4 * n * i for i in range(32)], cache)
        assert refills(n) == pytest.approx(column * compiled.L1_FILL_CYCLES)
    if cache == (64, 8, 64):  # this machine's Zen 3: every read of B refills at N = 512, none at 528
        assert refills(512) == 32 * compiled.L1_FILL_CYCLES and refills(528) == 0.0


ROWS = """
__kernel void rows(__global const float* in, __global float* out, int w) {
    int i = (get_global_id(1) + 1) * w + get_global_id(0);
    out[i] = in[i] * 2.0f;
}
"""


def test_reads_of_the_next_row_wait_on_the_writes_of_the_last_when_rows_are_4_kb_apart() -> None:
    def per_pass(text: str, w: int, local: str) -> float:
        k = analyze_text(text).kernel("rows")
        assert k is not None
        sc = rewrites.scenario_for(text, k, parse_flags(
            f"--global 1024,1024 --local {local} --arg w={w} --arg in={w * 1026} --arg out={w * 1026}"))
        return speedup_model.alias_cycles(k, sc) * 8 / sc.work_items  # per pass of 8 work-items

    # rows of 4096 bytes: the read starts where the write of the row before started, 1, 2, 4 passes back
    # in groups 8, 16, 32 wide (every row of the group but its first); 8 passes back (64 wide) it has left
    table = speedup_model.ALIAS_CYCLES
    assert per_pass(ROWS, 1024, "8,32") == pytest.approx(table[0] * 31 / 32)
    assert per_pass(ROWS, 1024, "16,16") == pytest.approx(table[1] * 15 / 16)
    assert per_pass(ROWS, 1024, "32,8") == pytest.approx(table[3] * 7 / 8)
    assert per_pass(ROWS, 1024, "64,4") == 0.0
    assert per_pass(ROWS, 1040, "16,16") == 0.0  # rows of 4160 bytes: no read starts where a write did
    # three reads down the column wait on the same write: the square root of three times one's wait
    column = ROWS.replace("in[i] * 2.0f", "in[i - w] + in[i] + in[i + w]")
    assert per_pass(column, 1024, "16,16") == pytest.approx(table[1] * 15 / 16 * 3 ** 0.5)
    # a kernel with a loop runs its work-items one at a time, a whole pass apart: none
    looped = ROWS.replace("out[i] = in[i] * 2.0f", "for (int k = 0; k < w; k++) out[i] += in[i]")
    assert per_pass(looped, 1024, "8,32") == 0.0


def _unrolled(text: str):  # noqa: ANN202
    return analyze_text(text, unroll_threshold=300).kernel("horner")


DIVIDE = """
__kernel void divide(__global const int* a, __global int* b, int d) {
    int i = get_global_id(0);
    b[i] = a[i] / d + a[i] % 7;
}
"""


def test_divisions_by_a_run_time_value_are_counted_and_weighed() -> None:
    k = analyze_text(DIVIDE).kernel("divide")
    assert k.ops.int_divs == 1  # `/ d`; `% 7` by a constant compiles to multiplies and shifts
    scenario = parse_flags("--global 1048576 --local 256 --arg a=1048576 --arg b=1048576 --arg d=3")
    sc = rewrites.scenario_for(DIVIDE, k, scenario)
    h200, plain = _h200(), PLAIN
    t_h = speedup_model.roofline_for(k, sc, h200)
    t_p = speedup_model.roofline_for(k, sc, plain)
    fl_h, fl_p = profiles.peaks(h200)[1], profiles.peaks(plain)[1]
    # in flop-peak units, the H200 charges the division int_div_ops integer ops, the plain device one
    extra = (t_h.compute_ms * fl_h - t_p.compute_ms * fl_p) * 1e6 / sc.work_items
    assert extra == pytest.approx(2.0 * (profiles.facts(h200).int_div_ops - 1.0), rel=1e-6)


# A loop before a barrier, straight-line arithmetic after it: two parallel regions on PoCL.
REGIONS = """
__kernel void regions(__global const float* x, __global float* y, int n) {
    __local float t[256];
    for (int k = get_local_id(0); k < 256; k += get_local_size(0)) t[k] = x[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    float v = t[get_local_id(0)];
    y[get_global_id(0)] = v * v * v + v * v + 3.0f * v + 1.0f / v;
}
"""


def test_pocl_vectorises_the_loop_free_region_after_a_barrier() -> None:
    k = analyze_text(REGIONS).kernel("regions")
    assert k is not None and k.barriers == 1 and speedup_model.has_loops(k)
    scenario = rewrites.scenario_for(REGIONS, k, parse_flags("--global 1048576 --local 256 --arg x=256 "
                                                             "--arg y=1048576 --arg n=1048576"))
    pocl = _pocl()
    plain = speedup_model.rl.traffic(k, scenario, "cpu")
    seen = speedup_model.roofline_for(k, scenario, pocl)
    free = sum((ops.flops for chain, ops in k.op_groups if not chain), 0.0)
    assert free > 0
    # the straight-line flops run 8 lanes at once; the loader's loop stays scalar
    lanes = profiles.facts(pocl).loop_free_simd_lanes
    bw, fl, _ = profiles.peaks(pocl)
    assert seen.compute_ms < speedup_model.rl.roofline(plain, pocl, bw, fl, 0.0).compute_ms
    assert seen.compute_ms > speedup_model.rl.roofline(plain, pocl, bw, fl * lanes, 0.0).compute_ms


def test_a_barrier_costs_every_work_item_on_a_cpu_runtime_only() -> None:
    k = analyze_text(REGIONS).kernel("regions")
    assert k is not None and k.barriers == 1
    scenario = rewrites.scenario_for(REGIONS, k, parse_flags("--global 1048576 --local 256 --arg x=256 "
                                                             "--arg y=1048576 --arg n=1048576"))
    pocl, h200 = _pocl(), _h200()
    ns = profiles.facts(pocl).barrier_item_ns
    assert ns > 0 and profiles.facts(h200).barrier_item_ns == 0.0
    r = speedup_model.roofline_for(k, scenario, pocl)
    parts = max(r.memory_ms, r.compute_ms) + r.floor_ms  # the roofline without the barrier
    assert r.time_ms == pytest.approx(parts + 1048576 * ns * 1e-6)
    g = speedup_model.roofline_for(k, scenario, h200)
    assert g.time_ms == pytest.approx(max(g.memory_ms, g.compute_ms, g.chain_ms, g.dispatch_ms) + g.floor_ms)


def test_on_pocl_the_prediction_counts_the_first_read_site_of_the_loader_only() -> None:
    """A PoCL work-item's loader stops at the first site that serves an element; a GPU warp runs every
    site some lane needs. The applied rewrite keeps every site on both."""
    from clperf.predictor.rewrites import csource, local_tile

    from .conftest import DATA

    assert profiles.facts(_pocl()).scalar_loop_regions and not profiles.facts(_h200()).scalar_loop_regions

    def loader(t: str) -> str:
        return t[t.index("tile_src[TILE_SRC_CAPACITY]"):t.index("barrier(")]

    text = (DATA / "conv2d_5x5.cl").read_text()
    b = csource.parse_kernel(text, "conv5")
    pl = local_tile.plan(b, "src")
    every = rewrites.apply_edits(text, local_tile.generate(b, pl, 4096, fallback=False))
    first = rewrites.apply_edits(text, local_tile.generate(b, pl, 4096, fallback=False, settle_first=True))
    assert loader(every).count("for (") > loader(first).count("for (") == 2  # rows and columns only
    assert loader(first).count("tile_src[t] = src[") == 1
    assert analyze_text(first).kernel("conv5").analyzed
    report = analyze_text(text)
    f = next(f for f in report.findings if f.rule == "local-cache-candidate" and f.data.get("param") == "src")
    for device, predicted in ((_pocl(), first), (_h200(), every)):
        (rw,) = rewrites.available(text, report, f, device=device, predict=False)
        assert rw.predict_edits is not None
        assert loader(rewrites.apply_edits(text, rw.predict_edits)).count("for (") == \
            loader(predicted).count("for (")
        assert rewrites.apply(text, rw).count("for (") == every.count("for (")  # the applied text: all sites


@pytest.mark.slow
def test_on_the_local_pocl_a_prediction_waits_for_its_code_only_as_long_as_asked(pocl) -> None:
    text = HORNER.replace("float acc = 0.0f;", "float acc = 2.0f;")  # not costed yet in this process
    report = analyze_text(text)
    k = report.kernel("horner")
    loop = "for (int k = 0; k < 8; k++) {\n        acc = acc * v + 0.5f * (float)k + acc * acc;\n    }"
    assert loop in text
    unrolled = text.replace(loop, " ".join(f"acc = acc * v + 0.5f * {k}.0f + acc * acc;" for k in range(8)))
    sc = rewrites.scenario_for(text, k, parse_flags("--global 65536 --local 256 --arg x=65536 --arg y=65536"))
    speedup, note = rewrites.predicted_speedup(text, unrolled, k, device=pocl, scenario=sc,
                                               code_deadline=time.monotonic())
    assert "PoCL's code not counted (yet)" in note and speedup > 1
    counted, note = rewrites.predicted_speedup(text, unrolled, k, device=pocl, scenario=sc)  # waits
    assert "cycles per work-item in PoCL's code" in note and "not counted" not in note
    assert counted > 3  # the unrolled version runs 8 work-items per vector instruction


@pytest.mark.slow
def test_pocls_code_is_costed_once_per_machine_not_once_per_process(pocl, monkeypatch) -> None:
    text = HORNER.replace("horner", "horner_once")
    k = analyze_text(text).kernel("horner_once")
    sc = rewrites.scenario_for(text, k)
    first = pocl_code.cached(text, "horner_once", sc, pocl)
    assert first is not None
    # a new process: nothing in compiled's own cache, and no costing may start
    monkeypatch.setattr(pocl_code, "_cache", {})
    monkeypatch.setattr(pocl_code, "cpu_code", lambda *a, **kw: pytest.fail("costed again"))
    again = pocl_code.cached(text, "horner_once", sc, pocl)
    assert again == first
    # a different scenario is a different costing
    monkeypatch.undo()
    flags = "--global 131072 --local 64 --arg x=131072 --arg y=131072"
    other = rewrites.scenario_for(text, k, parse_flags(flags))
    assert pocl_code.cached(text, "horner_once", other, pocl).work_items == 131072
