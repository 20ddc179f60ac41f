"""The local measurement store: every successful ``clperf bench`` run, for the predictor's calibration.

JSON lines under ``state_dir()/measurements.jsonl``, one Measurement per line, appended under an
advisory lock so a server and a terminal can both write. Lines that do not parse (a write cut short)
are skipped when reading.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

from clperf.paths import ensure, state_dir
from clperf.records import Measurement


def store_path() -> Path:
    return state_dir() / "measurements.jsonl"


def record(m: Measurement) -> None:
    """Append ``m`` to the store."""
    path = store_path()
    ensure(path.parent)
    line = json.dumps(m.to_json(), separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.write(line)
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def load(device_key: str | None = None) -> list[Measurement]:
    """Stored measurements, oldest first; only those of ``device_key`` (``Device.key``) when given."""
    path = store_path()
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                m = Measurement.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue
            if device_key is None or m.device.key == device_key:
                out.append(m)
    return out
