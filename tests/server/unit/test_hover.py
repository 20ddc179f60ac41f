"""Hover (``clperf.server.hover``): the estimate's rows on a kernel's name, the pattern on an access, each
written as a table, a list or plain text for the client."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from clperf.core.frontend import parse
from clperf.core.records import Device, Estimate, Measurement, Scenario, Status
from clperf.predictor.analysis.records import Access, KernelReport, Ops
from clperf.predictor.model.roofline import Traffic
from clperf.server.documents import Measured
from clperf.server.engine import Analysis, KernelResult
from clperf.server.hover import access_span, hover_at, hover_style, kernel_hover, render, top_finding
from clperf.server.views import Problem, Span

SOURCE = """__kernel void transpose(__global float *out, __global const float *in, int rows)
{
    int i = get_global_id(0);
    out[i * rows] = in[i];
}
"""
H200 = Device("NVIDIA H200", "NVIDIA CUDA", "gpu", 132, 1980, 49152, 1024, "560.35")
SCENARIO = Scenario((1024,), (64,), {"out": 1048576, "in": 1024, "rows": 1024})
ESTIMATE = Estimate(
    time_ms=0.00654,
    cycles=12_900,
    interval_ms=(0.0041, 0.0098),
    bound="memory",
    bandwidth_utilization=0.42,
    model_name="roofline",
    model_version="3",
)
STRIDED = Access(
    param="out",
    kind="store",
    address_space="global",
    pattern="strided",
    stride=None,
    stride_expr="rows",
    line=4,
    column=5,
    in_loop=False,
    element_size=4,
)
CONTIGUOUS = Access(
    param="in",
    kind="load",
    address_space="global",
    pattern="contiguous",
    stride=1,
    stride_expr=None,
    line=4,
    column=21,
    in_loop=False,
    element_size=4,
)
REPORT = KernelReport(
    name="transpose",
    line=1,
    column=15,
    params=(),
    accesses=(STRIDED, CONTIGUOUS),
    loops=(),
    barriers=0,
    ops=Ops(),
)


def result(**changes: Any) -> KernelResult:
    plain = KernelResult(
        name="transpose",
        report=REPORT,
        scenario=SCENARIO,
        scenario_problem=None,
        estimate=ESTIMATE,
        estimate_problem=None,
    )
    return replace(plain, **changes)


SPAN = Span(1, 15, 1, 24)


def kernel_markdown(result: KernelResult, device: Device | None, measured: Measured | None,
                    stale: bool = False, findings: tuple[Problem, ...] = ()) -> str:
    """The kernel hover as a client with a Markdown parser (VS Code) gets it."""
    return render(kernel_hover(result, device, measured, SPAN, stale, findings), "table")


def rows(markdown: str) -> dict[str, str]:
    """The detail table's rows as ``{label: value}`` (a label that repeats keeps its last value)."""
    out = {}
    for line in markdown.split("\n|---|---|\n", 1)[1].split("\n"):
        label, value = line.removeprefix("| ").removesuffix(" |").split(" | ", 1)
        out[label] = value
    return out


def measurement(status: Status = "ok", error: str | None = None) -> Measurement:
    ok = status == "ok"
    return Measurement(
        kernel="transpose",
        file="t.cl",
        source_hash="0123456789abcdef",
        build_options="",
        scenario=SCENARIO,
        device=H200,
        status=status,
        error=error,
        times_ms=(0.0071,) * 20 if ok else (),
        median_ms=0.0071 if ok else None,
        min_ms=0.0069 if ok else None,
        cv=0.012 if ok else None,
        outliers_removed=0,
        checked=True,
        timestamp="2025-01-02T03:04:05",
        clperf_version="0.1.0",
    )


def test_the_kernel_hover_is_a_short_summary_then_a_table_of_where_every_number_comes_from() -> None:
    assert kernel_markdown(result(), H200, None) == "\n".join(
        [
            "**transpose** ≈ 6.54 µs on NVIDIA H200  ",
            "memory-bound · 12.9 k cycles · 42% of the peak bandwidth · likely 4.1 µs – 9.8 µs",
            "",
            "---",
            "",
            "| | |",
            "|---|---|",
            "| model | roofline 3 |",
            "| scenario | global 1024, local 64; arguments out=1048576, in=1024, rows=1024 |",
            "| last measured | never, for this exact source (run the Benchmark lens) |",
        ]
    )


def test_the_hover_adds_traffic_calibration_and_doubts_when_known() -> None:
    calibrated = Estimate(
        0.00654,
        12_900,
        (0.0041, 0.0098),
        "memory",
        0.42,
        "roofline",
        "3",
        cached=True,
        calibrated=True,
        calibration_measurements=12,
    )
    traffic = Traffic(
        work_items=1024,
        issued_bytes=131072,
        dram_bytes=8192,
        useful_bytes=8192,
        local_bytes=0,
        flops=2048,
        int_ops=3072,
        barriers=0,
    )
    table = rows(
        kernel_markdown(
            result(estimate=calibrated, traffic=traffic, doubts=("a loop's trip count is unknown",)),
            H200,
            None,
        )
    )
    assert table["traffic"] == "8.19 kB from DRAM, 131 kB issued; 2.05 k flops, 3.07 k integer ops"
    assert table["model"] == "roofline 3, calibrated on 12 measurements (cached)"
    assert table["caution"] == "a loop's trip count is unknown"


def test_a_kernel_on_defaults_without_an_estimate_says_why_and_what_was_defaulted() -> None:
    defaulted = Scenario(
        (1048576,), None, {"out": 1048576, "in": 1048576, "rows": 1024}, defaulted=("global", "local", "rows")
    )
    text = kernel_markdown(
        result(
            scenario=defaulted,
            estimate=None,
            estimate_problem="no target device",
            scenario_problem="--arg rows=x: not a number",
        ),
        None,
        None,
    )
    assert text.startswith("**transpose** on no device  \nno estimate: no target device\n"), text
    assert rows(text) == {
        "scenario": "global 1048576, local runtime's choice; arguments out=1048576, in=1048576, rows=1024",
        "defaulted": "global, local, rows (add a // clperf: directive to set them)",
        "scenario problem": "--arg rows=x: not a number",
        "last measured": "never, for this exact source (run the Benchmark lens)",
    }


def test_the_last_measurement_row_names_runs_device_spread_and_date() -> None:
    text = kernel_markdown(result(), H200, Measured(measurement(), ESTIMATE), stale=True)
    assert rows(text)["last measured"] == (
        "7.1 µs median of 20 runs on NVIDIA H200, CV 1.2% "
        "(2025-01-02T03:04:05) (before your last edit of this kernel)"
    )
    # a stored run of this exact source stands in when none was made since the file was opened
    stored = rows(
        kernel_markdown(result(last_measured=measurement("timeout", "no result in 60 s")), H200, None)
    )
    assert stored["last measured"] == "timeout on NVIDIA H200: no result in 60 s"


def test_a_multi_line_build_log_stays_inside_the_hover_table() -> None:
    log = (
        "build failed: <source>:4:5: error: use of undeclared identifier 'x'\n"
        "    4 |     x = 1;\n"
        "      |     ^"
    )
    text = kernel_markdown(result(last_measured=measurement("build-error", log)), H200, None)
    table = text.split("\n|---|---|\n", 1)[1].split("\n")
    assert all(line.startswith("| ") and line.count(" | ") == 1 for line in table), table
    # the log's <source> is text, not an HTML tag a Markdown renderer would hide
    assert rows(text)["last measured"] == (
        "build-error on NVIDIA H200: build failed: \\<source\\>:4:5: error: use of undeclared identifier 'x'")


def test_a_client_without_markdown_tables_gets_a_list_and_one_without_markdown_plain_lines() -> None:
    hover = kernel_hover(result(), H200, None, SPAN)
    assert render(hover, "list").split("\n")[:7] == [
        "**transpose** ≈ 6.54 µs on NVIDIA H200  ",
        "memory-bound · 12.9 k cycles · 42% of the peak bandwidth · likely 4.1 µs – 9.8 µs",
        "",
        "---",
        "",
        "- **model**: roofline 3",
        "- **scenario**: global 1024, local 64; arguments out=1048576, in=1024, rows=1024",
    ]
    assert "|" not in render(hover, "list")
    plain = render(hover, "plain")
    assert plain.split("\n")[:4] == [
        "transpose ≈ 6.54 µs on NVIDIA H200",
        "memory-bound · 12.9 k cycles · 42% of the peak bandwidth · likely 4.1 µs – 9.8 µs",
        "",
        "model: roofline 3",
    ]
    assert "|" not in plain and "**" not in plain and "`" not in plain
    assert "last measured: never, for this exact source (run the Benchmark lens)" in plain


def test_the_style_follows_the_clients_hover_formats_and_markdown_parser() -> None:
    assert hover_style(["markdown", "plaintext"], markdown_parser=True) == "table"  # VS Code: marked
    assert hover_style(["markdown", "plaintext"], markdown_parser=False) == "list"  # Neovim, Emacs
    assert hover_style(["plaintext"], markdown_parser=True) == "plain"
    assert hover_style(None, markdown_parser=False) == "plain"  # a client that says nothing


def test_a_kernel_whose_device_peaks_are_being_measured_says_so() -> None:
    waiting = result(estimate=None, estimate_problem="measuring the peaks of pthread-x (once, a few seconds)",
                     pending=True)
    assert kernel_markdown(waiting, H200, None).split("\n")[1] == (
        "no estimate yet: measuring the peaks of pthread-x (once, a few seconds)")


def test_hovering_the_kernel_name_shows_the_table_over_the_name() -> None:
    kernels = parse(SOURCE)
    analysis = Analysis("file:///t.cl", 1, "", H200, (), {"transpose": result()}, 1.0)
    lines = SOURCE.split("\n")
    hover = hover_at(kernels, analysis, {}, lines, 1, 20)
    assert hover is not None and hover.span == Span(1, 15, 1, 24)
    assert render(hover, "table").startswith("**transpose** ≈ 6.54 µs on NVIDIA H200")
    assert hover_at(kernels, analysis, {}, lines, 1, 14) is None  # the space before the name
    assert hover_at(kernels, analysis, {}, lines, 1, 30) is None  # a parameter
    assert hover_at(kernels, None, {}, lines, 1, 20) is None  # nothing analysed yet


def test_hovering_an_access_shows_its_pattern_after_the_kernel_moved_down() -> None:
    moved = "// two lines typed above\n\n" + SOURCE  # the analysis is of the text before they were typed
    analysis = Analysis("file:///t.cl", 1, "", H200, (), {"transpose": result()}, 1.0)
    lines = moved.split("\n")
    hover = hover_at(parse(moved), analysis, {}, lines, 6, 8)
    assert hover is not None
    assert hover.span == Span(6, 5, 6, 18)  # out[i * rows]
    assert render(hover, "table") == (
        "**out**: store of out (global): strided, rows elements between neighbouring work-items"
    )
    assert render(hover, "plain") == (
        "out: store of out (global): strided, rows elements between neighbouring work-items")
    assert hover_at(parse(moved), analysis, {}, lines, 4, 8) is None  # the access's old line


def test_an_access_span_runs_to_its_closing_bracket() -> None:
    assert access_span("    out[idx[i]] = 0;", 3, 5) == Span(3, 5, 3, 16)  # nested brackets
    assert access_span("    *p = 0;", 3, 5) == Span(3, 5, 3, 7)  # no brackets: the end of the word


FINDINGS = (
    Problem(Span(4, 21, 4, 26), "information",
            "'in' is read at 3 neighbouring offsets (3 neighbouring elements): "
            "each element is loaded from global memory by up to 3 work-items.", code="local-cache-candidate"),
    Problem(Span(4, 5, 4, 18), "warning",
            "'out' is written with a stride of rows elements between neighbouring work-items "
            "(dimension 0), so one memory transaction serves one work-item instead of a whole "
            "group: make get_global_id(0) the fastest-moving (last) index.", code="uncoalesced-access"),
)


def test_the_summary_names_the_most_severe_finding_in_one_line() -> None:
    text = kernel_markdown(result(), H200, None, findings=FINDINGS)
    assert text.split("\n")[2] == (
        "uncoalesced-access at line 4: 'out' is written with a stride of rows elements between neighbouring… "
        "(+1 more)")
    assert top_finding(FINDINGS[:1]) == (
        "local-cache-candidate at line 4: 'in' is read at 3 neighbouring offsets (3 neighbouring elements)")
    assert top_finding(()) is None


def test_the_fullest_kernel_hover_fits_a_hover_window_without_scrolling() -> None:
    """Every part there (traffic, calibration, a caution, defaults, a scenario problem, a measurement, a
    finding): a few summary lines and a short detail table, each line short enough not to wrap twice."""
    defaulted = Scenario((1048576,), None, {"out": 1048576, "in": 1048576, "rows": 1024},
                         defaulted=("global", "local", "rows"))
    traffic = Traffic(1024, 131072, 8192, 8192, 0, 2048, 3072, 0)
    full = result(scenario=defaulted, scenario_problem="--arg rows=x: not a number", traffic=traffic,
                  doubts=("a loop's trip count is unknown: the estimate is a lower bound",))
    hover = kernel_hover(full, H200, Measured(measurement(), ESTIMATE), SPAN, findings=FINDINGS)
    assert len(hover.summary) <= 3
    for style in ("table", "list", "plain"):
        lines = render(hover, style).split("\n")
        shown = [line for line in lines if line.strip() and line not in ("| | |", "|---|---|", "---")]
        assert len(shown) <= 11, (style, shown)
        assert max(len(line) for line in shown) <= 130, (style, shown)
