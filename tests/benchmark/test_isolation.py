"""Kernels that crash, loop forever, write out of bounds or do not compile end as statuses, in time,
and the test process lives on."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy
from clperf.core.scenario import parse_flags

SRC = (Path(__file__).parent / "data" / "faulty.cl").read_text()


def run(device, kernel, flags="--global 256 --arg out=256 --arg n=256", **kw):
    kw.setdefault("timeout_s", 30)
    start = time.monotonic()
    m = benchmark(SRC, kernel, parse_flags(flags), device, policy=Policy.quick(), **kw)
    return m, time.monotonic() - start


def test_a_healthy_kernel_is_ok(device):
    m, _ = run(device, "fine")
    assert m.status == "ok" and m.error is None and m.repetitions >= 5
    assert m.median_ms is not None and m.median_ms > 0 and len(m.times_ms) == m.repetitions


def test_segfault_is_a_crash(device):
    pid = os.getpid()
    m, took = run(device, "wild", "--global 256 --arg out=256")
    assert m.status == "crash"
    assert "SIGSEGV" in (m.error or "") or "failed while running" in (m.error or ""), m.error
    assert took < 30 and os.getpid() == pid


def test_out_of_bounds_write_is_caught(device):
    m, took = run(device, "past_end", "--global 256 --arg out=256")
    assert m.status == "crash"
    assert "past the end of buffer 'out'" in (m.error or "") and "first bad element index 300" in m.error
    assert took < 30


@pytest.mark.slow
def test_infinite_loop_times_out(device):
    m, took = run(device, "forever", "--global 1 --arg out=16", timeout_s=4)
    assert m.status == "timeout" and "4 s" in (m.error or "")
    assert 3.5 < took < 10


def test_cancel_stops_a_running_kernel(device):
    cancel = threading.Event()
    threading.Timer(1.5, cancel.set).start()
    m, took = run(device, "forever", "--global 1 --arg out=16", timeout_s=30, cancel=cancel)
    assert m.status == "timeout" and m.error == "cancelled" and took < 10


def test_build_error_carries_the_compiler_message(device):
    src = (Path(__file__).parent / "data" / "broken.cl").read_text()
    m = benchmark(src, "broken", parse_flags("--global 1"), device, timeout_s=30)
    assert m.status == "build-error"
    assert "undefined_name" in (m.error or ""), m.error


def test_unknown_kernel_is_a_build_error(device):
    m, _ = run(device, "nope", "--global 1")
    assert m.status == "build-error" and "fine" in (m.error or "")


def test_reference_mismatch_is_reported(device):
    same, _ = run(device, "fine", reference=(SRC, "fine"))
    assert same.status == "ok" and same.checked and same.error is None
    off, _ = run(device, "fine", reference=(SRC, "fine_off"))
    assert off.status == "ok" and off.checked
    assert "buffer 'out'" in (off.error or "") and "1 of 256 values differ (first at [5]" in off.error


def test_progress_is_reported(device):
    seen: list[float] = []
    m, _ = run(device, "fine", on_progress=lambda f, msg: seen.append(f))
    assert m.status == "ok" and seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)


def test_a_worker_that_crashed_leaves_no_builder_process_behind(device):
    import signal

    from clperf.benchmark.isolation import Worker

    w = Worker(device)
    w.start()
    group = w.proc.pid
    for i in range(8):  # start the builder processes and leave builds queued and running at close
        w.send({"op": "prebuild", "source": SRC + f"\n// variant {i}\n", "options": ""})
    deadline = time.monotonic() + 30
    while len(_members(group)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(_members(group)) >= 2, "the prebuild started no builder process"
    os.kill(group, signal.SIGKILL)  # the worker dies abruptly (a crash, the OOM killer); its builders do not
    w.proc.wait(timeout=10)
    w.close()
    deadline = time.monotonic() + 10
    while _members(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _members(group)


def _members(group: int) -> list[int]:
    """Live (not zombie) processes in a process group, from /proc."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                out.append(int(d.name))
    return out
