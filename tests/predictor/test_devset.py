"""The dev-set metrics on hand-computed cases, and ``clperf evaluate --devset`` end to end on a tiny set."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clperf.core.records import Param
from clperf.predictor.training import devset, devset_cluster

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_metrics_by_hand() -> None:
    m = devset.metrics([(1.0, 1.0), (3.0, 1.0), (0.5, 1.0), (1.2, 1.0)])
    assert m["n"] == 4
    assert m["mape"] == pytest.approx((0 + 2 + 0.5 + 0.2) / 4)
    assert m["median_ape"] == pytest.approx((0.2 + 0.5) / 2)
    assert m["within_25"] == pytest.approx(0.5)
    assert m["within_2x"] == pytest.approx(0.75)  # 3x is outside, 0.5x is on the edge and inside
    assert m["mean_abs_log"] == pytest.approx((0 + math.log(3) + math.log(2) + math.log(1.2)) / 4)


def _launch(sid: str, measured: float, predicted: float) -> devset.Launch:
    bench, size = devset._benchmark(sid)
    return devset.Launch(sid, bench, size, measured, {"model": predicted})


def test_pairwise_within_benchmark_and_size_only() -> None:
    launches = [
        _launch("suite-gemm-base/k/small", 2.0, 1.0),
        _launch("suite-gemm-tiled/k/small", 1.0, 2.0),  # ordered wrong against base
        _launch("suite-gemm-base/k/large", 9.0, 9.0),  # another size: never paired with the small ones
        _launch("suite-scan/k/small", 1.0, 1.0),  # another benchmark
    ]
    r = devset.pairwise(launches, "model")
    assert r == {"pairs": 1, "pairwise": 0.0}


def test_pairs_within_noise_are_skipped() -> None:
    launches = [_launch("s-b-x/k/small", 1.0, 1.0), _launch("s-b-y/k/small", 1.02, 3.0)]
    assert devset.pairwise(launches, "model") == {"pairs": 0, "pairwise": None}


@pytest.mark.slow
def test_evaluate_devset_end_to_end(tmp_path: Path) -> None:
    _tiny_devset(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "clperf", "evaluate", "--devset", str(tmp_path), "--report",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr
    report = (tmp_path / "out" / "devset.md").read_text()
    assert "demo-blur-base/blur5/small" in report
    assert "| roofline | 1 |" in report


def _tiny_devset(folder: Path) -> None:
    kernels = folder / "kernels"
    kernels.mkdir()
    (kernels / "stencil.cl").write_text((EXAMPLES / "stencil.cl").read_text())
    n = 1 << 20
    spec = {"id": "demo-blur-base/blur5/small", "file": "stencil.cl", "kernel": "blur5", "build_options": "",
            "global": [1024, 1024], "local": [16, 16],
            "args": [{"name": "in", "kind": "buffer", "dtype": "float32", "count": n, "fill": "random"},
                     {"name": "out", "kind": "buffer", "dtype": "float32", "count": n, "fill": "zeros"},
                     {"name": "w", "kind": "scalar", "dtype": "int32", "value": 1024},
                     {"name": "h", "kind": "scalar", "dtype": "int32", "value": 1024}]}
    (folder / "specs.json").write_text(json.dumps([spec]))
    truth = {"id": spec["id"], "status": "ok", "median_ms": 0.01}
    (folder / "truth.jsonl").write_text(json.dumps(truth) + "\n")


def test_a_previous_model_predicts_beside_the_shipped_one(tmp_path: Path) -> None:
    from clperf.predictor.model.estimate import model_dir

    _tiny_devset(tmp_path)
    same = tmp_path / "same"
    shutil.copytree(model_dir(), same)
    [launch] = devset.predict_all(tmp_path, previous=same, progress=False)
    assert launch.predicted_ms["previous model"] == pytest.approx(launch.predicted_ms["model"])
    # a previous model trained on no device of the dev set's: the roofline answers for it
    other = tmp_path / "other"
    shutil.copytree(model_dir(), other)
    meta = json.loads((other / "meta.json").read_text())
    meta["devices"] = {}
    (other / "meta.json").write_text(json.dumps(meta))
    [launch] = devset.predict_all(tmp_path, previous=other, progress=False)
    assert launch.predicted_ms["previous model"] == pytest.approx(launch.predicted_ms["roofline"])
    assert launch.predicted_ms["model"] != pytest.approx(launch.predicted_ms["roofline"])


def test_buffer_lengths_count_the_kernels_own_elements() -> None:
    # a spec counts buffers in its dtype's elements; the kernel reads structs of 16 bytes and a float3
    # that its host allocates as three floats (rounded up to one element)
    spec = {"global": [64], "local": [64], "args": [
        {"name": "pts", "kind": "buffer", "dtype": "float32", "count": 4096},
        {"name": "shift", "kind": "buffer", "dtype": "float32", "count": 3},
        {"name": "out", "kind": "buffer", "dtype": "float32", "count": 64},
        {"name": "n", "kind": "scalar", "dtype": "int32", "value": 64}]}
    params = (Param("pts", "point", "global", True, True), Param("shift", "float3", "global", True, True),
              Param("out", "float", "global", True, False), Param("n", "int", "private", False, False))
    sc = devset.scenario_of(spec, params, {"pts": 16})
    assert sc.args == {"pts": 1024, "shift": 1, "out": 64, "n": 64}


def test_build_options_name_absolute_folders_from_a_relative_dev_set(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # a relative -I would be read against the kernel's own folder, where the headers are not
    (tmp_path / "suite" / "app").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    spec = {"file": "app/kernel.cl", "build_options": "-I$D -I$R/common"}
    opts = devset.build_options(spec, Path("suite"))
    assert opts == f"-I{tmp_path / 'suite' / 'app'} -I{tmp_path / 'suite'}/common"


# the dev set's harness as ``devset.launch_data`` asks it for buffers: a seeded draw per buffer argument
TINY_HARNESS = """
import numpy as np

DTYPES = {"float32": np.float32, "int32": np.int32}


def make_host(rng, a, dt, shared=None):
    n = int(a["count"])
    return np.zeros(n, dt) if a.get("fill") == "zeros" else rng.random(n).astype(dt)
"""


def _tiny_counting_devset(folder: Path) -> Path:
    """Three blur launches small enough that every work-group is counted well within the budget (so two
    runs count the same groups), with measured times and a harness for their data."""
    (folder / "kernels").mkdir(parents=True)
    (folder / "kernels" / "stencil.cl").write_text((EXAMPLES / "stencil.cl").read_text())
    specs = []
    for variant, side in (("base", 256), ("small", 128), ("wide", 192)):
        n = side * side
        specs.append({"id": f"demo-blur-{variant}/blur5/s{side}", "file": "stencil.cl", "kernel": "blur5",
                      "build_options": "", "global": [side, side], "local": [16, 16], "args": [
                          {"name": "in", "kind": "buffer", "dtype": "float32", "count": n, "fill": "random"},
                          {"name": "out", "kind": "buffer", "dtype": "float32", "count": n, "fill": "zeros"},
                          {"name": "w", "kind": "scalar", "dtype": "int32", "value": side},
                          {"name": "h", "kind": "scalar", "dtype": "int32", "value": side}]})
    (folder / "specs.json").write_text(json.dumps(specs))
    (folder / "truth.jsonl").write_text("".join(
        json.dumps({"id": s["id"], "status": "ok", "median_ms": 0.004 * (i + 1)}) + "\n"
        for i, s in enumerate(specs)))
    (folder / "measure.py").write_text(TINY_HARNESS)
    return folder


@pytest.fixture(scope="module")
def ray_worker_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The Ray workers keep their counting cache in a home of their own (so what the driver's cache holds
    afterwards, the driver stored)."""
    return {"CLPERF_HOME": str(tmp_path_factory.mktemp("workers-home"))}


def _evaluate_json(folder: Path, home: Path, *extra: str) -> dict:
    env = {**os.environ, "CLPERF_HOME": str(home), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    env.pop("CLPERF_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "clperf", "evaluate", "--devset", str(folder), "--counting",
                           "--count-budget", "20", "--json", *extra], capture_output=True, text=True,
                          timeout=400, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _traces(home: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (home / "devset-counting").glob("*.npy")}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="the counting run needs Oclgrind")
def test_counting_on_ray_gives_the_plain_runs_summary_and_fills_the_drivers_cache(
        ray_cluster: str, tmp_path: Path) -> None:
    folder = _tiny_counting_devset(tmp_path / "devset")
    plain = _evaluate_json(folder, tmp_path / "plain-home")
    assert plain["launches"] == 3 and plain["unpredicted"] == []
    assert plain["models"]["model+counts"]["all"]["n"] == 3  # every launch was counted
    # what `clperf predict` answers: the counted estimates, here every launch's
    assert plain["models"]["model, as predict"]["all"] == plain["models"]["model+caches"]["all"]
    driver = tmp_path / "driver-home"
    assert _evaluate_json(folder, driver, f"--ray={ray_cluster}") == plain
    # the workers counted (in their own home) and the driver stored every run they sent back
    stored = _traces(driver)
    assert len(stored) == 3
    assert _evaluate_json(folder, driver) == plain  # a plain run now counts nothing again
    assert _traces(driver) == stored


@pytest.mark.slow
def test_launches_on_ray_come_back_in_the_plain_runs_order(ray_cluster: str, tmp_path: Path) -> None:
    folder = _tiny_counting_devset(tmp_path / "devset")
    models = ("roofline",)
    assert devset_cluster.predict_all_on_ray(folder, models=models, address=ray_cluster, progress=False) \
        == devset.predict_all(folder, models=models, progress=False)
