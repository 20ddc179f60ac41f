"""Debounced, coalesced background analysis keyed by ``(uri, version)``, on two lanes.

Saves come in bursts (format-on-save, "save all", a user hammering Ctrl+S). Per document: a request waits
``delay_s`` for more to arrive; at most one analysis runs at a time; requests that arrive while one runs
collapse into a single re-run of the newest version. The work itself runs in a thread pool so the event
loop keeps answering hovers and lenses; the result is handed to ``deliver`` on the event loop, which drops
it when the document moved on to another version (a late result must never overwrite a newer one). A job
whose version is superseded stops at its next kernel (``Job.cancelled``) and its result is dropped here.

Lanes: an analysis costs about a second per kernel (the estimate), so a file with many kernels or one
whose last analysis was slow goes to the heavy lane (one thread); every other file has the light lane to
itself. Two huge files then wait for each other, never a small file for them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor

from clperf.server.engine import Analysis, Job, failed

log = logging.getLogger("clperf.server")
SLOW_MS = 5000.0  # an analysis this long sends the file to the heavy lane from then on


class Scheduler:
    def __init__(self, pool: Executor, snapshot: Callable[[str], Job | None], run: Callable[[Job], Analysis],
                 deliver: Callable[[Analysis], None], delay_s: float = 0.015, *,
                 heavy_pool: Executor | None = None, heavy: Callable[[Job], bool] | None = None) -> None:
        self._pool = pool
        self._heavy_pool = heavy_pool or pool
        self._heavy = heavy or (lambda job: False)  # predicted from the text (kernel count, size)
        self._slow: set[str] = set()  # observed: the last analysis took more than SLOW_MS
        self._snapshot = snapshot  # the document's text/version/settings now, None once it is closed
        self._run = run
        self._deliver = deliver
        self.delay_s = delay_s
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._running: set[str] = set()
        self._again: set[str] = set()
        self.runs = 0  # analyses started, for tests of coalescing

    def request(self, uri: str) -> None:
        """Ask for an analysis of the document's current version, soon."""
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[uri] = loop.call_later(self.delay_s, self._start, uri)

    def forget(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._again.discard(uri)
        self._slow.discard(uri)

    def lane(self, job: Job) -> Executor:
        return self._heavy_pool if job.uri in self._slow or self._heavy(job) else self._pool

    def _start(self, uri: str) -> None:
        self._timers.pop(uri, None)
        if uri in self._running:
            self._again.add(uri)
            return
        job = self._snapshot(uri)
        if job is None:
            return
        self._running.add(uri)
        self.runs += 1
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.lane(job), self._safe_run, job)
        future.add_done_callback(lambda f: self._finish(job, f))

    def _safe_run(self, job: Job) -> Analysis | None:
        if job.cancelled():  # superseded while it waited for a thread
            return None
        try:
            return self._run(job)
        except Exception as e:  # the boundary of the background work: a diagnostic, not a dead worker
            log.error("analysis of %s failed", job.uri, exc_info=True)
            return failed(job, e)

    def _finish(self, job: Job, future: asyncio.Future[Analysis | None]) -> None:
        uri = job.uri
        self._running.discard(uri)
        try:
            analysis = None if future.cancelled() else future.result()
            if analysis is not None:
                if analysis.elapsed_ms > SLOW_MS:
                    self._slow.add(uri)
                elif not job.cancelled():  # a stopped analysis says nothing about the file's cost
                    self._slow.discard(uri)
                if job.cancelled():
                    log.debug("analysis of %s v%s superseded: dropped", uri, job.version)
                else:
                    self._deliver(analysis)
        except Exception:
            log.error("delivering the analysis of %s failed", uri, exc_info=True)
        if uri in self._again:
            self._again.discard(uri)
            self._start(uri)
