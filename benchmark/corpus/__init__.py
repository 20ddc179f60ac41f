"""The training corpus: OpenCL kernels written in this project, and a generator of synthetic ones.

Hand-written kernels live in ``families/*.cl``, one file per family (the optimised and unoptimised variants
of one pattern side by side), and in ``large/*.cl``: families whose launches stream 16 MiB to 1 GiB a
buffer and run for 0.1-100 ms on a GPU (swept on GPUs with ``--max-buffer-mb 1024``). Every kernel
carries a ``// clperf:`` scenario directive and a ``// clperf-sweep:`` spec (see ``sweepspec``) right above
it, so ``clperf sweep`` can launch it at many valid sizes. Families are the unit the evaluator holds out:
``family_of`` maps a file or kernel name to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clperf.benchmark.corpus.generate import generate
from clperf.benchmark.corpus.sweepspec import SweepSpec, sweep_above
from clperf.core.frontend import parse

FAMILIES_DIR = Path(__file__).resolve().parent / "families"
LARGE_DIR = Path(__file__).resolve().parent / "large"
MAX_BUFFER_BYTES = {FAMILIES_DIR.name: 16 << 20, LARGE_DIR.name: 1 << 30}  # per folder, over a whole sweep
_GENERATED_NAME = re.compile(r"^gen_([a-z0-9]+)_\d+")


@dataclass(frozen=True)
class CorpusKernel:
    """One kernel of the corpus with its launch description."""

    family: str
    name: str
    source: str  # the whole file the kernel lives in
    path: Path | None  # the family file; None for a generated kernel held in memory
    header_line: int  # 1-based line of the kernel's declaration
    directive: str  # the `// clperf:` text
    sweep: SweepSpec


def families() -> list[Path]:
    """The hand-written family files: ``families/`` then ``large/``, each sorted by name."""
    return sorted(FAMILIES_DIR.glob("*.cl")) + sorted(LARGE_DIR.glob("*.cl"))


def max_buffer_bytes(path: Path) -> int:
    """The largest ``__global`` buffer a family file's sweep may ask for."""
    return MAX_BUFFER_BYTES[path.parent.name]


def generated(count: int = 2000, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` distinct synthetic kernels as ``(name, source)``, one kernel per source, deterministic."""

    return generate(count, seed)


def write_generated(directory: str | Path, count: int = 2000, seed: int = 0) -> list[Path]:
    """Write one ``NAME.cl`` per generated kernel into ``directory`` (created) so a sweep can take them."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, source in generated(count, seed):
        p = out / f"{name}.cl"
        p.write_text(source)
        paths.append(p)
    return paths


@lru_cache(maxsize=1)
def _kernel_families() -> dict[str, str]:
    """Kernel name -> family, over the hand-written files."""

    out: dict[str, str] = {}
    for path in families():
        for k in parse(path.read_text()):
            out[k.name] = path.stem
    return out


def family_of(path_or_name: str | Path) -> str:
    """The family of a family file, a generated file, or a kernel name.

    Hand-written kernels belong to their file's family (``stencil2d``); generated ones to their generator
    archetype (``gen_gather_00042`` -> ``gen-gather``). Unknown names give ``"unknown"``.
    """
    text = str(path_or_name)
    stem = Path(text).stem if text.endswith(".cl") else text
    m = _GENERATED_NAME.match(stem)
    if m:
        return f"gen-{m.group(1)}"
    if text.endswith(".cl") and any((d / f"{stem}.cl").exists() for d in (FAMILIES_DIR, LARGE_DIR)):
        return stem
    return _kernel_families().get(stem, "unknown")


def kernels_in(source: str, family: str, path: Path | None = None) -> Iterator[CorpusKernel]:
    """The kernels of one source with their directives and sweep specs (kernels lacking either skipped)."""

    lines = source.split("\n")
    for k in parse(source):
        sweep = sweep_above(lines, k.header_line)
        if k.directive is None or sweep is None:
            continue
        yield CorpusKernel(family, k.name, source, path, k.header_line, k.directive, sweep)


def hand_written() -> list[CorpusKernel]:
    """Every kernel of every family file."""
    out: list[CorpusKernel] = []
    for path in families():
        out.extend(kernels_in(path.read_text(), path.stem, path))
    return out


__all__ = ["CorpusKernel", "FAMILIES_DIR", "LARGE_DIR", "families", "family_of", "generated", "hand_written",
           "kernels_in", "max_buffer_bytes", "write_generated"]
