"""Where clperf keeps per-user state: device profiles, measurements, the prediction cache."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$CLPERF_HOME``, else ``$XDG_CACHE_HOME/clperf``, else ``~/.cache/clperf``. Created on demand."""
    env = os.environ.get("CLPERF_HOME")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "clperf"
    return base


def ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
