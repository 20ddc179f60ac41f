"""``clperf evaluate``: the metrics mean what the report says, and the report is written for every model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clperf.predictor.training import evaluate


def test_metrics_reward_the_right_order_and_punish_the_reverse() -> None:
    meas = np.asarray([1.0, 2.0, 4.0, 8.0, 1.0, 3.0, 9.0])
    groups = np.asarray(["a"] * 4 + ["b"] * 3)
    cls = np.zeros(7, dtype=np.int64)
    exact = evaluate.metrics(meas, meas, groups, cls, cls)
    assert exact.mape == 0 and exact.pairwise == 1.0 and exact.spearman == pytest.approx(1.0)
    assert exact.within_10 == 1.0
    rev = evaluate.metrics(meas[::-1].copy(), meas, groups[::-1].copy(), cls, cls)
    off = evaluate.metrics(meas * 1.2, meas, groups, cls, np.ones(7, dtype=np.int64))
    assert off.mape == pytest.approx(0.2) and off.within_10 == 0 and off.within_25 == 1.0
    assert off.pairwise == 1.0 and off.bw_class == 0.0  # a constant factor keeps the order
    assert rev.pairwise is not None and rev.pairwise < 0.5


def test_pairs_within_the_noise_are_not_counted() -> None:
    good, total = evaluate.pairwise(np.asarray([2.0, 1.0]), np.asarray([1.0, 1.02]), np.random.default_rng(0))
    assert total == 0 and good == 0


def test_the_report_says_when_where_and_how_it_was_written() -> None:
    out = json.loads((Path(__file__).resolve().parents[2] / "reports" / "evaluation.json").read_text())
    out["written"] = {"date": "2026-12-02", "commit": "abc1234", "devices": ["NVIDIA H200"]}
    head = evaluate.render(out, {}).splitlines()[2]
    assert "`clperf evaluate --data data/h200 data/h200-large`" in head
    assert "on 2026-12-02, commit `abc1234`, for NVIDIA H200" in head
