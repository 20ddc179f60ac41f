"""Original and rewritten kernels compute the same outputs on PoCL (same random inputs, several
work-group shapes including the runtime's choice). 18 kernels: 1-D/2-D stencils, windows, convolutions,
matrix multiply, loops."""

from __future__ import annotations

import re

import pytest

from clperf.predictor import rewrites
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.rewrites import csource, local_tile

from .conftest import DATA, launches

# (file, kernel, rule, param or loop line, rewrite kind)
LOCAL = [
    ("stencil1d_3pt.cl", "smooth3", "in"),
    ("stencil1d_early_return.cl", "diff2", "in"),
    ("stencil1d_ternary.cl", "blur5", "in"),
    ("stencil1d_int7.cl", "sum7", "src"),
    ("stencil1d_float4.cl", "smooth_vec", "in"),
    ("stencil2d_5pt.cl", "jacobi", "in"),
    ("stencil2d_9pt.cl", "box3", "img"),
    ("stencil2d_vertical.cl", "vblur", "a"),
    ("window1d.cl", "window8", "in"),
    ("window1d_centered.cl", "moving_avg", "x"),
    ("conv2d_3x3.cl", "conv3", "in"),
    ("conv2d_3x3.cl", "conv3", "mask"),
    ("conv2d_5x5.cl", "conv5", "src"),
    ("matmul_const_k.cl", "matmul", "A"),
    ("matmul_const_k.cl", "matmul", "B"),
    ("unroll_fixed.cl", "horner8", "c"),
]
UNROLL = [
    ("unroll_fixed.cl", "horner8"),
    ("unroll_remainder.cl", "rowsum10"),
    ("unroll_nested.cl", "nested"),
    ("unroll_outside_counter.cl", "outside"),
    ("window1d.cl", "window8"),
    ("window1d_centered.cl", "moving_avg"),
    ("conv2d_5x5.cl", "conv5"),
    ("matmul_const_k.cl", "matmul"),
]
OTHER_SHAPES = {1: [(16,), (256,), None], 2: [(4, 4), (32, 2), (2, 16), None]}


def _finding(text: str, kernel: str, rule: str, key: str | None = None):
    report = analyze_text(text)
    for f in report.findings:
        if f.kernel == kernel and f.rule == rule and (key is None or f.data.get("param") == key):
            return report, f
    raise AssertionError(f"no {rule} finding for {kernel} {key or ''}: {[x.rule for x in report.findings]}")


def _check(differential, text: str, new: str, kernel: str, report) -> None:
    sc = rewrites.scenario_for(text, report.kernel(kernel))
    runs = launches(sc, OTHER_SHAPES[len(sc.global_size)])
    results = differential(text, new, kernel, runs)
    for sc_i, r in zip(runs, results, strict=True):
        assert r.get("status") == "ok" and r.get("checked"), (sc_i.local_size, r)
        assert r.get("error") is None, (sc_i.local_size, r.get("error"))


@pytest.mark.parametrize(("file", "kernel", "param"), LOCAL, ids=[f"{k}-{p}" for _, k, p in LOCAL])
def test_local_cache_rewrite_matches(differential, pocl, file: str, kernel: str, param: str) -> None:
    text = (DATA / file).read_text()
    report, finding = _finding(text, kernel, "local-cache-candidate", param)
    found = rewrites.available(text, report, finding, device=pocl, predict=False)
    assert found and found[0].enabled, found
    new = rewrites.apply(text, found[0])
    assert "barrier(CLK_LOCAL_MEM_FENCE)" in new and f"tile_{param}[" in new
    _check(differential, text, new, kernel, report)


@pytest.mark.parametrize(("file", "kernel"), UNROLL, ids=[k for _, k in UNROLL])
@pytest.mark.parametrize("kind", ["pragma-unroll", "manual-unroll"])
def test_unroll_rewrite_matches(differential, file: str, kernel: str, kind: str) -> None:
    text = (DATA / file).read_text()
    report, finding = _finding(text, kernel, "unroll-candidate")
    rw = next(r for r in rewrites.available(text, report, finding, predict=False) if r.kind == kind)
    assert rw.enabled, rw.disabled_reason
    new = rewrites.apply(text, rw)
    if kind == "manual-unroll":
        assert "#pragma" not in new and "unrolled by" in new
    else:
        assert re.search(r"#pragma unroll \d+\n\s*for", new)
    _check(differential, text, new, kernel, report)


def test_fallback_path_when_the_group_does_not_fit(differential, pocl) -> None:
    """A tile too small for the work-group makes every read take the original global path: still equal."""
    text = (DATA / "stencil2d_5pt.cl").read_text()
    b = csource.parse_kernel(text, "jacobi")
    pl = local_tile.plan(b, "in")
    new = rewrites.apply(text, rewrites.Rewrite("local-cache-candidate", "jacobi", "local-cache", "t",
                                                tuple(local_tile.generate(b, pl, cap=20))))
    report = analyze_text(text)
    _check(differential, text, new, "jacobi", report)


def test_a_wrong_tile_is_caught(differential, pocl) -> None:
    """The check can fail: shifting the tile read by one element gives different outputs."""
    text = (DATA / "stencil1d_3pt.cl").read_text()
    report, finding = _finding(text, "smooth3", "local-cache-candidate", "in")
    new = rewrites.apply(text, rewrites.available(text, report, finding, device=pocl, predict=False)[0])
    broken = new.replace("tile_in[(int)get_local_id(0) + 2]", "tile_in[(int)get_local_id(0) + 1]")
    assert broken != new
    sc = rewrites.scenario_for(text, report.kernel("smooth3"))
    (r,) = differential(text, broken, "smooth3", [sc])
    assert r["checked"] and r["error"], r
