"""Calibration: the user's stored measurements of a device correct later estimates for that device.

Uses real PoCL measurements (``data/pocl_map_float.jsonl``, taken by ``clperf sweep`` on this project's
CPU machine, of the kernels in ``data/map_float.cl``) and a device profile that overstates the peaks
eightfold: a systematic bias the roofline cannot know about.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from clperf.core.records import Measurement
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import calibration
from clperf.predictor.model.estimate import calibration_for, estimate

DATA = Path(__file__).parent / "data"
CALIBRATE_WITH = {"mapf_copy", "mapf_add", "mapf_poly8"}


def test_fit_is_the_median_shrunk_toward_zero_with_few_measurements() -> None:
    assert calibration.fit([]).measurements == 0
    one = calibration.fit([math.log(4.0)])
    many = calibration.fit([math.log(4.0)] * 30 + [math.log(100.0)])  # one outlier
    assert 0 < one.log_offset < math.log(4.0) / 2
    assert many.factor == pytest.approx(4.0, rel=0.12)
    assert calibration.fit([math.log(1e6)] * 50).factor == pytest.approx(calibration.MAX_FACTOR)


def test_calibration_cuts_the_error_on_a_biased_device(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLPERF_MODEL_DIR", str(tmp_path / "no-model"))  # the roofline, whatever ships
    monkeypatch.setenv("CLPERF_CACHE_DIR", str(tmp_path / "cache"))
    from clperf.core import store
    src = tmp_path / "map_float.cl"
    shutil.copy(DATA / "map_float.cl", src)
    text = src.read_text()
    kernels = {k.name: k for k in analyze_text(text, src).kernels}
    ms = [Measurement.from_json(json.loads(line)) for line in (DATA / "pocl_map_float.jsonl").open()]
    real = ms[0].device
    biased = replace(real, peak_bandwidth_gbs=real.peak_bandwidth_gbs * 8, peak_gflops=real.peak_gflops * 8)

    def errors(use: list[Measurement], calibrate: bool) -> list[float]:
        out = []
        for m in use:
            # the roofline (with the overstated peaks), not PoCL's own code, which needs no peaks
            est = estimate(kernels[m.kernel], m.scenario, biased, source=text, calibrate=calibrate)
            assert est.calibrated is calibrate
            out.append(abs(math.log(m.median_ms / est.time_ms)))
        return out

    held_out = [m for m in ms if m.kernel not in CALIBRATE_WITH]
    before = statistics.median(errors(held_out, calibrate=False))
    for m in ms:
        if m.kernel in CALIBRATE_WITH:
            store.record(replace(m, file=str(src)))
    n = sum(m.kernel in CALIBRATE_WITH for m in ms)
    cal = calibration_for(biased)
    assert cal.measurements == n and cal.log_offset > math.log(2)  # it saw the device is slower
    after = statistics.median(errors(held_out, calibrate=True))
    print(f"median |log error| before {before:.3f}, after {after:.3f}")
    assert after < 0.5 * before, (before, after)
    est = estimate(kernels["mapf_scale"], held_out[0].scenario, biased, source=text)
    assert est.calibration_measurements == n
