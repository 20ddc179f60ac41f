"""Timing statistics and repetition policies.

Pure functions, no OpenCL: the worker collects kernel times from profiling events and these decide when
to stop repeating and what to report. Outliers are removed with Tukey's fences (1.5 IQR beyond the
quartiles); the raw repetitions are always kept next to the statistics so every figure can be recomputed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Stats:
    """Statistics of one measurement, computed on the repetitions left after outlier removal."""

    median_ms: float
    min_ms: float
    mean_ms: float
    cv: float  # sample standard deviation / mean of the kept repetitions (0 for a single one)
    kept: int
    outliers_removed: int


def iqr_filter(times: Sequence[float], k: float = 1.5) -> tuple[list[float], int]:
    """Keep values within ``[Q1 - k*IQR, Q3 + k*IQR]`` (quartiles by linear interpolation).

    Fewer than 4 values are returned unchanged: quartiles of 3 numbers say nothing about outliers.
    Returns the kept values in their original order and how many were removed.
    """
    values = [float(t) for t in times]
    if len(values) < 4:
        return values, 0
    q1, q3 = np.percentile(values, [25, 75])
    span = q3 - q1
    lo, hi = q1 - k * span, q3 + k * span
    kept = [t for t in values if lo <= t <= hi]
    return kept, len(values) - len(kept)


def summarize(times: Sequence[float]) -> Stats:
    """Median, minimum, mean and CV of ``times`` after the IQR filter."""
    if not times:
        raise ValueError("no repetitions to summarize")
    kept, removed = iqr_filter(times)
    arr = np.asarray(kept, dtype=np.float64)
    mean = float(arr.mean())
    cv = float(arr.std(ddof=1) / mean) if len(arr) > 1 and mean > 0 else 0.0
    return Stats(float(np.median(arr)), float(arr.min()), mean, cv, len(kept), removed)


@dataclass(frozen=True)
class Policy:
    """When to stop repeating a kernel.

    A run stops once it has ``min_repetitions`` timed runs, their kernel time adds up to ``min_total_ms``
    and (when ``stable_rel`` is set) the median moved less than ``stable_rel`` over the last batch; or
    when it reaches ``max_repetitions``; or, past ``min_repetitions``, after ``max_wall_s`` seconds.
    """

    warmup: int = 1  # untimed runs first: drivers compile lazily (PoCL specialises per local size)
    min_repetitions: int = 10
    max_repetitions: int = 1000
    min_total_ms: float = 100.0
    max_wall_s: float = 10.0
    stable_rel: float | None = 0.01
    batch: int = 20  # most kernels enqueued before waiting for them (keeps launch overhead out of the loop)

    @classmethod
    def interactive(cls) -> Policy:
        """``clperf bench``: at least 10 repetitions, 100 ms of kernel time and a stable median."""
        return cls()

    @classmethod
    def sweep(cls) -> Policy:
        """Dataset sweeps: at least 5 repetitions and 2 ms of kernel time, capped, no stability loop.

        Sized so that ~100,000 GPU measurements fit in tens of minutes: a 5 us kernel stops at the
        repetition cap (~0.5 ms of kernel time), a 1 ms kernel after 5 repetitions.
        """
        return cls(warmup=1, min_repetitions=5, max_repetitions=100, min_total_ms=2.0, max_wall_s=0.5,
                   stable_rel=None, batch=100)

    @classmethod
    def quick(cls) -> Policy:
        """Tests and smoke checks: a handful of repetitions."""
        return cls(warmup=1, min_repetitions=5, max_repetitions=20, min_total_ms=0.0, max_wall_s=2.0,
                   stable_rel=None, batch=10)

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, object]) -> Policy:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})  # type: ignore[arg-type]

    @classmethod
    def named(cls, name: str) -> Policy:
        try:
            return {"interactive": cls.interactive, "sweep": cls.sweep, "quick": cls.quick}[name]()
        except KeyError as e:
            raise ValueError(f"unknown policy {name!r}; use interactive, sweep or quick") from e


def next_batch(times: Sequence[float], estimate_ms: float, policy: Policy) -> int:
    """How many runs to enqueue next: enough to reach the minimum count and total time, within caps."""
    done = len(times)
    want_reps = policy.min_repetitions - done
    missing_ms = policy.min_total_ms - sum(times)
    if missing_ms > 0:
        want_reps = max(want_reps, math.ceil(missing_ms / max(estimate_ms, 1e-6)))
    if want_reps <= 0:
        want_reps = max(1, policy.min_repetitions // 2)  # only here because the median is still moving
    return max(1, min(want_reps, policy.batch, policy.max_repetitions - done))


def should_stop(times: Sequence[float], previous_median: float | None, wall_s: float, policy: Policy) -> bool:
    """Whether the repetitions so far satisfy ``policy`` (see :class:`Policy`)."""
    n = len(times)
    if n >= policy.max_repetitions:
        return True
    if n < policy.min_repetitions:
        return False
    if wall_s >= policy.max_wall_s:
        return True
    if sum(times) < policy.min_total_ms:
        return False
    if policy.stable_rel is None:
        return True
    if previous_median is None or previous_median <= 0:
        return False
    median = float(np.median(times))
    return abs(median - previous_median) / previous_median <= policy.stable_rel
