"""initialize: advertised capabilities, a fast first answer, and nothing heavy on that path."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient


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
        "import sys, time; t=time.perf_counter(); from clperf.server.wiring import build_server; "
        "build_server(); print(time.perf_counter()-t); "
        "print(sorted(m for m in ('torch','pyopencl','llvmlite','transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[1] == "[]", out


@pytest.mark.e2e
@pytest.mark.parametrize("flag", [[], ["--stdio"]])
def test_initialize_answers_quickly(flag: list[str]) -> None:
    """Spawn -> initialize response, measured the way an editor sees it (generous bound for a shared CI)."""
    import json

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        }
    )
    msg = f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clperf.server", *flag],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(msg)
    proc.stdin.flush()
    header = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.kill()
    proc.wait()
    assert header.startswith(b"Content-Length")
    assert elapsed < 3.0, f"initialize took {elapsed:.2f} s"
