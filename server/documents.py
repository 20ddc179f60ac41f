"""Per-document state: the cheap parse of the current text, the newest accepted analysis, measurements.

The cheap parse (tree-sitter, no compiler) runs for every version, so lenses and hints can be placed on
the text as it is now while the analysis they show may be a few edits old: kernels are matched by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from clperf.core import frontend
from clperf.core.records import Estimate, Measurement
from clperf.server.engine import Analysis

MAX_PARSED_CHARS = 300_000  # the cheap parse takes ~0.1 s per 100 k characters; beyond this it is skipped


@dataclass(frozen=True)
class Measured:
    """A benchmark run from this session, next to the estimate for the device it ran on, and the kernel's
    text as it was run (so that views can say when the kernel has been edited since)."""

    measurement: Measurement
    estimate: Estimate | None
    kernel_text: str = ""

    def stale(self, lines: Sequence[str], kernel: frontend.Kernel) -> bool:
        """Whether ``kernel`` in the current ``lines`` differs from the text that was measured."""
        return bool(self.kernel_text) and kernel_text(lines, kernel) != self.kernel_text


def kernel_text(lines: Sequence[str], kernel: frontend.Kernel) -> str:
    """The kernel's directive, declaration and body as they are in ``lines``."""
    first = kernel.directive_line or kernel.header_line
    return "\n".join(line.rstrip("\r\n") for line in lines[first - 1: kernel.end_line])


@dataclass
class DocState:
    parsed_version: int | None = -1
    kernels: list[frontend.Kernel] = field(default_factory=list)
    analysis: Analysis | None = None
    measured: dict[str, Measured] = field(default_factory=dict)


class Documents:
    def __init__(self) -> None:
        self._docs: dict[str, DocState] = {}

    def state(self, uri: str) -> DocState:
        return self._docs.setdefault(uri, DocState())

    def drop(self, uri: str) -> None:
        self._docs.pop(uri, None)

    def uris(self) -> list[str]:
        return list(self._docs)

    def kernels(self, uri: str, text: str, version: int | None) -> list[frontend.Kernel]:
        """The cheap parse of this version (memoized: hover, lenses and hints share one parse)."""
        st = self.state(uri)
        if st.parsed_version != version or version is None:
            st.kernels = frontend.parse(text) if len(text) <= MAX_PARSED_CHARS else []
            st.parsed_version = version
        return st.kernels
