"""``clperf evaluate --devset DIR --ray [ADDRESS]``: a dev set's launches predicted on a Ray cluster.

The driver (the ``clperf evaluate`` process) reads the specs and their measured times, picks the device
and submits one CPU task (``num_cpus=1``) per launch. A task runs ``devset.predict_one``, what a plain run
runs for each spec: the analysis, with ``--counting`` the counting run of the launch with its exact data
(Oclgrind, the dev set's harness building the buffers), and every model's estimates. The dev set's folder
must be at the same path on every node, as the kernel files of a sweep.

Each task sends back its ``Launch`` and the counting runs it used (``Counts``, or the reason a run gave
none); the driver stores those its own count cache lacks, so a later plain run, or one on another
cluster, counts nothing again. The launches come back as they finish and are put in ``specs.json``
order: the output is the one a plain run gives.

A task that raises, or whose worker process or node dies, is retried once by Ray (``max_retries=1``);
a launch whose task fails a second time keeps why (``Launch.problem``), as a plain run keeps why a spec
could not be predicted.

Ray is imported inside the functions: without ``--ray`` nothing here loads it.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from clperf.api import select_device
from clperf.benchmark.cluster import connect, task_failure
from clperf.benchmark.counting import Counts
from clperf.benchmark.counting.store import CountStore, Failed
from clperf.benchmark.progress import Progress
from clperf.predictor.training.devset import (
    Launch,
    Setup,
    _benchmark,
    devset_store,
    harness,
    measured_specs,
    predict_one,
    with_previous,
)

Run = tuple[str, Counts | Failed]
Tick = Callable[[Launch | None], None]

# per worker process, for the next task of the same dev set: each file's analysis and the harness
_REPORTS: dict[Path, dict[tuple[str, str], Any]] = {}
_HARNESS: dict[Path, ModuleType] = {}


class _Recording(CountStore):
    """The worker's own count cache, noting every run a task reads from it or stores in it, so that the
    driver can store them in its cache too."""

    def __init__(self) -> None:
        kept = devset_store()
        super().__init__(kept.rows, kept.folder, kept.max_bytes)
        self.used: dict[str, Counts | Failed] = {}

    def get(self, key: str) -> Counts | Failed | None:
        hit = super().get(key)
        if hit is not None:
            self.used[key] = hit
        return hit

    def put(self, key: str, result: Counts | Failed) -> None:
        super().put(key, result)
        self.used[key] = result


def predict_all_on_ray(folder: Path, device_name: str = "h200", models: Sequence[str] = ("auto", "roofline"),
                       *, counting: bool = False, budget_s: float = 8.0, address: str | None = None,
                       progress: bool = True, store: CountStore | None = None,
                       previous: Path | None = None) -> list[Launch]:
    """``devset.predict_all`` with each launch a Ray task (module docstring); ``address`` as for
    ``benchmark.cluster.connect``, ``store``: the driver's count cache (default: the per-user cache)."""
    import ray

    folder = folder.resolve()
    todo = measured_specs(folder)
    if counting:
        harness(folder)  # a dev set without its harness fails here, not in every task
    setup = Setup(folder, select_device(device_name), with_previous(models, previous), counting, budget_s,
                  previous.resolve() if previous is not None else None)
    started_ray = connect(address)
    try:
        task = ray.remote(max_retries=1, retry_exceptions=True, num_cpus=1)(predict_task)
        shared = ray.put(setup)
        model_dir = os.environ.get("CLPERF_MODEL_DIR")  # --model: the tasks estimate with it too
        running = {task.remote(shared, spec, ms, model_dir): i for i, (spec, ms) in enumerate(todo)}
        got = _collect(running, todo, store or devset_store(), _reporter(len(todo), progress))
    finally:
        if started_ray:
            ray.shutdown()
    return [got[i] for i in range(len(todo))]


def predict_task(setup: Setup, spec: dict[str, Any], measured_ms: float, model_dir: str | None
                 ) -> dict[str, Any]:
    """The Ray task: the launch as a plain run predicts it, the counting runs it used, where it ran."""
    if model_dir:
        os.environ["CLPERF_MODEL_DIR"] = model_dir
    measure = None
    if setup.counting:
        if setup.folder not in _HARNESS:
            _HARNESS[setup.folder] = harness(setup.folder)
        measure = _HARNESS[setup.folder]
    store = _Recording()
    launch = predict_one(setup, spec, measured_ms, measure, _REPORTS.setdefault(setup.folder, {}), store)
    runs: list[Run] = list(store.used.items())
    return {"launch": launch, "runs": runs, "node": socket.gethostname(), "pid": os.getpid()}


def _collect(running: dict[Any, int], todo: list[tuple[dict[str, Any], float]], store: CountStore,
             tick: Tick) -> dict[int, Launch]:
    """Each launch as its task hands it back (its counting runs into ``store``); a task that failed
    twice gives its launch with the reason."""
    import ray

    got: dict[int, Launch] = {}
    while running:
        ready: list[Any] = ray.wait(list(running), num_returns=1, timeout=1.0)[0]
        for ref in ready:
            i = running.pop(ref)
            try:
                item: dict[str, Any] = ray.get(ref)
            except ray.exceptions.RayError as e:
                spec, ms = todo[i]
                bench, size = _benchmark(spec["id"])
                got[i] = Launch(spec["id"], bench, size, ms, {},
                                f"not predicted: its Ray task failed twice ({task_failure(e)})")
            else:
                got[i] = item["launch"]
                _store(store, item["runs"])
            tick(got[i])
        tick(None)
    return got


def _store(store: CountStore, runs: list[Run]) -> None:
    """The task's counting runs, into the driver's cache where it has not got them (a worker on this
    machine has already stored them in the same cache)."""
    for key, result in runs:
        if store.get(key) is None:
            store.put(key, result)


def _reporter(total: int, progress: bool) -> Tick:
    """With ``progress``, a line for the whole job: launches done of all, those not predicted, elapsed."""
    bar = Progress(f"predicting {total} launch(es) on Ray", stream=sys.stderr) if progress else None
    done = failed = 0
    started = time.monotonic()

    def tick(launch: Launch | None) -> None:
        nonlocal done, failed
        if launch is not None:
            done += 1
            failed += launch.problem is not None
        if bar is None:
            return
        bar.update(done / max(1, total), f"launches {done}/{total} done, {failed} not predicted")
        if launch is not None and done == total:
            bar.done(f"{total} launch(es) in {time.monotonic() - started:.1f} s, {failed} not predicted")

    return tick
