"""An ensemble's members trained on a Ray cluster: one Ray task per member, assembled by the driver.

The driver (the ``clperf train --ray`` process) builds the examples, the split and the tokenizer as a
plain run does, puts what every member fits with into Ray's object store once (``fit.MemberJob``: each
node fetches it once) and submits one task per member with its seed: a GPU task (``num_gpus=1``, so Ray
hands each task one device of its node) when the fit runs on CUDA, a CPU task (``num_cpus=1``, one torch
thread) otherwise. A task runs ``fit.fit_member``, the fit a local run runs, and sends back the member's
weights (numpy arrays), normalisation and history as soon as it ends; the driver assembles the members
in seed order as ``fit.fit_members`` does (``fit.assemble``).

The budget: as many members as the cluster has GPUs (or CPUs) train at once, the others in further
waves, and each gets the run's fit time divided by the waves, as a local run divides it.

A task that raises, or whose worker process dies, is retried once by Ray (``max_retries=1``). A member
that fails a second time ends the run with an error naming it, before anything is written: a model folder
never lacks a member.

Ray is imported inside the functions: without ``--ray`` nothing here loads it.
"""

from __future__ import annotations

import dataclasses
import math
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from clperf.benchmark.cluster import connect, task_failure
from clperf.benchmark.progress import Progress
from clperf.core.errors import ClperfError, InputError
from clperf.predictor.model import network
from clperf.predictor.training.config import TrainConfig
from clperf.predictor.training.examples import Examples
from clperf.predictor.training.fit import FitResult, MemberFit, MemberJob, assemble, fit_member

Event = Callable[[str, dict[str, Any]], None]


def fit_members_on_ray(ex: Examples, part: np.ndarray, net_cfg: network.NetConfig, cfg: TrainConfig, *,
                       tokens: list[list[int]] | None, minutes: float, address: str | None = None,
                       progress: bool = False, on_event: Event | None = None
                       ) -> tuple[Any, list[FitResult]]:
    """``fit.fit_members`` with each member a Ray task (module docstring); ``address`` as for
    ``benchmark.cluster.connect``.

    ``on_event`` gets ``"member-start"`` (member, seed, pid, node) when a task begins (once: Ray drops the
    outputs a retried task makes again) and ``"member"`` (member, seed, done, total, steps, best_val, and
    the pid of the process that fitted it) when one has come back.
    """
    import ray

    members = max(1, cfg.members)
    started_ray = connect(address)
    try:
        kind = _device_kind(cfg.device_type)
        waves = math.ceil(members / min(members, _slots(kind)))
        job = MemberJob(ex, part, net_cfg, dataclasses.replace(cfg, device_type=kind), tokens,
                        minutes / waves, threads=1)
        shared = ray.put(job)
        # a GPU task also takes a CPU: the batches are drawn there
        task = ray.remote(max_retries=1, retry_exceptions=True, num_cpus=1,
                          num_gpus=1 if kind == "cuda" else 0)(member_task)
        running = {task.remote(shared, cfg.seed + i): i for i in range(members)}
        emit = _reporter(members, kind, progress, on_event)
        done = _collect(running, members, cfg.seed, emit)
    finally:
        if started_ray:
            ray.shutdown()
    return assemble(net_cfg, done)


def member_task(job: MemberJob, seed: int) -> Iterator[dict[str, Any]]:
    """The Ray task: ``start`` (where it runs), then ``fit`` with the member of ``seed`` (and the process
    that fitted it)."""
    yield {"type": "start", "pid": os.getpid(), "node": socket.gethostname()}
    yield {"type": "fit", "fit": fit_member(job, seed), "pid": os.getpid()}


def _device_kind(device_type: str) -> str:
    """Where the tasks train: "cuda" needs GPUs in the cluster (a task asking for one where none is would
    wait for ever); "auto" is CUDA when the cluster has GPUs, as a local run picks CUDA when torch sees
    one."""
    import ray

    gpus = int(ray.cluster_resources().get("GPU", 0))
    if device_type == "cuda" and gpus == 0:
        raise InputError("--device-type cuda: the Ray cluster has no GPUs (ray status lists its resources)")
    return "cuda" if device_type == "cuda" or (device_type == "auto" and gpus > 0) else "cpu"


def _slots(kind: str) -> int:
    """Members the cluster trains at once: one per GPU, or per CPU."""
    import ray

    return max(1, int(ray.cluster_resources().get("GPU" if kind == "cuda" else "CPU", 1)))


def _collect(running: dict[Any, int], members: int, seed: int, emit: Event) -> list[MemberFit]:
    """Each member's fit as its task hands it back; the first member to fail twice ends the run (the
    others are cancelled)."""
    import ray

    fits: list[MemberFit] = []
    nodes: dict[int, str] = {}
    while running:
        ready: list[Any] = ray.wait(list(running), num_returns=1, timeout=1.0)[0]
        emit("tick", {})
        for gen in ready:
            i = running[gen]
            try:
                item: dict[str, Any] = ray.get(next(gen))
            except StopIteration:
                del running[gen]
                continue
            except ray.exceptions.RayError as e:
                _cancel(running)
                where = f" on {nodes[i]}" if i in nodes else ""
                raise ClperfError(f"ensemble member {i + 1} of {members} (seed {seed + i}) failed twice on "
                                  f"the Ray cluster{where}: {task_failure(e)}; no model written") from e
            if item["type"] == "start":
                nodes[i] = item["node"]
                emit("member-start", {"member": i, "seed": seed + i, "pid": item["pid"],
                                      "node": item["node"]})
            else:
                fits.append(item["fit"])
                emit("member", {"member": i, "seed": seed + i, "done": len(fits), "total": members,
                                "steps": item["fit"].steps, "best_val": item["fit"].best_val,
                                "pid": item["pid"]})
    return fits


def _cancel(running: dict[Any, int]) -> None:
    import ray

    for gen in running:
        try:
            ray.cancel(gen, force=True)
        except (TypeError, ValueError, ray.exceptions.RayError):  # already ended
            pass


def _reporter(members: int, kind: str, progress: bool, on_event: Event | None) -> Event:
    """The events to ``on_event`` and, with ``progress``, a progress line: members done of all, elapsed."""
    bar = Progress(f"training {members} member(s) on Ray ({kind})", stream=sys.stderr) if progress else None
    done = 0
    running: set[int] = set()  # members whose task has begun (a retried one counts once)
    nodes: set[str] = set()
    started = time.monotonic()

    def emit(kind: str, info: dict[str, Any]) -> None:
        nonlocal done
        if kind == "member-start":
            nodes.add(info["node"])
            running.add(info["member"])
        elif kind == "member":
            done = info["done"]
            running.discard(info["member"])
        if on_event is not None and kind != "tick":
            on_event(kind, info)
        if bar is None:
            return
        bar.update(done / members, f"members {done}/{members} done, {len(running)} running on "
                                   f"{len(nodes)} node(s)", force=kind == "member" and not bar.tty)
        if kind == "member" and done == members:
            bar.done(f"{members} member(s) done in {time.monotonic() - started:.1f} s on "
                     f"{len(nodes)} node(s)")

    return emit
