"""Counting runs on disk: a row of the prediction cache per run, its trace in a file of its own.

The row (``clperf.core.cache``: JSON text in the database, checked on read) holds the counts, or the
reason a run gave none (a kernel that does not build, crashes or never finishes costs its budget once).
A trace is up to tens of MB, over what a row holds, so it is a ``.npy`` file under
``state_dir()/counting`` named by the run's key, and the row holds its sha256 and length: a file that
is missing, changed, not a plain file or not of ``TRACE_DTYPE`` is a miss and the run is made again.
The files are read with ``allow_pickle=False``; the oldest are deleted past ``TRACE_FOLDER_BYTES``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clperf.benchmark.counting.records import Counts
from clperf.benchmark.counting.trace import TRACE_DTYPE
from clperf.core import cache, paths

log = logging.getLogger(__name__)

TRACE_FOLDER_BYTES = 1 << 30


@dataclass(frozen=True)
class Failed:
    """A cached run that gave no counts, and why."""

    reason: str


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class CountStore:
    """get/put of counting runs by key; ``rows`` defaults to the per-user cache, ``folder`` (the traces,
    the oldest deleted past ``max_bytes``) to ``counting`` in the state folder."""

    def __init__(self, rows: cache.JsonCache | None = None, folder: Path | None = None,
                 max_bytes: int = TRACE_FOLDER_BYTES) -> None:
        self.rows = rows if rows is not None else cache.default()
        self.folder = folder if folder is not None else paths.state_dir() / "counting"
        self.max_bytes = max_bytes

    def get(self, key: str) -> Counts | Failed | None:
        return self.rows.get("counting:" + key, lambda v: self._parse(key, v))

    def _parse(self, key: str, value: Any) -> Counts | Failed | None:
        if "failed" in value:
            return Failed(str(value["failed"]))
        meta = value["trace"]
        trace = None
        if meta is not None:
            trace = self._trace(key, str(meta["sha256"]), int(meta["records"]))
            if trace is None:
                return None  # the counts without their trace: made again
        return Counts.from_json(value["counts"], trace).as_cached()

    def _trace(self, key: str, sha256: str, records: int) -> np.ndarray | None:
        path = self.folder / f"{key}.npy"
        try:
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode) or _sha256(path) != sha256:
                raise ValueError("missing or changed")
            trace = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            log.info("counting cache: trace %s unusable (%s); counting again", path.name, e)
            return None
        if trace.dtype != TRACE_DTYPE or trace.shape != (records,):
            return None
        return trace

    def put(self, key: str, result: Counts | Failed) -> None:
        if isinstance(result, Failed):
            self.rows.set("counting:" + key, {"failed": result.reason})
            return
        meta = None
        if result.trace is not None:
            meta = self._write_trace(key, result.trace)
            if meta is None:
                return
        self.rows.set("counting:" + key, {"counts": result.to_json(), "trace": meta})

    def _write_trace(self, key: str, trace: np.ndarray) -> dict[str, Any] | None:
        target = self.folder / f"{key}.npy"
        part: str | None = None
        try:
            paths.ensure(self.folder)
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".part", delete=False) as f:
                part = f.name
                np.save(f, np.ascontiguousarray(trace, TRACE_DTYPE), allow_pickle=False)
            os.replace(part, target)  # whole or absent, whoever reads it
            part = None
            meta = {"sha256": _sha256(target), "records": len(trace)}
            self._trim()
        except OSError as e:
            log.warning("counting cache: trace not stored (%s)", e)
            return None
        finally:
            if part is not None:
                Path(part).unlink(missing_ok=True)
        return meta

    def _trim(self) -> None:
        """Delete the oldest traces while the folder holds more than ``max_bytes``."""
        files = sorted((p.stat().st_mtime, p.stat().st_size, p) for p in self.folder.glob("*.npy")
                       if p.is_file() and not p.is_symlink())
        total = sum(size for _, size, _ in files)
        for _, size, p in files[:-1]:
            if total <= self.max_bytes:
                break
            p.unlink(missing_ok=True)
            total -= size
