"""Code actions that need no compile (``clperf.server.actions.directive_actions``): the scenario directive
offered for a kernel that runs on the documented defaults, and the device a quick fix's speedup names.
The rewrite quick fixes (``rewrite_actions``) compile the edited file with clang and are tested through
the server."""

from __future__ import annotations

from clperf.core.frontend import parse
from clperf.core.records import Device, Scenario
from clperf.server.actions import directive_actions, honest, offered, on_device
from clperf.server.engine import Analysis, KernelResult
from clperf.server.views import Edit, Span

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
ON_DEFAULTS = Scenario((1048576,), None, {"a": 1048576, "f": 1.0}, defaulted=("global", "local", "a", "f"))
FILL_DEFAULTS = Scenario((4096,), None, {"b": 4096}, defaulted=("local", "b"))


def analysis(scale: Scenario) -> Analysis:
    kernels = {
        "scale": KernelResult("scale", None, scale, None, None, None),
        "fill": KernelResult("fill", None, FILL_DEFAULTS, None, None, None),
    }
    return Analysis("file:///k.cl", 1, "", None, (), kernels, 1.0)


def test_a_kernel_on_defaults_is_offered_a_directive_with_the_values_in_use() -> None:
    actions = directive_actions(parse(SOURCE), analysis(ON_DEFAULTS), 3, 3)  # the cursor in scale's body
    assert len(actions) == 1
    action = actions[0]
    assert action.title == "Add a scenario directive for scale (now on defaults: global, local, a, f)"
    assert action.kind == "quickfix"
    assert action.edits == (
        Edit(Span(1, 1, 1, 1), "// clperf: --global 1048576 --arg a=1048576 --arg f=1\n"),
    )


def test_no_directive_is_offered_away_from_the_kernel_or_over_one_already_written() -> None:
    kernels = parse(SOURCE)
    # line 5 is between the kernels; fill (lines 7-10) has a directive, even if it leaves the local size open
    assert directive_actions(kernels, analysis(ON_DEFAULTS), 5, 10) == []
    assert [a.title for a in directive_actions(kernels, analysis(ON_DEFAULTS), 1, 10)] == [
        "Add a scenario directive for scale (now on defaults: global, local, a, f)"
    ]


def test_no_directive_is_offered_for_a_fully_written_scenario_or_before_an_analysis() -> None:
    written = Scenario((4096,), (64,), {"a": 4096, "f": 2.0})
    assert directive_actions(parse(SOURCE), analysis(written), 1, 4) == []
    assert directive_actions(parse(SOURCE), None, 1, 4) == []


def test_a_predicted_speedup_names_the_device_it_is_for() -> None:
    h200 = Device("NVIDIA H200", "NVIDIA CUDA", "gpu", 132, 1980, 49152, 1024, "560.35")
    assert on_device("Insert #pragma unroll 8 (predicted 1.12x faster)", True, h200) == (
        "Insert #pragma unroll 8 (predicted 1.12x faster on NVIDIA H200)")
    # no prediction, no device to name
    assert on_device("Unroll the loop by hand", False, h200) == "Unroll the loop by hand"


def test_a_rewrite_predicted_clearly_slower_is_not_offered_and_a_little_slower_one_says_so() -> None:
    assert not offered(0.07) and not offered(0.89)  # the __local tile where it costs more than it saves
    assert offered(0.95) and offered(1.3) and offered(None)  # None: no prediction, the title says so
    slower = "Cache 'a' in __local memory (predicted 0.95x slower on NVIDIA H200)"
    assert honest(slower, 0.95) == "Cache 'a' in __local memory (predicted 0.95x slower on NVIDIA H200: " \
        "not recommended)"
    faster = "Insert #pragma unroll 8 (predicted 1.12x faster on NVIDIA H200)"
    assert honest(faster, 1.12) == faster
    assert honest("Insert #pragma unroll 8 (predicted: no change)", 1.0) == (
        "Insert #pragma unroll 8 (predicted: no change)")
