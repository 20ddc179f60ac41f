"""The roofline's arithmetic and the shipped device profiles (no compiler needed)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clperf.core.errors import DeviceError
from clperf.core.records import Device
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl
from clperf.predictor.model.memory import MemoryTraffic

GPU = Device("Test GPU", "Test", "gpu", 100, 2000, 49152, 1024, "1", peak_bandwidth_gbs=1000.0,
             peak_gflops=50000.0)


def _traffic(dram: float = 0.0, flops: float = 0.0, issued: float | None = None) -> rl.Traffic:
    return rl.Traffic(1 << 20, dram if issued is None else issued, dram, dram, 0.0, flops, 0.0, 0.0)


def test_big_copy_is_memory_bound_at_peak_bandwidth() -> None:
    r = rl.roofline(_traffic(dram=1e9), GPU, 1000.0, 50000.0, 0.005)
    assert r.bound == "memory"
    assert r.memory_ms == pytest.approx(1.0)  # 1 GB at 1000 GB/s
    assert r.time_ms == pytest.approx(1.005)
    assert 0.99 < r.bandwidth_utilization <= 1.0


def test_tiny_kernel_sits_on_the_launch_floor() -> None:
    r = rl.roofline(_traffic(dram=4096), GPU, 1000.0, 50000.0, 0.005)
    assert r.bound == "latency"
    assert r.time_ms == pytest.approx(0.005, rel=1e-3)
    assert r.bandwidth_utilization < 0.01


def test_flop_heavy_kernel_is_compute_bound() -> None:
    r = rl.roofline(_traffic(dram=1e6, flops=1e12), GPU, 1000.0, 50000.0, 0.005)
    assert r.bound == "compute"
    assert r.compute_ms == pytest.approx(20.0)


def test_double_precision_and_special_functions_cost_the_device_facts() -> None:
    plain = rl.roofline(_traffic(flops=1e12), GPU, 1000.0, 50000.0, 0.0)
    f = profiles.facts(GPU)
    t = rl.Traffic(1 << 20, 0.0, 0.0, 0.0, 0.0, 1e12, 0.0, 0.0, fp64_ops=5e11, special_ops=1e11)
    r = rl.roofline(t, GPU, 1000.0, 50000.0, 0.0)
    extra = (f.fp64_cost - 1) * 5e11 + (f.special_op_cost - 1) * 1e11
    assert r.compute_ms == pytest.approx(plain.compute_ms * (1e12 + extra) / 1e12)
    assert f.fp64_cost > 1 and f.special_op_cost > 1


def test_special_functions_cost_their_class_on_a_profile_that_measured_them() -> None:
    h200 = profiles.select_device("h200")
    c = profiles.facts(h200).math_costs
    assert c is not None and 1 < c.short < c.long < c.pow and c.fp64_extra > 0
    base = rl.Traffic(1 << 20, 0.0, 0.0, 0.0, 0.0, 1e12, 0.0, 0.0)
    sines = replace(base, special_ops=1e11, math_long=1e11)
    roots = replace(base, special_ops=1e11, math_short=1e11)
    assert rl.compute_ops(sines, h200) - rl.compute_ops(base, h200) == pytest.approx((c.long - 1) * 1e11)
    assert rl.compute_ops(roots, h200) - rl.compute_ops(base, h200) == pytest.approx((c.short - 1) * 1e11)
    doubled = replace(sines, math_fp64=1e11)
    assert rl.compute_ops(doubled, h200) - rl.compute_ops(sines, h200) == pytest.approx(c.fp64_long * 1e11)


def test_a_double_call_costs_the_extra_its_class_measured() -> None:
    """H200 (data/h200/gpu_math.json): a double sqrt or exp costs ~46 flops more than the float one, a
    double sin or log ~95, a double pow 364: one median extra over-charged the first and under-charged
    the last by 2-4x."""
    h200 = profiles.select_device("h200")
    c = profiles.facts(h200).math_costs
    assert c is not None and c.fp64_short is not None and c.fp64_long is not None and c.fp64_pow is not None
    assert c.fp64_short < c.fp64_long < c.fp64_pow
    base = rl.Traffic(1 << 20, 0.0, 0.0, 0.0, 0.0, 1e12, 0.0, 0.0)
    powers = replace(base, special_ops=1e10, math_pow=1e10)
    roots = replace(base, special_ops=1e10, math_short=1e10)
    for plain, extra in ((powers, c.fp64_pow), (roots, c.fp64_short)):
        doubled = replace(plain, math_fp64=1e10)
        assert rl.compute_ops(doubled, h200) - rl.compute_ops(plain, h200) == pytest.approx(extra * 1e10)
    # a kernel of double sqrt and pow calls alike: each class's extra on its half
    mixed = replace(base, special_ops=2e10, math_short=1e10, math_pow=1e10)
    added = rl.compute_ops(replace(mixed, math_fp64=2e10), h200) - rl.compute_ops(mixed, h200)
    assert added == pytest.approx((c.fp64_short + c.fp64_pow) * 1e10)
    # a profile that measured no class falls back to the one extra
    assert profiles.MathCosts(11.0, 57.0, 164.0, 92.0).fp64_extra_of(1.0, 0.0, 3.0) == 92.0


def test_global_atomics_are_bound_by_the_measured_cost_of_a_warp_request() -> None:
    h200 = profiles.select_device("h200")
    mem = profiles.facts(h200).gpu_memory
    assert mem is not None and mem.atomic_ns > 0
    t = replace(_traffic(dram=1e6), global_atomics=32e9)  # 1e9 warp requests
    assert rl.atomic_ms(t, h200) == pytest.approx(1e9 * mem.atomic_ns * 1e-6)
    bw, fl, _ = profiles.peaks(h200)
    r = rl.roofline(t, h200, bw, fl, 0.005)
    assert r.bound == "memory" and r.memory_ms == pytest.approx(rl.atomic_ms(t, h200))
    assert rl.atomic_ms(t, GPU) == 0.0  # a device whose profile does not measure them
    # a counting run's trace tells what its atomics' requests cost (scattered over a large array: more)
    traced = replace(t, atomic_ns=1.726)
    assert rl.atomic_ms(traced, h200) == pytest.approx(1e9 * 1.726 * 1e-6)
    # statically, a counter every work-group updates costs its 32 lanes one after another
    counter = replace(t, shared_atomics=((32e9, 32.0, 4.0),))
    assert rl.atomic_ms(counter, h200) == pytest.approx(1e9 * 32 * mem.atomic_word_ns * 1e-6)
    # a 1,024-word table (32 lines) the measured 2.72 ns; half the atomics on it, half at the group rate
    half = replace(t, shared_atomics=((16e9, 1.0, 4096.0),))
    assert rl.atomic_ms(half, h200) == pytest.approx(0.5e9 * (2.72 + mem.atomic_ns) * 1e-6)


def test_wasted_segments_cost_cache_bandwidth() -> None:
    lean = rl.roofline(_traffic(dram=1e8), GPU, 1000.0, 50000.0, 0.0)
    wasteful = rl.roofline(_traffic(dram=1e8, issued=32e8), GPU, 1000.0, 50000.0, 0.0)
    assert wasteful.time_ms == pytest.approx(lean.time_ms * 32 / rl.CACHE_FACTOR)


def test_many_small_groups_wait_for_the_device_to_start_them() -> None:
    h200 = profiles.select_device("h200")
    bw, fl, _ = profiles.peaks(h200)
    ns = profiles.facts(h200).group_dispatch_ns
    assert 10 < ns < 1000  # a compute unit starts one group in tens of nanoseconds
    stream = 3 * (1 << 30)  # a triad over 1 GiB arrays
    small = replace(_traffic(dram=stream), groups=(1 << 28) // 64)
    big = replace(small, groups=(1 << 28) // 256)
    r_small, r_big = (rl.roofline(t, h200, bw, fl, 0.0) for t in (small, big))
    assert r_small.bound == "latency" and r_big.bound == "memory"
    assert r_small.time_ms == pytest.approx((1 << 22) * ns / h200.compute_units * 1e-6)
    assert r_big.time_ms == pytest.approx(stream / (bw * 1e6))
    assert rl.dispatch_ms(small, GPU) == 0.0  # a device whose profile has no rate: no bound


def test_cycles_are_time_times_clock() -> None:
    assert rl.cycles(1.0, GPU) == pytest.approx(2e6)  # 1 ms at 2000 MHz


def test_shipped_profiles_include_the_h200_and_are_selectable_by_substring() -> None:
    names = [d.name for d in profiles.shipped()]
    assert "NVIDIA H200" in names
    d = profiles.select_device("h200")
    assert d.name == "NVIDIA H200" and d.source == "profile" and d.compute_units == 132
    bw, fl, _ = profiles.peaks(d)
    assert bw > 1000 and fl > 1000
    # the H200's launch floor: its smallest kernels time at 4.5-6.4 µs with profiling events
    assert 0.004 <= profiles.facts(d).launch_overhead_ms <= 0.007


def test_unknown_device_text_names_the_known_ones() -> None:
    with pytest.raises(DeviceError, match="H200"):
        profiles.select_device("no-such-device-xyz")


def test_a_device_without_peaks_is_a_clear_error() -> None:
    d = Device("Nameless", "Nowhere", "gpu", 1, 1000, 0, 256, "0")
    with pytest.raises(DeviceError, match="clperf devices"):
        profiles.peaks(d)


def test_a_discovered_device_takes_a_profiles_peaks_only_when_the_profile_is_of_that_device() -> None:
    pocl = next(d for d in profiles.shipped() if d.platform == "Portable Computing Language")
    found = replace(pocl, source="discovered", peak_bandwidth_gbs=None, peak_gflops=None)
    assert profiles.peaks(found) == (pocl.peak_bandwidth_gbs, pocl.peak_gflops, True)
    # PoCL names every AMD EPYC alike: one of another core count has peaks of its own, measured
    bigger = replace(found, compute_units=64)
    assert not profiles.describes(pocl, bigger)
    with pytest.raises(DeviceError, match="clperf devices"):
        profiles.peaks(bigger)
    assert profiles.peaks(replace(bigger, peak_bandwidth_gbs=90.0, peak_gflops=900.0)) == (90.0, 900.0, True)


def test_a_traced_launch_pays_each_on_chip_level_at_its_measured_rate() -> None:
    h200 = profiles.select_device("h200")
    mem = profiles.facts(h200).gpu_memory
    assert mem is not None and mem.onchip_rates
    bw = profiles.peaks(h200)[0]
    static = replace(_traffic(issued=8e9), local_bytes=4e9)
    assert rl.cache_ms(static, h200, bw) == pytest.approx(12e9 / (rl.CACHE_FACTOR * bw * 1e6))
    # a trace: L1 lines and __local wavefronts share the SMs' data path; what misses L1 goes to L2
    traced = replace(static, l2_bytes=1e9, l1_wavefront_bytes=16e9)
    on_sm = 16e9 / (mem.l1_gbs * 1e6) + 4e9 / (mem.local_gbs * 1e6)
    assert rl.cache_ms(traced, h200, bw) == pytest.approx(on_sm)
    missing = replace(static, l2_bytes=6e9)
    assert rl.cache_ms(missing, h200, bw) == pytest.approx(6e9 / (mem.l2_gbs * 1e6))
    # lanes reading a sector of a line each: L2 serves lines, not bytes (1e9 lines of 32 bytes read)
    scattered = replace(static, l2_bytes=32e9, l2_lines=1e9)
    assert rl.cache_ms(scattered, h200, bw) == pytest.approx(1e9 * mem.l2_line_ns * 1e-6)
    assert rl.cache_ms(scattered, h200, bw) > 32e9 / (mem.l2_gbs * 1e6) * 1.5
    # a GPU whose profile has no measured rates keeps the static rule
    assert rl.cache_ms(traced, GPU, 1000.0) == pytest.approx(12e9 / (rl.CACHE_FACTOR * 1000.0 * 1e6))


def test_dram_serves_lines_a_sector_each_slower_than_their_bytes() -> None:
    h200 = profiles.select_device("h200")
    mem = profiles.facts(h200).gpu_memory
    assert mem is not None and mem.dram_line_ns > 0
    bw = profiles.peaks(h200)[0]
    sparse = replace(_traffic(issued=32e9, dram=32e9), dram_lines=1e9)  # a sector of each line
    dense = replace(sparse, dram_lines=0.25e9)  # four sectors of each line
    assert rl.dram_lines_ms(sparse, h200) == pytest.approx(1e9 * mem.dram_line_ns * 1e-6)
    assert rl.roofline(sparse, h200, bw, 1e9, 0.0).memory_ms == pytest.approx(rl.dram_lines_ms(sparse, h200))
    assert rl.roofline(dense, h200, bw, 1e9, 0.0).memory_ms == pytest.approx(32e9 / (bw * 1e6))
    # a device without the measurement: bytes only
    assert rl.dram_lines_ms(sparse, GPU) == 0.0


def test_a_small_grid_with_long_loops_is_bound_by_its_work_items_chains() -> None:
    # 8,192 work-items (one wave), each executing 32,768 loads (of 64 MB, served by the caches) and
    # 65,536 flops: the throughput terms are tens of microseconds, the chains of one work-item a millisecond
    n, loads, flops, moved = 8192, 32768.0, 65536.0, 64e6
    t = rl.Traffic(n, moved, moved, moved, 0.0, n * flops, 0.0, 0.0, global_loads=n * loads)
    r = rl.roofline(t, GPU, 1000.0, 50000.0, 0.005)
    ops_chain, load_chain = rl.chain_ms(t, GPU)
    assert load_chain == pytest.approx(loads * rl.LOAD_CHAIN_NS * 1e-6)
    assert ops_chain == pytest.approx(rl.CHAIN_FACTOR * flops * rl.DEPENDENT_CYCLES / (GPU.clock_mhz * 1e3))
    assert r.chain_ms == pytest.approx(max(ops_chain, load_chain))
    # no chains of operations counted: all of it is dependent, memory time is added, not hidden
    assert rl.unhidden_share(t, GPU) == 1.0
    assert r.time_ms == pytest.approx(0.005 + r.chain_ms + r.memory_ms)
    assert r.chain_ms > 10 * max(r.memory_ms, r.compute_ms)
    assert r.bound == "latency"  # loads waited for one after another


def test_independent_chains_hide_memory_time_and_dependent_ones_add_it() -> None:
    # the same loads and flops, as one dependent chain a work-item or as 16 independent ones (a register
    # tile's accumulators): the larger term binds both, the smaller adds the square of the dependent share
    n, flops, moved = 1 << 22, 16384.0, 8e9
    one = rl.Traffic(n, moved, moved, moved, 0.0, n * flops, 0.0, 0.0, path_cycles=n * flops,
                     op_cycles=n * flops)
    tile = replace(one, path_cycles=one.op_cycles / 16)
    bw, fl = 4000.0, 60000.0
    chained, tiled = (rl.roofline(t, GPU, bw, fl, 0.005) for t in (one, tile))
    assert rl.unhidden_share(one, GPU) == 1.0 and rl.unhidden_share(tile, GPU) == pytest.approx(1 / 256)
    for r, share in ((chained, 1.0), (tiled, 1 / 256)):
        work = max(r.compute_ms, r.chain_ms)
        assert min(work, r.memory_ms) > 0.2 * max(work, r.memory_ms)  # both terms count
        assert r.time_ms == pytest.approx(0.005 + max(work, r.memory_ms) + share * min(work, r.memory_ms))
    assert tiled.time_ms < 0.7 * chained.time_ms
    # CPUs keep the larger term alone
    cpu = replace(GPU, type="cpu")
    assert rl.unhidden_share(one, cpu) == 0.0
    on_cpu = rl.roofline(one, cpu, bw, fl, 0.005)
    assert on_cpu.time_ms == pytest.approx(0.005 + max(on_cpu.memory_ms, on_cpu.compute_ms))


def test_independent_chains_shorten_the_operation_chain_down_to_a_schedulers_issue() -> None:
    # 100 SMs of 4 schedulers; each work-item 1,000 FMAs (2,000 flops, 4,000 cycles of latency) in chains
    # whose longest is ``path`` cycles
    def serial(items: int, path: float) -> float:
        t = rl.Traffic(items, 0.0, 0.0, 0.0, 0.0, items * 2000.0, 0.0, 0.0, path_cycles=items * path,
                       op_cycles=items * 4000.0)
        return rl.serial_ms(t, GPU) * GPU.clock_mhz * 1e3  # in cycles

    one = 2000 * rl.DEPENDENT_CYCLES
    assert serial(100 * 128, 4000.0) == pytest.approx(one)  # one chain, one warp a scheduler
    assert serial(100 * 128, 1000.0) == pytest.approx(one / 4)  # four chains side by side
    assert serial(100 * 128, 100.0) == pytest.approx(1000.0)  # forty: a warp instruction a clock
    assert serial(100 * 512, 100.0) == pytest.approx(4000.0)  # four warps share a scheduler's issue


def test_the_chain_grows_by_waves_and_is_charged_on_gpus_only() -> None:
    resident = GPU.compute_units * rl.RESIDENT_ITEMS["gpu"]
    one = rl.Traffic(resident, 0.0, 0.0, 0.0, 0.0, resident * 1e4, 0.0, 0.0, global_loads=resident * 100.0)
    three = rl.Traffic(3 * resident, 0.0, 0.0, 0.0, 0.0, 3 * resident * 1e4, 0.0, 0.0,
                       global_loads=3 * resident * 100.0)
    assert rl.chain_ms(three, GPU)[1] == pytest.approx(3 * rl.chain_ms(one, GPU)[1])
    cpu = Device("Test CPU", "Test", "cpu", 8, 3000, 32768, 4096, "1", peak_bandwidth_gbs=50.0,
                 peak_gflops=500.0)
    assert rl.chain_ms(one, cpu) == (0.0, 0.0)
    assert rl.roofline(one, cpu, 50.0, 500.0, 0.0).chain_ms == 0.0


def test_the_last_wave_waits_for_the_longest_work_item() -> None:
    resident = GPU.compute_units * rl.RESIDENT_ITEMS["gpu"]
    even = rl.Traffic(3 * resident, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, global_loads=3 * resident * 100.0)
    uneven = replace(even, longest_item=4.0)
    # three waves: two at the mean work-item's chain, the last at the longest one's (4x)
    assert rl.chain_ms(uneven, GPU)[1] == pytest.approx(rl.chain_ms(even, GPU)[1] * (2 + 4) / 3)


def test_a_trace_gives_the_longest_work_item_over_the_launchs_mean() -> None:
    # 64 work-items making 50 loads on average; the trace's longest made 100
    t = rl.Traffic(64, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, global_loads=64 * 50.0)
    seen = MemoryTraffic(0, 0, 0, 0, 0, 0, 0, 1.0, 0, 0, longest_item_loads=100)
    assert rl.with_memory(t, seen).longest_item == pytest.approx(2.0)
