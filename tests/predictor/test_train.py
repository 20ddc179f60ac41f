"""``clperf train`` on real PoCL measurements writes a model that ``estimate`` then uses (and caches)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from clperf.cli import main
from clperf.core.errors import InputError
from clperf.core.records import Measurement
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import estimate as estimate_mod
from clperf.predictor.model import network, profiles
from clperf.predictor.model.features import code_counts
from clperf.predictor.training import examples as examples_mod
from clperf.predictor.training import fit
from clperf.predictor.training.config import TrainConfig
from clperf.predictor.training.datasets import expand_data
from clperf.predictor.training.examples import Examples, build, cache_path
from clperf.predictor.training.predict import validation_errors
from clperf.predictor.training.split import make_split
from clperf.predictor.training.train import model_version

DATA = Path(__file__).parent / "data"


def test_examples_find_sources_by_hash_and_target_the_roofline_ratio(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    ex = build([DATA / "pocl_map_float.jsonl"], sources=[DATA], use_cache=False)
    assert len(ex) == 50 and not ex.skipped
    assert set(ex.kernel_names) == {"mapf_copy", "mapf_scale", "mapf_add", "mapf_triad", "mapf_poly8"}
    assert ex.X.shape == (50, len(ex.names))
    assert all(f == "map_float" for f in ex.kernel_family)
    # the target is log(measured / roofline)
    assert np.allclose(np.exp(ex.y) * ex.roof_ms, ex.meas_ms, rtol=1e-4)


def test_one_launch_of_each_kernel_on_the_h200_enters_again_with_its_counting_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # real H200 measurements of two corpus kernels at three sizes each; Oclgrind counts one launch of each
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))
    data = [DATA / "h200_map_float.jsonl"]
    static = build(data, sources=[DATA], use_cache=False, traced=0)
    ex = build(data, sources=[DATA], use_cache=False, traced=1)
    assert len(static) == 6 and not static.traced.any()
    assert len(ex) == 8 and ex.traced.sum() == 2 and not ex.skipped
    assert sorted(ex.kernel_names[k] for k in ex.kernel[ex.traced]) == ["mapf_copy", "mapf_triad"]
    col = ex.names.index("m_traced")
    assert (ex.X[:, col] == ex.traced).all()
    assert (ex.X[ex.traced][:, ex.names.index("m_l1_wavefront_bytes")] > 0).all()
    assert np.allclose(np.exp(ex.y) * ex.roof_ms, ex.meas_ms, rtol=1e-4)
    # each traced row is a launch that also has its static row: the same measurement
    assert set(ex.meas_ms[ex.traced].tolist()) <= set(ex.meas_ms[~ex.traced].tolist())


def test_training_draws_a_kernels_traced_launch_as_often_as_traced_weight_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # predict answers from a counting run, but a kernel has one traced launch beside many static ones: the
    # batches draw the traced one traced_weight times as often as each static one
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))
    ex = build([DATA / "h200_map_float.jsonl"], sources=[DATA], use_cache=False, traced=1)
    Xn = torch.arange(len(ex), dtype=torch.float32)[:, None]  # a row's only feature is its index
    net_cfg = network.NetConfig(n_features=1, use_code=False)

    def traced_share(weight: float) -> float:
        cfg = TrainConfig(rows_per_kernel=1, traced_weight=weight)
        batches = fit._Batches(ex, np.arange(len(ex)), Xn, None, net_cfg, cfg, np.random.default_rng(0))
        drawn = np.concatenate([batches.draw()[0][:, 0].numpy().astype(int) for _ in range(2000)])
        return float(ex.traced[drawn].mean())

    # each kernel: 3 static launches and 1 traced: a share of 1/4 at weight 1, 8/11 at weight 8
    assert traced_share(1.0) == pytest.approx(0.25, abs=0.03)
    assert traced_share(8.0) == pytest.approx(8 / 11, abs=0.03)


def test_a_traced_launch_is_counted_once_and_its_counting_run_kept_for_the_next_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))
    first = build([DATA / "h200_map_float.jsonl"], sources=[DATA], use_cache=False, traced=1)
    assert first.traced.sum() >= 2
    (kept,) = (tmp_path / "features").glob("counted-*.jsonl")
    with kept.open("a") as f:  # a torn line and one of another shape are misses, not errors
        f.write('["abc", [1, 2]]\n{"not json\n')

    def no_counting(job: object) -> object:
        raise AssertionError("counted again")

    monkeypatch.setattr(examples_mod, "_count_one", no_counting)
    again = build([DATA / "h200_map_float.jsonl"], sources=[DATA], use_cache=False, traced=1)
    assert np.array_equal(again.X, first.X) and np.array_equal(again.traced, first.traced)
    assert again.skipped == first.skipped
    # the features are computed again from what was kept: a change to them needs no counting run
    monkeypatch.setattr(examples_mod.rl, "CHAIN_FACTOR", 1e4)  # every launch chain-bound
    changed = build([DATA / "h200_map_float.jsonl"], sources=[DATA], use_cache=False, traced=1)
    assert np.array_equal(changed.traced, first.traced)
    assert not np.array_equal(changed.roof_ms[changed.traced], first.roof_ms[first.traced])


def test_validation_weighs_traced_and_static_launches_half_each(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))
    ex = build([DATA / "h200_map_float.jsonl"], sources=[DATA], use_cache=False, traced=1)
    rows = np.arange(len(ex))
    pred = np.clip(ex.y, *network.TARGET_CLIP) + np.where(ex.traced, 0.4, 0.1)  # off by 0.4 / 0.1
    errors = validation_errors(ex, rows, pred.astype(np.float32))
    assert errors.traced == pytest.approx(0.4, abs=1e-5) and errors.static == pytest.approx(0.1, abs=1e-5)
    assert errors.checkpoint == pytest.approx(0.25, abs=1e-5)  # half each, though traced rows are fewer
    assert errors.all == pytest.approx(float(np.where(ex.traced, 0.4, 0.1).mean()), abs=1e-5)
    assert np.isnan(validation_errors(ex, rows[:0], pred[:0]).checkpoint)


def test_a_models_version_changes_with_its_configuration_as_with_its_weights() -> None:
    # estimates are cached by model version: a model that answers differently must have another one
    cfg = network.NetConfig(n_features=2, hidden=8, use_code=False, members=2)
    ens = network.Ensemble(cfg)
    first = model_version(ens, "20260101")
    assert first.startswith("20260101-") and model_version(ens, "20260101") == first
    ens.cfg.agree = 0.2
    shrunk = model_version(ens, "20260101")
    torch.nn.init.constant_(ens.members[0].reg.bias, 0.1)
    assert len({first, shrunk, model_version(ens, "20260101")}) == 3


def test_the_split_never_puts_a_family_on_both_sides() -> None:
    n = 40
    fam = [f"fam{i % 10}" for i in range(n)]
    ex = Examples(np.zeros((n, 1), np.float32), np.zeros(n, np.float32), np.zeros(n, np.int64), np.ones(n),
                  np.ones(n), np.ones(n), np.ones(n), np.arange(n), np.zeros(n, bool), ["d"] * n,
                  [f"k{i}" for i in range(n)], [f"k{i}" for i in range(n)], fam, [False] * n, [""] * n, ["x"])
    part = make_split(ex, 0.3, seed=1).assign(ex)
    for f in set(fam):
        sides = {int(p) for p, g in zip(part, fam, strict=True) if g == f}
        assert len(sides) == 1
    assert {0, 2} <= set(part.tolist())


def test_train_writes_a_model_that_estimate_uses_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "pocl.jsonl"
    shutil.copy(DATA / "pocl_map_float.jsonl", data)
    out = tmp_path / "model"
    assert main(["train", "--data", str(data), "--out", str(out), "--minutes", "0.3", "--epochs", "2",
                 "--device-type", "cpu", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    for f in ("model.safetensors", "config.json", "tokenizer.json", "normalisation.json", "meta.json",
              "VERSION"):
        assert (out / f).exists()
    assert sum(p.stat().st_size for p in out.iterdir()) < 50e6

    monkeypatch.setenv("CLPERF_MODEL_DIR", str(out))
    text = (DATA / "map_float.cl").read_text()
    kernel = analyze_text(text, DATA / "map_float.cl").kernel("mapf_add")
    m = Measurement.from_json(json.loads((DATA / "pocl_map_float.jsonl").open().readline()))
    first = estimate_mod.estimate(kernel, m.scenario, m.device, source=text, calibrate=False)
    assert first.model_name == "clperf-perfnet" and first.model_version == summary["version"]
    assert not first.cached and first.interval_ms[0] <= first.time_ms <= first.interval_ms[1]
    again = estimate_mod.estimate(kernel, m.scenario, m.device, source=text, calibrate=False)
    assert again.cached and again.time_ms == pytest.approx(first.time_ms)
    # a device the model never saw gets the roofline
    h200 = profiles.select_device("h200")
    assert estimate_mod.estimate(kernel, m.scenario, h200, source=text).model_name == "roofline"


def test_a_folder_of_parts_with_one_sources_file_reads_like_the_parts(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``--data data/h200`` = every ``*.jsonl[.gz]`` there; sources from ``sources.jsonl.gz`` beside them."""
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    lines = (DATA / "pocl_map_float.jsonl").read_text().splitlines(keepends=True)
    folder = tmp_path / "dev"
    folder.mkdir()
    (folder / "part-1.jsonl").write_text("".join(lines[:20]))
    with gzip.open(folder / "part-2.jsonl.gz", "wt") as f:
        f.writelines(lines[20:])
    src = (DATA / "map_float.cl").read_text()
    with gzip.open(folder / "sources.jsonl.gz", "wt") as f:  # the only place the source is (no sources=)
        f.write(json.dumps({"source": src}) + "\n")
    assert [p.name for p in expand_data([folder])] == ["part-1.jsonl", "part-2.jsonl.gz"]
    ex = build([folder], use_cache=False)
    assert len(ex) == 50 and not ex.skipped
    with pytest.raises(InputError):
        expand_data([tmp_path / "missing"])


def test_code_counts_tell_special_functions_divisions_and_doubles_apart() -> None:
    c = code_counts("__kernel void k(__global double4 *a) { a[0] = exp(a[1]) / sin(a[2]) + a[3] * 2; }"
                    "[SEP] float helper(float x) { return cos(x); }")
    assert c["transc"] == 2 and c["div"] == 1 and c["double"] == 1 and c["vec"] == 4
    plain = code_counts("__kernel void k(__global float *a) { a[0] = a[1] + a[2]; }")
    assert plain["transc"] == 0 and plain["double"] == 0 and plain["vec"] == 1


@pytest.mark.slow
def test_an_ensemble_predicts_the_mean_of_its_members(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    data = tmp_path / "pocl.jsonl"
    shutil.copy(DATA / "pocl_map_float.jsonl", data)
    out = tmp_path / "model"
    assert main(["train", "--data", str(data), "--out", str(out), "--minutes", "0.3", "--epochs", "2",
                 "--device-type", "cpu", "--members", "2", "--json"]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert [m["seed"] for m in meta["fit"]["members"]] == [0, 1]
    pred = network.Predictor.load(out)
    assert isinstance(pred.model, network.Ensemble) and len(pred.model.members) == 2
    a, b = (dict(m.named_parameters())["reg.weight"] for m in pred.model.members)
    assert not torch.equal(a, b)  # different seeds, different networks
    x = torch.randn(5, pred.model.cfg.n_features)
    tokens = torch.tensor([[5, 6, 7, 8]])
    index = torch.zeros(5, dtype=torch.long)
    each = [m(x, tokens, index)[0] for m in pred.model.members]
    with torch.no_grad():
        mean = ((each[0] + each[1]) / 2).detach().numpy()
        assert np.allclose(pred.model(x, tokens, index)[0].numpy(), mean, atol=1e-6)
    assert main(["train", "--data", str(data), "--out", str(out), "--members", "0"]) == 2


def test_the_example_cache_follows_the_data_not_its_path(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    a, b = tmp_path / "a" / "d.jsonl", tmp_path / "b" / "d.jsonl"
    for p in (a, b):
        p.parent.mkdir()
        shutil.copy(DATA / "pocl_map_float.jsonl", p)
    assert cache_path([a]) == cache_path([b.parent])  # another clone, or another machine, finds it
    b.write_text(b.read_text().splitlines()[0] + "\n")
    assert cache_path([a]) != cache_path([b])


def test_split_from_keeps_an_earlier_models_held_out_kernels(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    data = tmp_path / "pocl.jsonl"
    shutil.copy(DATA / "pocl_map_float.jsonl", data)
    ex = build([data], sources=[DATA], use_cache=False)
    held = sorted(k for k in ex.kernel_keys if k.endswith("|mapf_poly8"))
    assert len(held) == 1
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    split = {"test_families": [], "test_kernels": held, "val_families": [], "val_kernels": []}
    (earlier / "meta.json").write_text(json.dumps({"split": split}))
    out = tmp_path / "model"
    assert main(["train", "--data", str(data), "--out", str(out), "--minutes", "0.3", "--epochs", "1",
                 "--device-type", "cpu", "--split-from", str(earlier), "--json"]) == 0
    assert json.loads((out / "meta.json").read_text())["split"] == split
    # a folder without a model is a clear usage error
    assert main(["train", "--data", str(data), "--out", str(out), "--split-from", str(tmp_path)]) == 2


def test_the_counted_launches_version_ignores_comments_and_docstrings_but_not_code() -> None:
    # a kept counting run is thrown away when the code that reduced it changes, not when its prose does
    base = examples_mod._code_of('"""Module."""\nX = 1\n\n\ndef f(a):\n    """Doc."""\n    return a + X\n')
    prose = examples_mod._code_of('"""Other."""\nX = 1  # one\n\n\ndef f(a):\n    return a + X\n')
    code = examples_mod._code_of('"""Module."""\nX = 2\n\n\ndef f(a):\n    """Doc."""\n    return a + X\n')
    assert base == prose and base != code
    # the same whatever Python reads it (3.12 adds an empty type_params to every function and class): the
    # GPU machine's copy finds the examples a checkout built
    assert "type_params" not in base and "FunctionDef(name='f'" in base
