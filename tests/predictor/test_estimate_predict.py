"""``estimate`` on real analysis of real kernels, and ``clperf predict``'s output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clperf.benchmark import pocl_code
from clperf.cli import main
from clperf.core.scenario import parse_flags, resolve
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import profiles
from clperf.predictor.model.estimate import estimate

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))


def _kernel_and_scenario(name: str, flags: str):
    text = (DATA / "copies.cl").read_text()
    k = analyze_text(text, DATA / "copies.cl").kernel(name)
    assert k is not None
    return k, resolve(parse_flags(flags), list(k.params), 1)


def test_a_strided_copy_is_predicted_slower_than_a_coalesced_one_on_the_h200() -> None:
    h200 = profiles.select_device("h200")
    k1, s1 = _kernel_and_scenario("copy", "--global n --local 256 --arg n=4194304 --arg dst=n --arg src=n")
    flags = "--global n --local 256 --arg n=4194304 --arg s=32 --arg dst=n --arg src=n*s"
    k2, s2 = _kernel_and_scenario("copy_strided", flags)
    a = estimate(k1, s1, h200, use_model=False, calibrate=False)
    b = estimate(k2, s2, h200, use_model=False, calibrate=False)
    assert a.bound == "memory" and b.bound == "memory"
    # 32-byte sectors for 4-byte elements: eight times the loads' bytes, which also keep eight times the
    # bytes in flight, where the coalesced copy's loads stream at the share their 4 bytes a work-item allow
    assert b.time_ms > 2 * a.time_ms
    assert a.cycles == pytest.approx(a.time_ms * 1e-3 * 1980e6)
    assert a.interval_ms[0] <= a.time_ms < a.interval_ms[1]
    assert a.bandwidth_utilization > b.bandwidth_utilization


def test_a_tiny_launch_is_latency_bound_at_the_launch_floor() -> None:
    h200 = profiles.select_device("h200")
    k, s = _kernel_and_scenario("copy", "--global 256 --local 256 --arg n=256 --arg dst=n --arg src=n")
    est = estimate(k, s, h200, use_model=False, calibrate=False)
    assert est.bound == "latency"
    assert 0.004 <= est.time_ms <= 0.007  # the H200's ~5 us floor
    assert est.model_name == "roofline"


def test_predict_json_has_the_documented_shape_for_a_profile(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["predict", str(DATA / "copies.cl"), "--kernel", "copy_strided", "--device", "H200",
               "--arg", "s=4", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("kernel", "file", "device", "scenario", "time_ms", "cycles", "interval_ms", "bound",
                "bandwidth_utilization", "model", "cached", "calibrated"):
        assert key in out
    assert out["kernel"] == "copy_strided" and out["device"]["name"] == "NVIDIA H200"
    assert out["device"]["clock_mhz"] == 1980
    assert out["scenario"]["args"]["s"] == 4 and out["scenario"]["args"]["src"] == 4194304 * 4
    assert set(out["model"]) == {"name", "version"}
    assert out["bound"] in ("memory", "compute", "latency")


def test_predict_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["predict", str(DATA / "copies.cl"), "--device", "h200"]) == 2  # two kernels, none chosen
    assert "--kernel" in capsys.readouterr().err
    assert main(["predict", str(DATA / "copies.cl"), "-k", "copy", "--device", "no-such-gpu"]) == 2
    err = capsys.readouterr().err
    assert "no device matches" in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.cl"
    bad.write_text("__kernel void k(__global float *a) { a[0] = ; }\n")
    assert main(["predict", str(bad), "--device", "h200"]) == 2
    assert "bad.cl" in capsys.readouterr().err


def test_predict_refuses_launches_the_device_would_refuse(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    src = tmp_path / "req.cl"
    src.write_text("#define TS 8\n__attribute__((reqd_work_group_size(TS, TS, 1)))\n"
                   "__kernel void blur(__global const float *a, __global float *b) {\n"
                   "  int i = get_global_id(1) * get_global_size(0) + get_global_id(0);\n"
                   "  b[i] = 0.5f * a[i];\n}\n")
    base = ["predict", str(src), "--device", "h200", "--model", "roofline", "--global", "512,512"]
    assert main([*base, "--json"]) == 0  # no --local: the required 8x8 (a macro, read from clang's IR)
    assert json.loads(capsys.readouterr().out)["scenario"]["local"] == [8, 8]
    assert main([*base, "--local", "16,16"]) == 2
    assert "reqd_work_group_size 8,8" in capsys.readouterr().err
    assert main(["predict", str(DATA / "copies.cl"), "-k", "copy", "--device", "h200", "--global", "4096",
                 "--local", "2048"]) == 2
    assert "maximum of 1024" in capsys.readouterr().err


def test_predict_warns_when_a_loop_count_is_unknown_and_takes_dash_led_build_options(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "loops.cl"
    src.write_text("__kernel void spin(__global const int *flag, __global float *out) {\n"
                   "  float v = 0.0f;\n"
                   "  while (1) { v += 1.0f; if (flag[0] == 7) break; }\n"
                   "  out[get_global_id(0)] = v * SCALE;\n}\n")
    assert main(["predict", str(src), "--device", "h200", "--model", "roofline", "--static",
                 "--build-options", "-DSCALE=2.0f", "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert len(warnings) == 1 and "line 3" in warnings[0] and "lower bound" in warnings[0]


def test_a_broken_directive_names_its_line_and_gives_way_to_command_line_flags(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "d.cl"
    src.write_text("// clperf: --global 1024 --bogus 3\n"
                   "__kernel void k(__global float *a) { a[get_global_id(0)] = 1.0f; }\n")
    base = ["predict", str(src), "--device", "h200", "--model", "roofline"]
    assert main(base) == 2
    assert "line 1" in capsys.readouterr().err
    assert main([*base, "--global", "2048", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["global"] == [2048] and "ignored" in out["warnings"][0]


def test_the_roofline_path_never_imports_torch(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from clperf.predictor.model import profiles\n"
        "from clperf.predictor.model.estimate import estimate\n"
        "from clperf.predictor.analysis.pipeline import analyze_text\n"
        "from clperf.core.scenario import parse_flags, resolve\n"
        f"p = Path({str(DATA / 'copies.cl')!r})\n"
        "k = analyze_text(p.read_text(), p).kernel('copy')\n"
        "s = resolve(parse_flags('--global 1024 --arg n=1024'), list(k.params), 1)\n"
        "e = estimate(k, s, profiles.select_device('h200'), source=p.read_text())\n"
        "print(e.model_name, 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "CLPERF_MODEL_DIR": str(tmp_path / "none"), "CLPERF_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["roofline", "False"]


def test_the_learned_model_answers_an_edit_elsewhere_without_running_again() -> None:
    """Its input is the feature row and the kernel's text: a comment added above it changes neither."""
    pytest.importorskip("torch")
    from clperf.predictor.model.estimate import learned_meta, learned_model, roofline_estimate

    h200 = profiles.select_device("h200")
    if learned_meta() is None:
        pytest.skip("no shipped model")
    model = learned_model()
    calls = []
    run = model.predict_rows
    model.predict_rows = lambda *a: calls.append(1) or run(*a)
    try:
        text = (DATA / "copies.cl").read_text()
        answers = []
        for t in (text, "// an edit elsewhere\n" + text, text.replace("src[i]", "src[i] * 2.0f")):
            k = analyze_text(t, DATA / "copies.cl").kernel("copy")
            sc = resolve(parse_flags("--global n --local 256 --arg n=1048576 --arg dst=n --arg src=n"),
                         list(k.params), 1)
            base, traffic = roofline_estimate(k, sc, h200)
            answers.append(model.predict_one(k, sc, h200, t, base, traffic)["time_ms"])
            answers.append(len(calls))
    finally:
        del model.predict_rows
    assert answers[0] == answers[2] and answers[1] == answers[3] == 1  # the comment: no new network run
    assert answers[5] == 2  # the kernel's own text changed: the network runs again


SAXPY_LOOP = """
// clperf: --global 262144 --local 256 --arg x=262144 --arg y=262144 --arg n=16
__kernel void sums(__global const float* x, __global float* y, int n) {
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < n; k++) {
        acc = acc * 0.5f + x[i] * (float)k;
    }
    y[i] = acc;
}
"""


@pytest.mark.slow
def test_on_the_local_pocl_device_the_estimate_is_pocls_own_code_counted(pocl) -> None:
    import time

    from clperf.predictor.model import estimate as est_mod
    from clperf.predictor.rewrites import scenario_for
    k = analyze_text(SAXPY_LOOP).kernel("sums")
    sc = scenario_for(SAXPY_LOOP, k)
    # not waited for: the roofline stands in, and the code is on its way
    counter = pocl_code.COUNTER  # what clperf.api hands the estimate where kernels may run
    quick = estimate(k, sc, pocl, source=SAXPY_LOOP, code_deadline=time.monotonic(), calibrate=False,
                     counter=counter)
    waited = estimate(k, sc, pocl, source=SAXPY_LOOP, calibrate=False, counter=counter)  # waits for it
    assert waited.model_name == est_mod.COUNTED_MODEL and waited.time_ms > 0
    assert waited.interval_ms[0] < waited.time_ms < waited.interval_ms[1]
    assert quick.model_name in (est_mod.COUNTED_MODEL, "roofline")
    assert not est_mod.counting(k, sc, pocl, SAXPY_LOOP, counter)  # nothing left to wait for
    assert estimate(k, sc, pocl, source=SAXPY_LOOP, calibrate=False).model_name == "roofline"  # no counter
    # the same compute as the rewrite speedup model's, from the same counted code
    from clperf.predictor.model import speedup as speedup_model
    code = pocl_code.cached(SAXPY_LOOP, "sums", sc, pocl)
    assert waited.time_ms == pytest.approx(speedup_model.roofline_for(k, sc, pocl, code).time_ms)
    # a profile is not this machine: no code, the roofline as before; and a longer loop takes longer
    h200 = profiles.select_device("h200")
    assert estimate(k, sc, h200, source=SAXPY_LOOP, use_model=False).model_name == "roofline"
    longer = SAXPY_LOOP.replace("--arg n=16", "--arg n=64")
    sc64 = scenario_for(longer, analyze_text(longer).kernel("sums"))
    longer_est = estimate(k, sc64, pocl, source=longer, calibrate=False, counter=counter)
    assert longer_est.time_ms > 2 * waited.time_ms


def test_a_kernel_whose_counting_run_crashes_gets_the_roofline_and_says_why(
        pocl, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "crash.cl"
    src.write_text("// clperf: --global 1024 --local 64 --arg a=1024\n"
                   "__kernel void crash(__global int* a) {\n"
                   "    int i = get_global_id(0);\n"
                   "    a[i * 100000000 + 2000000000] = i;\n"
                   "}\n")
    assert main(["predict", str(src), "--device", "pocl", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"]["name"] == "roofline"
    assert any("could not be counted" in w for w in out["warnings"])
