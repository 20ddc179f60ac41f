"""Scenario problems become one clear invalid-scenario or out-of-memory result, without running."""

from __future__ import annotations

from pathlib import Path

import pytest
from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy

from clperf.core.scenario import parse_flags

SRC = (Path(__file__).parent / "data" / "faulty.cl").read_text()


@pytest.mark.parametrize("flags,status,words", [
    ("--global 256 --arg nope=3", "invalid-scenario", "no parameter named 'nope'"),
    ("--global 256 --arg n=m*2", "invalid-scenario", "unknown name 'm'"),
    ("--global 256 --arg n=(", "invalid-scenario", "bad expression"),
    ("--global 100 --local 64", "invalid-scenario", "not a multiple"),
    ("--global 65536 --local 65536", "invalid-scenario", "exceeds the device limit"),
    ("--global 256 --arg out=1<<50", "out-of-memory", "MiB"),
    ("--global 256 --arg n=2.5", "invalid-scenario", "integer"),
])
def test_scenario_errors(device, flags, status, words):
    m = benchmark(SRC, "fine", parse_flags(flags), device, policy=Policy.quick(), timeout_s=30)
    assert m.status == status, m.error
    assert words in (m.error or "")
    assert m.times_ms == ()


def test_defaults_are_named(device):
    m = benchmark(SRC, "fine", parse_flags("--global 512"), device, policy=Policy.quick(), timeout_s=30)
    assert m.status == "ok", m.error
    assert set(m.scenario.defaulted) == {"out", "n"}
    assert m.scenario.args == {"out": 512, "n": 512}
