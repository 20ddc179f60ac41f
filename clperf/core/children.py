"""Child processes that cannot outlive clperf: clang, LLVM's tools, benchmark workers, drivers.

Every child runs in its own process group (so a timeout or a shutdown ends the child *and* whatever it
started), gets a parent-death signal (Linux ``PR_SET_PDEATHSIG``: the kernel sends it SIGKILL when clperf
dies, even by SIGKILL, where no Python code runs) and, when asked, an address-space limit
(``RLIMIT_AS``). The live children are registered, so that ``terminate_all`` can end them all when the CLI
gets SIGTERM/SIGHUP/SIGINT or the language server gets ``exit``; it also runs at interpreter exit.

The parent-death signal is tied to the *thread* that started the child, not to the process: the kernel
sends it when that thread ends. clperf starts children from the main thread, from the language server's
ThreadPoolExecutor threads (its analysis and benchmark pools: a pool's threads live until the pool is shut
down, they do not end when idle) and from ``benchmark.compiled``'s costing thread, which waits for every
child it starts before it ends. No child outlives the call that started it, so none is killed early. A
new caller must keep it so: start a child from a thread that outlives it (not a one-shot thread that
returns while the child should go on).
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

log = logging.getLogger(__name__)

CLANG_MEMORY_MB = 4096  # clang and LLVM's tools: a few hundred MiB on real kernels
TERM_GRACE_S = 0.5  # between SIGTERM and SIGKILL in terminate_all
_PR_SET_PDEATHSIG = 1


class ShuttingDown(OSError):
    """``terminate_all`` has run: clperf is exiting and starts no new child."""


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


# resolved here, in the parent: the child between fork and exec only calls it
_prctl = _load_prctl()
_lock = threading.RLock()  # reentrant: a signal handler in the main thread may run while it holds it
_live: dict[int, subprocess.Popen[bytes]] = {}
_closing = False


def _address_limit(memory_bytes: int | None) -> int | None:
    """``memory_bytes`` capped at the hard limit clperf itself runs under (raising it would fail)."""
    if not memory_bytes or memory_bytes <= 0:
        return None
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    return memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)


def _preexec(parent: int, limit: int | None) -> Callable[[], None]:
    """The function the child runs between fork and exec.

    In a threaded program only the forking thread exists in the child, and a lock another thread held at
    the fork stays held there forever. So this does only system calls through objects made in the parent
    (ctypes' prctl resolved at import, ``resource``, ``os``): no imports, no logging, no locks, nothing that
    allocates more than a few small ints. That is the part of ``preexec_fn`` that is safe with threads;
    subprocess itself offers no parent-death signal, and a launcher program (setpriv, prlimit) would be
    one more dependency that may be missing.
    """
    prctl, option, sigkill = _prctl, _PR_SET_PDEATHSIG, int(signal.SIGKILL)
    getppid, exit_now, setrlimit, rlimit_as = os.getppid, os._exit, resource.setrlimit, resource.RLIMIT_AS

    def setup() -> None:
        if prctl is not None:
            prctl(option, sigkill, 0, 0, 0)
            if getppid() != parent:  # clperf died before the signal was set: nobody would send it
                exit_now(255)
        if limit is not None:
            setrlimit(rlimit_as, (limit, limit))

    return setup


def popen(cmd: Sequence[str], *, memory_bytes: int | None = None,
          **popen_kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(cmd, **popen_kwargs)`` in its own process group, with the parent-death signal and
    (``memory_bytes``) an address-space limit, registered until it has been waited for. Raises
    ``ShuttingDown`` (an OSError) once ``terminate_all`` has run."""
    if _closing:
        raise ShuttingDown(f"clperf is exiting: {cmd[0]} not started")
    for key in ("preexec_fn", "start_new_session", "process_group"):
        if key in popen_kwargs:
            raise TypeError(f"children.popen sets {key} itself")
    proc: subprocess.Popen[bytes] = subprocess.Popen(
        list(cmd), process_group=0, preexec_fn=_preexec(os.getpid(), _address_limit(memory_bytes)),
        **popen_kwargs)
    with _lock:
        for pid in [pid for pid, p in _live.items() if p.returncode is not None]:
            del _live[pid]  # waited for by their owners
        _live[proc.pid] = proc
        closing = _closing
    if closing:  # terminate_all ran while this one was being started
        kill_group(proc)
        proc.wait()
        forget(proc)
        raise ShuttingDown(f"clperf is exiting: {cmd[0]} stopped")
    return proc


def run(cmd: Sequence[str], *, input: bytes | None = None, timeout_s: float, cwd: str | None = None,
        memory_bytes: int | None = None, env: Mapping[str, str] | None = None,
        ) -> subprocess.CompletedProcess[bytes]:
    """Run ``cmd`` to its end like ``subprocess.run(capture_output=True)``, as ``popen`` starts it, with
    ``input`` on stdin (otherwise /dev/null: a child never reads clperf's own stdin, which is the language
    server's protocol). After ``timeout_s`` the whole process group is killed and
    ``subprocess.TimeoutExpired`` raised; so is it when anything interrupts the wait."""
    proc = popen(cmd, memory_bytes=memory_bytes, cwd=cwd, env=env,
                 stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with proc:
            try:
                out, err = proc.communicate(input, timeout=timeout_s)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                try:
                    out, err = proc.communicate(timeout=5)
                except subprocess.TimeoutExpired:  # a grandchild left the group and holds the pipes
                    out, err = b"", b""
                raise subprocess.TimeoutExpired(list(cmd), timeout_s, out, err) from None
            except BaseException:
                kill_group(proc)
                raise
    finally:
        forget(proc)
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)


def kill_group(proc: subprocess.Popen[Any], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to ``proc``'s whole process group while ``proc`` has not been waited for (its pid, the
    group's id, cannot have been reused then); the group's other members die with it or by their own
    parent-death signal."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def forget(proc: subprocess.Popen[Any]) -> None:
    """Drop ``proc`` from the registry (its owner has waited for it)."""
    with _lock:
        if _live.get(proc.pid) is proc:
            del _live[proc.pid]


def live() -> list[subprocess.Popen[bytes]]:
    """The registered children that have not been waited for."""
    with _lock:
        return [p for p in _live.values() if p.returncode is None]


def terminate_all(grace_s: float = TERM_GRACE_S) -> None:
    """End every live child and its process group: SIGTERM, up to ``grace_s`` to exit, then SIGKILL; also
    the multiprocessing children (process pools). From then on no child is started (``ShuttingDown``).

    Safe from any thread and from a signal handler (the registry's lock is reentrant, waits are bounded
    and never block on a lock another thread holds), and idempotent: a second call finds nothing left.
    """
    global _closing
    with _lock:
        _closing = True
        procs = [p for p in _live.values() if p.returncode is None]
        _live.clear()
    for p in procs:
        kill_group(p, signal.SIGTERM)
    pools = multiprocessing.active_children()
    for c in pools:
        c.terminate()
    deadline = time.monotonic() + grace_s
    pending = [*procs]
    while pending and time.monotonic() < deadline:
        pending = [p for p in pending if p.poll() is None]  # poll never blocks on Popen's wait lock
        if pending:
            time.sleep(0.02)
    for p in procs:
        # the leader may have exited and been reaped just now while members of its group live on: the
        # group's id is not given to a new process while any member lives, and an empty group is an error
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=max(0.0, deadline + 1.0 - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for c in pools:
        if c.is_alive():
            c.kill()


def limit_self(memory_bytes: int | None = None) -> None:
    """In a multiprocessing child (a ProcessPoolExecutor's ``initializer``): SIGKILL this process when its
    parent dies, and cap its address space at ``memory_bytes`` when given."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        parent = multiprocessing.parent_process()
        if parent is not None and parent.pid is not None and os.getppid() != parent.pid:
            os._exit(255)  # the parent died before the signal was set
    limit = _address_limit(memory_bytes)
    if limit is not None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def memory_mb(env_name: str, default_mb: int) -> int | None:
    """The limit in bytes from ``$env_name`` (MiB; 0 for none) or ``default_mb``. A value that is not a
    whole number is reported in the log and the default used."""
    text = os.environ.get(env_name, "").strip()
    mb = default_mb
    if text:
        try:
            mb = int(text)
        except ValueError:
            log.warning("%s=%r is not a number of MiB; using %d", env_name, text, default_mb)
    return mb * 1024 * 1024 if mb > 0 else None


def clang_memory_bytes() -> int | None:
    """clang's and LLVM's tools' address-space limit: ``$CLPERF_CLANG_MEMORY_MB`` or 4 GiB."""
    return memory_mb("CLPERF_CLANG_MEMORY_MB", CLANG_MEMORY_MB)


def worker_memory_bytes() -> int | None:
    """A CPU OpenCL worker's limit: ``$CLPERF_WORKER_MEMORY_MB`` or the machine's memory, at least 8 GiB
    (PoCL reserves address space per thread, more than it uses). GPU workers get none: their drivers map
    huge ranges of virtual addresses."""
    total_mb = 8192
    try:
        total_mb = max(total_mb, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024))
    except (ValueError, OSError):
        pass
    return memory_mb("CLPERF_WORKER_MEMORY_MB", total_mb)


atexit.register(terminate_all)
