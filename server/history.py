"""Past measurements of a kernel from the measurement store, for "last measured" in hovers and lenses.

The store is an append-only JSON-lines file; it is re-read only when it changed (size and mtime), in the
analysis thread, so a long history costs one read per change, not one per save. ``store.load`` checks each
line (an invalid one is skipped with a warning), so what a hover shows is a real, finite measurement.
"""

from __future__ import annotations

import logging
import threading

from clperf.core import store
from clperf.core.records import Measurement

log = logging.getLogger("clperf.server")
_lock = threading.Lock()
_seen: tuple[str, int, float] | None = None
_latest: dict[tuple[str, str], Measurement] = {}


def last_measured(kernel: str, source_hash: str) -> Measurement | None:
    """The newest successful measurement of ``kernel`` with exactly this source text, on any device."""
    global _seen, _latest
    try:
        path = store.store_path()
        st = path.stat() if path.exists() else None
        key = (str(path), st.st_size, st.st_mtime) if st else (str(path), 0, 0.0)
        with _lock:
            if key != _seen:
                latest: dict[tuple[str, str], Measurement] = {}
                for m in store.load() if st else []:
                    if m.status == "ok" and m.median_ms is not None:
                        latest[(m.kernel, m.source_hash)] = m
                _latest, _seen = latest, key
            return _latest.get((kernel, source_hash))
    except Exception as e:  # history is a nicety: an unreadable store must not cost the analysis
        log.warning("cannot read the measurement store: %s: %s", type(e).__name__, e)
        return None
