"""The learned predictor: a small transformer over the kernel's code, fused with a network over the numbers.

    tokens ──► embedding + positions ──► transformer encoder ──► token states (B, T, H) ─┐
                                                                                          │ attention:
    features (traffic, accesses, launch, device, roofline) ──► MLP ──► f (B, H) ── query ─┘ f asks the code
                                                                         │                   what matters
                                                       gate = σ(W[f; ctx]);  h = f + gate · ctx
                                                                         │
                                    ┌────────────────────────────────────┴───────────┐
                        log(measured / roofline) (MSE, 0.7)     bandwidth-utilisation class (CE, 0.3)

The regression head predicts a correction to the roofline, so an untrained network predicts the roofline.
The encoder is ``torch.nn.TransformerEncoder`` rather than ``transformers.BertModel``: importing
transformers costs about 3.4 s here, more than the whole 2 s load budget; the architecture is the same
(post-norm, GELU, learned positions). ``use_code=False`` gives the feature-only baseline.

Weights are saved as safetensors (no pickle) next to ``config.json``; a checkpoint describes itself.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from clperf.core import cache
from clperf.core.records import Device
from clperf.predictor.model import features, profiles, tokenizer


@dataclass
class NetConfig:
    vocab_size: int = 2100  # tokenizer vocabulary (BPE + keywords + specials)
    max_len: int = 192  # tokens per kernel; longer code is cut
    hidden: int = 128  # width of the code encoder and of the fused representation
    layers: int = 2  # transformer encoder layers
    heads: int = 4  # attention heads in the encoder and in the fusion
    ff: int = 256  # feed-forward width inside the encoder
    n_features: int = 64  # numeric features (features.names())
    n_classes: int = 4  # bandwidth-utilisation classes (features.UTIL_BINS + 1)
    dropout: float = 0.1
    # share of training rows that see no code context: 1140 kernels are few enough for the encoder to
    # memorise each one's offset (run 1: train MAE 0.06 vs validation 0.24); dropping the code for half the
    # rows makes the numeric path carry the estimate and the code only refine it
    code_dropout: float = 0.5
    use_code: bool = True  # False: the feature-only baseline (no encoder)
    pad_id: int = 0
    members: int = 1  # networks trained from different seeds on the same split, their log-ratios averaged
    # where the members disagree, the code is unlike what they learned from: the ensemble's correction is
    # shrunk towards the roofline by agree**2 / (agree**2 + the variance of the members' log-ratios); 0: not
    # shrunk. 0.2 (members' spread of about ±20%) is where the held-out hand-written families' mean abs log
    # error is lowest (docs/design-decisions.md)
    agree: float = 0.0


# log(measured / roofline) is clipped to this range for training and predictions are clamped to it: beyond
# e^-2..e^5 a record is an outlier of the analysis, not a signal to extrapolate
TARGET_CLIP = (-2.0, 5.0)
HUBER_DELTA = 0.3  # squared error inside ±0.3 (±35%), linear beyond: a few wild kernels do not dominate


class PerfNet(nn.Module):
    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        h = cfg.hidden
        self.feat = nn.Sequential(nn.Linear(cfg.n_features, 2 * h), nn.GELU(), nn.Dropout(cfg.dropout),
                                  nn.Linear(2 * h, h), nn.LayerNorm(h))
        if cfg.use_code:
            self.tok = nn.Embedding(cfg.vocab_size, h, padding_idx=cfg.pad_id)
            self.pos = nn.Embedding(cfg.max_len, h)
            # no dropout inside the encoder: on a CPU, dropout over (K, heads, T, T) attention weights costs
            # more than the attention itself; weight decay and the small size regularise it
            layer = nn.TransformerEncoderLayer(h, cfg.heads, cfg.ff, 0.0, activation="gelu", batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
            self.q = nn.Linear(h, h)  # fusion: the features ask, the code's tokens answer
            self.kv = nn.Linear(h, 2 * h)
            self.out = nn.Linear(h, h)
            self.gate = nn.Linear(2 * h, h)
        self.trunk = nn.Sequential(nn.Linear(h, h), nn.GELU(), nn.Dropout(cfg.dropout))
        self.reg = nn.Linear(h, 1)
        self.cls = nn.Linear(h, cfg.n_classes)
        nn.init.zeros_(self.reg.weight)  # start at the roofline
        nn.init.zeros_(self.reg.bias)

    def encode(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token states (K, T, H) and the padding mask (K, T) of K distinct kernels."""
        pad = tokens == self.cfg.pad_id  # (K, T)
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok(tokens) + self.pos(pos)[None]  # (K, T, H)
        return self.encoder(x, src_key_padding_mask=pad), pad

    def attend(self, f: torch.Tensor, states: torch.Tensor, pad: torch.Tensor,
               kernel_index: torch.Tensor) -> torch.Tensor:
        """Multi-head attention of each row's features (B, H) over its kernel's token states (K, T, H).

        Keys and values are projected once per kernel, then shared by the rows (launches) of that kernel.
        """
        nh = self.cfg.heads
        d = self.cfg.hidden // nh
        k, v = self.kv(states).chunk(2, dim=-1)  # (K, T, H) each
        K, T, _ = k.shape
        k, v = k.view(K, T, nh, d)[kernel_index], v.view(K, T, nh, d)[kernel_index]  # (B, T, nh, d)
        q = self.q(f).view(-1, nh, d)  # (B, nh, d)
        scores = torch.einsum("bhd,bthd->bht", q, k) / math.sqrt(d)  # (B, nh, T)
        scores = scores.masked_fill(pad[kernel_index][:, None, :], float("-inf"))
        attn = F.dropout(torch.softmax(scores, dim=-1), self.cfg.dropout, self.training)
        ctx = torch.einsum("bht,bthd->bhd", attn, v).reshape(-1, nh * d)  # (B, H)
        return self.out(ctx)

    def forward(self, x: torch.Tensor, tokens: torch.Tensor | None = None,
                kernel_index: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` (B, F) features; ``tokens`` (K, T) code of K kernels; ``kernel_index`` (B,) row -> kernel."""
        f = self.feat(x)  # (B, H)
        if self.cfg.use_code and tokens is not None and kernel_index is not None:
            ctx = self.attend(f, *self.encode(tokens), kernel_index)  # (B, H)
            g = torch.sigmoid(self.gate(torch.cat([f, ctx], dim=-1)))  # (B, H)
            if self.training and self.cfg.code_dropout > 0:
                keep = (torch.rand(f.shape[0], 1, device=f.device) >= self.cfg.code_dropout).to(f.dtype)
                g = g * keep
            f = f + g * ctx
        h = self.trunk(f)  # (B, H)
        return self.reg(h)[:, 0], self.cls(h)  # (B,), (B, C)


class Ensemble(nn.Module):
    """Members of one configuration, trained from different seeds on the same split and tokenizer: the
    prediction is the mean of their log-ratios (a geometric mean of times), shrunk where they disagree
    (``NetConfig.agree``), the class the mean of their logits. Members err differently on a kernel family
    none of them has seen, so the mean errs less, and their spread tells how far to trust it."""

    def __init__(self, cfg: NetConfig, members: list[PerfNet] | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.members = nn.ModuleList(members or [PerfNet(cfg) for _ in range(cfg.members)])

    def forward(self, x: torch.Tensor, tokens: torch.Tensor | None = None,
                kernel_index: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        outs = [m(x, tokens, kernel_index) for m in self.members]
        preds = torch.stack([o[0] for o in outs])
        pred = preds.mean(0)
        if self.cfg.agree > 0 and len(outs) > 1:
            pred = pred * self.cfg.agree ** 2 / (self.cfg.agree ** 2 + preds.var(0, unbiased=False))
        return pred, torch.stack([o[1] for o in outs]).mean(0)


def build_model(cfg: NetConfig) -> PerfNet | Ensemble:
    return Ensemble(cfg) if cfg.members > 1 else PerfNet(cfg)


def loss_fn(pred: torch.Tensor, logits: torch.Tensor, y: torch.Tensor, c: torch.Tensor,
            w_reg: float = 0.7) -> torch.Tensor:
    """Regression (0.7) plus cross-entropy on the bandwidth class (0.3). The regression is half Huber on the
    clipped log-ratio, half the relative error of the time itself (|predicted / measured - 1|, what MAPE
    averages): in log space an overestimate by x2 and an underestimate by x2 weigh the same, in MAPE the
    overestimate costs twice as much, so the second term leans the model toward the MAPE-optimal side."""
    yc = y.clamp(*TARGET_CLIP)
    rel = (torch.exp((pred - yc).clamp(-3.0, 3.0)) - 1.0).abs()
    reg = 0.5 * F.huber_loss(pred, yc, delta=HUBER_DELTA) / HUBER_DELTA + 0.5 * rel.mean()
    return w_reg * reg + (1 - w_reg) * F.cross_entropy(logits, c)


def pad_tokens(seqs: list[list[int]], max_len: int, pad_id: int = 0) -> torch.Tensor:
    t = max(1, min(max_len, max((len(s) for s in seqs), default=1)))
    out = torch.full((len(seqs), t), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        s = s[:t]
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def save(model: PerfNet | Ensemble, directory: Path, norm: dict[str, Any], meta: dict[str, Any]) -> None:
    """Weights (safetensors), config, feature normalisation and meta into ``directory``."""
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(directory / "model.safetensors"))
    (directory / "config.json").write_text(json.dumps(asdict(model.cfg), indent=2))
    (directory / "normalisation.json").write_text(json.dumps(norm))
    (directory / "meta.json").write_text(json.dumps(meta, indent=2))


class Predictor:
    """A loaded model with its tokenizer and normalisation, answering one kernel and scenario at a time."""

    def __init__(self, model: PerfNet | Ensemble, tok: Any, norm: dict[str, Any],
                 meta: dict[str, Any]) -> None:
        self.model = model.eval()
        self.tok = tok
        self.names: list[str] = norm["names"]
        self.mean = np.asarray(norm["mean"], dtype=np.float32)
        self.std = np.asarray(norm["std"], dtype=np.float32)
        self.meta = meta
        self._codes: dict[tuple[str, str], torch.Tensor] = {}  # (source hash, kernel) -> (1, T) tokens
        self._texts: dict[tuple[str, str], str] = {}  # (source hash, kernel) -> tokenizer.kernel_text
        # (feature row, kernel text) -> network output: the network's whole input, so an edit elsewhere in
        # the file (a comment, another kernel) re-uses the answer instead of running the network again
        self._answers: OrderedDict[tuple[bytes, str], tuple[float, int]] = OrderedDict()

    @classmethod
    def load(cls, directory: Path) -> Predictor:
        from safetensors.torch import load_file


        cfg = NetConfig(**json.loads((directory / "config.json").read_text()))
        model = build_model(cfg)
        model.load_state_dict(load_file(str(directory / "model.safetensors")))
        torch.set_num_threads(max(1, min(torch.get_num_threads(), 4)))
        tok = tokenizer.load(directory / "tokenizer.json") if cfg.use_code else None
        norm = json.loads((directory / "normalisation.json").read_text())
        meta = json.loads((directory / "meta.json").read_text())
        return cls(model, tok, norm, meta)

    def code_for(self, source: str, kernel: str) -> str:
        k = (cache.source_hash(source), kernel)
        if k not in self._texts:
            if len(self._texts) > 256:
                self._texts.clear()
            self._texts[k] = tokenizer.kernel_text(source, kernel)
        return self._texts[k]

    def tokens_for(self, source: str, kernel: str) -> torch.Tensor | None:
        if not self.model.cfg.use_code:
            return None
        k = (cache.source_hash(source), kernel)
        if k not in self._codes:
            ids = tokenizer.encode(self.tok, tokenizer.kernel_text(source, kernel), self.model.cfg.max_len)
            if len(self._codes) > 256:
                self._codes.clear()
            self._codes[k] = pad_tokens([ids], self.model.cfg.max_len)
        return self._codes[k]

    def normalise(self, rows: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(((rows - self.mean) / self.std).astype(np.float32))

    @torch.no_grad()
    def predict_rows(self, rows: np.ndarray, tokens: torch.Tensor | None,
                     kernel_index: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Log-ratio corrections (B,) and class probabilities (B, C) for raw feature rows."""
        ki = torch.from_numpy(kernel_index).long() if kernel_index is not None else None
        pred, logits = self.model(self.normalise(rows), tokens, ki)
        return pred.clamp(*TARGET_CLIP).numpy(), torch.softmax(logits, -1).numpy()

    def predict_one(self, kernel: Any, scenario: Any, device: Any, source: str, base: Any,
                    traffic: Any) -> dict[str, Any]:
        """Time and bandwidth utilisation for one kernel and scenario (``base`` is the roofline estimate)."""

        trained = self.meta.get("devices", {}).get(device.name)
        dev = Device.from_json(trained) if trained else device  # the peaks the model was trained with
        f, t, r = features.compute(kernel, scenario, dev, self.code_for(source, kernel.name), traffic)
        row = np.asarray([features.as_list(f, self.names)], dtype=np.float32)
        key = (row.tobytes(), self.code_for(source, kernel.name) if self.model.cfg.use_code else "")
        answer = self._answers.get(key)
        if answer is None:
            tokens = self.tokens_for(source, kernel.name)
            index = np.zeros(1, dtype=np.int64) if tokens is not None else None
            pred, probs = self.predict_rows(row, tokens, index)
            answer = self._answers[key] = (float(pred[0]), int(np.argmax(probs[0])))
            while len(self._answers) > 2048:
                self._answers.popitem(last=False)
        else:
            self._answers.move_to_end(key)
        time_ms = r.time_ms * math.exp(answer[0])
        bw = profiles.peaks(dev)[0] * 1e6  # bytes per ms
        return {"time_ms": time_ms, "bandwidth_utilization": min(1.0, t.effective_bytes / time_ms / bw),
                "util_class": answer[1], "floor_ms": r.floor_ms,
                "roofline_ms": r.time_ms, "memory_ms": r.memory_ms, "compute_ms": r.compute_ms}
