"""Fixtures for the editor end-to-end tests: the editor tool set-up (scripts/editor-setup.sh) and process
groups that are always killed, so a failed test never leaves code-server, Chromium or a language server
running on a shared machine."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"  # gitignored; CI keeps it
PYTHON = ROOT / ".venv" / "bin" / "python"
SETUP_TIMEOUT_S = 900  # a fresh machine: apt packages, npm ci, code-server (~2 min here)


@dataclass(frozen=True)
class EditorTools:
    code_server: Path
    vsix: Path
    playwright: Path  # a package.json whose node_modules hold playwright-core
    chromium: Path
    nvim: Path
    vscode_modules: Path  # VS Code's own node_modules inside code-server (vscode-textmate, oniguruma)
    python: Path  # the repository's .venv, which has clperf installed (scripts/setup.sh)
    artifacts: Path


@pytest.fixture(scope="session")
def editor_tools() -> EditorTools:
    """Runs scripts/editor-setup.sh once per session; skips only when this machine cannot be set up."""
    try:
        proc = subprocess.run(["bash", str(ROOT / "scripts" / "editor-setup.sh")], capture_output=True,
                              text=True, timeout=SETUP_TIMEOUT_S)
    except FileNotFoundError as e:
        pytest.skip(f"editor set-up impossible here: {e}")
    if proc.returncode == 3:
        pytest.skip(f"editor set-up impossible here: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, f"editor-setup.sh failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    cache = Path(os.environ.get("CLPERF_EDITOR_CACHE", ROOT / ".cache" / "editor"))
    code_server = cache / "code-server" / "node_modules" / "code-server"
    tools = EditorTools(
        code_server=cache / "code-server" / "node_modules" / ".bin" / "code-server",
        vsix=ROOT / "vscode-client" / "dist" / "clperf.vsix",
        playwright=cache / "code-server" / "package.json",
        chromium=Path("/usr/bin/chromium"),
        nvim=Path("/usr/bin/nvim"),
        vscode_modules=code_server / "lib" / "vscode" / "node_modules",
        python=PYTHON,
        artifacts=ARTIFACTS,
    )
    for p in (tools.code_server, tools.vsix, tools.chromium, tools.nvim):
        assert p.exists(), f"editor-setup.sh succeeded but {p} is missing"
    assert PYTHON.exists(), f"{PYTHON} is missing: run scripts/setup.sh first"
    return tools


def _pids_with(marker: str) -> list[int]:
    """Processes whose environment carries `marker`: everything this run started, even if it escaped its
    process group (Chromium's zygote, a language server's worker that called setsid)."""
    pids = []
    needle = marker.encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if needle in (d / "environ").read_bytes():
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


class Processes:
    """Starts commands each in a new session (= process group) tagged with one environment marker; `close()`
    kills the groups (TERM, then KILL) and then any tagged process left."""

    def __init__(self, logs: Path) -> None:
        self.marker = f"CLPERF_E2E_RUN={uuid.uuid4().hex}"
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []

    def env(self, **extra: str) -> dict[str, str]:
        key, value = self.marker.split("=", 1)
        return {**os.environ, **extra, key: value}

    def start(self, name: str, cmd: list[str], env: dict[str, str],
              cwd: Path | None = None) -> subprocess.Popen[bytes]:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    @staticmethod
    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    @staticmethod
    def wait_http(url: str, timeout_s: float, proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"{proc.args[0]} exited with {proc.returncode} before answering {url}"
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"{url} did not answer within {timeout_s} s")

    def close(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for p in self.procs:
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(p.poll() is None for p in self.procs):
                time.sleep(0.1)
        for pid in _pids_with(self.marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.procs.clear()  # a later session's close() must not signal a reused process id


@pytest.fixture(scope="module")
def processes(request: pytest.FixtureRequest) -> Iterator[Processes]:
    logs = ARTIFACTS / Path(request.module.__file__).stem
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(logs)
    try:
        yield procs
    finally:
        procs.close()
