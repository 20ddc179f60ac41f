"""The benchmark tests run on PoCL (the state folder fixture is in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def device(pocl):
    return pocl
