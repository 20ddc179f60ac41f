"""Plain logic under the protocol: edits of the quick fixes, number formatting, the analysis scheduler."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from clperf.core import units as fmt
from clperf.core.frontend import parse
from clperf.core.records import Scenario
from clperf.server import fixes
from clperf.server.engine import Analysis, Job
from clperf.server.scheduler import Scheduler
from clperf.server.settings import Settings

KERNEL = """__kernel void k(__global float *a, int n)
{
\tfor (int j = 0; j < 4; j++)
\t\ta[j] = n;
}
"""


def test_directive_flags_round_trip_through_the_scenario_parser() -> None:
    from clperf.core.scenario import parse_flags, resolve

    kernel = parse(KERNEL)[0]
    scenario = Scenario((4096,), (64,), {"a": 4096, "n": 7}, {}, ("global", "a", "n"))
    edit = fixes.directive_edit(kernel, scenario)
    assert edit.new_text == "// clperf: --global 4096 --local 64 --arg a=4096 --arg n=7\n"
    again = resolve(parse_flags(edit.new_text.split(":", 1)[1]), kernel.params, kernel.dims_used)
    assert again.global_size == (4096,) and again.args == {"a": 4096, "n": 7} and again.defaulted == ()


def test_formatting() -> None:
    assert fmt.ms(0.84) == "0.84 ms" and fmt.ms(0.0055) == "5.5 µs" and fmt.ms(2500) == "2.5 s"
    assert fmt.count(1.66e6) == "1.66 M" and fmt.size(48.2e6) == "48.2 MB"


def _job(uri: str, version: int) -> Job:
    return Job(uri, version, "", "", Settings(), None)


async def test_scheduler_coalesces_and_runs_one_at_a_time() -> None:
    versions = {"u": 1}
    running = threading.Semaphore(1)
    started: list[int] = []
    delivered: list[int] = []

    def run(job: Job) -> Analysis:
        assert running.acquire(blocking=False), "two analyses of one document at once"
        started.append(job.version or 0)
        time.sleep(0.1)
        running.release()
        return Analysis(job.uri, job.version, "", None, (), {}, 0.0)

    with ThreadPoolExecutor(2) as pool:
        s = Scheduler(
            pool, lambda uri: _job(uri, versions[uri]), run, lambda a: delivered.append(a.version or 0)
        )
        s.request("u")
        await asyncio.sleep(0.05)  # first run under way
        for v in range(2, 12):  # ten saves while it runs
            versions["u"] = v
            s.request("u")
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.5)
    assert started == [1, 11]  # one re-run, of the newest version
    assert delivered == [1, 11]


@pytest.mark.slow
def test_an_analysis_on_the_local_pocl_device_asks_again_until_pocls_code_is_costed(pocl) -> None:
    from clperf.benchmark import pocl_code
    from clperf.server import engine

    text = ("// clperf: --global 65536 --local 64 --arg a=65536 --arg b=65536\n"
            "__kernel void twice(__global const float* a, __global float* b) {\n"
            "    int i = get_global_id(0);\n    b[i] = 2.0f * a[i] + 1.0f;\n}\n")
    # off by default: no kernel runs on a save, the roofline answers
    off = engine.analyze(Job("file:///twice.cl", 1, "", text, Settings(), pocl))
    assert off.kernels["twice"].estimate.model_name == "roofline" and not off.refine
    job = Job("file:///twice.cl", 1, "", text, Settings(pocl_code=True), pocl)
    first = engine.analyze(job)
    est = first.kernels["twice"].estimate
    assert est is not None
    if est.model_name != "pocl-code":  # not costed yet: the views get the roofline, and a re-run later
        assert first.refine
    deadline, scenario = time.monotonic() + 60, first.kernels["twice"].scenario
    assert scenario is not None
    while first.refine and not pocl_code.settled(text, "twice", scenario, pocl):
        assert time.monotonic() < deadline, "PoCL's code was not costed within 60 s"
        time.sleep(0.2)
    again = engine.analyze(job)
    assert again.kernels["twice"].estimate.model_name == "pocl-code" and not again.refine
    # a profile's analysis never waits for anything
    assert not engine.analyze(Job("file:///twice.cl", 1, "", text, Settings(), None)).refine
