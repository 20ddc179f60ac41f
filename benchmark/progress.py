"""Progress for long commands: a bar that redraws itself on a terminal, a plain line log elsewhere.

The log is what a CI job or a remote machine's captured output shows: one line every ``every_s``
seconds and one at the end, never control characters.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _duration(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    def __init__(self, label: str, stream: TextIO | None = None, every_s: float = 10.0,
                 tty: bool | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = every_s if not self.tty else 0.1
        self.start = time.monotonic()
        self._last = 0.0
        self._width = 0

    def update(self, fraction: float | None, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.every_s:
            return
        self._last = now
        elapsed = now - self.start
        if self.tty:
            line = f"{self.label} "
            if fraction is not None:
                filled = int(max(0.0, min(1.0, fraction)) * 24)
                line += f"[{'#' * filled}{'.' * (24 - filled)}] {fraction * 100:3.0f}% "
            line += f"{text} {_duration(elapsed)}"
            pad = max(0, self._width - len(line))
            self._width = len(line)
            self.stream.write("\r" + line + " " * pad)
        else:
            pct = f"{fraction * 100:.0f}% " if fraction is not None else ""
            self.stream.write(f"{self.label}: {pct}{text} [{_duration(elapsed)}]\n")
        self.stream.flush()

    def done(self, text: str = "") -> None:
        if self.tty:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        if text:
            self.stream.write(f"{self.label}: {text}\n")
            self.stream.flush()
