"""Rewrites that would not be equivalent are refused with a reason; the plain API and ``clperf fix``."""

from __future__ import annotations

import re
import shutil

import pytest

from clperf.cli import main
from clperf.predictor import rewrites
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.rewrites import csource, local_tile, unroll

from .conftest import DATA

UNSAFE = (DATA / "unsafe.cl").read_text()


def test_a_written_buffer_is_not_cached() -> None:
    b = csource.parse_kernel(UNSAFE, "inplace")
    with pytest.raises(local_tile.Refused, match="written"):
        local_tile.plan(b, "a")


def test_break_in_the_body_disables_the_manual_unroll() -> None:
    report = analyze_text(UNSAFE)
    f = next(f for f in report.findings if f.kernel == "early_break" and f.rule == "unroll-candidate")
    found = {r.kind: r for r in rewrites.available(UNSAFE, report, f, predict=False)}
    assert found["pragma-unroll"].enabled
    assert found["manual-unroll"].disabled_reason == "the loop body has break or continue"
    assert not found["manual-unroll"].edits


def test_a_bound_changed_in_the_loop_is_refused() -> None:
    b = csource.parse_kernel(UNSAFE, "moving_bound")
    loop = unroll.loop_at(b, next(i for i, ln in enumerate(UNSAFE.split("\n"), 1) if "k < n" in ln))
    with pytest.raises(unroll.Refused, match="bound changes"):
        unroll.manual_edit(b, loop, 4)


GUARDED_BY_MEMORY = """
__kernel void masked(__global const float* in, __global const int* keep, __global float* out, int n) {
    int i = get_global_id(0);
    if (i > 0 && i < n - 1 && keep[i]) out[i] = in[i - 1] + in[i] + in[i + 1];
}
"""


def test_a_guard_that_reads_memory_keeps_global_reads() -> None:
    b = csource.parse_kernel(GUARDED_BY_MEMORY, "masked")
    with pytest.raises(local_tile.Refused, match="reads memory"):
        local_tile.plan(b, "in")


STRIDED = """
__kernel void every_other(__global const float* in, __global float* out) {
    int i = get_global_id(0);
    out[i] = in[2 * i] + in[2 * i + 1];
}
"""


def test_strided_reads_are_not_neighbours() -> None:
    b = csource.parse_kernel(STRIDED, "every_other")
    with pytest.raises(local_tile.Refused, match="neighbouring"):
        local_tile.plan(b, "in")


def test_loop_counters_changed_inside_keep_reads_global() -> None:
    text = """
__kernel void jump(__global const float* in, __global float* out) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < 4; k++) { s += in[i + k]; k += 1; }
    out[i] = s + in[i] + in[i + 1];
}
"""
    pl = local_tile.plan(csource.parse_kernel(text, "jump"), "in")
    assert len(pl.sites) == 2 and "changed inside the loop" in pl.skipped[0][1]


def test_apply_with_finding_data_as_the_server_calls_it() -> None:
    text = (DATA / "stencil1d_3pt.cl").read_text()
    new = rewrites.apply(text, {"rule": "local-cache-candidate", "kernel": "smooth3", "param": "in"})
    assert "__local float tile_in[" in new
    with pytest.raises(rewrites.RewriteError, match="written"):
        rewrites.apply(UNSAFE, {"rule": "local-cache-candidate", "kernel": "inplace", "param": "a"})


def test_the_tile_is_named_after_its_buffer_with_its_capacity_a_named_sum() -> None:
    text = (DATA / "stencil1d_3pt.cl").read_text()
    new = rewrites.apply(text, {"rule": "local-cache-candidate", "kernel": "smooth3", "param": "in"})
    assert "clp_" not in new and "`" not in new
    assert "enum { TILE_IN_CAPACITY = 1024 + 2 };" in new  # the device's largest work-group plus the halo
    assert "__local float tile_in[TILE_IN_CAPACITY];" in new
    assert "const int use_tile_in = tile_in_w <= TILE_IN_CAPACITY;" in new
    assert "(use_tile_in ? tile_in[(int)get_local_id(0) + 2] : in[i + 1])" in new  # in[i + 1], as read
    block = new[new.index("/* clperf:"):new.index("barrier(")]
    assert max(int(x) for x in re.findall(r"\b\d+\b", block)) == 1024  # no 1026 to decode
    added = len(new.split("\n")) - len(text.split("\n"))
    assert added <= 32, added  # three read sites, a 1-D tile: no row loop
    assert analyze_text(new).compiled


def test_generated_names_step_aside_for_the_kernels_own() -> None:
    text = (DATA / "stencil1d_3pt.cl").read_text().replace("int i = get_global_id(0);",
                                                           "int i = get_global_id(0); int gx = i;")
    new = rewrites.apply(text, {"rule": "local-cache-candidate", "kernel": "smooth3", "param": "in"})
    assert "const int in_gx = " in new and "tile_in[" in new
    assert analyze_text(new).compiled


def test_edits_are_one_based_and_the_unroll_pragma_goes_above_the_loop() -> None:
    text = (DATA / "unroll_fixed.cl").read_text()
    report = analyze_text(text)
    f = next(f for f in report.findings if f.rule == "unroll-candidate")
    (edit,) = rewrites.available(text, report, f, predict=False)[0].edits
    assert (edit.line, edit.column, edit.new_text) == (f.line, 1, "    #pragma unroll 8\n")


def test_prediction_on_a_device_profile() -> None:
    from clperf.predictor.model import profiles
    h200 = profiles.select_device("h200")
    text = (DATA / "stencil1d_3pt.cl").read_text()
    report = analyze_text(text)
    f = next(f for f in report.findings if f.rule == "local-cache-candidate")
    (rw,) = rewrites.available(text, report, f, device=h200)
    assert rw.predicted_speedup is not None and rw.predicted_speedup > 0
    assert "predicted" in rw.title and "NVIDIA H200" in rw.prediction


def test_fix_cli_diff_and_apply(tmp_path, capsys) -> None:
    path = tmp_path / "k.cl"
    shutil.copy(DATA / "unroll_fixed.cl", path)
    assert main([
        "fix", str(path), "--rule", "unroll", "--no-predict", "--diff"]) == 0
    out = capsys.readouterr().out
    assert "*1. Insert #pragma unroll 8" in out and "+    #pragma unroll 8" in out
    assert main(["fix", str(path), "--rule", "unroll", "--no-predict", "--variant", "2", "--apply"]) == 0
    assert "unrolled by 8 by hand" in path.read_text()
    assert main(["fix", str(path), "--rule", "local", "--param", "nope", "--no-predict"]) == 1
