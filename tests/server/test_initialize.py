"""initialize: advertised capabilities, a fast first answer, and nothing heavy on that path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities


@pytest.mark.e2e
async def test_capabilities(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.hover_provider
    assert caps.code_lens_provider is not None
    assert caps.inlay_hint_provider
    assert caps.code_action_provider
    assert set(caps.execute_command_provider.commands) >= {"clperf.benchmark", "clperf.selectDevice"}
    sync = caps.text_document_sync
    assert sync.save is not None and sync.change == types.TextDocumentSyncKind.Incremental


def test_import_path_is_light() -> None:
    """Building the server imports neither torch, pyopencl nor llvmlite (they load later, off the loop)."""
    code = (
        "import sys; from clperf.server.wiring import build_server; build_server(); "
        "print(sorted(m for m in ('torch','pyopencl','llvmlite','transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def _initialize(
    params: dict, fast: bool, flags: tuple[str, ...] = ("-m", "clperf.server")
) -> tuple[dict, float]:
    """Spawn the server, send initialize, return the answer and the time to it (as an editor sees it)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params})
    env = {**os.environ, "CLPERF_SERVER_FAST_INIT": "1" if fast else "0"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
    proc.stdin.flush()
    length = int(proc.stdout.readline().split(b":")[1])
    while proc.stdout.readline().strip():
        pass
    answer = json.loads(proc.stdout.read(length))
    elapsed = time.perf_counter() - start
    # exactly one answer to initialize: send shutdown and check the next message answers *that*
    for msg in ({"jsonrpc": "2.0", "id": 8, "method": "shutdown"},):
        data = json.dumps(msg)
        proc.stdin.write(f"Content-Length: {len(data)}\r\n\r\n{data}".encode())
        proc.stdin.flush()
    length = int(proc.stdout.readline().split(b":")[1])
    while proc.stdout.readline().strip():
        pass
    assert json.loads(proc.stdout.read(length))["id"] == 8
    proc.kill()
    proc.wait()
    return answer, elapsed


def _params(spec: str | None, encodings: list[str] | None = None) -> dict:
    caps: dict = {}
    if spec is not None:
        from lsprotocol.converters import get_converter

        caps = get_converter().unstructure(client_capabilities(spec))
    if encodings is not None:
        caps.setdefault("general", {})["positionEncodings"] = encodings
    return {"processId": None, "rootUri": None, "capabilities": caps}


@pytest.mark.e2e
@pytest.mark.parametrize(
    "params",
    [_params("visual-studio-code"), _params("neovim"), _params(None), _params(None, ["utf-8", "utf-16"])],
    ids=["vscode", "neovim", "bare", "utf-8"],
)
def test_early_answer_equals_pyglss_answer(params: dict) -> None:
    fast, _ = _initialize(params, fast=True)
    slow, _ = _initialize(params, fast=False)
    assert fast == slow


@pytest.mark.e2e
@pytest.mark.parametrize(
    "flags",
    [("-m", "clperf.server"), ("-m", "clperf.server", "--stdio"), ("-m", "clperf", "serve", "--stdio")],
)
def test_initialize_answers_quickly(flags: tuple[str, ...]) -> None:
    """Generous bound for a shared machine; bench/lsp_latency.py reports the real figure."""
    answer, elapsed = _initialize(_params("visual-studio-code"), fast=True, flags=flags)
    assert answer["result"]["serverInfo"]["name"] == "clperf"
    assert elapsed < 2.0, f"initialize took {elapsed:.2f} s"
