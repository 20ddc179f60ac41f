"""Sweep specs: the ``// clperf-sweep:`` line that says which launches of a corpus kernel are valid.

A spec is a list of ``NAME=LO..HI`` ranges, written right above the kernel next to its ``// clperf:``
directive::

    // clperf: --global n --local 256 --arg n=1048576 --arg a=n
    // clperf-sweep: n=1024..4194304 local=16..1024

Each ``NAME`` other than ``local`` is an ``--arg`` of the directive; the sweep gives it every power of two
from ``LO`` to ``HI`` (both powers of two) and re-evaluates the directive's expressions, so buffers sized
``n`` or ``n*n`` follow. ``local=LO..HI`` varies the work-group size of dimension 0 over powers of two that
divide the global size (other dimensions keep the directive's local size); without it the directive's
local size is fixed (kernels with ``reqd_work_group_size`` or fixed ``__local`` tiles). Every corpus kernel
is memory-safe for every combination a spec allows; the corpus tests check the corners.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from clperf.core.errors import ScenarioError

SWEEP_DIRECTIVE = re.compile(r"^\s*//\s*clperf-sweep:\s?(.*)$")
_RANGE = re.compile(r"^([A-Za-z_]\w*)=(\d+)\.\.(\d+)$")


@dataclass(frozen=True)
class SweepRange:
    name: str  # an --arg of the directive, or "local"
    lo: int
    hi: int

    def values(self) -> tuple[int, ...]:
        """Every power of two from ``lo`` to ``hi``."""
        out = []
        v = self.lo
        while v <= self.hi:
            out.append(v)
            v *= 2
        return tuple(out)


@dataclass(frozen=True)
class SweepSpec:
    ranges: tuple[SweepRange, ...]

    @property
    def args(self) -> tuple[SweepRange, ...]:
        return tuple(r for r in self.ranges if r.name != "local")

    @property
    def local(self) -> SweepRange | None:
        return next((r for r in self.ranges if r.name == "local"), None)

    def to_text(self) -> str:
        return " ".join(f"{r.name}={r.lo}..{r.hi}" for r in self.ranges)


def _is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def parse_sweep(text: str) -> SweepSpec:
    """Parse ``n=1024..4194304 local=16..1024``; raises ScenarioError on anything else."""
    ranges: list[SweepRange] = []
    seen: set[str] = set()
    for tok in text.split():
        m = _RANGE.match(tok)
        if not m:
            raise ScenarioError(f"sweep spec expects NAME=LO..HI, got {tok!r}")
        name, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
        if not (_is_pow2(lo) and _is_pow2(hi)) or lo > hi:
            raise ScenarioError(f"sweep range {tok!r} must go from one power of two up to another")
        if name in seen:
            raise ScenarioError(f"sweep spec names {name!r} twice")
        seen.add(name)
        ranges.append(SweepRange(name, lo, hi))
    if not ranges:
        raise ScenarioError("empty sweep spec")
    return SweepSpec(tuple(ranges))


def sweep_above(lines: Sequence[str], header_line: int) -> SweepSpec | None:
    """The sweep spec in the comment block right above 1-based ``header_line`` (None when absent)."""
    i = header_line - 2
    while i >= 0 and lines[i].strip().startswith("//"):
        m = SWEEP_DIRECTIVE.match(lines[i])
        if m:
            return parse_sweep(m.group(1))
        i -= 1
    return None
