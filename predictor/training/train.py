"""``clperf train``: measured datasets -> the shipped model (weights, config, tokenizer, normalisation, meta).

Steps:

1. **Examples** (``build``): every ``ok`` record of the datasets, with its kernel's source found by hash
   (the record's file, the corpus families, the generator, ``--sources`` folders), compiled and analysed
   once per source; features evaluated for the record's scenario and device; the target is
   ``log(measured / roofline)``. Examples are cached under ``state_dir()/features`` (numpy, no pickle).
2. **Split** (``split``): whole kernel families are held out for testing (no family on both sides), and a
   share of the generated kernels; a validation split (for the best checkpoint and the intervals) is cut
   from the training families the same way. ``clperf evaluate`` uses the same split, stored in the meta.
3. **Fit** (``fit``): AdamW (weight decay 0.01), cosine annealing over a step count set by the time budget,
   batches of 16 kernels x 16 launches each, so the code encoder runs once per kernel in a batch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from clperf.predictor.model import features

from clperf.core import children, paths
from clperf.core.errors import InputError
from clperf.core.records import Device, Scenario

log = logging.getLogger(__name__)

FEATURES_VERSION = "17"
MODEL_NAME = "clperf-perfnet"
HAND_WEIGHT = 3.0  # how much more often batches draw a hand-written kernel than a generated one (see fit)


# --- examples ---------------------------------------------------------------------------------------------

@dataclass
class Examples:
    """One row per measurement; kernels (code) listed once and referenced by index."""

    X: np.ndarray  # (N, F) raw features
    y: np.ndarray  # (N,) log(measured / roofline)
    cls: np.ndarray  # (N,) measured bandwidth-utilisation class
    roof_ms: np.ndarray  # (N,) roofline estimate
    meas_ms: np.ndarray  # (N,) measured median
    dram_bytes: np.ndarray  # (N,) effective bytes, for the utilisation of any predicted time
    peak_bw: np.ndarray  # (N,) GB/s the features used
    kernel: np.ndarray  # (N,) index into kernel_keys
    device: list[str]  # (N,) device name
    kernel_keys: list[str]  # "source_hash|build_options|kernel"
    kernel_names: list[str]
    kernel_family: list[str]
    kernel_generated: list[bool]
    kernel_text: list[str]  # tokenizer input (kernel_text)
    names: list[str]  # feature names
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> Device JSON (peaks used)
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.y)


def expand_data(data: Sequence[Path]) -> list[Path]:
    """Dataset files from paths that may be folders: a folder stands for its ``*.jsonl[.gz]`` files (sorted),
    except the sweep's ``*sources*`` side files. ``data/h200`` and ``data/h200/part-*.jsonl.gz`` agree."""
    out: list[Path] = []
    for p in map(Path, data):
        if p.is_dir():
            parts = sorted(q for q in p.iterdir() if q.is_file() and "sources" not in q.name
                           and (q.name.endswith(".jsonl") or q.name.endswith(".jsonl.gz")))
            if not parts:
                raise InputError(f"no *.jsonl or *.jsonl.gz datasets in {p}")
            out.extend(parts)
        elif p.exists():
            out.append(p)
        else:
            raise InputError(f"no dataset at {p}")
    return list(dict.fromkeys(out))


def source_files(data: Sequence[Path]) -> list[Path]:
    """Side files holding the swept sources: ``x.sources.jsonl.gz`` per dataset, ``sources.jsonl[.gz]``
    beside it."""
    from clperf.benchmark.sweep import sources_path

    out: list[Path] = []
    for p in expand_data(data):
        for cand in (sources_path(p), p.parent / "sources.jsonl.gz", p.parent / "sources.jsonl"):
            if cand.is_file():
                out.append(cand)
    return list(dict.fromkeys(out))


def read_records(data: Sequence[Path]) -> list[dict[str, Any]]:
    from clperf.benchmark import dataset
    out = []
    for p in expand_data(data):
        for rec in dataset.read(p):
            if rec.get("status") == "ok" and (rec.get("median_ms") or 0) > 0 and not dataset.validate(rec):
                out.append(rec)
    return out


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


class Sources:
    """Finds a record's kernel source by its hash: the record's file, corpus families, generator, folders."""

    def __init__(self, extra_dirs: Sequence[Path] = (), datasets: Sequence[Path] = ()) -> None:
        self.by_hash: dict[str, str] = {}
        self._dirs = list(extra_dirs)
        self._generated_done = False
        from clperf.benchmark import corpus, dataset
        for side in source_files(datasets) if datasets else []:  # each swept source once
            for rec in dataset.read(side):
                if isinstance(rec.get("source"), str):
                    self.add(rec["source"])
        for path in corpus.families():
            self.add(path.read_text())
        for d in self._dirs:
            for path in sorted(Path(d).rglob("*.cl")):
                self.add(path.read_text(errors="replace"))

    def add(self, text: str) -> None:
        self.by_hash[_sha(text)[:16]] = text

    def find(self, rec: dict[str, Any]) -> str | None:
        h = str(rec.get("source_hash", ""))[:16]
        if h in self.by_hash:
            return self.by_hash[h]
        if isinstance(rec.get("source"), str):
            self.add(rec["source"])
        else:
            f = Path(str(rec.get("file", "")))
            if f.is_file():
                self.add(f.read_text(errors="replace"))
        gen = str(rec.get("kernel", "")).startswith("gen_")
        if h not in self.by_hash and not self._generated_done and gen:
            self._generated_done = True
            from clperf.benchmark import corpus
            for count in (2000, 4000):
                for _, text in corpus.generated(count, 0):
                    self.add(text)
                if h in self.by_hash:
                    break
        return self.by_hash.get(h)


def _cache_path(data: Sequence[Path]) -> Path:
    """Keyed by the datasets' contents (not their paths or times), so a fresh clone, or another machine
    given the cached folder, finds the examples of the same data."""
    h = hashlib.sha256(FEATURES_VERSION.encode())
    for p in expand_data(data):
        h.update(p.read_bytes())
    return paths.state_dir() / "features" / f"examples-{h.hexdigest()[:16]}"


def build(data: Sequence[Path], *, sources: Sequence[Path] = (), progress: bool = False,
          use_cache: bool = True) -> Examples:
    """Examples from datasets (cached on disk per dataset contents)."""
    cache = _cache_path(data)
    if use_cache and (cache / "arrays.npz").exists():
        try:
            return _load_examples(cache)
        except (OSError, ValueError, KeyError) as e:
            log.warning("rebuilding the example cache %s: %s", cache, e)
    ex = _build(read_records(data), Sources(sources, data), progress)
    if use_cache:
        try:
            _save_examples(ex, cache)
        except OSError as e:
            log.warning("cannot cache examples in %s: %s", cache, e)
    return ex


def _build(records: list[dict[str, Any]], sources: Sources, progress: bool) -> Examples:
    from clperf.benchmark.corpus import family_of
    from clperf.predictor.analysis.pipeline import analyze_text
    from clperf.predictor.model import roofline as rl
    from clperf.predictor.model import tokenizer

    names = features.names()
    rows: list[list[float]] = []
    ys, cls, roof, meas, dram, bws, kidx, devs = [], [], [], [], [], [], [], []
    keys: dict[str, int] = {}
    k_names, k_fam, k_gen, k_text = [], [], [], []
    reports: dict[tuple[str, str], Any] = {}
    texts: dict[str, str] = {}
    devices: dict[str, dict[str, Any]] = {}
    skipped: dict[str, int] = defaultdict(int)
    t0 = time.monotonic()
    reports.update(_analyze_all(records, sources, progress))
    for i, rec in enumerate(records):
        if progress and i % 2000 == 0:
            print(f"\rexamples {i}/{len(records)} ({time.monotonic() - t0:.0f} s)", end="", file=sys.stderr)
        text = sources.find(rec)
        if text is None:
            skipped["source not found"] += 1
            continue
        opts = str(rec.get("build_options", ""))
        rk = (_sha(text), opts)
        if rk not in reports:
            try:
                where = Path(str(rec.get("file") or "kernel.cl"))
                reports[rk] = {k.name: k for k in analyze_text(text, where, opts).kernels}
            except Exception as e:  # noqa: BLE001 - one kernel that fails analysis is skipped, counted
                log.debug("analysis failed for %s: %s", rec.get("kernel"), e)
                reports[rk] = {}
        kernel = reports[rk].get(rec["kernel"])
        if kernel is None or not getattr(kernel, "analyzed", True):
            skipped["kernel not analysed"] += 1
            continue
        try:
            scenario = Scenario.from_json(rec["scenario"])
            device = Device.from_json(rec["device"])
            code = texts.get(rk[0] + "|" + rec["kernel"])
            if code is None:
                code = texts[rk[0] + "|" + rec["kernel"]] = tokenizer.kernel_text(text, rec["kernel"])
            f, t, r = features.compute(kernel, scenario, device, code)
        except Exception as e:  # noqa: BLE001
            skipped[f"features failed: {type(e).__name__}"] += 1
            continue
        key = f"{rk[0][:16]}|{opts}|{rec['kernel']}"
        if key not in keys:
            keys[key] = len(keys)
            k_names.append(rec["kernel"])
            fam = family_of(rec["kernel"])
            if fam == "unknown" and rec.get("file"):
                fam = family_of(str(rec["file"]))
            k_fam.append(fam)
            k_gen.append(fam.startswith("gen-"))
            k_text.append(code)
        from clperf.predictor.model import profiles
        bw = profiles.peaks(device)[0]
        m = float(rec["median_ms"])
        rows.append(features.as_list(f, names))
        ys.append(rl.log_ratio(m, r.time_ms))
        cls.append(features.util_class(t.effective_bytes / (m * 1e-3) / (bw * 1e9)))
        roof.append(r.time_ms)
        meas.append(m)
        dram.append(t.effective_bytes)
        bws.append(bw)
        kidx.append(keys[key])
        devs.append(device.name)
        devices[device.name] = device.to_json()
    if progress:
        print(f"\rexamples {len(rows)} from {len(records)} records, {len(keys)} kernels "
              f"({time.monotonic() - t0:.0f} s); skipped: {dict(skipped) or 'none'}", file=sys.stderr)
    return Examples(np.asarray(rows, dtype=np.float32).reshape(len(rows), len(names)),
                    np.asarray(ys, dtype=np.float32), np.asarray(cls, dtype=np.int64),
                    np.asarray(roof), np.asarray(meas), np.asarray(dram), np.asarray(bws),
                    np.asarray(kidx, dtype=np.int64), devs, list(keys), k_names, k_fam, k_gen, k_text, names,
                    devices, dict(skipped))


def _analyze_one(job: tuple[str, str, str]) -> dict[str, Any]:
    from clperf.predictor.analysis.pipeline import analyze_text

    text, where, opts = job
    try:
        return {k.name: k for k in analyze_text(text, Path(where), opts).kernels}
    except Exception as e:  # noqa: BLE001 - one kernel that fails analysis is skipped, counted
        log.debug("analysis failed for %s: %s", where, e)
        return {}


def _analyze_all(records: list[dict[str, Any]], sources: Sources, progress: bool
                 ) -> dict[tuple[str, str], dict[str, Any]]:
    """Every distinct (source, build options) analysed once, on all cores (clang and the IR walk take
    0.1-0.3 s per file; a dataset has thousands)."""
    from concurrent.futures import ProcessPoolExecutor

    jobs: dict[tuple[str, str], tuple[str, str, str]] = {}
    for rec in records:
        text = sources.find(rec)
        if text is None:
            continue
        opts = str(rec.get("build_options", ""))
        key = (_sha(text), opts)
        if key not in jobs:
            jobs[key] = (text, str(rec.get("file") or "kernel.cl"), opts)
    keys = list(jobs)
    workers = max(1, os.cpu_count() or 1)
    if workers == 1 or len(keys) < 8:
        return {k: _analyze_one(jobs[k]) for k in keys}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    with ProcessPoolExecutor(workers, initializer=children.limit_self) as pool:  # they end with us
        for i, (k, rep) in enumerate(zip(keys, pool.map(_analyze_one, [jobs[k] for k in keys], chunksize=4),
                                         strict=True)):
            out[k] = rep
            if progress and i % 100 == 0:
                print(f"\ranalysed {i}/{len(keys)} sources", end="", file=sys.stderr)
    return out


_ARRAYS = ("X", "y", "cls", "roof_ms", "meas_ms", "dram_bytes", "peak_bw", "kernel")
_LISTS = ("device", "kernel_keys", "kernel_names", "kernel_family", "kernel_generated", "kernel_text",
          "names", "devices", "skipped")


def _save_examples(ex: Examples, d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(d / "arrays.npz", **{k: getattr(ex, k) for k in _ARRAYS})
    (d / "lists.json").write_text(json.dumps({k: getattr(ex, k) for k in _LISTS}))


def _load_examples(d: Path) -> Examples:
    with np.load(d / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in _ARRAYS}
    lists = json.loads((d / "lists.json").read_text())
    if lists["names"] != features.names():
        raise ValueError("feature names changed")
    return Examples(**arrays, **lists)


# --- split ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Split:
    test_families: tuple[str, ...]
    test_kernels: tuple[str, ...]  # generated kernels held out (by kernel key)
    val_families: tuple[str, ...]
    val_kernels: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) for k, v in self.__dict__.items()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Split:
        return cls(*(tuple(d[k]) for k in ("test_families", "test_kernels", "val_families", "val_kernels")))

    def assign(self, ex: Examples) -> np.ndarray:
        """Per row: 0 train, 1 validation, 2 test."""
        part = np.zeros(len(ex.kernel_keys), dtype=np.int64)
        tf, tk, vf, vk = (set(x) for x in (self.test_families, self.test_kernels, self.val_families,
                                            self.val_kernels))
        for i, (key, fam) in enumerate(zip(ex.kernel_keys, ex.kernel_family, strict=False)):
            if fam in tf or key in tk:
                part[i] = 2
            elif fam in vf or key in vk:
                part[i] = 1
        return part[ex.kernel]


def make_split(ex: Examples, test_share: float, seed: int, val_share: float = 0.1) -> Split:
    """Hold out whole hand-written families and single generated kernels, seeded."""
    rng = random.Random(seed)
    fams = sorted({f for f, g in zip(ex.kernel_family, ex.kernel_generated, strict=False) if not g})
    gens = sorted(k for k, g in zip(ex.kernel_keys, ex.kernel_generated, strict=False) if g)
    rng.shuffle(fams)
    rng.shuffle(gens)
    nt_f = round(len(fams) * test_share)
    nt_g = round(len(gens) * test_share)
    test_f, rest_f = fams[:nt_f], fams[nt_f:]
    test_g, rest_g = gens[:nt_g], gens[nt_g:]
    nv_f = max(1, round(len(rest_f) * val_share)) if len(rest_f) > 2 else 0
    nv_g = round(len(rest_g) * val_share)
    return Split(tuple(sorted(test_f)), tuple(sorted(test_g)), tuple(sorted(rest_f[:nv_f])),
                 tuple(sorted(rest_g[:nv_g])))


# --- fitting ----------------------------------------------------------------------------------------------

def torch_device(kind: str = "auto") -> Any:
    import torch

    if kind == "cuda" or (kind == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


@dataclass
class FitResult:
    model: Any
    norm: dict[str, Any]
    steps: int
    best_val: float
    history: list[dict[str, float]]


def normalisation(X: np.ndarray, names: list[str]) -> dict[str, Any]:
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std[std < 1e-6] = 1.0
    return {"names": names, "mean": mean.tolist(), "std": std.tolist()}


def encode_kernels(ex: Examples, tok: Any, max_len: int) -> list[list[int]]:
    from clperf.predictor.model import tokenizer
    return [tokenizer.encode(tok, t, max_len) for t in ex.kernel_text]


def fit(ex: Examples, part: np.ndarray, cfg: Any, *, tokens: list[list[int]] | None, minutes: float,
        epochs: int | None = None, seed: int = 0, device_type: str = "auto", progress: bool = False,
        lr: float = 1e-3, kernels_per_batch: int = 16, rows_per_kernel: int = 16,
        hand_weight: float = HAND_WEIGHT, threads: int | None = None) -> FitResult:
    """Train ``PerfNet(cfg)`` on rows with ``part == 0``; keep the best by validation loss (``part == 1``).

    Batches draw kernels, a hand-written one ``hand_weight`` times as often as a generated one: generated
    kernels outnumber the hand-written families about 7 to 1, and the kernels users write (and the public
    suites) look like the families, not like the generator's patterns."""
    import torch
    from clperf.predictor.model import network
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    dev = torch_device(device_type)
    # half the cores: on a shared machine, torch's threads spinning against other processes cost more than
    # they give (measured: 2 threads on a loaded 2-core machine ran several times slower than 1)
    torch.set_num_threads(threads or max(1, min(torch.get_num_threads(), (os.cpu_count() or 2) // 2)))
    train_rows = np.flatnonzero(part == 0)
    val_rows = np.flatnonzero(part == 1)
    if len(train_rows) == 0:
        raise InputError("no training examples (all held out or no usable records)")
    norm = normalisation(ex.X[train_rows], ex.names)
    mean = np.asarray(norm["mean"], dtype=np.float32)
    std = np.asarray(norm["std"], dtype=np.float32)
    Xn = torch.from_numpy((ex.X - mean) / std).float()
    y = torch.from_numpy(ex.y).float()
    c = torch.from_numpy(ex.cls).long()
    tok_all = network.pad_tokens(tokens, cfg.max_len) if tokens is not None else None
    by_kernel: dict[int, np.ndarray] = {}
    for k in np.unique(ex.kernel[train_rows]):
        by_kernel[int(k)] = train_rows[ex.kernel[train_rows] == k]
    train_kernels = np.asarray(sorted(by_kernel))
    weight = np.asarray([1.0 if ex.kernel_generated[int(k)] else hand_weight for k in train_kernels])
    kernel_p = weight / weight.sum()

    model = network.PerfNet(cfg).to(dev)
    enc_params = [p for n, p in model.named_parameters() if n.split(".")[0] in ("tok", "pos", "encoder")]
    other = [p for n, p in model.named_parameters() if n.split(".")[0] not in ("tok", "pos", "encoder")]
    opt = torch.optim.AdamW([{"params": other, "lr": lr}, {"params": enc_params, "lr": lr * 0.5}],
                            weight_decay=0.01)

    def batch() -> tuple[torch.Tensor, ...]:
        # kernels first, then launches of each (the features-only baseline draws the same way, so the two
        # differ only by the code encoder)
        ks = rng.choice(train_kernels, size=min(kernels_per_batch, len(train_kernels)), replace=False,
                        p=kernel_p)
        rows, kidx = [], []
        for j, k in enumerate(ks):
            r = by_kernel[int(k)]
            pick = rng.choice(r, size=min(rows_per_kernel, len(r)), replace=False)
            rows.append(pick)
            kidx.append(np.full(len(pick), j))
        rr = np.concatenate(rows)
        if not cfg.use_code:
            return Xn[rr], y[rr], c[rr], None, None  # type: ignore[return-value]
        toks = tok_all[torch.from_numpy(ks)]  # type: ignore[index]
        toks = toks[:, : int((toks != cfg.pad_id).sum(1).max())]
        return Xn[rr], y[rr], c[rr], toks, torch.from_numpy(np.concatenate(kidx))

    def val_loss() -> float:
        if len(val_rows) == 0:
            return float("nan")
        model.eval()
        with torch.no_grad():
            pred = predict(model, Xn, ex.kernel, val_rows, tok_all, dev)
        model.train()
        # mean absolute error of the log-ratio (clipped like the targets): what MAPE and the ordering follow,
        # not swayed by a few wild records the way a squared error is
        return float(np.mean(np.abs(pred - np.clip(ex.y[val_rows], *network.TARGET_CLIP))))

    def step() -> float:
        xb, yb, cb, tb, kb = batch()
        xb, yb, cb = xb.to(dev), yb.to(dev), cb.to(dev)
        tb = tb.to(dev) if tb is not None else None
        kb = kb.to(dev) if kb is not None else None
        pred, logits = model(xb, tb, kb)
        loss = network.loss_fn(pred, logits, yb, cb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss.detach())

    model.train()
    # The schedule runs on the clock, not on a step count: on a shared machine the time per step varies
    # several-fold, and a step count guessed up front either stops early or overruns the budget.
    steps_per_epoch = max(1, math.ceil(len(train_rows) / (kernels_per_batch * rows_per_kernel)))
    max_steps = epochs * steps_per_epoch if epochs is not None else None
    base_lrs = [g["lr"] for g in opt.param_groups]
    t0 = time.monotonic()
    budget = max(1.0, minutes * 60)
    warm = 0.03
    best: tuple[float, dict[str, Any] | None] = (float("inf"), None)
    history: list[dict[str, float]] = []
    running, since, s, last_val = 0.0, 0, 0, t0
    while True:
        frac = min(1.0, (time.monotonic() - t0) / budget)
        if max_steps is not None:
            frac = max(frac, s / max_steps)
        if frac >= 1.0:
            break
        scale = min(1.0, (frac + 1e-3) / warm) * 0.5 * (1 + math.cos(math.pi * frac))
        for g, lr0 in zip(opt.param_groups, base_lrs, strict=True):
            g["lr"] = lr0 * scale
        running += step()
        since += 1
        s += 1
        if time.monotonic() - last_val > max(20.0, budget / 20) or (max_steps is not None and s == max_steps):
            v = val_loss()
            last_val = time.monotonic()
            history.append({"step": s, "train_loss": running / since, "val_mae": v, "seconds": last_val - t0})
            running, since = 0.0, 0
            if not math.isnan(v) and v < best[0]:
                best = (v, {k: t.detach().clone() for k, t in model.state_dict().items()})
            if progress:
                print(f"\rstep {s} ({frac:.0%} of the budget) train {history[-1]['train_loss']:.3f} "
                      f"val mae {v:.3f} ({last_val - t0:.0f} s)", end="", file=sys.stderr)
    v = val_loss()
    if not math.isnan(v) and v < best[0]:
        best = (v, None)  # the final weights are the best
    total = s
    if progress:
        print(file=sys.stderr)
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.eval()
    return FitResult(model.cpu(), norm, total, best[0], history)


def predict(model: Any, Xn: Any, kernel: np.ndarray, rows: np.ndarray, tok_all: Any, dev: Any,
            chunk: int = 1024) -> np.ndarray:
    """Predicted log-ratios for ``rows`` (normalised features ``Xn``), kernels encoded once per chunk."""
    import torch
    from clperf.predictor.model import network
    out = np.empty(len(rows), dtype=np.float32)
    model.eval()
    with torch.no_grad():
        for a in range(0, len(rows), chunk):
            rr = rows[a:a + chunk]
            xb = Xn[rr].to(dev)
            if model.cfg.use_code and tok_all is not None:
                ks, inv = np.unique(kernel[rr], return_inverse=True)
                toks = tok_all[torch.from_numpy(ks)]
                toks = toks[:, : int((toks != model.cfg.pad_id).sum(1).max())]
                pred, _ = model(xb, toks.to(dev), torch.from_numpy(inv).to(dev))
            else:
                pred, _ = model(xb)
            out[a:a + len(rr)] = pred.float().clamp(*network.TARGET_CLIP).cpu().numpy()
    return out


def predict_examples(model: Any, norm: dict[str, Any], ex: Examples, rows: np.ndarray,
                     tokens: list[list[int]] | None) -> np.ndarray:
    import torch
    from clperf.predictor.model import network
    mean = np.asarray(norm["mean"], dtype=np.float32)
    std = np.asarray(norm["std"], dtype=np.float32)
    Xn = torch.from_numpy((ex.X - mean) / std).float()
    tok_all = network.pad_tokens(tokens, model.cfg.max_len) if tokens is not None else None
    return predict(model.cpu(), Xn, ex.kernel, rows, tok_all, torch.device("cpu"))


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


# --- the command ------------------------------------------------------------------------------------------

def _fit_member(job: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any], int, float, list[Any]]:
    """One ensemble member in a worker process; the weights come back as numpy arrays."""
    res = fit(**job)
    return ({k: v.numpy() for k, v in res.model.state_dict().items()}, res.norm, res.steps, res.best_val,
            res.history)


def fit_members(ex: Examples, part: np.ndarray, cfg: Any, *, tokens: list[list[int]] | None, minutes: float,
                members: int, seed: int, epochs: int | None = None, device_type: str = "auto",
                progress: bool = False) -> tuple[Any, list[FitResult]]:
    """``members`` networks from seeds ``seed, seed+1, ...`` on the same rows, as many at once as half the
    cores allow (each on ``device_type``), within ``minutes`` in all; returns the ensemble and the fits."""
    import concurrent.futures as cf
    import multiprocessing

    import torch
    from clperf.predictor.model import network
    if members == 1:
        res = fit(ex, part, cfg, tokens=tokens, minutes=minutes, epochs=epochs, seed=seed,
                  device_type=device_type, progress=progress)
        return res.model, [res]
    workers = min(members, max(1, (os.cpu_count() or 2) // 2))
    waves = math.ceil(members / workers)
    threads = max(1, (os.cpu_count() or 2) // (2 * workers))
    jobs = [dict(ex=ex, part=part, cfg=cfg, tokens=tokens, minutes=minutes / waves, epochs=epochs,
                 seed=seed + i, device_type=device_type, progress=progress and i == 0, threads=threads)
            for i in range(members)]
    # spawn, not fork: CUDA and torch's thread pools do not survive a fork
    with cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                initializer=children.limit_self) as pool:  # they end with us
        done = list(pool.map(_fit_member, jobs))
    fits = []
    for state, norm, steps, best_val, history in done:
        net = network.PerfNet(cfg)
        net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        fits.append(FitResult(net.eval(), norm, steps, best_val, history))
    ens = network.Ensemble(dataclasses.replace(cfg, members=members), [f.model for f in fits])
    return ens.eval(), fits


def run(data: Sequence[Path], out: Path, *, minutes: float = 12.0, epochs: int | None = None,
        test_share: float = 0.2, seed: int = 0, device_type: str = "auto", progress: bool = True,
        sources: Sequence[Path] = (), use_code: bool = True, members: int = 1,
        split_from: Path | None = None) -> dict[str, Any]:
    """Build examples, split, fit the network (or ``members`` of an ensemble), write the model folder;
    returns a summary."""
    from clperf.predictor.model import network, tokenizer
    t0 = time.monotonic()
    ex = build(data, sources=sources, progress=progress)
    if len(ex) == 0:
        raise InputError(f"no usable measurements in {', '.join(map(str, data))}: {ex.skipped}")
    if split_from is not None:  # the held-out split of an earlier model: kernels added since then train
        meta_path = split_from / "meta.json"
        if not meta_path.exists():
            raise InputError(f"--split-from {split_from}: no model there (no meta.json)")
        split = Split.from_json(json.loads(meta_path.read_text())["split"])
    else:
        split = make_split(ex, test_share, seed)
    part = split.assign(ex)
    train_k = sorted(set(ex.kernel[part == 0].tolist()))
    tok = tokenizer.train_tokenizer([ex.kernel_text[k] for k in train_k] +
                                    [p.read_text() for p in _family_files()])
    cfg = network.NetConfig(vocab_size=tok.get_vocab_size(), n_features=len(ex.names), use_code=use_code)
    tokens = encode_kernels(ex, tok, cfg.max_len) if use_code else None
    left = minutes - (time.monotonic() - t0) / 60
    model, fits = fit_members(ex, part, cfg, tokens=tokens, minutes=max(0.5, left), members=max(1, members),
                              seed=seed, epochs=epochs, device_type=device_type, progress=progress)
    norm = fits[0].norm  # the same rows, so the same normalisation for every member
    val = np.flatnonzero(part == 1)
    vpred = predict_examples(model, norm, ex, val, tokens)
    yv = np.clip(ex.y[val], *network.TARGET_CLIP)
    val_mae = float(np.mean(np.abs(vpred - yv))) if len(val) else math.nan
    version = time.strftime("%Y%m%d") + "-" + hashlib.sha256(
        b"".join(t.numpy().tobytes() for t in model.state_dict().values())).hexdigest()[:8]
    meta = {
        "name": MODEL_NAME, "version": version, "features_version": FEATURES_VERSION,
        "code_encoder": use_code,
        "devices": ex.devices,
        "intervals": residual_quantiles(ex, val, vpred),
        "roofline_intervals": residual_quantiles(ex, val, np.zeros(len(val), dtype=np.float32)),
        "split": split.to_json(), "seed": seed, "test_share": test_share,
        "data": [str(p) for p in data],
        "counts": {"examples": len(ex), "train": int((part == 0).sum()), "val": int((part == 1).sum()),
                   "test": int((part == 2).sum()), "kernels": len(ex.kernel_keys), "skipped": ex.skipped},
        "fit": {"steps": sum(f.steps for f in fits), "best_val_mae": val_mae,
                "minutes": (time.monotonic() - t0) / 60, "device": device_type,
                "members": [{"seed": seed + i, "steps": f.steps, "best_val_mae": f.best_val,
                             "history": f.history[-3:]} for i, f in enumerate(fits)]},
    }
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    network.save(model, out, norm, meta)
    (out / "VERSION").write_text(version + "\n")
    if progress:
        each = ", ".join(f"{f.best_val:.4f}" for f in fits)
        print(f"model {version}: {len(ex)} examples, {len(fits)} member(s) ({each}), "
              f"{sum(f.steps for f in fits)} steps, validation MAE {val_mae:.4f} (log-ratio), "
              f"written to {out}", file=sys.stderr)
    return {k: meta[k] for k in ("name", "version", "counts", "fit", "intervals")}


def _family_files() -> list[Path]:
    from clperf.benchmark import corpus
    return corpus.families()
