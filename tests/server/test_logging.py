"""The server's log reaches the editor as window/logMessage, each record at its level, and not twice:
once a client is connected stderr stays quiet, and takes the log again when the connection ends."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO, Any

import pytest

from clperf.server.logs import message_type


def _reader(stream: IO[bytes], out: queue.Queue[Any]) -> None:
    while True:
        length = None
        while (line := stream.readline()).strip():
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if length is None:
            out.put(None)
            return
        out.put(json.loads(stream.read(length)))


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def _until(messages: queue.Queue[Any], predicate: Any, timeout_s: float = 30) -> list[Any]:
    seen: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            msg = messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if msg is None:
            break
        seen.append(msg)
        if predicate(msg):
            return seen
    raise AssertionError(f"not seen within {timeout_s:g} s: {seen}")


def test_levels_map_to_lsp_message_types() -> None:
    assert [message_type(n) for n in (50, 40, 30, 20, 10)] == [1, 1, 2, 3, 4]


@pytest.mark.e2e
def test_log_records_go_to_the_client_at_their_level_and_not_to_stderr() -> None:
    home = tempfile.mkdtemp(prefix="clperf-log-")
    proc = subprocess.Popen([sys.executable, "-m", "clperf.server", "--stdio", "--log-level", "INFO"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "CLPERF_HOME": home})
    assert proc.stdout is not None and proc.stderr is not None
    messages: queue.Queue[Any] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, messages), daemon=True).start()
    try:
        _send(proc, {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                  "capabilities": {}}})
        _until(messages, lambda m: m.get("id") == 1)
        _send(proc, {"method": "initialized", "params": {}})
        # a client without workspace/configuration sends the settings with the change: a bad one is
        # logged as a warning (and shown as a message)
        _send(proc, {"method": "workspace/didChangeConfiguration",
                     "params": {"settings": {"clperf": {"benchmarkTimeout": "soon"}}}})
        logged = _until(messages, lambda m: m.get("method") == "window/logMessage"
                        and "benchmarkTimeout" in m["params"]["message"])
        warning = logged[-1]["params"]
        assert warning["type"] == 2 and warning["message"].startswith("clperf.server: settings: ")
        infos = _until(messages, lambda m: m.get("method") == "window/logMessage"
                       and "discovered OpenCL devices" in m["params"]["message"])  # from a worker thread
        assert infos[-1]["params"]["type"] == 3
        _send(proc, {"id": 2, "method": "shutdown"})
        _until(messages, lambda m: m.get("id") == 2)
        _send(proc, {"method": "exit"})
        proc.wait(timeout=30)
        stderr = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert "benchmarkTimeout" not in stderr and "discovered OpenCL devices" not in stderr, stderr
    assert "INFO clperf.server: exiting (code 0)" in stderr  # the connection is over: stderr again
