"""The server's log where the editor shows it: ``window/logMessage`` at each record's level once a client
is connected, stderr before that and whenever the client cannot be reached.

Editors show a server's stderr as its error output (vscode-languageclient files every stderr line under
"error"), so once ``initialize`` has come each record goes to the client with its own level, and not to
stderr as well. Before that (the interpreter starting, a bad argument) and after the connection is gone
(stdout closed, the client killed), stderr is all there is; the traceback of an uncaught exception goes
there in any case, written by Python itself. A ``--log-file`` gets every record either way.

Records come from worker threads too: they are handed to the event loop, which alone writes to stdout.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

Send = Callable[[int, str], None]  # (LSP MessageType: 1 error .. 4 log, text)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # stderr and --log-file (the client parses it)


def message_type(levelno: int) -> int:
    """LSP's MessageType for a logging level: Error 1, Warning 2, Info 3, Log 4 (DEBUG)."""
    if levelno >= logging.ERROR:
        return 1
    if levelno >= logging.WARNING:
        return 2
    return 3 if levelno >= logging.INFO else 4


class ClientLog(logging.Handler):
    """Sends records to the client once ``connect`` was called; to ``fallback`` (stderr, or nowhere when
    a log file has them) before, after ``disconnect``, and when sending fails."""

    def __init__(self, fallback: logging.Handler | None) -> None:
        super().__init__()
        self.fallback = fallback
        # the client adds its own time stamp and level
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        self._send: Send | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._sending = threading.local()  # a record logged while one is sent (pygls's own) goes to stderr

    def connect(self, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        """From the event loop's thread: from now on records go to the client through ``send``."""
        self._send, self._loop, self._loop_thread = send, loop, threading.get_ident()

    def disconnect(self) -> None:
        self._send = None

    def emit(self, record: logging.LogRecord) -> None:
        send, loop = self._send, self._loop
        if send is None or loop is None or getattr(self._sending, "busy", False):
            self._fall_back(record)
            return
        try:
            text = self.format(record)
        except Exception:  # noqa: BLE001 - a bad format string must not lose the record
            self._fall_back(record)
            return
        if threading.get_ident() == self._loop_thread:
            self._deliver(send, record, text)
            return
        try:
            loop.call_soon_threadsafe(self._deliver, send, record, text)
        except RuntimeError:  # the loop is closed: the server is ending
            self._fall_back(record)

    def _deliver(self, send: Send, record: logging.LogRecord, text: str) -> None:
        self._sending.busy = True
        try:
            send(message_type(record.levelno), text)
        except Exception:  # noqa: BLE001 - the client is gone: stderr is what is left
            self._send = None
            self._fall_back(record)
        finally:
            self._sending.busy = False

    def _fall_back(self, record: logging.LogRecord) -> None:
        if self.fallback is not None and record.levelno >= self.fallback.level:
            self.fallback.handle(record)


def client_handlers() -> list[ClientLog]:
    return [h for h in logging.getLogger().handlers if isinstance(h, ClientLog)]


def connect(send: Send, loop: asyncio.AbstractEventLoop) -> None:
    """Route the root logger's ``ClientLog`` handlers (``server/cli.py`` installs one) to the client."""
    for h in client_handlers():
        h.connect(send, loop)


def disconnect() -> None:
    for h in client_handlers():
        h.disconnect()
