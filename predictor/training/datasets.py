"""The measured datasets a training run reads, and the kernel sources their records point to by hash."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clperf.benchmark import corpus, dataset
from clperf.benchmark.sweep import sources_path
from clperf.core.errors import InputError

# the generator's kernels are searched only when a record names one that no other place holds: first this
# many, then more (a sweep of the larger generated corpus)
GENERATED_COUNTS = (2000, 4000)


def expand_data(data: Sequence[Path]) -> list[Path]:
    """Dataset files from paths that may be folders: a folder stands for its ``*.jsonl[.gz]`` files (sorted),
    except the sweep's ``*sources*`` side files. ``data/h200`` and ``data/h200/part-*.jsonl.gz`` agree."""
    out: list[Path] = []
    for p in map(Path, data):
        if p.is_dir():
            parts = sorted(q for q in p.iterdir() if q.is_file() and "sources" not in q.name
                           and (q.name.endswith(".jsonl") or q.name.endswith(".jsonl.gz")))
            if not parts:
                raise InputError(f"no *.jsonl or *.jsonl.gz datasets in {p}")
            out.extend(parts)
        elif p.exists():
            out.append(p)
        else:
            raise InputError(f"no dataset at {p}")
    return list(dict.fromkeys(out))


def source_files(data: Sequence[Path]) -> list[Path]:
    """Side files holding the swept sources: ``x.sources.jsonl.gz`` per dataset, ``sources.jsonl[.gz]``
    beside it."""
    out: list[Path] = []
    for p in expand_data(data):
        for cand in (sources_path(p), p.parent / "sources.jsonl.gz", p.parent / "sources.jsonl"):
            if cand.is_file():
                out.append(cand)
    return list(dict.fromkeys(out))


def read_records(data: Sequence[Path]) -> list[dict[str, Any]]:
    """The usable records of the datasets: status ``ok``, a positive median, and valid."""
    out = []
    for p in expand_data(data):
        for rec in dataset.read(p):
            if rec.get("status") == "ok" and (rec.get("median_ms") or 0) > 0 and not dataset.validate(rec):
                out.append(rec)
    return out


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


class Sources:
    """Finds a record's kernel source by its hash: the record's file, corpus families, generator, folders."""

    def __init__(self, extra_dirs: Sequence[Path] = (), datasets: Sequence[Path] = ()) -> None:
        self.by_hash: dict[str, str] = {}
        self._dirs = list(extra_dirs)
        self._generated_done = False
        for side in source_files(datasets) if datasets else []:  # each swept source once
            for rec in dataset.read(side):
                if isinstance(rec.get("source"), str):
                    self.add(rec["source"])
        for path in corpus.families():
            self.add(path.read_text())
        for d in self._dirs:
            for path in sorted(Path(d).rglob("*.cl")):
                self.add(path.read_text(errors="replace"))

    def add(self, text: str) -> None:
        self.by_hash[sha(text)[:16]] = text

    def find(self, rec: dict[str, Any]) -> str | None:
        h = str(rec.get("source_hash", ""))[:16]
        if h in self.by_hash:
            return self.by_hash[h]
        if isinstance(rec.get("source"), str):
            self.add(rec["source"])
        else:
            f = Path(str(rec.get("file", "")))
            if f.is_file():
                self.add(f.read_text(errors="replace"))
        gen = str(rec.get("kernel", "")).startswith("gen_")
        if h not in self.by_hash and not self._generated_done and gen:
            self._generated_done = True
            for count in GENERATED_COUNTS:
                for _, text in corpus.generated(count, 0):
                    self.add(text)
                if h in self.by_hash:
                    break
        return self.by_hash.get(h)
