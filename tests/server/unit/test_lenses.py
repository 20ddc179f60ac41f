"""Code lenses (``clperf.server.lenses``): the titles above each kernel, from hand-made records."""

from __future__ import annotations

from dataclasses import replace

from clperf.core.frontend import parse
from clperf.core.records import Device, Estimate, Measurement, Scenario, Status
from clperf.server.benchmarking import Outcome
from clperf.server.documents import Measured, kernel_text
from clperf.server.engine import Analysis, KernelResult
from clperf.server.lenses import (
    BENCHMARK_COMMAND,
    LINE_LIMIT,
    SEPARATOR,
    estimate_title,
    kernel_lenses,
    measured_title,
    short_device,
)

SOURCE = """__kernel void scale(__global float *a, float f)
{
    a[get_global_id(0)] *= f;
}

// clperf: --global 4096
__kernel void fill(__global float *b)
{
    b[get_global_id(0)] = 1.0f;
}
"""
H200 = Device("NVIDIA H200", "NVIDIA CUDA", "gpu", 132, 1980, 49152, 1024, "560.35")
H200_PROFILE = replace(H200, source="profile", peak_bandwidth_gbs=4800.0, peak_gflops=67000.0)
POCL = Device("pthread-haswell", "Portable Computing Language", "cpu", 2, 2600, 2097152, 4096, "3.1")
WRITTEN = Scenario((4096,), (64,), {"a": 4096, "f": 2.0})
ON_DEFAULTS = Scenario((1048576,), None, {"a": 1048576, "f": 1.0}, defaulted=("global", "local", "a", "f"))
ESTIMATE = Estimate(
    time_ms=0.00654,
    cycles=12_900,
    interval_ms=(0.0041, 0.0098),
    bound="memory",
    bandwidth_utilization=0.42,
    model_name="roofline",
    model_version="3",
)


def result(
    scenario: Scenario | None = WRITTEN,
    estimate: Estimate | None = ESTIMATE,
    problem: str | None = None,
    name: str = "scale",
) -> KernelResult:
    return KernelResult(name, None, scenario, None, estimate, problem)


def measurement(
    status: Status = "ok", median_ms: float | None = 0.0071, error: str | None = None
) -> Measurement:
    return Measurement(
        kernel="scale",
        file="k.cl",
        source_hash="0123456789abcdef",
        build_options="",
        scenario=WRITTEN,
        device=H200,
        status=status,
        error=error,
        times_ms=(0.0071,) * 5 if median_ms else (),
        median_ms=median_ms,
        min_ms=median_ms,
        cv=0.01,
        outliers_removed=0,
        checked=True,
        timestamp="2025-01-02T03:04:05",
        clperf_version="0.1.0",
    )


def test_the_estimate_lens_names_time_bound_and_device() -> None:
    assert estimate_title(result(), "NVIDIA H200") == "≈ 6.54 µs, memory-bound on NVIDIA H200"


def test_the_estimate_lens_says_when_the_launch_size_is_the_default() -> None:
    assert estimate_title(result(ON_DEFAULTS), "NVIDIA H200").endswith(" on NVIDIA H200 · default scenario")
    # defaulted arguments alone (the launch size written) do not earn the mark
    args_only = Scenario((4096,), (64,), {"a": 4096, "f": 1.0}, defaulted=("f",))
    assert estimate_title(result(args_only), "NVIDIA H200").endswith("-bound on NVIDIA H200")


def test_a_kernel_without_an_estimate_says_why() -> None:
    assert (
        estimate_title(result(estimate=None, problem="no target device"), "x")
        == "clperf: no estimate (no target device)"
    )
    assert estimate_title(result(estimate=None), "x") == "clperf: no estimate (unknown reason)"


def test_the_measured_lens_puts_the_estimate_beside_the_measurement() -> None:
    m = Measured(measurement(), ESTIMATE)
    assert measured_title(m) == "measured 7.1 µs (est. 6.54 µs) on NVIDIA H200"
    # once the kernel is edited, the old estimate is not the one to compare with
    assert measured_title(m, stale=True) == "measured 7.1 µs on NVIDIA H200 before your last edit"


def test_a_failed_benchmark_shows_the_first_line_of_its_error_cut_to_80_characters() -> None:
    error = "build failed: " + "x" * 100 + "\n<source>:3:5: error: use of undeclared identifier"
    title = measured_title(Measured(measurement("build-error", None, error), None))
    assert title == "benchmark build-error: " + ("build failed: " + "x" * 100)[:80]
    assert measured_title(Measured(measurement("timeout", None), None)) == "benchmark timeout: no time"


def test_every_kernel_gets_its_lenses_on_its_declaration_line() -> None:
    kernels = parse(SOURCE)
    analysis = Analysis("file:///k.cl", 1, "", H200, (), {"scale": result()}, 1.0)
    lenses = kernel_lenses("file:///k.cl", kernels, analysis, {})
    assert [(lens.line, lens.title, lens.command) for lens in lenses] == [
        (1, "≈ 6.54 µs, memory-bound on NVIDIA H200", ""),
        (1, "Benchmark", BENCHMARK_COMMAND),
        # fill is not in the analysis (typed since the last save): it can still be benchmarked
        (7, "Benchmark", BENCHMARK_COMMAND),
    ]
    assert lenses[2].arguments == ({"uri": "file:///k.cl", "kernel": "fill"},)


def test_lenses_before_the_first_analysis_and_without_a_device() -> None:
    lenses = kernel_lenses("file:///k.cl", parse(SOURCE), None, {})
    assert [(lens.line, lens.title) for lens in lenses] == [
        (1, "clperf: estimating…"),
        (1, "Benchmark"),
        (7, "clperf: estimating…"),
        (7, "Benchmark"),
    ]
    analysis = Analysis("file:///k.cl", 1, "", None, (), {"scale": result()}, 1.0)
    titles = [lens.title for lens in kernel_lenses("file:///k.cl", parse(SOURCE), analysis, {})]
    assert titles[0] == "≈ 6.54 µs, memory-bound on no device"


def test_the_measured_lens_notices_an_edit_of_the_kernel_it_measured() -> None:
    lines = SOURCE.split("\n")
    scale = parse(SOURCE)[0]
    measured = {"scale": Measured(measurement(), ESTIMATE, kernel_text(lines, scale))}
    analysis = Analysis("file:///k.cl", 1, "", H200, (), {"scale": result()}, 1.0)
    same = kernel_lenses("file:///k.cl", [scale], analysis, measured, lines)
    # beside the estimate lens of the same device and time, neither is repeated; the tooltip has both
    assert same[1].title == "measured 7.1 µs"
    assert same[1].tooltip == "measured 7.1 µs (est. 6.54 µs) on NVIDIA H200"
    edited = SOURCE.replace("*= f", "*= 2.0f * f")
    lenses = kernel_lenses("file:///k.cl", parse(edited)[:1], analysis, measured, edited.split("\n"))
    assert lenses[1].title == "measured 7.1 µs before your last edit"


def test_a_profile_estimate_says_where_the_benchmark_will_run() -> None:
    kernels = parse(SOURCE)[:1]
    on_profile = Analysis("file:///k.cl", 1, "", H200_PROFILE, (), {"scale": result()}, 1.0,
                          bench_device=POCL)
    titles = [lens.title for lens in kernel_lenses("file:///k.cl", kernels, on_profile, {})]
    assert titles == ["≈ 6.54 µs, memory-bound on NVIDIA H200", "Benchmark on pthread-haswell"]
    # the current device is local: the benchmark runs on it, which the estimate lens names
    local = Analysis("file:///k.cl", 1, "", POCL, (), {"scale": result()}, 1.0, bench_device=POCL)
    assert [lens.title for lens in kernel_lenses("file:///k.cl", kernels, local, {})][-1] == "Benchmark"
    # a profile on a machine with no OpenCL device: nothing to run, and the lens is plain text
    alone = Analysis("file:///k.cl", 1, "", H200_PROFILE, (), {"scale": result()}, 1.0)
    last = kernel_lenses("file:///k.cl", kernels, alone, {})[-1]
    assert (last.title, last.command) == ("no local OpenCL device to benchmark on", "")


def test_a_kernel_waiting_for_its_devices_peaks_says_so_instead_of_no_estimate() -> None:
    waiting = KernelResult("scale", None, WRITTEN, None, None,
                           "measuring the peaks of pthread-haswell (once)", pending=True)
    assert estimate_title(waiting, "pthread-haswell") == (
        "clperf: measuring the peaks of pthread-haswell (once)…")


def test_no_no_estimate_lens_beside_a_measurement_that_carries_the_estimate() -> None:
    lines = SOURCE.split("\n")
    scale = parse(SOURCE)[0]
    ran = Measured(replace(measurement(), device=POCL), ESTIMATE, kernel_text(lines, scale))
    no_peaks = result(estimate=None, problem="the peaks of pthread-haswell are not measured yet")
    analysis = Analysis("file:///k.cl", 1, "", POCL, (), {"scale": no_peaks}, 1.0, bench_device=POCL)
    titles = [lens.title for lens in kernel_lenses("file:///k.cl", [scale], analysis, {"scale": ran}, lines)]
    assert titles == ["measured 7.1 µs (est. 6.54 µs) on pthread-haswell", "Benchmark"]
    # a measurement on another device says nothing about this one's estimate
    elsewhere = Measured(measurement(), ESTIMATE, kernel_text(lines, scale))
    titles = [lens.title
              for lens in kernel_lenses("file:///k.cl", [scale], analysis, {"scale": elsewhere}, lines)]
    assert titles[0].startswith("clperf: no estimate (the peaks of pthread-haswell")


def test_a_benchmark_result_carries_the_line_a_client_prints() -> None:
    outcome = Outcome("scale", Measured(measurement(), ESTIMATE))
    assert outcome.to_json()["summary"] == "scale: measured 7.1 µs (est. 6.54 µs) on NVIDIA H200"
    failed = Outcome("scale", Measured(measurement("timeout", None), None))
    assert failed.summary() == "scale: benchmark timeout: no time"


LONG = Device("pthread-haswell-Intel(R) Core(TM) i7-4790 CPU @ 3.60GHz", "Portable Computing Language", "cpu",
              8, 3600, 2097152, 4096, "6.0")
LONG_PROFILE = replace(H200_PROFILE, name="NVIDIA GeForce RTX 4090 Laptop GPU (profile, 16 GB)")


def line_of(lenses: list, line: int) -> str:
    return SEPARATOR.join(lens.title for lens in lenses if lens.line == line)


def test_device_names_lose_trademarks_and_clock_speed() -> None:
    assert short_device(LONG.name) == "pthread-haswell-Intel Core i7-4790"
    assert short_device("AMD Ryzen 9 5950X 16-Core Processor") == "AMD Ryzen 9 5950X"
    assert short_device("NVIDIA H200") == "NVIDIA H200"


def test_one_kernels_lenses_fit_a_100_column_editor_and_keep_the_benchmark_action() -> None:
    lines = SOURCE.split("\n")
    scale = parse(SOURCE)[0]
    on_defaults = result(ON_DEFAULTS)
    later = replace(ESTIMATE, time_ms=0.0081)  # calibrated since the run: both times are worth showing
    cases = [
        (Analysis("file:///k.cl", 1, "", LONG, (), {"scale": on_defaults}, 1.0, bench_device=LONG),
         Measured(replace(measurement(), device=LONG), later, kernel_text(lines, scale))),
        (Analysis("file:///k.cl", 1, "", LONG_PROFILE, (), {"scale": on_defaults}, 1.0, bench_device=LONG),
         Measured(replace(measurement(), device=LONG), later, kernel_text(lines, scale))),
        (Analysis("file:///k.cl", 1, "", LONG_PROFILE, (), {"scale": on_defaults}, 1.0, bench_device=LONG),
         None),
    ]
    for analysis, m in cases:
        lenses = kernel_lenses("file:///k.cl", [scale], analysis, {"scale": m} if m else {}, lines)
        text = line_of(lenses, 1)
        assert len(text) <= LINE_LIMIT, text
        assert text.startswith("≈ 6.54 µs, memory-bound on "), text
        assert lenses[-1].title.startswith("Benchmark") and lenses[-1].command == BENCHMARK_COMMAND
        # what a title leaves out is in its tooltip
        assert all(lens.tooltip for lens in lenses), lenses
        assert analysis.device is not None and analysis.device.name in lenses[0].tooltip
    # where it fits, a measurement keeps the estimate it had when that differs from today's, and the
    # device is named once
    short = Analysis("file:///k.cl", 1, "", POCL, (), {"scale": result()}, 1.0, bench_device=POCL)
    m = Measured(replace(measurement(), device=POCL), later, kernel_text(lines, scale))
    titles = [lens.title for lens in kernel_lenses("file:///k.cl", [scale], short, {"scale": m}, lines)]
    assert titles == ["≈ 6.54 µs, memory-bound on pthread-haswell", "measured 7.1 µs (est. 8.1 µs)",
                      "Benchmark"], titles


def test_short_enough_lenses_are_left_whole() -> None:
    kernels = parse(SOURCE)[:1]
    on_profile = Analysis("file:///k.cl", 1, "", H200_PROFILE, (), {"scale": result(ON_DEFAULTS)}, 1.0,
                          bench_device=POCL)
    titles = [lens.title for lens in kernel_lenses("file:///k.cl", kernels, on_profile, {})]
    assert titles == ["≈ 6.54 µs, memory-bound on NVIDIA H200 · default scenario",
                      "Benchmark on pthread-haswell"]
