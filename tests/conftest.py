"""Fixtures for every test: a private clperf state folder and the local PoCL device."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def clperf_home(tmp_path_factory: pytest.TempPathFactory):
    """Keep device caches and the measurement store of the tests out of the user's folder."""
    home = tmp_path_factory.mktemp("clperf_home")
    old = os.environ.get("CLPERF_HOME")
    os.environ["CLPERF_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("CLPERF_HOME", None)
    else:
        os.environ["CLPERF_HOME"] = old


@pytest.fixture(scope="session")
def pocl():
    """PoCL, the CPU OpenCL runtime every test machine has, its peaks measured (once per session, into the
    tests' private folder: predictions need them, whichever test runs first); tests that need it skip
    without it."""
    from clperf.benchmark.devices import select

    try:
        return select("pocl", measure=True)
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no PoCL device: {e}")
