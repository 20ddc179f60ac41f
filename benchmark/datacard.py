"""The dataset card's numbers, printed from the data itself.

``python -m clperf.benchmark.datacard data/h200 data/pocl [--plots data]`` reads every dataset folder
(``part-*.jsonl.gz`` written by ``scripts/collect.sh``) or file, validates each record, and prints per
device: measurements (ok and failed by status), distinct kernels and families, counts per family, the
noise floor (coefficient of variation of the repetitions of one variant, after outlier removal) and
outliers removed. ``--plots DIR`` writes PNG histograms of run times and of the noise per device.
``--require DEVICE=MEASUREMENTS:KERNELS`` makes the exit status say whether a target is met.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clperf.benchmark import dataset
from clperf.benchmark.corpus import family_of
from clperf.core.records import device_matches


def dataset_files(path: Path) -> list[Path]:
    """A dataset file, or the parts of a dataset folder (sources side files excluded)."""
    if path.is_dir():
        return sorted(p for p in path.glob("*.jsonl*") if ".sources." not in p.name
                      and not p.name.startswith("sources."))
    return [path]


def records(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    for path in paths:
        for f in dataset_files(path):
            yield from dataset.read(f)


@dataclass
class DeviceStats:
    name: str
    driver: str = ""
    platform: str = ""
    total: int = 0
    invalid: int = 0
    status: Counter[str] = field(default_factory=Counter)
    kernels: set[tuple[str, str]] = field(default_factory=set)
    families: Counter[str] = field(default_factory=Counter)
    cv: list[float] = field(default_factory=list)
    cv_long: list[float] = field(default_factory=list)  # variants whose median is above 50 µs
    medians_ms: list[float] = field(default_factory=list)
    outliers: int = 0
    repetitions: int = 0

    @property
    def ok(self) -> int:
        return self.status["ok"]


def collect(paths: Sequence[Path]) -> dict[str, DeviceStats]:
    stats: dict[str, DeviceStats] = {}
    for rec in records(paths):
        dev = rec.get("device") or {}
        name = str(dev.get("name", "?"))
        s = stats.setdefault(name, DeviceStats(name))
        s.total += 1
        if dataset.validate(rec):
            s.invalid += 1
            continue
        s.driver = str(dev.get("driver", ""))
        s.platform = str(dev.get("platform", ""))
        s.status[rec["status"]] += 1
        if rec["status"] != "ok":
            continue
        # by file name and kernel: a kernel measured again after an edit of its file counts once
        s.kernels.add((Path(str(rec.get("file") or "")).name, rec["kernel"]))
        s.families[family_of(rec["kernel"])] += 1
        s.outliers += int(rec.get("outliers_removed") or 0)
        s.repetitions += len(rec.get("times_ms") or ())
        if rec.get("cv") is not None:
            s.cv.append(float(rec["cv"]))
            if (rec.get("median_ms") or 0) > 0.05:
                s.cv_long.append(float(rec["cv"]))
        if rec.get("median_ms"):
            s.medians_ms.append(float(rec["median_ms"]))
    return stats


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def report(stats: dict[str, DeviceStats]) -> str:
    lines: list[str] = []
    for s in stats.values():
        fams_hand = sorted(f for f in s.families if not f.startswith("gen-"))
        fams_gen = sorted(f for f in s.families if f.startswith("gen-"))
        failed = {k: v for k, v in s.status.items() if k != "ok"}
        lines += [
            f"## {s.name} (driver {s.driver})",
            f"measurements: {s.total} ({s.ok} ok, failed: {failed or 'none'}, invalid records: {s.invalid})",
            f"distinct kernels: {len(s.kernels)}; families: {len(fams_hand)} hand-written, "
            f"{len(fams_gen)} generated archetypes",
            f"repetitions kept: {s.repetitions}; outliers removed (IQR): {s.outliers}",
            f"noise floor (CV of one variant's repetitions): median {statistics.median(s.cv) * 100:.2f}%, "
            f"p90 {_pct(s.cv, 0.9) * 100:.2f}%; variants above 50 µs: median "
            f"{statistics.median(s.cv_long) * 100 if s.cv_long else float('nan'):.2f}% "
            f"({len(s.cv_long)} variants)" if s.cv else "noise floor: no ok measurements",
            f"median run time: {statistics.median(s.medians_ms) if s.medians_ms else float('nan'):.4g} ms "
            f"(p10 {_pct(s.medians_ms, 0.1):.4g}, p90 {_pct(s.medians_ms, 0.9):.4g})",
            "measurements per family: " + ", ".join(f"{f} {s.families[f]}" for f in fams_hand + fams_gen),
            "",
        ]
    return "\n".join(lines)


def plots(stats: dict[str, DeviceStats], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    written = []
    for s in stats.values():
        if not s.medians_ms:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        axes[0].hist(np.log10(s.medians_ms), bins=60, color="#3465a4")
        axes[0].set_xlabel("log10(median run time / ms)")
        axes[0].set_ylabel("variants")
        axes[0].set_title(f"{s.name}: run times ({s.ok} ok)")
        axes[1].hist(np.clip(np.array(s.cv) * 100, 0, 30), bins=60, color="#cc0000")
        axes[1].set_xlabel("CV of repetitions, % (clipped at 30)")
        axes[1].set_title("noise per variant")
        fig.tight_layout()
        slug = "".join(c if c.isalnum() else "-" for c in s.name.lower()).strip("-")
        path = out / f"distribution-{slug}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m clperf.benchmark.datacard",
                                description=(__doc__ or "").split("\n")[0])
    p.add_argument("paths", nargs="+", type=Path, help="dataset folders or files")
    p.add_argument("--plots", type=Path, metavar="DIR", help="write PNG distributions here")
    p.add_argument("--require", action="append", default=[], metavar="DEVICE=MEASUREMENTS:KERNELS",
                   help="exit 1 unless the device (substring) has this many ok measurements and kernels")
    ns = p.parse_args(argv)
    stats = collect(ns.paths)
    print(report(stats))
    if ns.plots:
        for path in plots(stats, ns.plots):
            print(f"wrote {path}")
    missed = 0
    for req in ns.require:
        dev, _, counts = req.partition("=")
        want_m, _, want_k = counts.partition(":")
        # the name as --device takes it: "pocl" finds PoCL's device, "intel" Intel's CPU runtime
        found = [s for s in stats.values() if device_matches(dev, s.name, s.platform)]
        m = sum(s.ok for s in found)
        k = sum(len(s.kernels) for s in found)
        ok = m >= int(want_m) and k >= int(want_k or 0)
        missed += not ok
        print(f"target {dev}: {m} measurements of {k} kernels, want {want_m} of {want_k or 0}: "
              f"{'met' if ok else 'NOT met'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
