"""Kernels run only on an explicit action, and start-up never imports the opened project's code.

The kernel under test makes a ``mkdir`` system call (x86-64 inline assembly, only where PoCL compiles it
for this CPU: clperf's own analysis compiles for ``spir64``, where ``__x86_64__`` is not defined) of a
marker path: the marker exists exactly when the kernel ran. ``clperf bench`` on it is the positive
control. Start-up is tried with shadowing ``clperf/``, ``pygls/`` and ``lsprotocol/`` folders that write
a marker when imported, launched the way the VS Code extension launches the server (its own TypeScript,
bundled and run by node against a stub of the ``vscode`` module).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import server_conftest
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "vscode-client"
PACKAGE = json.loads((CLIENT / "package.json").read_text())

# the language-server fixtures (a real ``python -m clperf.server`` driven by pytest-lsp) of
# tests/server/conftest.py, loaded by tests/security/conftest.py
bare = server_conftest.bare
lsp = server_conftest.lsp

ASM_KERNEL = """\
__constant char MARK[] = "{marker}";

// clperf: --global n --local 64 --arg n=4096 --arg x=n+8 --arg y=n
__kernel void fir8(__global const float *x, __global float *y, int n)
{{
    int i = get_global_id(0);
#ifdef __x86_64__
    if (i == 0) {{
        long ret;  /* mkdir(MARK, 0755): syscall 83 */
        __asm__ volatile ("syscall" : "=a"(ret) : "a"(83L), "D"(MARK), "S"(0755L) : "rcx", "r11", "memory");
    }}
#endif
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k] * (1.0f / (k + 1));
    y[i] = acc;
}}
"""


def asm_kernel(marker: Path) -> str:
    assert '"' not in str(marker) and "\\" not in str(marker)
    return ASM_KERNEL.format(marker=marker)


# --- the positive control: the kernel really runs, and then the marker appears -----------------------


@pytest.mark.slow
def test_benchmarking_the_kernel_runs_it(tmp_path: Path, pocl: Any) -> None:
    marker = tmp_path / "ran"
    source = tmp_path / "k.cl"
    source.write_text(asm_kernel(marker))
    out = subprocess.run([sys.executable, "-m", "clperf", "bench", str(source), "--kernel", "fir8",
                          "--device", "pocl"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert marker.is_dir(), "the benchmarked kernel did not run: this test file proves nothing"


# --- code actions -----------------------------------------------------------------------------------


async def _code_actions(client: Any, uri: str, diag: types.Diagnostic) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag],
                                        trigger_kind=types.CodeActionTriggerKind.Automatic)))


@pytest.mark.e2e
@pytest.mark.slow
async def test_an_automatic_code_action_on_the_local_pocl_runs_no_kernel(bare: Any, lsp: Any, tmp_path: Path,
                                                                         pocl: Any) -> None:
    from clperf.core.paths import state_dir

    # the user measured the device (``clperf devices``): PoCL has a prediction, so quick fixes get speedups
    shutil.copytree(state_dir() / "devices", tmp_path / "state" / "devices")
    await lsp.start(bare, "visual-studio-code", {"cacheDirectory": str(tmp_path / "state"),
                                                 "device": "portable"})
    marker = tmp_path / "ran"
    uri = await lsp.open_doc(bare, asm_kernel(marker), folder=tmp_path)
    diag = next(d for d in bare.diagnostics[uri] if d.code == "unroll-candidate")
    found = await _code_actions(bare, uri, diag)
    fix = next(a for a in found if a.title.startswith("Insert #pragma unroll 8"))
    assert "predicted" in fix.title, fix.title  # the static model's speedup
    # a counting run would be a worker process of the server's, ended within seconds
    pid = bare._server.pid
    await lsp.until(lambda: not any(n.startswith("python") for n in lsp.children(pid)), timeout_s=60,
                    what="the server's workers to end")
    await _code_actions(bare, uri, diag)  # asked again, as an editor does when the cursor moves
    await asyncio.sleep(1.0)
    assert not any(n.startswith("python") for n in lsp.children(pid)), lsp.children(pid)
    assert not marker.exists(), "a code action ran the file's kernel"


def test_settings_that_run_kernels_or_choose_folders_are_the_users_only() -> None:
    """The server cannot tell user from workspace settings over LSP: VS Code can, by the setting's scope
    (a workspace's .vscode/settings.json cannot set a machine or application setting)."""
    props = PACKAGE["contributes"]["configuration"]["properties"]
    for name in ("clperf.poclCode", "clperf.cacheDirectory", "clperf.pythonPath"):
        assert props[name].get("scope") in ("machine", "application"), (name, props[name].get("scope"))


def test_the_extension_waits_for_workspace_trust() -> None:
    trust = PACKAGE.get("capabilities", {}).get("untrustedWorkspaces")
    assert trust is not None, "package.json declares no workspace-trust behaviour"
    assert trust["supported"] is False
    assert trust.get("description")


# --- start-up ---------------------------------------------------------------------------------------


def _plant(folder: Path, names: tuple[str, ...] = ("clperf", "pygls", "lsprotocol")) -> list[Path]:
    """Packages in ``folder`` that shadow the real ones and leave a marker when imported."""
    markers = []
    for name in names:
        (folder / name).mkdir(parents=True, exist_ok=True)
        marker = folder / f"imported-{name}"
        (folder / name / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
        markers.append(marker)
    return markers


class _Lsp:
    """A bare LSP client over a subprocess's stdio: initialize, then shutdown and exit."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line or length is None:
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(out.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def answer(self, request_id: int, timeout_s: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                msg = self.inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer to request {request_id} in {timeout_s:g} s") from None
            if msg is None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise AssertionError(f"the server closed its output: {err[-2000:]}")
            if "method" in msg and "id" in msg:  # the server asks (workspace/configuration, ...)
                items = msg.get("params", {}).get("items")
                self.send({"id": msg["id"], "result": [None] * len(items) if items else None})
            elif msg.get("id") == request_id:
                return msg

    def session(self, root: Path) -> dict[str, Any]:
        try:
            self.send({"id": 1, "method": "initialize",
                       "params": {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}}})
            init = self.answer(1)
            self.send({"method": "initialized", "params": {}})
            self.send({"id": 2, "method": "shutdown"})
            self.answer(2)
            self.send({"method": "exit"})
            self.proc.wait(timeout=30)
            return init
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    return {**env, "CLPERF_HOME": os.environ.get("CLPERF_HOME", str(Path.home() / ".cache" / "clperf")),
            **extra}


def _extension_launch(tmp_path: Path, workspace: Path) -> dict[str, Any]:
    """How the extension's own code (vscode-client/src/common/python.ts) starts the server: bundled with
    esbuild, run by node with ``vscode`` stubbed to a workspace at ``workspace``; its interpreter probe
    (``whyNotUsable``) is run for real with this interpreter."""
    esbuild = CLIENT / "node_modules" / ".bin" / "esbuild"
    node = shutil.which("node")
    if node is None or not esbuild.exists():
        pytest.skip("node and the extension's npm packages (cd vscode-client && npm ci) are needed")
    bundle = tmp_path / "ext" / "python.js"
    subprocess.run([str(esbuild), str(CLIENT / "src" / "common" / "python.ts"), "--bundle", "--format=cjs",
                    "--platform=node", "--external:vscode", f"--outfile={bundle}", "--log-level=warning"],
                   check=True, timeout=60)
    harness = tmp_path / "ext" / "harness.js"
    harness.write_text("""
const Module = require("module");
const [bundle, workspace, python] = process.argv.slice(2);
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request !== "vscode") return load.call(this, request, ...rest);
  return {
    workspace: { workspaceFolders: [{ uri: { fsPath: workspace } }],
                 getConfiguration: () => ({ get: (_key, fallback) => fallback }) },
    extensions: { getExtension: () => undefined },
  };
};
const py = require(bundle);
py.whyNotUsable(python).then((why) => {
  const env = py.serverEnv();
  console.log(JSON.stringify({ args: py.SERVER_ARGS, cwd: py.serverCwd(), why: why ?? null,
                               safepath: env.PYTHONSAFEPATH ?? null }));
});
""")
    out = subprocess.run([node, str(harness), str(bundle), str(workspace), sys.executable],
                         capture_output=True, text=True, timeout=120, cwd=workspace)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.e2e
@pytest.mark.slow
def test_the_extension_starts_the_server_in_safe_path_mode_outside_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "cloned-project"
    markers = _plant(workspace)
    markers += _plant(tmp_path / "ext")  # where the bundle runs: the extension's folder, as installed
    launch = _extension_launch(tmp_path, workspace)
    assert launch["why"] is None, launch["why"]  # the probe imported the installed clperf.server
    assert launch["args"][:1] == ["-P"], launch["args"]
    assert launch["safepath"] == "1"
    cwd = Path(launch["cwd"]).resolve()
    assert cwd != workspace.resolve() and workspace.resolve() not in cwd.parents, cwd
    # the launch as the extension makes it (vscode-languageclient appends --stdio), from its folder and,
    # as a client could, from the workspace itself
    for where in (cwd, workspace):
        init = _Lsp([sys.executable, *launch["args"], "--stdio"], where,
                    _env(PYTHONSAFEPATH=launch["safepath"])).session(workspace)
        assert init["result"]["serverInfo"]["name"] == "clperf", init
    assert not [m.name for m in markers if m.exists()], "the project's code was imported"


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("entry", [["-m", "clperf.server", "--stdio"], ["-m", "clperf", "serve"]])
def test_a_launch_without_safe_path_mode_restarts_itself_in_it(tmp_path: Path, entry: list[str]) -> None:
    """``python -m ...`` in a project folder puts that folder first on ``sys.path``. A ``clperf/`` there is
    imported before any clperf code runs (only the launcher's ``-P`` stops that); everything the server
    imports after its start-up check (pygls, lsprotocol, ...) must come from the installed packages."""
    markers = _plant(tmp_path, ("pygls", "lsprotocol"))
    init = _Lsp([sys.executable, *entry], tmp_path, _env()).session(tmp_path)
    assert init["result"]["serverInfo"]["name"] == "clperf", init
    assert not [m.name for m in markers if m.exists()], "the working directory's packages were imported"
