"""Datasets of measurements: JSON lines, optionally gzip-compressed (``.jsonl.gz``), append-only.

One record per line (schema in ``docs/benchmark.md``): a Measurement's JSON plus ``schema`` (the format
version), ``key`` (what makes a measurement unique: source hash, kernel, build options, scenario and
device, used to resume a sweep) and, for sweeps, ``sweep`` (variant index and the swept values).
Gzip files are appended as new gzip members, which every gzip reader concatenates. A record cut short by
a killed process (a partial line, a truncated gzip member) is skipped when reading, never fatal.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from clperf.core.records import Measurement, Scenario

SCHEMA = 1
STATUSES = ("ok", "build-error", "crash", "timeout", "invalid-scenario", "out-of-memory")


def record_key(source_hash: str, kernel: str, build_options: str, scenario: Scenario | dict[str, Any],
               device_key: str) -> str:
    """Identity of one measurement (not its result): equal keys mean "already measured"."""
    sc = scenario.to_json() if isinstance(scenario, Scenario) else scenario
    canon = json.dumps({"global": sc["global"], "local": sc.get("local"), "args": sc.get("args", {}),
                        "fills": sc.get("fills", {})}, sort_keys=True)
    text = "\x1f".join((source_hash, kernel, build_options, canon, device_key))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def to_record(m: Measurement, sweep: dict[str, Any] | None = None) -> dict[str, Any]:
    rec = m.to_json()
    rec["schema"] = SCHEMA
    rec["key"] = record_key(m.source_hash, m.kernel, m.build_options, m.scenario, m.device.key)
    if sweep is not None:
        rec["sweep"] = sweep
    return rec


def validate(record: dict[str, Any]) -> list[str]:
    """Problems that make a record unusable for training; empty when it is fine."""
    problems = []
    for name in ("kernel", "source_hash", "scenario", "status", "timestamp"):
        if not record.get(name):
            problems.append(f"missing {name}")
    status = record.get("status")
    if status and status not in STATUSES:
        problems.append(f"unknown status {status!r}")
    dev = record.get("device")
    if not isinstance(dev, dict) or not dev.get("name"):
        problems.append("missing device")
    elif not dev.get("driver"):
        problems.append("missing device driver")
    times = record.get("times_ms")
    if not isinstance(times, list):
        problems.append("missing raw repetitions (times_ms)")
    elif status == "ok":
        if not times:
            problems.append("status ok but no repetitions")
        elif not all(isinstance(t, (int, float)) and t >= 0 for t in times):
            problems.append("repetitions must be non-negative numbers")
        elif record.get("repetitions") not in (None, len(times)):
            problems.append("repetitions does not match times_ms")
        if record.get("median_ms") is None:
            problems.append("status ok but no median")
    sc = record.get("scenario")
    if isinstance(sc, dict) and not sc.get("global"):
        problems.append("scenario without a global size")
    return problems


def _open_append(path: Path) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "ab"), encoding="utf-8")
    return open(path, "a", encoding="utf-8")


class Writer:
    """Appends records to a dataset; ``flush()`` makes what was written so far durable and readable."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._f: IO[str] | None = None
        self.written = 0

    def write(self, record: dict[str, Any]) -> None:
        if self._f is None:
            self._f = _open_append(self.path)
        self._f.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.written += 1

    def flush(self) -> None:
        """Close the current gzip member (or flush the text file); the next write starts a new one."""
        if self._f is not None:
            self._f.close()
            self._f = None

    close = flush

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Append ``records``; returns how many were written."""
    with Writer(path) as w:
        for r in records:
            w.write(r)
        return w.written


def _lines(path: Path) -> Iterator[str]:
    if path.suffix != ".gz":
        with open(path, encoding="utf-8", errors="replace") as f:
            yield from f
        return
    # decompress member by member so a truncated last member costs only its own records
    data = path.read_bytes()
    pending = b""
    while data:
        d = zlib.decompressobj(wbits=31)
        try:
            chunk = d.decompress(data)
        except zlib.error:
            break
        pending += chunk
        if not d.eof:  # truncated member: keep its complete lines only
            break
        data = d.unused_data
    text = pending.decode("utf-8", "replace")
    yield from text.splitlines(keepends=True)


def read(path: str | Path) -> Iterator[dict[str, Any]]:
    """Records of a dataset in order; partial or unparsable lines are skipped."""
    p = Path(path)
    if not p.exists():
        return
    for line in _lines(p):
        if not line.endswith("\n"):
            continue  # cut short
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield rec


def keys(path: str | Path) -> set[str]:
    """Keys of the records already in a dataset (recomputed when a record lacks one)."""
    out = set()
    for rec in read(path):
        key = rec.get("key")
        if not key:
            try:
                key = record_key(rec["source_hash"], rec["kernel"], rec.get("build_options", ""),
                                 rec["scenario"], Measurement.from_json(rec).device.key)
            except (KeyError, TypeError, ValueError):
                continue
        out.add(key)
    return out
