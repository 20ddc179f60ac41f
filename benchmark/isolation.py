"""The parent side of the kernel worker: start it, talk to it, notice when it dies or hangs.

A worker is a separate Python process (``python -m clperf.benchmark.worker``, started fresh, never
forked, so no OpenCL state or threads leak into it). Requests and replies are JSON lines on its stdin and
stdout; its stderr goes to a temporary file whose tail explains a crash. Waiting is always bounded: a
kernel that loops forever costs its timeout, then the process is killed.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from clperf.core import children
from clperf.core.errors import DeviceError
from clperf.core.records import Device


class WorkerGone(DeviceError):
    """The worker process ended (``returncode``) or was killed for running too long (``timed_out``)."""

    def __init__(self, message: str, returncode: int | None = None, timed_out: bool = False,
                 cancelled: bool = False) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.timed_out = timed_out
        self.cancelled = cancelled

    @property
    def status(self) -> str:
        """The Measurement status this ending means for the kernel that was running."""
        if self.timed_out or self.cancelled:
            return "timeout"
        if self.returncode == -signal.SIGKILL:
            return "out-of-memory"  # nobody else kills workers; the kernel's OOM killer does
        return "crash"


class Worker:
    """One worker process holding an OpenCL context on ``device``."""

    def __init__(self, device: Device, start_timeout_s: float = 60.0,
                 env: dict[str, str] | None = None) -> None:
        self.device = device
        self.start_timeout_s = start_timeout_s
        self.extra_env = dict(env or {})  # e.g. a private POCL_CACHE_DIR (predictor/model/cpu_code.py)
        self.proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self._err: Any = None

    def start(self) -> None:
        self._err = tempfile.TemporaryFile()
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env["PYTHONSAFEPATH"] = "1"  # a folder named clperf in the current directory must not shadow ours
        env.update(self.extra_env)
        # its own process group (a terminal's Ctrl-C goes to us, and we end the worker ourselves), killed
        # when clperf dies; an address-space limit on CPU devices only: a GPU driver maps huge ranges of
        # virtual addresses it never uses (under an 8 GiB limit NVIDIA's platform is not even found on an
        # H200: PLATFORM_NOT_FOUND_KHR)
        memory = children.worker_memory_bytes() if self.device.type == "cpu" else None
        self.proc = children.popen(
            [sys.executable, "-m", "clperf.benchmark.worker"], memory_bytes=memory,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=env,
        )
        self._buf = b""
        self.send({"op": "open", "device": self.device.to_json()})
        reply = self.receive(self.start_timeout_s)
        if reply.get("type") != "opened":
            self.kill()
            raise DeviceError(f"cannot open {self.device.name}: {reply.get('error')}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise self._gone() from e

    def receive(self, timeout_s: float, cancel: threading.Event | None = None) -> dict[str, Any]:
        """The next reply; raises WorkerGone when the worker dies, or is killed after ``timeout_s``."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if cancel is not None and cancel.is_set():
                self.kill()
                raise WorkerGone("cancelled", cancelled=True)
            if left <= 0:
                self.kill()
                raise WorkerGone(f"no result within {timeout_s:g} s: the kernel was stopped", timed_out=True)
            ready, _, _ = select.select([fd], [], [], min(left, 0.1))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise self._gone()
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def _gone(self) -> WorkerGone:
        assert self.proc is not None
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.returncode
        tail = self.stderr_tail()
        if rc is not None and rc < 0:
            try:
                what = signal.Signals(-rc).name
            except ValueError:
                what = f"signal {-rc}"
            msg = f"the kernel crashed its process ({what})"
        else:
            msg = f"the worker process exited with status {rc}"
        if tail:
            msg += f": {tail}"
        return WorkerGone(msg, returncode=rc)

    def stderr_tail(self, limit: int = 600) -> str:
        if self._err is None:
            return ""
        try:
            self._err.seek(0, os.SEEK_END)
            size = self._err.tell()
            self._err.seek(max(0, size - limit))
            text = self._err.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return " | ".join(lines[-4:])

    def kill(self) -> None:
        """End the worker's whole process group, also when the worker itself has exited but has not been
        waited for: the builder processes it started (``worker.Runner.prebuild``) are in that group. Once
        the worker has been waited for, its pid may belong to another process: the builders then end by
        their parent-death signal (``children.limit_self``)."""
        if self.proc is None:
            return
        children.kill_group(self.proc)
        self.proc.wait()
        children.forget(self.proc)

    def close(self) -> None:
        """Ask the worker to exit, then make sure it did."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.send({"op": "exit"})
                self.proc.wait(timeout=5)
            except (WorkerGone, subprocess.TimeoutExpired):
                pass
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        if self._err is not None:
            self._err.close()
            self._err = None
        self.proc = None

    def __enter__(self) -> Worker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
