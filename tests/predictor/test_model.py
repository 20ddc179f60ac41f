"""The network: shapes, starting at the roofline, and a safetensors round trip that predicts the same."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from clperf.predictor.model import network, tokenizer  # noqa: E402


def _batch(cfg: network.NetConfig, rows: int = 6, kernels: int = 2):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(rows, cfg.n_features, generator=g)
    toks = torch.randint(5, cfg.vocab_size, (kernels, 12), generator=g)
    toks[1, 8:] = cfg.pad_id  # a shorter kernel
    return x, toks, torch.tensor([0, 0, 0, 1, 1, 1])


def test_an_untrained_network_predicts_the_roofline_and_has_both_heads() -> None:
    cfg = network.NetConfig(vocab_size=50, n_features=7, hidden=32, heads=4, ff=64, max_len=16)
    model = network.PerfNet(cfg).eval()
    x, toks, idx = _batch(cfg)
    pred, logits = model(x, toks, idx)
    assert pred.shape == (6,) and logits.shape == (6, cfg.n_classes)
    assert torch.all(pred == 0)  # log-ratio 0: exactly the roofline


@pytest.mark.slow
def test_the_code_changes_the_prediction_once_trained_a_little() -> None:
    torch.manual_seed(0)
    cfg = network.NetConfig(vocab_size=50, n_features=7, hidden=32, heads=4, ff=64, max_len=16)
    model = network.PerfNet(cfg)
    x, toks, idx = _batch(cfg)
    y = torch.tensor([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    x[3:] = x[:3]  # same numbers, different code: only the encoder can tell the rows apart
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(60):
        pred, logits = model(x, toks, idx)
        loss = network.loss_fn(pred, logits, y, torch.zeros(6, dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        pred, _ = model(x, toks, idx)
    assert float(pred[:3].mean() - pred[3:].mean()) > 1.0


def test_an_ensemble_keeps_its_mean_where_members_agree_and_shrinks_it_where_they_do_not() -> None:
    cfg = network.NetConfig(n_features=2, hidden=8, use_code=False, members=2, agree=0.2)
    ens = network.Ensemble(cfg).eval()
    for bias, m in zip((0.5, 0.9), ens.members, strict=True):  # member i answers its bias for every row
        torch.nn.init.zeros_(m.reg.weight)
        torch.nn.init.constant_(m.reg.bias, bias)
    x = torch.zeros(3, 2)
    with torch.no_grad():
        pred, _ = ens(x)
    spread = torch.tensor([0.5, 0.9]).var(unbiased=False)  # 0.04: as wide as agree**2
    assert torch.allclose(pred, torch.full((3,), 0.7 * 0.04 / (0.04 + float(spread))))
    assert float(pred[0]) == pytest.approx(0.35)  # half the mean: the roofline and the members weigh alike
    for m in ens.members:  # members that agree: their mean, as it is
        torch.nn.init.constant_(m.reg.bias, 0.7)
    assert torch.allclose(ens(x)[0], torch.full((3,), 0.7))
    ens.cfg.agree = 0.0  # no shrinking: the plain mean
    for bias, m in zip((0.5, 0.9), ens.members, strict=True):
        torch.nn.init.constant_(m.reg.bias, bias)
    assert torch.allclose(ens(x)[0], torch.full((3,), 0.7))


def test_save_and_load_round_trip_through_safetensors(tmp_path: Path) -> None:
    cfg = network.NetConfig(vocab_size=60, n_features=5, hidden=32, heads=4, ff=64, max_len=16)
    model = network.PerfNet(cfg).eval()
    torch.nn.init.normal_(model.reg.weight)  # not the zero start
    norm = {"names": [f"f{i}" for i in range(5)], "mean": [0.0] * 5, "std": [1.0] * 5}
    src = "__kernel void k(__global float *a) { a[get_global_id(0)] = 1.0f; }"
    tok = tokenizer.train_tokenizer([src] * 3, vocab_size=60)
    tok.save(str(tmp_path / "tokenizer.json"))
    network.save(model, tmp_path, norm, {"name": "t", "version": "1", "devices": {}})
    assert not list(tmp_path.glob("*.pt")) and not list(tmp_path.glob("*.pkl"))
    assert json.loads((tmp_path / "config.json").read_text())["hidden"] == 32
    loaded = network.Predictor.load(tmp_path)
    rows = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    toks = network.pad_tokens([[1, 7, 9, 11]], cfg.max_len)
    a, _ = loaded.predict_rows(rows, toks, np.zeros(3, dtype=np.int64))
    with torch.no_grad():
        b, _ = model(torch.from_numpy(rows), toks, torch.zeros(3, dtype=torch.long))
    assert np.allclose(a, b.clamp(*network.TARGET_CLIP).numpy(), atol=1e-6)  # predictions are clamped


def test_the_tokenizer_keeps_opencl_keywords_whole_and_drops_comments() -> None:
    src = ("// clperf: --global n\n__kernel void vadd(__global const float *a, __local float *t) {\n"
           "  int i = get_global_id(0); /* note */ t[0] = a[i]; barrier(CLK_LOCAL_MEM_FENCE); }\n")
    text = tokenizer.kernel_text(src, "vadd")
    assert "clperf" not in text and "note" not in text
    tok = tokenizer.train_tokenizer([text] * 4, vocab_size=80)
    pieces = tok.encode(text, add_special_tokens=False).tokens
    for word in ("__kernel", "__global", "__local", "get_global_id", "barrier", "CLK_LOCAL_MEM_FENCE"):
        assert word in pieces
    assert len(tokenizer.encode(tok, text * 50, 32)) == 32
