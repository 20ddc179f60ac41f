"""Answer ``initialize`` before pygls is imported.

Importing pygls costs about 0.5 s on this project's machines (``lsprotocol.types`` builds ~1000 attrs
classes), which alone would miss the 0.5 s budget for the first response. The server's capabilities do not
depend on anything pygls computes except the position encoding, so: read the first message with the
standard library; if it is ``initialize``, answer it at once with the same result pygls would give; then
start pygls on a stream that replays that message first (pygls still sees and processes ``initialize``:
client capabilities, workspace folders, options) and drop pygls's own, second answer to it.

``CLPERF_SERVER_FAST_INIT=0`` turns this off; ``tests/server/test_initialize.py`` checks that both paths
give identical answers for several clients, so the static result below cannot drift from the wiring.
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO

from clperf import __version__

COMMANDS = ["clperf.selectDevice", "clperf.currentDevice", "clperf.benchmark"]
_ENCODINGS = ("utf-8", "utf-16", "utf-32")


def enabled() -> bool:
    return os.environ.get("CLPERF_SERVER_FAST_INIT", "1") != "0"


def initialize_result(params: Any) -> dict[str, Any]:
    """What ``wiring.build_server()`` answers, for these initialize params (encoding as pygls picks it)."""
    encoding = "utf-16"
    caps = (params or {}).get("capabilities") or {}
    general = caps.get("general") or {}
    for offered in general.get("positionEncodings") or ():
        if offered in _ENCODINGS:
            encoding = offered
            break
    sync: dict[str, Any] = {"openClose": True, "change": 2, "save": {"includeText": False}}
    client_sync = (caps.get("textDocument") or {}).get("synchronization") or {}
    for key in ("willSave", "willSaveWaitUntil"):  # pygls: client's flag AND a registered handler (none)
        if client_sync.get(key) is not None:
            sync[key] = False
    return {
        "capabilities": {
            "positionEncoding": encoding,
            "textDocumentSync": sync,
            "hoverProvider": True,
            "codeActionProvider": {"codeActionKinds": ["quickfix"]},
            "codeLensProvider": {"resolveProvider": False},
            "executeCommandProvider": {"commands": COMMANDS},
            "inlayHintProvider": {"resolveProvider": False},
            "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True},
                          "fileOperations": {}},
        },
        "serverInfo": {"name": "clperf", "version": __version__},
    }


def read_message(stream: BinaryIO) -> tuple[bytes, Any]:
    """One framed message: its raw bytes (to replay) and the decoded body (None if unreadable)."""
    raw = b""
    length = None
    while True:
        line = stream.readline()
        raw += line
        if not line:
            return raw, None
        if line.lower().startswith(b"content-length:"):
            try:
                length = int(line.split(b":", 1)[1].strip())
            except ValueError:
                return raw, None
        elif not line.strip():
            break
    if length is None:
        return raw, None
    body = stream.read(length)
    raw += body
    try:
        return raw, json.loads(body)
    except ValueError:
        return raw, None


def write_message(stream: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


class Replay:
    """stdin with the already-read first message put back in front (pygls uses readline and read)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readline(self) -> bytes:
        if self._head:
            line, sep, tail = self._head.partition(b"\n")
            self._head = tail
            return line + sep
        return self._rest.readline()

    def read(self, n: int = -1) -> bytes:
        if self._head:
            out, self._head = self._head[:n], self._head[n:]
            if len(out) < n:
                out += self._rest.read(n - len(out))
            return out
        return self._rest.read(n)


class DropAnswer:
    """stdout that swallows pygls's answer to the request already answered; passes everything else."""

    def __init__(self, out: BinaryIO, request_id: Any) -> None:
        self._out = out
        self._id = request_id
        self._dropped = False

    def write(self, data: bytes) -> int:
        if not self._dropped:
            _, _, body = data.partition(b"\r\n\r\n")
            try:
                msg = json.loads(body)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and msg.get("id") == self._id and "method" not in msg:
                self._dropped = True
                return len(data)
        return self._out.write(data)

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        self._out.close()


def streams(stdin: BinaryIO, stdout: BinaryIO) -> tuple[BinaryIO, BinaryIO]:
    """The streams to hand pygls, after answering ``initialize`` early when it comes first."""
    if not enabled():
        return stdin, stdout
    raw, msg = read_message(stdin)
    if isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg:
        result = initialize_result(msg.get("params"))
        write_message(stdout, {"jsonrpc": "2.0", "id": msg["id"], "result": result})
        return Replay(raw, stdin), DropAnswer(stdout, msg["id"])  # type: ignore[return-value]
    return Replay(raw, stdin), stdout  # type: ignore[return-value]
