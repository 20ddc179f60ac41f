"""The held-out split: whole hand-written kernel families (no family on both sides) and a share of the
generated kernels are held out for testing; validation (best checkpoint, intervals) is cut from the rest the
same way. A model's meta stores its split, so ``clperf evaluate`` and ``train --split-from`` reuse it."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from clperf.predictor.training.examples import Examples

TRAIN, VAL, TEST = 0, 1, 2  # the parts ``Split.assign`` gives each row


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
                part[i] = TEST
            elif fam in vf or key in vk:
                part[i] = VAL
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
    # at least one validation family once there are enough to spare one (the best checkpoint needs it)
    nv_f = max(1, round(len(rest_f) * val_share)) if len(rest_f) > 2 else 0
    nv_g = round(len(rest_g) * val_share)
    return Split(tuple(sorted(test_f)), tuple(sorted(test_g)), tuple(sorted(rest_f[:nv_f])),
                 tuple(sorted(rest_g[:nv_g])))
