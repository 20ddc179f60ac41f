"""The dataset card's counts come from the data: checked on a slice of the real H200 dataset."""

from __future__ import annotations

import gzip
import itertools
import json
import statistics
from pathlib import Path

from clperf.benchmark import datacard

H200 = Path(__file__).resolve().parents[2] / "data" / "h200"


def _slice(tmp_path: Path, n: int) -> list[dict]:
    recs = []
    with gzip.open(H200 / "part-1.jsonl.gz", "rt") as f:
        for line in itertools.islice(f, n):
            recs.append(json.loads(line))
    with gzip.open(tmp_path / "part-1.jsonl.gz", "wt") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    (tmp_path / "sources.jsonl.gz").write_bytes(b"")  # side files are not records
    return recs


def test_counts_and_noise_match_the_records(tmp_path: Path) -> None:
    recs = _slice(tmp_path, 300)
    stats = datacard.collect([tmp_path])
    assert list(stats) == ["NVIDIA H200"]
    s = stats["NVIDIA H200"]
    ok = [r for r in recs if r["status"] == "ok"]
    assert s.total == 300 and s.ok == len(ok)
    assert len(s.kernels) == len({(Path(r["file"]).name, r["kernel"]) for r in ok})
    assert statistics.median(s.cv) == statistics.median(r["cv"] for r in ok)
    assert s.repetitions == sum(len(r["times_ms"]) for r in ok)


def test_a_record_without_repetitions_is_counted_invalid(tmp_path: Path) -> None:
    recs = _slice(tmp_path, 20)
    bad = dict(recs[0], times_ms=[])
    with gzip.open(tmp_path / "part-2.jsonl.gz", "wt") as f:
        f.write(json.dumps(bad) + "\n")
    s = datacard.collect([tmp_path])["NVIDIA H200"]
    assert s.total == 21 and s.invalid == 1


def test_require_reports_a_missed_target(tmp_path: Path, capsys) -> None:
    _slice(tmp_path, 50)
    assert datacard.main([str(tmp_path), "--require", "h200=10:1"]) == 0
    assert datacard.main([str(tmp_path), "--require", "h200=1000000:1"]) == 1
    assert "NOT met" in capsys.readouterr().out


def test_a_kernel_measured_before_and_after_an_edit_counts_once_and_require_knows_pocl(tmp_path: Path,
                                                                                       capsys) -> None:
    recs = _slice(tmp_path, 1)
    pocl = {**recs[0]["device"], "name": "pthread-cpu", "platform": "Portable Computing Language"}
    edited = [dict(recs[0], device=pocl), dict(recs[0], device=pocl, source_hash="0" * 16, key="k2")]
    with gzip.open(tmp_path / "part-1.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in edited))
    s = datacard.collect([tmp_path])["pthread-cpu"]
    assert s.ok == 2 and len(s.kernels) == 1
    assert datacard.main([str(tmp_path), "--require", "pocl=2:1"]) == 0
    assert "target pocl: 2 measurements of 1 kernels" in capsys.readouterr().out
