"""Differential verification on PoCL: one persistent kernel worker runs original and rewritten kernels
from the same seeded inputs and compares every global buffer (integers exactly, floats within 1e-5)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).with_name("data")


@pytest.fixture(scope="session")
def worker(pocl):
    from clperf.benchmark.isolation import Worker

    w = Worker(pocl, start_timeout_s=60)
    w.start()
    yield w
    w.close()


class Differential:
    """Sends one measure request with the original as the reference kernel, for several launches."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker

    def __call__(self, original: str, rewritten: str, kernel: str, scenarios: list[Any]) -> list[dict]:
        from clperf.benchmark.runner import kernel_params
        from clperf.benchmark.timing import Policy

        params, _ = kernel_params(original, kernel)
        policy = Policy(warmup=0, min_repetitions=1, max_repetitions=1, min_total_ms=0.0, max_wall_s=1.0,
                        stable_rel=None, batch=1)
        if not self.worker.alive:
            self.worker.start()
        self.worker.send({
            "op": "measure", "source": rewritten, "kernel": kernel, "options": "",
            "params": [p.__dict__ for p in params], "scenarios": [s.to_json() for s in scenarios],
            "policy": policy.to_json(), "seed": 7, "check": True, "reference": [original, kernel],
            "progress": False, "deadline": None, "rtol": 1e-5,
        })
        results: list[dict] = [{} for _ in scenarios]
        while True:
            reply = self.worker.receive(120)
            if reply["type"] == "result":
                results[reply["index"]] = reply
            elif reply["type"] == "done":
                return results
            elif reply["type"] == "error":
                return [reply] * len(scenarios)


@pytest.fixture
def differential(worker) -> Differential:
    return Differential(worker)


def launches(scenario: Any, extra: list[tuple[int, ...] | None]) -> list[Any]:
    """The scenario as written plus the same problem with other work-group shapes (None: the runtime's)."""
    out = [scenario]
    for loc in extra:
        if loc is not None and any(g % x for g, x in zip(scenario.global_size, loc, strict=True)):
            continue
        out.append(replace(scenario, local_size=loc))
    return out
