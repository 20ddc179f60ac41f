"""The prediction cache: diskcache on disk, JSON text values only.

Keys hash everything a prediction depends on (source, build options, kernel, scenario, device, model
version). Values are JSON strings, and rows stored any other way are refused on read: diskcache pickles
non-primitive values by default, and a cache directory must never be a way to run code.

A cache that cannot be opened or written (corrupt database, read-only directory, full disk) turns into no
cache with one warning; estimates go on without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

from clperf import paths

log = logging.getLogger(__name__)

_SIZE_LIMIT = 64 * 2**20


def key(*parts: Any) -> str:
    """A stable key from JSON-serialisable parts."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


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
            import diskcache

            class _JsonOnlyDisk(diskcache.Disk):
                def fetch(self, mode: int, filename: str, value: Any, read: bool) -> Any:
                    if mode == diskcache.core.MODE_PICKLE:
                        raise ValueError("refusing a pickled value in the prediction cache")
                    return super().fetch(mode, filename, value, read)

            self.directory.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(str(self.directory), disk=_JsonOnlyDisk, size_limit=_SIZE_LIMIT)
        except Exception as e:  # noqa: BLE001 - any failure to open means: no cache
            self._disable(e)
        return self._cache

    def _disable(self, e: BaseException) -> None:
        if not self._failed:
            log.warning("prediction cache disabled (%s): %s: %s", self.directory, type(e).__name__, e)
        self._failed = True
        self._cache = None

    @property
    def enabled(self) -> bool:
        return self._open() is not None

    def get(self, k: str) -> Any | None:
        with self._lock:
            c = self._open()
            if c is None:
                return None
            try:
                raw = c.get(k)
                return None if raw is None else json.loads(raw)
            except Exception as e:  # noqa: BLE001
                self._disable(e)
                return None

    def set(self, k: str, value: Any) -> None:
        with self._lock:
            c = self._open()
            if c is None:
                return
            try:
                c.set(k, json.dumps(value))
            except Exception as e:  # noqa: BLE001
                self._disable(e)

    def close(self) -> None:
        with self._lock:
            if self._cache is not None:
                self._cache.close()
                self._cache = None


_default: JsonCache | None = None


def default() -> JsonCache:
    """The per-user cache under ``clperf.paths.state_dir()/cache`` (``CLPERF_CACHE_DIR`` overrides)."""
    global _default
    if _default is None:
        import os

        env = os.environ.get("CLPERF_CACHE_DIR")
        _default = JsonCache(Path(env) if env else None)
    return _default
