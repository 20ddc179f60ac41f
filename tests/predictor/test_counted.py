"""Trip counts from a counting run: a loop the static analysis cannot count gets the count the run measured,
and everything derived from trips (ops, traffic, the estimate) follows it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clperf.api import Workspace
from clperf.core.records import Scenario
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model.roofline import count_args, traffic

NESTED = """
__kernel void rows(__global const int* rowptr, __global const float* v, __global float* y, int reps) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int e = rowptr[i]; e < rowptr[i + 1]; e++)
        for (int r = 0; r < reps; r++)
            s += v[e] * r;
    y[i] = s;
}
"""
SCENARIO = Scenario((1024,), (64,), {"rowptr": 1025, "v": 8192, "y": 1024, "reps": 4})


def _kernel():
    return analyze_text(NESTED).kernel("rows")


def test_latch_runs_become_trips_per_iteration_of_the_loop_around() -> None:
    k = _kernel()
    outer, inner = k.loops
    assert inner.parent == 0 and outer.latches and inner.latches
    # 8 non-zeros per row on average, 4 repetitions of the inner loop for each
    blocks = {outer.latches[0]: 8.0, inner.latches[0]: 32.0}
    assert k.trips_from(blocks) == {0: 8.0, 1: 4.0}
    assert k.trips_from({}) == {}  # blocks the run did not see leave the static counts


SPIN = """
__kernel void spin(__global const int* steps, __global float* y, int reps) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < steps[i]; j++)
        for (int r = 0; r < reps; r++)
            s = s * 0.5f + r;
    y[i] = s;
}
"""


def test_measured_trips_replace_the_ones_the_analysis_cannot_tell() -> None:
    k = analyze_text(SPIN).kernel("spin")
    sc = Scenario((1024,), (64,), {"steps": 1024, "y": 1024, "reps": 4})
    args = count_args(sc)
    assert k.loops[0].trips_for(args) is None and not k.trips_measured  # bounded by a loaded value
    counted = k.with_trips({0: 8.0, 1: 4.0})
    assert counted.trips_measured and counted.loops[0].trips_for(args) == 8.0
    static, measured = traffic(k, sc, "gpu"), traffic(counted, sc, "gpu")
    # the outer loop counted once statically; 8 x 4 runs of the inner body per work-item when counted
    assert measured.flops == pytest.approx(static.flops * 8, rel=0.05)
    assert Workspace.needs_count(k, sc) and not Workspace.needs_count(counted, sc)


BRANCH = """
__kernel void some(__global const float* x, __global float* y, __global const int* flag) {
    int i = get_global_id(0);
    float v = x[i];
    if (flag[i])
        v = sin(v) * cos(v) + x[i + 1];
    y[i] = v;
}
"""


def test_block_counts_count_a_branch_as_often_as_it_was_taken() -> None:
    k = analyze_text(BRANCH).kernel("some")
    sc = Scenario((1024,), (64,), {"x": 1025, "y": 1024, "flag": 1024})
    names = {b for b, _ in k.op_blocks}
    assert all(a.block for a in k.accesses) and len(names) == len(k.op_blocks)
    taken = next(b for b, ops in k.op_blocks if ops.math_long)  # the block with the sine and cosine
    static = traffic(k, sc, "gpu")
    assert static.math_long == 2 * 1024  # statically every work-item takes the branch
    # a counting run in which a quarter of the work-items took it: every other block ran once each
    runs = {b: (0.25 if b == taken else 1.0) for b, _ in k.op_blocks}
    counted = traffic(k.with_counts(runs), sc, "gpu")
    assert counted.math_long == pytest.approx(0.25 * 2 * 1024)
    x_reads = {a.line: n for a, n in k.with_counts(runs).access_counts_for(count_args(sc)) if a.param == "x"}
    assert sorted(x_reads.values()) == [0.25, 1.0]  # x[i + 1] in the branch, x[i] before it
    assert counted.global_loads < static.global_loads


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="the counting run needs Oclgrind")
def test_predict_counts_a_data_dependent_loop(tmp_path: Path) -> None:
    path = tmp_path / "spin.cl"
    path.write_text("""
__kernel void spin(__global const int* steps, __global float* y) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < steps[i]; j++) s = s * 0.5f + j;
    y[i] = s;
}
""")
    flags = ["--device", "h200", "--global", "1048576", "--local", "256", "--arg", "steps=1048576", "--arg",
             "y=1048576", "--fill", "steps=range:2000:2001", "--json", "--no-cache"]

    def predict(*extra: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "clperf", "predict", str(path), *flags, *extra],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    counted, static = predict(), predict("--static")
    assert static["counted"] is None
    assert counted["counted"]["groups_run"] >= 1 and counted["counted"]["groups_total"] == 4096
    assert any("counted once" in w for w in static["warnings"])
    assert not any("counted once" in w for w in counted["warnings"])
    assert counted["time_ms"] > 5 * static["time_ms"]  # 2000 iterations, not one
