"""Fitting ``PerfNet`` on the training rows, keeping the weights best on the validation rows; an ensemble is
several such fits from consecutive seeds, run side by side in worker processes (or as tasks on a Ray
cluster, ``cluster.py``), each by ``fit_member``.

AdamW with a linear warm-up and cosine annealing over the time budget; batches draw kernels first, then
launches of each, so the code encoder runs once per kernel in a batch (``TrainConfig`` holds the settings).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch  # the network module imports it at its top in any case

from clperf.core import children
from clperf.core.errors import InputError
from clperf.predictor.model import network
from clperf.predictor.training.config import TrainConfig
from clperf.predictor.training.examples import Examples
from clperf.predictor.training.predict import normalised, predict, validation_errors
from clperf.predictor.training.split import TRAIN, VAL

Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]


def torch_device(kind: str = "auto") -> torch.device:
    if kind == "cuda" or (kind == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


@dataclass
class FitResult:
    model: Any  # the network (or ensemble), on the CPU, in eval mode
    norm: dict[str, Any]  # the training rows' feature normalisation: names, mean, std
    steps: int
    best_val: float  # validation MAE of the log-ratio of the weights kept; inf without validation rows
    history: list[dict[str, float]]  # step, train_loss, val_mae, seconds at each validation


def normalisation(X: np.ndarray, names: list[str]) -> dict[str, Any]:
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std[std < 1e-6] = 1.0  # a constant feature stays as it is rather than blow up
    return {"names": names, "mean": mean.tolist(), "std": std.tolist()}


def lr_scale(frac: float, warmup: float) -> float:
    """The learning rate's share of its peak at ``frac`` of the budget: linear warm-up, then cosine to 0."""
    return min(1.0, (frac + 1e-3) / warmup) * 0.5 * (1 + math.cos(math.pi * frac))


class _Batches:
    """Training batches: kernels first, a hand-written one ``hand_weight`` times as often as a generated one,
    then launches of each, a traced one ``traced_weight`` times as often as a static one (the features-only
    baseline draws the same way, so the two differ only by the code encoder)."""

    def __init__(self, ex: Examples, train_rows: np.ndarray, Xn: torch.Tensor, tok_all: torch.Tensor | None,
                 net_cfg: network.NetConfig, cfg: TrainConfig, rng: np.random.Generator) -> None:
        self.Xn, self.tok_all, self.rng = Xn, tok_all, rng
        self.y = torch.from_numpy(ex.y).float()
        self.c = torch.from_numpy(ex.cls).long()
        self.by_kernel: dict[int, np.ndarray] = {}
        self.row_p: dict[int, np.ndarray] = {}
        for k in np.unique(ex.kernel[train_rows]):
            rows = train_rows[ex.kernel[train_rows] == k]
            w = np.where(ex.traced[rows], cfg.traced_weight, 1.0)
            self.by_kernel[int(k)], self.row_p[int(k)] = rows, w / w.sum()
        self.kernels = np.asarray(sorted(self.by_kernel))
        weight = np.asarray([1.0 if ex.kernel_generated[int(k)] else cfg.hand_weight for k in self.kernels])
        self.kernel_p = weight / weight.sum()
        self.n_kernels = min(cfg.kernels_per_batch, len(self.kernels))
        self.rows_per_kernel = cfg.rows_per_kernel
        self.use_code, self.pad_id = net_cfg.use_code, net_cfg.pad_id

    def draw(self) -> Batch:
        """(features, targets, classes, tokens of the kernels, each row's kernel in the batch)."""
        ks = self.rng.choice(self.kernels, size=self.n_kernels, replace=False, p=self.kernel_p)
        rows, kidx = [], []
        for j, k in enumerate(ks):
            r, p = self.by_kernel[int(k)], self.row_p[int(k)]
            pick = self.rng.choice(r, size=min(self.rows_per_kernel, len(r)), replace=False, p=p)
            rows.append(pick)
            kidx.append(np.full(len(pick), j))
        rr = np.concatenate(rows)
        if not self.use_code or self.tok_all is None:
            return self.Xn[rr], self.y[rr], self.c[rr], None, None
        toks = self.tok_all[torch.from_numpy(ks)]
        toks = toks[:, : int((toks != self.pad_id).sum(1).max())]  # (kernels, longest in the batch)
        return self.Xn[rr], self.y[rr], self.c[rr], toks, torch.from_numpy(np.concatenate(kidx))


def _optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    encoder = ("tok", "pos", "encoder")
    enc_params = [p for n, p in model.named_parameters() if n.split(".")[0] in encoder]
    other = [p for n, p in model.named_parameters() if n.split(".")[0] not in encoder]
    return torch.optim.AdamW([{"params": other, "lr": cfg.lr},
                              {"params": enc_params, "lr": cfg.lr * cfg.encoder_lr_scale}],
                             weight_decay=cfg.weight_decay)


def _step(model: torch.nn.Module, opt: torch.optim.Optimizer, batch: Batch, dev: torch.device,
          grad_clip: float) -> float:
    xb, yb, cb, tb, kb = batch
    xb, yb, cb = xb.to(dev), yb.to(dev), cb.to(dev)
    tb = tb.to(dev) if tb is not None else None
    kb = kb.to(dev) if kb is not None else None
    pred, logits = model(xb, tb, kb)
    loss = network.loss_fn(pred, logits, yb, cb)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    return float(loss.detach())


def _anneal(model: torch.nn.Module, opt: torch.optim.Optimizer, next_batch: Callable[[], Batch],
            validate: Callable[[], float], cfg: TrainConfig, *, budget: float, max_steps: int | None,
            dev: torch.device, progress: bool) -> tuple[int, float, list[dict[str, float]]]:
    """Steps until the budget (seconds) or ``max_steps`` is spent; loads the weights best on validation.
    Returns (steps, best validation loss, history).

    The schedule runs on the clock, not on a step count: on a shared machine the time per step varies
    several-fold, and a step count guessed up front either stops early or overruns the budget."""
    model.train()
    base_lrs = [g["lr"] for g in opt.param_groups]
    t0 = time.monotonic()
    val_every = max(cfg.val_interval_s, budget / cfg.val_checks)
    best_val, best_state = math.inf, None
    history: list[dict[str, float]] = []
    running, since, s, last_val = 0.0, 0, 0, t0
    while True:
        frac = min(1.0, (time.monotonic() - t0) / budget)
        if max_steps is not None:
            frac = max(frac, s / max_steps)
        if frac >= 1.0:
            break
        scale = lr_scale(frac, cfg.warmup)
        for g, lr0 in zip(opt.param_groups, base_lrs, strict=True):
            g["lr"] = lr0 * scale
        running += _step(model, opt, next_batch(), dev, cfg.grad_clip)
        since += 1
        s += 1
        if time.monotonic() - last_val > val_every or (max_steps is not None and s == max_steps):
            v = validate()
            last_val = time.monotonic()
            history.append({"step": s, "train_loss": running / since, "val_mae": v, "seconds": last_val - t0})
            running, since = 0.0, 0
            if not math.isnan(v) and v < best_val:
                best_val, best_state = v, {k: t.detach().clone() for k, t in model.state_dict().items()}
            if progress:
                print(f"\rstep {s} ({frac:.0%} of the budget) train {history[-1]['train_loss']:.3f} "
                      f"val mae {v:.3f} ({last_val - t0:.0f} s)", end="", file=sys.stderr)
    v = validate()
    if not math.isnan(v) and v < best_val:
        best_val, best_state = v, None  # the final weights are the best
    if progress:
        print(file=sys.stderr)
    if best_state is not None:
        model.load_state_dict(best_state)
    return s, best_val, history


def fit(ex: Examples, part: np.ndarray, net_cfg: network.NetConfig, cfg: TrainConfig, *,
        tokens: list[list[int]] | None, minutes: float, seed: int, threads: int | None = None,
        progress: bool = False) -> FitResult:
    """Train ``PerfNet(net_cfg)`` on rows with ``part == TRAIN`` for ``minutes`` (or ``cfg.epochs``); keep
    the weights best by validation loss (``part == VAL``)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    dev = torch_device(cfg.device_type)
    # half the cores: on a shared machine, torch's threads spinning against other processes cost more than
    # they give (measured: 2 threads on a loaded 2-core machine ran several times slower than 1)
    torch.set_num_threads(threads or max(1, min(torch.get_num_threads(), (os.cpu_count() or 2) // 2)))
    train_rows = np.flatnonzero(part == TRAIN)
    val_rows = np.flatnonzero(part == VAL)
    if len(train_rows) == 0:
        raise InputError("no training examples (all held out or no usable records)")
    norm = normalisation(ex.X[train_rows], ex.names)
    Xn = normalised(ex, norm)
    tok_all = network.pad_tokens(tokens, net_cfg.max_len) if tokens is not None else None
    batches = _Batches(ex, train_rows, Xn, tok_all, net_cfg, cfg, rng)
    model = network.PerfNet(net_cfg).to(dev)
    opt = _optimizer(model, cfg)

    def val_loss() -> float:
        if len(val_rows) == 0:
            return float("nan")
        pred = predict(model, Xn, ex.kernel, val_rows, tok_all, dev)
        model.train()
        return validation_errors(ex, val_rows, pred).checkpoint

    steps_per_epoch = max(1, math.ceil(len(train_rows) / (cfg.kernels_per_batch * cfg.rows_per_kernel)))
    max_steps = cfg.epochs * steps_per_epoch if cfg.epochs is not None else None
    steps, best_val, history = _anneal(model, opt, batches.draw, val_loss, cfg, budget=max(1.0, minutes * 60),
                                       max_steps=max_steps, dev=dev, progress=progress)
    model.eval()
    return FitResult(model.cpu(), norm, steps, best_val, history)


@dataclass(frozen=True)
class MemberJob:
    """What every member of an ensemble fits with; only the seed differs between members. A worker
    process gets it pickled, a Ray cluster once through its object store."""

    ex: Examples
    part: np.ndarray
    net_cfg: network.NetConfig
    cfg: TrainConfig
    tokens: list[list[int]] | None
    minutes: float  # each member's budget
    threads: int | None = None


@dataclass
class MemberFit:
    """One fitted member as it travels between processes: the weights as numpy arrays, not a network."""

    seed: int
    state: dict[str, np.ndarray]
    norm: dict[str, Any]
    steps: int
    best_val: float
    history: list[dict[str, float]]


def fit_member(job: MemberJob, seed: int, progress: bool = False) -> MemberFit:
    """The member of seed ``seed``: the one fit every path runs (in this process, a worker process, or a
    Ray task)."""
    res = fit(job.ex, job.part, job.net_cfg, job.cfg, tokens=job.tokens, minutes=job.minutes, seed=seed,
              threads=job.threads, progress=progress)
    return MemberFit(seed, {k: v.numpy() for k, v in res.model.state_dict().items()}, res.norm, res.steps,
                     res.best_val, res.history)


def _fit_member_job(args: tuple[MemberJob, int, bool]) -> MemberFit:
    return fit_member(*args)


def assemble(net_cfg: network.NetConfig, members: list[MemberFit]) -> tuple[Any, list[FitResult]]:
    """The ensemble of ``members`` (seed order), or the one network when there is one; and the fits."""
    fits = []
    for m in sorted(members, key=lambda m: m.seed):
        net = network.PerfNet(net_cfg)
        # a copy: arrays from Ray's object store are read-only views of shared memory
        net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in m.state.items()})
        fits.append(FitResult(net.eval(), m.norm, m.steps, m.best_val, m.history))
    if len(fits) == 1:
        return fits[0].model, fits
    ens = network.Ensemble(dataclasses.replace(net_cfg, members=len(fits)), [f.model for f in fits])
    return ens.eval(), fits


def fit_members(ex: Examples, part: np.ndarray, net_cfg: network.NetConfig, cfg: TrainConfig, *,
                tokens: list[list[int]] | None, minutes: float, progress: bool = False
                ) -> tuple[Any, list[FitResult]]:
    """``cfg.members`` networks from seeds ``cfg.seed, cfg.seed + 1, ...`` on the same rows, as many at once
    as half the cores allow, within ``minutes`` in all; returns the ensemble (or the one network) and the
    fits."""
    members = max(1, cfg.members)
    if members == 1:
        res = fit(ex, part, net_cfg, cfg, tokens=tokens, minutes=minutes, seed=cfg.seed, progress=progress)
        return res.model, [res]
    workers = min(members, max(1, (os.cpu_count() or 2) // 2))
    waves = math.ceil(members / workers)
    threads = max(1, (os.cpu_count() or 2) // (2 * workers))
    job = MemberJob(ex, part, net_cfg, cfg, tokens, minutes / waves, threads)
    # spawn, not fork: CUDA and torch's thread pools do not survive a fork
    with cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                initializer=children.limit_self) as pool:  # they end with us
        done = list(pool.map(_fit_member_job, [(job, cfg.seed + i, progress and i == 0)
                                               for i in range(members)]))
    return assemble(net_cfg, done)
