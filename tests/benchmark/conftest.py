"""The benchmark tests run on PoCL (the state folder fixture is in tests/conftest.py)."""

from __future__ import annotations

import functools

import pytest

from clperf.predictor.model import core_run


@functools.cache
def core_timing_problem() -> str | None:
    """Why this host's core cannot be timed in core cycles as ``core_run`` assumes, or None: a run of four
    independent chains of adds must take well under the time of one dependent chain of as many (every
    out-of-order x86-64 core runs them side by side). A virtualised or oversubscribed core whose timings
    do not show that gives numbers no test of core-cycle facts can judge."""
    if core_run.compiler() is None:
        return "needs x86-64 and a C compiler"
    chain = core_run.cycles(["addq $1, %rax"] * 64)
    spread = core_run.cycles([f"addq $1, %r{k}" for k in (8, 9, 10, 11)] * 16)
    if chain is None or spread is None or spread >= 0.6 * chain:
        return ("this host's core timings do not resolve instruction-level parallelism (one chain of 64 adds "
                f"{chain or 0:.0f} cycles, four side by side {spread or 0:.0f}): core-cycle facts cannot be "
                "checked here")
    return None


@pytest.fixture()
def needs_core_timing() -> None:
    """Skip a test of core-cycle facts on a host whose core timings cannot resolve them."""
    problem = core_timing_problem()
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="session")
def device(pocl):
    return pocl
