"""Calibration: the user's own measurements of a device correct later estimates for that device.

Every model is off on some device in a systematic way (a driver with a slow launch path, a CPU whose caches
the roofline misjudges). ``clperf bench`` stores each measurement locally (``clperf.core.store``); here
each stored measurement of the device is compared with what the model predicts for it, and the median
log-ratio ``log(measured / predicted)`` becomes a multiplicative correction.

The correction is shrunk toward zero with few measurements (``n / (n + SHRINK)``), so one noisy
measurement moves estimates a little and twenty move them nearly all the way; it is capped at a factor of
``MAX_FACTOR`` either way. The spread of the remaining log-ratios widens or narrows the interval.
"""

from __future__ import annotations

import logging
import math
import statistics
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from clperf.core import store
from clperf.core.records import Device, Estimate, Measurement
from clperf.predictor.model.roofline import cycles

log = logging.getLogger(__name__)

SHRINK = 3.0
MAX_FACTOR = 20.0


@dataclass(frozen=True)
class Calibration:
    """A per-device correction: multiply estimates by ``exp(log_offset)``."""

    log_offset: float
    measurements: int
    spread: float | None  # median absolute deviation of the log-ratios after correction

    @property
    def factor(self) -> float:
        return math.exp(self.log_offset)


NONE = Calibration(0.0, 0, None)


def fit(log_ratios: Sequence[float]) -> Calibration:
    """The robust, shrunk offset from ``log(measured / predicted)`` of each measurement."""
    r = [x for x in log_ratios if math.isfinite(x)]
    if not r:
        return NONE
    n = len(r)
    med = statistics.median(r)
    cap = math.log(MAX_FACTOR)
    offset = max(-cap, min(cap, med * n / (n + SHRINK)))
    spread = statistics.median(abs(x - offset) for x in r) if n >= 3 else None
    return Calibration(offset, n, spread)


def apply_to(est: Estimate, cal: Calibration, device: Device) -> Estimate:
    """``est`` corrected by ``cal`` (unchanged when no measurement calibrates it)."""
    if cal.measurements == 0:
        return est
    f = cal.factor
    t = est.time_ms * f
    lo, hi = est.interval_ms[0] * f, est.interval_ms[1] * f
    if cal.spread is not None:  # 1.5 x MAD of the calibrated residuals ~ a 10-90% band
        w = max(1.5 * cal.spread, 0.02)
        lo, hi = t * math.exp(-w), t * math.exp(w)
    util = min(1.0, est.bandwidth_utilization / f)
    return replace(est, time_ms=t, cycles=cycles(t, device), interval_ms=(lo, hi), bandwidth_utilization=util,
                   calibrated=True, calibration_measurements=cal.measurements)


def pairs(measurements: Iterable[Measurement],
          predict: Callable[[Measurement], float | None]) -> list[float]:
    """``log(measured / predicted)`` for each usable measurement (ok status, a median, a prediction)."""
    out: list[float] = []
    for m in measurements:
        if m.status != "ok" or not m.median_ms or m.median_ms <= 0:
            continue
        try:
            p = predict(m)
        except Exception as e:  # noqa: BLE001 - one unreadable measurement must not stop calibration
            log.debug("cannot predict measurement of %s: %s", m.kernel, e)
            p = None
        if p and p > 0:
            out.append(math.log(m.median_ms / p))
    return out


def stored_measurements(device: Device) -> list[Measurement]:
    """The user's stored measurements of ``device`` (none when the store cannot be read, with a note)."""
    try:
        return [m if isinstance(m, Measurement) else Measurement.from_json(m) for m in store.load(device.key)]
    except Exception as e:  # noqa: BLE001 - a broken store means: no calibration, with a note
        log.warning("cannot read stored measurements for %s: %s", device.name, e)
        return []


_lock = threading.Lock()
_memo: dict[tuple[Any, ...], Calibration] = {}


def for_device(device: Device, predict: Callable[[Measurement], float | None],
               model_version: Any = None) -> Calibration:
    """The calibration from the user's stored measurements of ``device``, each compared with ``predict``
    (the uncalibrated estimate of the model being calibrated, ``model_version``), memoised per store
    state and model."""
    ms = stored_measurements(device)
    if not ms:
        return NONE
    state = (device.key, len(ms), max(m.timestamp for m in ms), model_version)
    with _lock:
        if state in _memo:
            return _memo[state]
    cal = fit(pairs(ms, predict))
    with _lock:
        _memo[state] = cal
    return cal
