"""The prediction cache: diskcache on disk, JSON text held in the database rows, every row checked on read.

Keys hash everything a prediction depends on (source, build options, kernel, scenario, device, model
version). The cache directory may hold rows another program wrote, so a row is data to check, never an
instruction to follow:

- values are JSON text kept in the row itself, never in a file of their own (``InlineJsonDisk``): diskcache
  reads the file a row names on fetch and deletes it when the row is culled, evicted or replaced, and an
  absolute name reaches outside the cache. A row that names a file, or holds a pickle or bytes, is a miss
  and is deleted from the database; ``InlineJsonDisk.remove`` deletes nothing outside the cache directory
  (real paths, so a symlink leading out counts as outside);
- a value that is not JSON, holds NaN or infinities, or is not of the shape the caller needs (``get``'s
  ``parse``) is a miss with one warning and its row is deleted, so the estimate is recomputed and stored;
- diskcache reads its settings back from the database (``sqlite_*`` ones become PRAGMAs, ``disk_*`` ones
  attributes of the Disk): every setting is passed explicitly, and names it does not know are deleted.

A cache that cannot be opened or written (corrupt database, read-only directory, full disk) turns into no
cache with one warning; estimates go on without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

import diskcache
from diskcache.core import DEFAULT_SETTINGS, METADATA, MODE_RAW, UNKNOWN

from clperf.core import paths

log = logging.getLogger(__name__)

T = TypeVar("T")

_SIZE_LIMIT = 64 * 2**20
VALUE_LIMIT = 2**20  # characters of one JSON value; a larger one is not cached

# Every setting diskcache knows, with clperf's values: none is taken from the database.
_SETTINGS: dict[str, Any] = {
    **DEFAULT_SETTINGS,
    "size_limit": _SIZE_LIMIT,
    "eviction_policy": "least-recently-stored",
    "statistics": 0,
    "disk_min_file_size": VALUE_LIMIT + 1,  # InlineJsonDisk ignores it; set so no plain Disk writes files
}
_KNOWN_SETTINGS = frozenset(_SETTINGS) | frozenset(METADATA)


class RefusedRow(ValueError):
    """A cache row clperf did not write the way it writes rows (a file, a pickle, bytes)."""


def _inside(path: str, root: str) -> bool:
    return path != root and os.path.commonpath([path, root]) == root


class InlineJsonDisk(diskcache.Disk):
    """A diskcache Disk that keeps JSON text in the database row and never reads or deletes outside its
    directory."""

    def __init__(self, directory: str, min_file_size: int = 0, pickle_protocol: int = 0) -> None:
        super().__init__(directory, min_file_size=VALUE_LIMIT + 1, pickle_protocol=pickle_protocol)
        self._root = os.path.realpath(directory)

    def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> tuple[int, int, str | None, Any]:
        if read or not isinstance(value, str) or len(value) > VALUE_LIMIT:
            raise RefusedRow("the prediction cache stores JSON text of at most 1 MiB only")
        return 0, MODE_RAW, None, value

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if filename is not None:
            raise RefusedRow("the row names a file")
        if mode != MODE_RAW or read or not isinstance(value, str):
            raise RefusedRow("the row holds no JSON text")
        return value

    def remove(self, file_path: str) -> None:
        # diskcache calls this with the name a row holds when it culls, evicts, expires or replaces the row;
        # clperf's rows name no file, so only a file really inside the cache directory is ever deleted
        if not file_path:
            return
        full = os.path.realpath(os.path.join(self._root, file_path))
        if not _inside(full, self._root) or not os.path.isfile(full):
            return
        try:
            os.remove(full)
        except OSError:
            return
        folder = os.path.dirname(full)
        while _inside(folder, self._root):  # the empty sub-folders diskcache made for it, not the cache
            try:
                os.rmdir(folder)
            except OSError:
                return
            folder = os.path.dirname(folder)


def _forget_unknown_settings(db: Path) -> None:
    """Delete settings rows diskcache would apply but clperf does not pass (``disk__directory``, PRAGMAs)."""
    if not db.is_file():
        return
    con = sqlite3.connect(str(db), timeout=10)
    try:
        try:
            names = [str(r[0]) for r in con.execute("SELECT key FROM Settings")]
        except sqlite3.OperationalError:  # no Settings table yet
            return
        unknown = sorted(n for n in names if n not in _KNOWN_SETTINGS)
        if unknown:
            log.warning("prediction cache: ignoring unknown settings in %s: %s", db, ", ".join(unknown)[:200])
            con.executemany("DELETE FROM Settings WHERE key = ?", [(n,) for n in unknown])
            con.commit()
    finally:
        con.close()


def key(*parts: Any) -> str:
    """A stable key from JSON-serialisable parts."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def finite(x: Any, what: str) -> float:
    """``x`` as a float when it is a finite number (not a bool, string or NaN); else ValueError."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"{what} is not a finite number: {x!r}"[:200])
    return float(x)


def positive(x: Any, what: str) -> float:
    """``x`` as a float when it is a finite number above zero; else ValueError."""
    v = finite(x, what)
    if v <= 0:
        raise ValueError(f"{what} is not positive: {v!r}")
    return v


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} in a cached value")


class JsonCache:
    """get/set of JSON values under string keys; silently empty after the first failure."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else paths.state_dir() / "cache"
        self._cache: Any = None
        self._failed = False
        self._lock = threading.Lock()

    def _open(self) -> Any:
        if self._cache is not None or self._failed:
            return self._cache
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _forget_unknown_settings(self.directory / "cache.db")
            self._cache = diskcache.Cache(str(self.directory), disk=InlineJsonDisk, **_SETTINGS)
        except Exception as e:  # noqa: BLE001 - any failure to open means: no cache
            self._disable(e)
        return self._cache

    def _disable(self, e: BaseException) -> None:
        if not self._failed:
            log.warning("prediction cache disabled (%s): %s: %s", self.directory, type(e).__name__, e)
        self._failed = True
        self._cache = None

    def _drop(self, c: Any, k: str, reason: str) -> None:
        """Delete a bad row from the database only (never a file it names) and say so once."""
        first = (reason.splitlines() or [""])[0][:200]
        log.warning("prediction cache: dropped a bad entry in %s (%s); recomputing it", self.directory, first)
        try:
            db_key, raw = c._disk.put(k)
            c._sql("DELETE FROM Cache WHERE key = ? AND raw = ?", (db_key, raw))
        except Exception as e:  # noqa: BLE001
            self._disable(e)

    @property
    def enabled(self) -> bool:
        return self._open() is not None

    @overload
    def get(self, k: str) -> Any | None: ...

    @overload
    def get(self, k: str, parse: Callable[[Any], T]) -> T | None: ...

    def get(self, k: str, parse: Callable[[Any], Any] | None = None) -> Any | None:
        """The value under ``k``, passed through ``parse`` when given; None when missing or bad.

        ``parse`` checks the shape its caller needs and converts it, raising ValueError, TypeError,
        KeyError or IndexError for a value it cannot use: such a row is dropped (one warning), as is a row
        that is not JSON text or holds NaN or infinities."""
        with self._lock:
            c = self._open()
            if c is None:
                return None
            try:
                raw = c.get(k)
            except RefusedRow as e:
                self._drop(c, k, str(e))
                return None
            except Exception as e:  # noqa: BLE001
                self._disable(e)
                return None
            if raw is None:
                return None
            try:
                value = json.loads(raw, parse_constant=_no_constant)
                return value if parse is None else parse(value)
            except (ValueError, TypeError, KeyError, IndexError) as e:
                self._drop(c, k, f"{type(e).__name__}: {e}")
                return None

    def set(self, k: str, value: Any) -> None:
        with self._lock:
            c = self._open()
            if c is None:
                return
            try:
                text = json.dumps(value, allow_nan=False)
            except ValueError as e:  # NaN or an infinity: not stored, so never read back
                log.warning("prediction cache: not storing a value with %s", e)
                return
            if len(text) > VALUE_LIMIT:
                return
            try:
                c.set(k, text)
            except Exception as e:  # noqa: BLE001
                self._disable(e)

    def close(self) -> None:
        with self._lock:
            if self._cache is not None:
                self._cache.close()
                self._cache = None


_default: JsonCache | None = None


def default() -> JsonCache:
    """The per-user cache under ``clperf.core.paths.state_dir()/cache`` (``CLPERF_CACHE_DIR`` overrides)."""
    global _default
    if _default is None:
        env = os.environ.get("CLPERF_CACHE_DIR")
        _default = JsonCache(Path(env) if env else None)
    return _default
