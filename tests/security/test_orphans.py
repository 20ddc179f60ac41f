"""Killing clperf leaves no process behind, and clang's memory is bounded.

A closed terminal (SIGHUP), ``kill`` (SIGTERM) or ``kill -9`` of ``clperf analyze`` while clang works on a
file, or of ``clperf bench`` while a kernel spins forever on PoCL, must end clang and the benchmark worker
within about two seconds: each child is in its own process group with a parent-death signal, and the CLI
ends them all on a signal. A clang that passes its memory limit (``CLPERF_CLANG_MEMORY_MB``) is a
diagnostic, not a crash or a machine out of memory.

Processes are read from /proc: the CLI is started in a new session, and every process whose parent chain
reaches it (or that is in its session) is tracked while it runs, so that one left behind is found after the
CLI is gone, and killed by the test in any case. Zombies count as gone (this machine's init may not reap).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from clperf.core import children

ROOT = Path(__file__).resolve().parents[2]
STENCIL = ROOT / "examples" / "stencil.cl"
GONE_WITHIN_S = 2.0

# Every level doubles the macro expansion clang's preprocessor walks through for the #if: ~10 s at 22
# levels on this machine and 100 MB/s of memory, so the clang is busy when the test kills the CLI.
MACRO_BOMB = "\n".join(
    ["#define A0 1", *(f"#define A{i} (A{i - 1}+A{i - 1})" for i in range(1, 31)),
     "#if A{levels}", "#endif", "kernel void k(global int *a) {{ a[0] = 1; }}", ""])

# flag[0] stays 0 (the fill), and a volatile read cannot be hoisted: the work-item never ends
SPIN = """kernel void spin(global volatile int *flag, global int *out) {
    while (flag[0] == 0) { }
    out[get_global_id(0)] = 1;
}
"""

Proc = tuple[int, str]  # (pid, start time): a pid reused later is another process


def _stat(pid: int) -> tuple[int, int, str, str] | None:
    """(ppid, sid, state, start time) of ``pid``, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]), int(fields[3]), fields[0], fields[19]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _descendants(root: int) -> set[Proc]:
    """Live processes in ``root``'s session or below it, ``root`` excluded."""
    table: dict[int, tuple[int, int, str, str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            table[int(entry)] = st
    out: set[Proc] = set()
    for pid, (ppid, sid, state, start) in table.items():
        if pid == root or state in "ZX":
            continue
        chain, p = 0, ppid
        while p not in (0, 1, root) and p in table and chain < 64:
            p, chain = table[p][0], chain + 1
        if p == root or sid == root:
            out.add((pid, start))
    return out


def _alive(proc: Proc) -> bool:
    st = _stat(proc[0])
    return st is not None and st[3] == proc[1] and st[2] not in "ZX"


class Tracked:
    """``argv`` (a clperf command) in a new session, with every process it starts recorded."""

    def __init__(self, argv: list[str], env: dict[str, str], stdin: int | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, start_new_session=True)
        self.seen: set[Proc] = set()

    def watch(self) -> set[Proc]:
        self.seen |= _descendants(self.proc.pid)
        return self.seen

    def wait_for(self, what: str, ready: Callable[[Proc], bool], timeout_s: float = 45) -> Proc:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for p in self.watch():
                if _alive(p) and ready(p):
                    return p
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                pytest.fail(f"clperf ended ({self.proc.returncode}) before {what}: {out!r} {err!r}")
            time.sleep(0.1)
        pytest.fail(f"no {what} within {timeout_s:g} s")

    def left_after(self, sig: int) -> set[Proc]:
        """Send ``sig``; the recorded processes still alive ``GONE_WITHIN_S`` after clperf ended."""
        self.watch()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"clperf did not end within 10 s of {signal.Signals(sig).name}")
        deadline = time.monotonic() + GONE_WITHIN_S
        while time.monotonic() < deadline and any(_alive(p) for p in self.seen):
            time.sleep(0.05)
        return {p for p in self.seen if _alive(p)}

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pid, start in self.watch() | self.seen:
            if _alive((pid, start)):
                os.kill(pid, signal.SIGKILL)


@contextmanager
def tracked(argv: list[str], stdin: int | None = None) -> Iterator[Tracked]:
    c = Tracked(argv, {**os.environ, "PYTHONSAFEPATH": "1"}, stdin)
    try:
        yield c
    finally:
        c.cleanup()


def cli(*args: str) -> AbstractContextManager[Tracked]:
    return tracked([sys.executable, "-m", "clperf", *args])


def _is_clang(p: Proc) -> bool:
    return Path(_cmdline(p[0]).split(" ", 1)[0]).name.startswith("clang")


def _is_worker(p: Proc) -> bool:
    return "clperf.benchmark.worker" in _cmdline(p[0])


def _kernel_cpu_s(pid: int) -> float:
    """The most CPU time one of ``pid``'s threads other than its main thread has used: PoCL runs work-groups
    on its own threads, while the worker opens the device and builds the kernel on its main thread."""
    best = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        if task.name == str(pid):
            continue
        try:
            text = (task / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        best = max(best, int(fields[11]) + int(fields[12]))
    return best / os.sysconf("SC_CLK_TCK")


def _named(left: set[Proc]) -> list[str]:
    return [f"{pid}: {_cmdline(pid)[:120]}" for pid, _ in sorted(left)]


def _one_line_for(c: Tracked, sig: int) -> None:
    """clperf ended with 128 + the signal and one line on stderr, no traceback."""
    err = c.proc.stderr.read().decode() if c.proc.stderr else ""
    assert c.proc.returncode == 128 + sig, (c.proc.returncode, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert signal.Signals(sig).name in err, err


# ---- clang --------------------------------------------------------------------------------------------


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    path = tmp_path / "bomb.cl"
    path.write_text(MACRO_BOMB.format(levels=27))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGKILL", "SIGINT"])
def test_killed_analyze_leaves_no_clang(bomb: Path, sig: int) -> None:
    with cli("analyze", str(bomb)) as c:
        clang = c.wait_for("clang", _is_clang)
        time.sleep(0.5)
        assert _alive(clang), "clang ended by itself: the file no longer keeps it busy"
        left = c.left_after(sig)
        assert not left, f"left behind after {signal.Signals(sig).name}: {_named(left)}"
        if sig != signal.SIGKILL:
            _one_line_for(c, sig)


@pytest.mark.slow
def test_clang_over_its_memory_limit_is_a_diagnostic(tmp_path: Path) -> None:
    """A file whose clang needs ~1 GB, with a 300 MiB limit: clang's allocation fails, clperf says why."""
    path = tmp_path / "bomb.cl"
    path.write_text(MACRO_BOMB.format(levels=24))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "clperf", "analyze", str(path)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "CLPERF_CLANG_MEMORY_MB": "300"})
    assert time.monotonic() - t0 < 30
    assert "clang ran out of its memory limit (300 MiB" in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


def test_tiny_clang_memory_limit_is_a_diagnostic() -> None:
    """64 MiB is too little for clang to load its libraries: the same message, not a loader error."""
    r = subprocess.run([sys.executable, "-m", "clperf", "analyze", str(STENCIL)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "CLPERF_CLANG_MEMORY_MB": "64"})
    assert "clang ran out of its memory limit (64 MiB" in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


def _lsp(msg: Mapping[str, object]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killed_language_server_leaves_no_clang(bomb: Path, sig: int) -> None:
    """The editor's server (``python -P -m clperf.server``) analyses on didOpen, clang running from one of
    its analysis threads; the editor dies, or kills it: clang goes too."""
    with tracked([sys.executable, "-P", "-m", "clperf.server", "--stdio"], stdin=subprocess.PIPE) as c:
        stdin = c.proc.stdin
        assert stdin is not None
        for msg in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"processId": None, "rootUri": bomb.parent.as_uri(), "capabilities": {}}},
                    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
                    {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": {"uri": bomb.as_uri(), "languageId": "opencl", "version": 1,
                                                 "text": bomb.read_text()}}}):
            stdin.write(_lsp(msg))
        stdin.flush()
        c.wait_for("clang", _is_clang)
        time.sleep(0.5)
        left = c.left_after(sig)
        assert not left, f"left behind after {signal.Signals(sig).name}: {_named(left)}"


# ---- benchmark worker ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killed_bench_leaves_no_spinning_worker(pocl, tmp_path: Path, sig: int) -> None:  # noqa: ANN001
    path = tmp_path / "spin.cl"
    path.write_text(SPIN)
    with cli("bench", str(path), "--device", "pocl", "--global", "1", "--local", "1", "--arg", "flag=1",
             "--arg", "out=1", "--fill", "flag=zeros", "--timeout", "50", "--no-store") as c:
        worker = c.wait_for("benchmark worker", _is_worker)
        c.wait_for("spinning kernel", lambda p: p == worker and _kernel_cpu_s(p[0]) > 1.0)
        left = c.left_after(sig)
        assert not left, f"left behind after {signal.Signals(sig).name}: {_named(left)}"
        if sig != signal.SIGKILL:
            _one_line_for(c, sig)


# ---- the module itself ---------------------------------------------------------------------------------


def test_timeout_kills_the_whole_group() -> None:
    """A timed-out child's own children go with it (``subprocess.run`` kills only the direct child)."""
    marker = f"60.{time.monotonic_ns() % 10**9:09d}"  # a sleep no other process has
    with pytest.raises(subprocess.TimeoutExpired):
        children.run(["sh", "-c", f"sleep {marker} & exec sleep 61"], timeout_s=0.5)
    time.sleep(0.2)
    left = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
            if marker in _cmdline(pid) and (st := _stat(pid)) is not None and st[2] not in "ZX"]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left


def test_terminate_all_from_another_thread_is_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(children, "_closing", False)
    p = children.popen(["sleep", "60"])
    t = threading.Thread(target=children.terminate_all)
    t.start()
    t.join(5)
    children.terminate_all()
    assert p.poll() == -signal.SIGTERM
    with pytest.raises(children.ShuttingDown):
        children.run(["true"], timeout_s=5)
    monkeypatch.setattr(children, "_closing", False)
    assert children.run(["true"], timeout_s=5).returncode == 0


POOL = """
import concurrent.futures as cf, multiprocessing, sys, time
from clperf.core import children
with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                            initializer={initializer}) as pool:
    print(pool.submit(children.os.getpid).result(), flush=True)
    pool.submit(time.sleep, 60)
    time.sleep(60)
"""


@pytest.mark.slow
def test_a_busy_pool_worker_ends_with_its_killed_parent() -> None:
    """A process pool's worker (training, the benchmark worker's builders) running a long task when its
    parent is killed: the initializer ``children.limit_self`` makes it end (an idle one ends anyway, at
    the end of its queue; a busy one would finish its task first)."""
    parent = subprocess.Popen([sys.executable, "-c", POOL.format(initializer="children.limit_self")],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    worker: Proc | None = None
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        st = _stat(pid)
        assert st is not None
        worker = (pid, st[3])
        time.sleep(0.3)  # the sleep is submitted
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + GONE_WITHIN_S
        while time.monotonic() < deadline and _alive(worker):
            time.sleep(0.05)
        assert not _alive(worker)
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait()
        if worker is not None and _alive(worker):
            os.kill(worker[0], signal.SIGKILL)


def test_a_child_lives_as_long_as_the_pool_thread_that_started_it() -> None:
    """The parent-death signal follows the thread that started the child: one started from a pool's
    thread (the language server's pools) lives on while that thread waits for more work, and ends when
    the thread ends."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1)
    child = pool.submit(children.popen, ["sleep", "30"]).result()
    try:
        time.sleep(0.5)
        assert child.poll() is None, "killed when the task that started it returned"
        pool.shutdown(wait=True)
        assert child.wait(timeout=GONE_WITHIN_S) == -signal.SIGKILL
    finally:
        pool.shutdown(wait=False)
        children.kill_group(child)
        child.wait()
        children.forget(child)
