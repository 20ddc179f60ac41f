"""Server-initiated work-done progress for long work a user may cancel: a benchmark, a peak measurement.

``begin`` asks the client for a token (``window/workDoneProgress/create``) and shows a cancellable
progress; the client's cancel sets ``cancel``, which the work polls. A client without
``window.workDoneProgress``, or one that refuses the token, gets none: the work runs all the same, and
only its end is logged. Every call is made on the event loop (``report`` from a worker goes through
``call_soon_threadsafe``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from typing import Any

from lsprotocol import types

log = logging.getLogger("clperf.server")


class Progress:
    def __init__(self, ls: Any, kind: str, title: str, cancel: threading.Event | None = None) -> None:
        self._ls = ls
        self.title = title
        self.cancel = cancel or threading.Event()
        self.token = f"clperf-{kind}-{uuid.uuid4()}"
        self.shown = False

    async def begin(self, message: str, percentage: int | None = None) -> None:
        if not self._ls.supports("window", "work_done_progress"):
            return
        try:
            await self._ls.work_done_progress.create_async(self.token)
        except Exception as e:  # noqa: BLE001 - no progress bar is no reason to stop the work
            log.warning("the client refused a progress token: %s", e)
            return
        self._ls.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(
            title=self.title, message=message, percentage=percentage, cancellable=True))
        self._ls.work_done_progress.tokens[self.token].add_done_callback(lambda f: self.cancel.set())
        self.shown = True

    def report(self, fraction: float | None, message: str) -> None:
        if self.shown and not self.cancel.is_set():
            percentage = None if fraction is None else max(0, min(100, int(fraction * 100)))
            self._ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                message=message, percentage=percentage))

    def end(self, message: str) -> None:
        if self.shown:
            self._ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.shown = False
