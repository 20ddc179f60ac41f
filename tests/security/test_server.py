"""The language server stays responsive, exits at once and answers every request.

A real ``python -m clperf.server`` via pytest-lsp (tests/server/conftest.py's configuration): ``exit`` and
end of input during a minutes-long analysis end the process and its clang children within seconds;
requests with positions outside the document, or outside the protocol's ranges, get an answer; two slow
files never hold back a small one's diagnostics; a file past the quick-parse limit says which views are off.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import server_conftest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

INVALID_PARAMS = -32602
EXIT_S = 3.0  # exit/EOF to the process gone, with terminate_all's grace for clang


lsp = server_conftest  # tests/server/conftest.py, loaded by tests/security/conftest.py


def many_kernels(n: int, prefix: str = "k") -> str:
    """``n`` small kernels, each with its own strides (no estimate is shared): the analysis grows faster
    than ``n`` (about 45 s for 300 on two cores, two minutes for 500)."""
    return "".join(f"__kernel void {prefix}{i}(__global float *a, float s)\n{{\n"
                   f"    int i = get_global_id(0);\n    a[i * {i + 1}] = a[i * {i + 2}] * s + {i}.0f;\n}}\n"
                   for i in range(n))


def descendants(pid: int) -> dict[int, str]:
    """pid -> name of every process below ``pid`` (children, grandchildren...)."""
    parents: dict[int, tuple[int, str]] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            parents[int(status.parent.name)] = (int(fields["PPid"]), fields["Name"].strip())
        except (OSError, KeyError, ValueError):
            continue
    found: dict[int, str] = {}
    frontier = {pid}
    while frontier:
        frontier = {p for p, (pp, _) in parents.items() if pp in frontier and p not in found}
        found.update({p: parents[p][1] for p in frontier})
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        state = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                 if line.startswith("State:")]
    except OSError:
        return False
    return bool(state) and "Z" not in state[0].split()[1]


async def _busy_with(client: LanguageClient, text: str, name: str) -> tuple[int, dict[int, str]]:
    """Open ``text`` and wait until its analysis is under way (clang seen, or two seconds of the long
    estimate loop); the server's pid and the clang processes seen below it."""
    assert client._server is not None
    pid = client._server.pid
    await lsp.open_doc(client, text, name=name, wait=False)
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        seen.update({p: n for p, n in descendants(pid).items() if n.startswith("clang")})
        if seen:
            break
        await asyncio.sleep(0.02)
    else:
        await asyncio.sleep(2.0)
    return pid, seen


@pytest.mark.e2e
@pytest.mark.slow
async def test_exit_during_a_long_analysis_ends_the_server_and_its_clang(server: LanguageClient) -> None:
    pid, clangs = await _busy_with(server, many_kernels(3000), "thousands.cl")
    assert clangs, "clang was never seen compiling the file"  # so exit has a child to end
    await asyncio.wait_for(server.shutdown_async(None), 5)
    start = time.monotonic()
    server.exit(None)
    assert server._server is not None
    await asyncio.wait_for(server._server.wait(), EXIT_S)
    assert time.monotonic() - start < EXIT_S
    assert server._server.returncode == 0  # exit after shutdown is a success
    left = {p: n for p, n in clangs.items() if alive(p)}
    assert not left, f"clang left running after the server exited: {left}"


@pytest.mark.e2e
@pytest.mark.slow
async def test_exit_without_shutdown_and_end_of_input_also_end_it(server: LanguageClient) -> None:
    pid, _ = await _busy_with(server, many_kernels(500), "many.cl")
    assert server._server is not None and server._server.stdin is not None
    start = time.monotonic()
    server._server.stdin.close()  # the editor died: stdin ends without shutdown or exit
    await asyncio.wait_for(server._server.wait(), EXIT_S)
    assert time.monotonic() - start < EXIT_S
    assert server._server.returncode == 1  # no shutdown came first
    assert not [p for p in descendants(pid) if alive(p)]


async def _raw(client: LanguageClient, method: str, params: dict[str, Any], timeout_s: float = 10) -> Any:
    """Send a request as raw JSON (lsprotocol refuses to build a negative position); the answer, or the
    error the server sent. A request left unanswered fails the test with a timeout."""
    protocol = client.protocol
    msg_id = str(uuid.uuid4())
    future: Future[Any] = Future()
    protocol._request_futures[msg_id] = future
    protocol._result_types[msg_id] = protocol.get_result_type(method)
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)
    except JsonRpcException as e:
        return e


def _pos(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


@pytest.mark.e2e
async def test_every_request_with_a_bad_position_is_answered(server: LanguageClient) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(server, text)
    doc = {"uri": uri}
    bad = [_pos(10**6, 0), _pos(0, 10**6), _pos(10**6, -1), _pos(-1, 0), _pos(2**31, 2**31),
           _pos(3, 2**40)]
    for p in bad:
        hover = await _raw(server, "textDocument/hover", {"textDocument": doc, "position": p})
        assert hover is None or (isinstance(hover, JsonRpcException) and hover.code == INVALID_PARAMS), hover
        rng = {"start": _pos(0, 0), "end": p}
        hints = await _raw(server, "textDocument/inlayHint", {"textDocument": doc, "range": rng})
        assert isinstance(hints, (list, tuple, JsonRpcException)), hints
        actions = await _raw(server, "textDocument/codeAction",
                             {"textDocument": doc, "range": {"start": p, "end": p},
                              "context": {"diagnostics": []}})
        assert isinstance(actions, (list, tuple, JsonRpcException)), actions
    backwards = {"start": _pos(20, 0), "end": _pos(2, 0)}
    hints = await _raw(server, "textDocument/inlayHint", {"textDocument": doc, "range": backwards})
    assert isinstance(hints, (list, tuple, JsonRpcException)), hints
    lens = {"range": {"start": _pos(10**6, 0), "end": _pos(10**6, 1)}}
    resolved = await _raw(server, "codeLens/resolve", lens)
    assert resolved is not None, resolved  # the lens back, or an error: an answer either way
    junk = await _raw(server, "textDocument/hover", {"textDocument": doc, "position": "line 3"})
    assert isinstance(junk, JsonRpcException) and junk.code == INVALID_PARAMS
    # and the server still works on good positions
    line = lsp.line_of(text, "void strided(")
    hover = await server.text_document_hover_async(types.HoverParams(
        text_document=lsp.doc_id(uri), position=types.Position(line=line, character=16)))
    assert hover is not None and "strided" in str(hover.contents)


@pytest.mark.e2e
@pytest.mark.slow
async def test_two_slow_files_never_hold_back_a_small_one(server: LanguageClient) -> None:
    await lsp.open_doc(server, many_kernels(400, "a"), name="slow_a.cl", wait=False)
    await lsp.open_doc(server, many_kernels(400, "b"), name="slow_b.cl", wait=False)
    await asyncio.sleep(1.0)  # both slow analyses are running
    start = time.monotonic()
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(server, text, name="small.cl", wait=False)
    await lsp.until(lambda: lsp.published(server, uri), timeout_s=15, what="diagnostics of the small file")
    assert time.monotonic() - start < 15
    assert any(d.code == "uncoalesced-access" for d in server.diagnostics[uri])
    # a code action on a slow file and a hover on the small one are answered meanwhile
    line = lsp.line_of(text, "void strided(")
    answers = await asyncio.wait_for(asyncio.gather(
        server.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0),
                              end=types.Position(line=30, character=0)),
            context=types.CodeActionContext(diagnostics=list(server.diagnostics[uri])))),
        server.text_document_hover_async(types.HoverParams(
            text_document=lsp.doc_id(uri), position=types.Position(line=line, character=16)))), 15)
    assert answers[1] is not None


@pytest.mark.e2e
@pytest.mark.slow
async def test_a_superseded_analysis_stops_and_frees_its_thread(server: LanguageClient) -> None:
    """A slow file replaced: the analysis of the old text stops at its next kernel, so the new version's
    diagnostics come long before the old analysis (500 kernels, minutes) would have ended."""
    text = many_kernels(500)
    uri = await lsp.open_doc(server, text, name="edited.cl", wait=False)
    await asyncio.sleep(2.0)
    small = "__kernel void only(__global float *a) { a[get_global_id(0)] *= 2.0f; }\n"
    start = time.monotonic()
    lsp.replace_all(server, uri, small, version=2)
    await lsp.until(lambda: lsp.published(server, uri, 2), timeout_s=20, what="diagnostics of version 2")
    assert time.monotonic() - start < 20
    assert not lsp.published(server, uri, 1)  # the old version's result was dropped, never published


@pytest.mark.e2e
async def test_a_file_past_the_quick_parse_limit_says_which_views_are_off(server: LanguageClient) -> None:
    kernel = lsp.fixture_text("kernels.cl")
    text = kernel + "\n// " + "padding " * 50_000 + "\n"  # 400 k characters, one line of comment
    assert 300_000 < len(text) < 1_000_000
    uri = await lsp.open_doc(server, text, name="large.cl")
    notes = [d for d in server.diagnostics[uri] if d.code == "views-off"]
    assert len(notes) == 1, server.diagnostics[uri]
    assert notes[0].severity == types.DiagnosticSeverity.Information
    assert "lenses" in notes[0].message and "k characters" in notes[0].message
    lenses = await server.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    assert list(lenses or []) == []

