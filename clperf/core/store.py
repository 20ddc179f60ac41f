"""The local measurement store: every successful ``clperf bench`` run, for the predictor's calibration.

JSON lines under ``state_dir()/measurements.jsonl``, one Measurement per line, appended under an
advisory lock so a server and a terminal can both write. Each line is checked when read (the fields
calibration and hovers use: known status, text where text belongs, finite times that are not negative);
lines that do not parse or check (a write cut short, an edit, another program's) are skipped with one
warning naming the file. A store that cannot be written raises ``NotStored``: the caller shows the
measurement it has and says it was not stored.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
from pathlib import Path
from typing import Any, get_args

from clperf.core.errors import ClperfError
from clperf.core.paths import ensure, state_dir
from clperf.core.records import Measurement, Status

log = logging.getLogger(__name__)

_STATUSES = frozenset(get_args(Status))


class NotStored(ClperfError, OSError):
    """The store could not be written (a read-only or full state folder); the message says why."""


def store_path() -> Path:
    return state_dir() / "measurements.jsonl"


def record(m: Measurement) -> None:
    """Append ``m`` to the store; NotStored when it cannot be written (the store is left as it was)."""
    path = store_path()
    line = (json.dumps(m.to_json(), separators=(",", ":"), allow_nan=False) + "\n").encode()
    try:
        ensure(path.parent)
        with open(path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                start = f.seek(0, 2)
                if start:  # a line cut short by an earlier crash must not swallow this one
                    f.seek(start - 1)
                    if f.read(1) != b"\n":
                        line = b"\n" + line
                try:
                    f.write(line)
                    f.flush()
                except OSError:
                    with contextlib.suppress(OSError):
                        f.truncate(start)  # no half line left behind on a full disk
                    raise
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
    except (FileExistsError, NotADirectoryError) as e:
        raise NotStored(f"cannot write {path}: {e.filename or path.parent} is not a folder") from e
    except IsADirectoryError as e:
        raise NotStored(f"cannot write {path}: it is a folder") from e
    except OSError as e:  # read-only (EROFS, EACCES), full (ENOSPC, EDQUOT)
        raise NotStored(f"cannot write {path}: {e.strerror or e}") from e


def _text(d: dict[str, Any], name: str, optional: bool = False) -> None:
    x = d.get(name)
    if not (isinstance(x, str) or (optional and x is None)):
        raise TypeError(f"{name} is not text")


def _number(x: Any, name: str, optional: bool = False) -> None:
    if optional and x is None:
        return
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} is not a finite number, at least 0")


def _size(x: Any, name: str) -> None:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise ValueError(f"{name} is not a positive integer")


def checked(d: Any) -> Measurement:
    """One stored line's JSON as a Measurement, when its fields have the types and ranges readers rely on;
    else ValueError, TypeError or KeyError saying what is wrong."""
    if not isinstance(d, dict):
        raise TypeError("not an object")
    for name in ("kernel", "source_hash", "timestamp"):
        _text(d, name)
    for name in ("file", "build_options", "clperf_version"):
        if name in d:
            _text(d, name)
    _text(d, "error", optional=True)
    if d["status"] not in _STATUSES:
        raise ValueError(f"unknown status {str(d['status'])[:40]!r}")
    dev, sc = d["device"], d["scenario"]
    if not (isinstance(dev, dict) and isinstance(sc, dict)):
        raise TypeError("device or scenario is not an object")
    for name in ("name", "platform", "driver"):
        _text(dev, name)
    for name in ("peak_bandwidth_gbs", "peak_gflops"):
        _number(dev.get(name), f"device {name}", optional=True)
    if not (isinstance(sc.get("global"), list) and sc["global"]):
        raise TypeError("scenario global is not a list of sizes")
    for x in sc["global"] + (sc.get("local") or []):
        _size(x, "a launch size")
    if not isinstance(sc.get("args", {}), dict):
        raise TypeError("scenario args is not an object")
    for name, v in sc.get("args", {}).items():
        _number(abs(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v, f"argument {name}")
    times = d.get("times_ms", [])
    if not isinstance(times, list):
        raise TypeError("times_ms is not a list")
    for t in times:
        _number(t, "a time")
    for name in ("median_ms", "min_ms", "cv"):
        _number(d.get(name), name, optional=True)
    if d["status"] == "ok" and d.get("median_ms") is None:
        raise ValueError("an ok measurement without a median")
    return Measurement.from_json(d)


def load(device_key: str | None = None) -> list[Measurement]:
    """Stored measurements, oldest first; only those of ``device_key`` (``Device.key``) when given."""
    path = store_path()
    if not path.exists():
        return []
    if not path.is_file():
        log.warning("ignoring the measurement store %s: not a regular file", path)
        return []
    out, bad, first = [], 0, ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    m = checked(json.loads(line))
                except (ValueError, KeyError, TypeError) as e:
                    bad += 1
                    first = first or f"line {n}: {e}"
                    continue
                if device_key is None or m.device.key == device_key:
                    out.append(m)
    except OSError as e:
        log.warning("cannot read the measurement store %s: %s", path, e.strerror or e)
        return []
    if bad:
        log.warning("ignored %d invalid line(s) of the measurement store %s (first: %s)", bad, path,
                    first[:160].replace("\n", " "))
    return out
