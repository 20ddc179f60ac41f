"""``TrainConfig``: every setting of a training run in one place, each with what it does and why it is so."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    # held-out split (whole hand-written families, single generated kernels)
    test_share: float = 0.2  # share of the families and of the generated kernels held out for testing
    val_share: float = 0.1  # share of the rest held out for validation (best checkpoint, intervals)
    seed: int = 0  # seeds the split, the batch draws and the weights; ensemble member i uses seed + i
    # budget
    minutes: float = 12.0  # wall-clock budget of the whole run: examples, tokenizer and fit
    min_fit_minutes: float = 0.5  # the fit's least time, even when building the examples used the budget
    epochs: int | None = None  # also stop after this many passes over the training rows (None: clock only)
    # network
    use_code: bool = True  # train the code encoder on the kernel's tokens (False: features only)
    members: int = 1  # networks in the ensemble, from seeds seed, seed + 1, ...
    agree: float = 0.2  # the ensemble's correction shrinks where its members disagree (NetConfig.agree)
    device_type: str = "auto"  # "cuda", "cpu", or "auto" (cuda when torch sees one)
    # optimiser: AdamW, linear warm-up then cosine annealing on the clock
    lr: float = 1e-3  # peak learning rate of the feature and head layers
    encoder_lr_scale: float = 0.5  # the code encoder (embeddings, transformer) learns at lr times this
    weight_decay: float = 0.01  # AdamW's decoupled weight decay
    grad_clip: float = 1.0  # largest gradient norm of a step: one batch of wild records cannot blow it up
    warmup: float = 0.03  # share of the budget over which the learning rate rises to its peak
    # batches: kernels first, then launches of each, so the code encoder runs once per kernel in a batch
    kernels_per_batch: int = 16  # kernels drawn per batch, without replacement
    rows_per_kernel: int = 16  # launches drawn per kernel, without replacement
    # a hand-written kernel is drawn this many times as often as a generated one: generated kernels outnumber
    # the families about 7 to 1, and the kernels users write (and the public suites) look like the families
    hand_weight: float = 3.0
    # a launch with a counting run's features is drawn this many times as often as a static launch of the same
    # kernel: `predict` answers from a counting run wherever one can be made, but the examples hold one traced
    # launch per kernel beside ~50 static ones, so at weight 1 the model sees 2% of what it is mostly asked
    traced_weight: float = 8.0
    # validation: on the clock, at least val_interval_s apart and at least val_checks times per budget
    val_interval_s: float = 20.0  # shortest time between two validations (each encodes every val kernel)
    val_checks: int = 20  # validations per budget when the budget is long
