"""Predictions of a fitted network over examples, their validation errors, and the intervals they give: the
residual quantiles."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch  # the network module imports it at its top in any case

from clperf.predictor.model import network
from clperf.predictor.training.examples import Examples


def normalised(ex: Examples, norm: dict[str, Any]) -> torch.Tensor:
    """The examples' features scaled by a normalisation (``mean`` and ``std`` per feature), as float32."""
    mean = np.asarray(norm["mean"], dtype=np.float32)
    std = np.asarray(norm["std"], dtype=np.float32)
    return torch.from_numpy((ex.X - mean) / std).float()


def predict(model: Any, Xn: torch.Tensor, kernel: np.ndarray, rows: np.ndarray, tok_all: torch.Tensor | None,
            dev: torch.device, chunk: int = 1024) -> np.ndarray:
    """Predicted log-ratios for ``rows`` (normalised features ``Xn``), kernels encoded once per chunk."""
    out = np.empty(len(rows), dtype=np.float32)
    model.eval()
    with torch.no_grad():
        for a in range(0, len(rows), chunk):
            rr = rows[a:a + chunk]
            xb = Xn[rr].to(dev)
            if model.cfg.use_code and tok_all is not None:
                ks, inv = np.unique(kernel[rr], return_inverse=True)
                toks = tok_all[torch.from_numpy(ks)]
                toks = toks[:, : int((toks != model.cfg.pad_id).sum(1).max())]  # (kernels, longest)
                pred, _ = model(xb, toks.to(dev), torch.from_numpy(inv).to(dev))
            else:
                pred, _ = model(xb)
            out[a:a + len(rr)] = pred.float().clamp(*network.TARGET_CLIP).cpu().numpy()
    return out


def predict_examples(model: Any, norm: dict[str, Any], ex: Examples, rows: np.ndarray,
                     tokens: list[list[int]] | None) -> np.ndarray:
    """Predicted log-ratios for ``rows`` of ``ex``, on the CPU."""
    tok_all = network.pad_tokens(tokens, model.cfg.max_len) if tokens is not None else None
    return predict(model.cpu(), normalised(ex, norm), ex.kernel, rows, tok_all, torch.device("cpu"))


class ValidationErrors(NamedTuple):
    """Mean absolute error of the log-ratio (targets clipped as in training): what MAPE and the ordering
    follow, not swayed by a few wild records the way a squared error is."""

    checkpoint: float  # what the best weights are chosen by: traced and static launches half each
    all: float  # every row alike
    traced: float | None  # launches with a counting run's features (None: no such row)
    static: float | None


def validation_errors(ex: Examples, rows: np.ndarray, pred_log: np.ndarray) -> ValidationErrors:
    """The errors of ``pred_log`` over ``rows``; traced and static launches weigh half each in
    ``checkpoint`` where both are there, as both are asked (predict with a counting run, the editor
    without one). NaN without rows."""
    if len(rows) == 0:
        return ValidationErrors(math.nan, math.nan, None, None)
    err = np.abs(pred_log - np.clip(ex.y[rows], *network.TARGET_CLIP))
    traced = ex.traced[rows]
    t = float(err[traced].mean()) if traced.any() else None
    s = float(err[~traced].mean()) if (~traced).any() else None
    whole = float(err.mean())
    return ValidationErrors(0.5 * t + 0.5 * s if t is not None and s is not None else whole, whole, t, s)


def residual_quantiles(ex: Examples, rows: np.ndarray, pred_log: np.ndarray) -> dict[str, list[float]]:
    """Per device, the 10% and 90% quantiles of ``log(measured / predicted)``: the interval."""
    out: dict[str, list[float]] = {}
    dev = np.asarray(ex.device)[rows]
    res = ex.y[rows] - pred_log
    for d in sorted(set(dev)):
        r = res[dev == d]
        if len(r) >= 10:
            out[d] = [float(np.quantile(r, 0.1)), float(np.quantile(r, 0.9))]
    return out
