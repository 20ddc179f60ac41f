"""Timing statistics and the repetition policy: pure functions, expected values worked out by hand."""

from __future__ import annotations

import pytest

from clperf.benchmark.timing import Policy, iqr_filter, next_batch, should_stop, summarize


def test_iqr_filter_removes_a_high_outlier():
    # quartiles of [1,2,3,4,100] (linear): Q1=2, Q3=4, IQR=2 -> fences [-1, 7]
    kept, removed = iqr_filter([1.0, 2.0, 3.0, 4.0, 100.0])
    assert kept == [1.0, 2.0, 3.0, 4.0]
    assert removed == 1


def test_iqr_filter_removes_low_and_high_and_keeps_order():
    # [10,10,10,10,10,10,10,10,0.1,50]: Q1=Q3=10, IQR=0 -> only exactly 10 survives
    kept, removed = iqr_filter([10, 10, 0.1, 10, 10, 50, 10, 10, 10, 10])
    assert kept == [10.0] * 8
    assert removed == 2


def test_iqr_filter_keeps_values_on_the_fence():
    # [1,2,3,4,7]: Q1=2, Q3=4 -> upper fence 7 exactly, kept
    assert iqr_filter([1, 2, 3, 4, 7]) == ([1.0, 2.0, 3.0, 4.0, 7.0], 0)


def test_iqr_filter_leaves_short_series_alone():
    assert iqr_filter([1.0, 50.0, 1000.0]) == ([1.0, 50.0, 1000.0], 0)


def test_summarize_statistics_after_filtering():
    s = summarize([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0, 1000.0])
    # Q1=4, Q3=7, IQR=3 -> fences [-0.5, 11.5]: 1000 goes
    assert s.outliers_removed == 1 and s.kept == 8
    assert s.median_ms == pytest.approx(4.5)
    assert s.min_ms == 2.0
    assert s.mean_ms == pytest.approx(5.0)
    # sample std of [2,4,4,4,5,5,7,9] = sqrt(32/7)
    assert s.cv == pytest.approx((32 / 7) ** 0.5 / 5.0)


def test_summarize_single_value_has_zero_spread():
    s = summarize([3.5])
    assert (s.median_ms, s.min_ms, s.cv, s.outliers_removed) == (3.5, 3.5, 0.0, 0)


def test_summarize_refuses_nothing():
    with pytest.raises(ValueError):
        summarize([])


def test_policy_needs_minimum_repetitions_and_time():
    p = Policy(min_repetitions=10, max_repetitions=100, min_total_ms=5.0, max_wall_s=60, stable_rel=None)
    assert not should_stop([1.0] * 9, None, 0.0, p)  # too few
    assert not should_stop([0.1] * 20, None, 0.0, p)  # 2 ms < 5 ms
    assert should_stop([0.5] * 10, None, 0.0, p)
    assert should_stop([0.01] * 100, None, 0.0, p)  # capped


def test_policy_waits_for_a_stable_median():
    p = Policy(min_repetitions=4, max_repetitions=100, min_total_ms=0.0, max_wall_s=60, stable_rel=0.01)
    assert not should_stop([1.0, 1.0, 2.0, 2.0], 1.0, 0.0, p)  # median 1.5 moved 50 %
    assert should_stop([1.0, 1.0, 1.0, 1.01], 1.0, 0.0, p)
    assert should_stop([1.0, 1.0, 2.0, 2.0], 1.0, 61.0, p)  # out of wall time


def test_next_batch_reaches_count_and_time():
    p = Policy(min_repetitions=5, max_repetitions=100, min_total_ms=2.0, batch=100)
    assert next_batch([], 1.0, p) == 5  # count dominates
    assert next_batch([], 0.01, p) == 100  # 200 runs of 0.01 ms wanted, capped by max_repetitions
    assert next_batch([0.01] * 90, 0.01, p) == 10  # never past max_repetitions


def test_sweep_policy_is_time_bounded():
    p = Policy.sweep()
    assert p.min_repetitions >= 5 and p.min_total_ms == 2.0 and p.max_repetitions <= 200
    assert Policy.interactive().min_repetitions >= 10
    assert Policy.named("sweep") == p
    with pytest.raises(ValueError):
        Policy.named("nope")
