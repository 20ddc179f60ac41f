"""``clperf train``: measured datasets -> the shipped model folder (weights, config, tokenizer, normalisation,
meta, VERSION).

Examples (``examples.py``: records with their sources, features and targets) -> held-out split
(``split.py``) -> tokenizer on the training kernels and the corpus -> fit (``fit.py``), with every setting in
``TrainConfig`` (``config.py``); with ``ray``, the members fit as tasks on a Ray cluster (``cluster.py``).
The meta records the split, so ``clperf evaluate`` judges on the same one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clperf.benchmark import corpus
from clperf.core.errors import InputError
from clperf.predictor.model import network, tokenizer
from clperf.predictor.training.cluster import fit_members_on_ray
from clperf.predictor.training.config import TrainConfig
from clperf.predictor.training.examples import FEATURES_VERSION, Examples, build, encode_kernels
from clperf.predictor.training.fit import FitResult, fit_members
from clperf.predictor.training.predict import predict_examples, residual_quantiles, validation_errors
from clperf.predictor.training.split import TEST, TRAIN, VAL, Split, make_split

__all__ = ["MODEL_NAME", "train"]

MODEL_NAME = "clperf-perfnet"


def train(data: Sequence[Path], out: Path, cfg: TrainConfig, *, sources: Sequence[Path] = (),
          split_from: Path | None = None, progress: bool = True, ray: str | None = None) -> dict[str, Any]:
    """Build examples, split, fit the network (or ``cfg.members`` of an ensemble), write the model folder
    ``out``; returns a summary (name, version, counts, fit, intervals).

    ``sources``: folders of ``.cl`` files to find the records' kernels in, besides the corpus and the
    datasets' source files. ``split_from``: a model folder whose held-out split to keep (kernels added since
    it was trained go to training). ``ray``: train the members as tasks on the Ray cluster at this address
    (``cluster.py``; "" for the one this process joined, else a new local one); None: here."""
    t0 = time.monotonic()
    ex = build(data, sources=sources, progress=progress)
    if len(ex) == 0:
        raise InputError(f"no usable measurements in {', '.join(map(str, data))}: {ex.skipped}")
    split = _load_split(split_from) if split_from is not None else make_split(ex, cfg.test_share, cfg.seed,
                                                                             cfg.val_share)
    part = split.assign(ex)
    train_k = sorted(set(ex.kernel[part == TRAIN].tolist()))
    tok = tokenizer.train_tokenizer([ex.kernel_text[k] for k in train_k] +
                                    [p.read_text() for p in corpus.families()])
    net_cfg = network.NetConfig(vocab_size=tok.get_vocab_size(), n_features=len(ex.names),
                                use_code=cfg.use_code, agree=cfg.agree)
    tokens = encode_kernels(ex, tok, net_cfg.max_len) if cfg.use_code else None
    left = cfg.minutes - (time.monotonic() - t0) / 60
    fit_minutes = max(cfg.min_fit_minutes, left)
    if ray is None:
        model, fits = fit_members(ex, part, net_cfg, cfg, tokens=tokens, minutes=fit_minutes,
                                  progress=progress)
    else:
        model, fits = fit_members_on_ray(ex, part, net_cfg, cfg, tokens=tokens, minutes=fit_minutes,
                                         address=ray or None, progress=progress)
    norm = fits[0].norm  # the same rows, so the same normalisation for every member
    val = np.flatnonzero(part == VAL)
    vpred = predict_examples(model, norm, ex, val, tokens)
    errors = validation_errors(ex, val, vpred)
    val_mae = errors.all
    val_split = {"traced": errors.traced, "static": errors.static}
    version = model_version(model)
    meta = _meta(data, cfg, ex, split, part, fits, version=version, val_mae=val_mae, val_split=val_split,
                 intervals=residual_quantiles(ex, val, vpred),
                 roofline_intervals=residual_quantiles(ex, val, np.zeros(len(val), dtype=np.float32)),
                 minutes=(time.monotonic() - t0) / 60)
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    network.save(model, out, norm, meta)
    (out / "VERSION").write_text(version + "\n")
    if progress:
        each = ", ".join(f"{f.best_val:.4f}" for f in fits)
        parts = "; ".join(f"{k} {v:.4f}" for k, v in val_split.items() if v is not None)
        print(f"model {version}: {len(ex)} examples, {len(fits)} member(s) ({each}), "
              f"{sum(f.steps for f in fits)} steps, validation MAE {val_mae:.4f} (log-ratio; {parts}), "
              f"written to {out}", file=sys.stderr)
    return {k: meta[k] for k in ("name", "version", "counts", "fit", "intervals")}


def model_version(model: Any, date: str | None = None) -> str:
    """``<date>-<hash>``: the hash of the weights and of the configuration (which also decides answers, as
    ``NetConfig.agree`` does), so estimates cached for one model are never served for another."""
    digest = hashlib.sha256(b"".join(t.numpy().tobytes() for t in model.state_dict().values()))
    digest.update(json.dumps(dataclasses.asdict(model.cfg), sort_keys=True).encode())
    return (date or time.strftime("%Y%m%d")) + "-" + digest.hexdigest()[:8]


def _load_split(model_dir: Path) -> Split:
    """The held-out split of an earlier model: kernels added since then train."""
    meta_path = model_dir / "meta.json"
    if not meta_path.exists():
        raise InputError(f"--split-from {model_dir}: no model there (no meta.json)")
    return Split.from_json(json.loads(meta_path.read_text())["split"])


def _meta(data: Sequence[Path], cfg: TrainConfig, ex: Examples, split: Split, part: np.ndarray,
          fits: list[FitResult], *, version: str, val_mae: float, val_split: dict[str, float | None],
          intervals: dict[str, list[float]],
          roofline_intervals: dict[str, list[float]], minutes: float) -> dict[str, Any]:
    """The model's ``meta.json``: what it was trained on, how it was split, how the fit went."""
    return {
        "name": MODEL_NAME, "version": version, "features_version": FEATURES_VERSION,
        "code_encoder": cfg.use_code,
        "devices": ex.devices,
        "intervals": intervals,
        "roofline_intervals": roofline_intervals,
        "split": split.to_json(), "seed": cfg.seed, "test_share": cfg.test_share,
        "data": [str(p) for p in data],
        "counts": {"examples": len(ex), "train": int((part == TRAIN).sum()), "val": int((part == VAL).sum()),
                   "test": int((part == TEST).sum()), "kernels": len(ex.kernel_keys), "skipped": ex.skipped},
        "fit": {"steps": sum(f.steps for f in fits), "best_val_mae": val_mae, "minutes": minutes,
                "val_mae_traced": val_split["traced"], "val_mae_static": val_split["static"],
                "device": cfg.device_type, "hand_weight": cfg.hand_weight, "traced_weight": cfg.traced_weight,
                "members": [{"seed": cfg.seed + i, "steps": f.steps, "best_val_mae": f.best_val,
                             "history": f.history[-3:]} for i, f in enumerate(fits)]},
    }
