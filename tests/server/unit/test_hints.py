"""Inlay hints (``clperf.server.hints``): loop shares at the end of a loop line, access patterns before
an access that is not contiguous."""

from __future__ import annotations

from clperf.core.frontend import parse
from clperf.core.records import AddressSpace
from clperf.predictor.analysis.records import Access, AccessKind, KernelReport, Ops, Pattern
from clperf.server.engine import Analysis, KernelResult
from clperf.server.hints import access_label, access_tooltip, kernel_hints
from clperf.server.views import Hint

SOURCE = """__kernel void colsum(__global const float *m, __global float *out, int rows)
{
\tint c = get_global_id(0);
\tfloat s = 0.0f;
\tfor (int r = 0; r < rows; r++)
\t\ts += m[r * rows + c];
\tout[c * 32] = s;
}
"""


def access(
    pattern: Pattern,
    stride: int | None = None,
    stride_expr: str | None = None,
    kind: AccessKind = "load",
    space: AddressSpace = "global",
    line: int = 6,
    column: int = 8,
    param: str | None = "m",
) -> Access:
    return Access(
        param=param,
        kind=kind,
        address_space=space,
        pattern=pattern,
        stride=stride,
        stride_expr=stride_expr,
        line=line,
        column=column,
        in_loop=True,
        element_size=4,
    )


def analysis(accesses: tuple[Access, ...], shares: dict[int, float]) -> Analysis:
    report = KernelReport(
        name="colsum", line=1, column=15, params=(), accesses=accesses, loops=(), barriers=0, ops=Ops()
    )
    result = KernelResult(
        name="colsum",
        report=report,
        scenario=None,
        scenario_problem=None,
        estimate=None,
        estimate_problem=None,
        loop_shares=shares,
    )
    return Analysis("file:///c.cl", 1, "", None, (), {"colsum": result}, 1.0)


def test_a_loop_hint_sits_after_the_last_character_of_the_loop_line() -> None:
    lines = SOURCE.split("\n")
    hints = kernel_hints(parse(SOURCE), analysis((), {5: 0.62}), lines)
    assert hints == [
        Hint(
            5,
            len("\tfor (int r = 0; r < rows; r++)") + 1,
            "≈62% of memory traffic",
            "share of the kernel's memory traffic issued inside this loop "
            "(the roofline's traffic model for the current scenario)",
            padding_left=True,
        )
    ]


def test_a_strided_access_gets_its_stride_before_it_and_a_contiguous_one_nothing() -> None:
    strided = access("strided", 32, kind="store", line=7, column=2, param="out")
    contiguous = access("contiguous", 1, line=6, column=8)
    hints = kernel_hints(parse(SOURCE), analysis((strided, contiguous), {}), SOURCE.split("\n"))
    assert hints == [
        Hint(
            7,
            2,
            "stride 32:",
            "store of out (global): strided, 32 elements between neighbouring work-items",
            padding_right=True,
        )
    ]


def test_access_labels_name_the_pattern_a_user_would_fix() -> None:
    assert access_label(access("strided", stride_expr="rows")) == "stride rows"
    assert access_label(access("strided")) == "strided"  # neither a number nor a formula
    assert access_label(access("indirect")) == "gather"
    assert access_label(access("indirect", kind="store")) == "scatter"
    assert access_label(access("uniform", 0)) == "same for all"
    assert access_label(access("uniform", 0, space="local")) is None  # a __local broadcast is cheap
    assert access_label(access("contiguous", 1)) is None
    assert access_label(access("unknown")) is None


def test_the_tooltip_leaves_out_the_stride_when_there_is_none() -> None:
    assert access_tooltip(access("indirect", param=None)) == "load of memory (global): indirect"


def test_hints_follow_the_kernel_when_lines_are_typed_above_it() -> None:
    moved = "// a comment\n// and another\n" + SOURCE  # analysed before these two lines existed
    lines = moved.split("\n")
    hints = kernel_hints(parse(moved), analysis((access("strided", 1024),), {5: 0.9}), lines)
    assert [(h.line, h.column, h.label) for h in hints] == [
        (7, len(lines[6]) + 1, "≈90% of memory traffic"),
        (8, 8, "stride 1024:"),
    ]


def test_hints_outside_the_kernel_as_it_is_now_are_dropped() -> None:
    # the body was cut down to two lines since the analysis: the loop and the access are gone
    short = "__kernel void colsum(__global const float *m, __global float *out, int rows)\n{\n}\n"
    hints = kernel_hints(parse(short), analysis((access("strided", 4),), {5: 0.5}), short.split("\n"))
    assert hints == []


def test_hints_come_sorted_by_position_and_not_before_an_analysis() -> None:
    late = access("indirect", line=7, column=2, kind="store", param="out")
    early = access("strided", 8, line=6, column=8)
    hints = kernel_hints(parse(SOURCE), analysis((late, early), {5: 0.25}), SOURCE.split("\n"))
    assert [(h.line, h.label) for h in hints] == [
        (5, "≈25% of memory traffic"), (6, "stride 8:"), (7, "scatter:")]
    assert kernel_hints(parse(SOURCE), None, SOURCE.split("\n")) == []
