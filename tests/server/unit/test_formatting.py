"""Numbers as the lenses, hover and hints print them (``clperf.server.formatting``)."""

from __future__ import annotations

from clperf.core import units as fmt


def test_a_time_under_a_tenth_of_a_millisecond_is_printed_in_microseconds() -> None:
    assert fmt.ms(0.00654) == "6.54 µs"
    assert fmt.ms(0.0999) == "99.9 µs"
    assert fmt.ms(0.1) == "0.1 ms"


def test_nanosecond_times_stay_in_microseconds() -> None:
    # there is no ns unit: a kernel that short is shown as a fraction of a microsecond
    assert fmt.ms(0.0005) == "0.5 µs"
    assert fmt.ms(1e-6) == "0.001 µs"


def test_milliseconds_keep_three_digits_below_100_ms_and_seconds_start_at_1000_ms() -> None:
    assert fmt.ms(0.84) == "0.84 ms"
    assert fmt.ms(99.94) == "99.9 ms"
    assert fmt.ms(100) == "100 ms"
    assert fmt.ms(999.4) == "999 ms"
    assert fmt.ms(1000) == "1 s"
    assert fmt.ms(2500) == "2.5 s"


def test_counts_and_sizes_take_a_metric_prefix_from_one_thousand() -> None:
    assert fmt.count(999) == "999"
    assert fmt.count(1000) == "1 k"
    assert fmt.count(1.66e6) == "1.66 M"
    assert fmt.count(2.5e9) == "2.5 G"
    assert fmt.count(-1500) == "-1.5 k"
    assert fmt.size(512) == "512 B"
    assert fmt.size(48.2e6) == "48.2 MB"


def test_a_count_that_rounds_up_to_the_next_prefix_takes_that_prefix() -> None:
    assert fmt.count(999_600) == "1 M"  # not "1e+03 k", as a lens would read "1e+03 k cycles"
    assert fmt.count(999.6) == "1 k"
    assert fmt.ms(999.6) == "1 s"


def test_shares_sizes_and_arguments_as_the_hover_prints_them() -> None:
    assert fmt.percent(0.62) == "62%"
    assert fmt.percent(1.0) == "100%"
    assert fmt.dims((64, 64)) == "64×64"
    assert fmt.dims(None) == "runtime's choice"
    assert fmt.args({"a": 4096, "n": 7, "alpha": 0.5}) == "a=4096, n=7, alpha=0.5"
    assert fmt.args({}) == ""
