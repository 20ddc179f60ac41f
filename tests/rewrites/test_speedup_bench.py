"""bench/rewrite_speedups.py end to end on PoCL for one rewrite: predicted, then measured in alternating
rounds whose median ratio is the measured speedup."""

from __future__ import annotations

import importlib.util
import json
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("rewrite_speedups", ROOT / "bench" / "rewrite_speedups.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
@pytest.mark.timeout(900)  # it predicts every case (PoCL's code of each version costed): 4-5 min on 2 cores
def test_one_rewrite_measured_in_rounds(tmp_path, pocl, capsys) -> None:
    bench = _script()
    case = "unroll_outside_counter:outside:pragma-unroll"
    assert bench.main(["--device", "pocl", "--only", case, "--rounds", "3", "--policy", "quick",
                       "--out", str(tmp_path), "--predictions", str(tmp_path / "pred.json")]) == 0
    report = json.loads((tmp_path / "rewrite_speedups_pocl.json").read_text())
    (c,) = report["cases"]
    assert c["id"].startswith(case) and c["matches"] and c["error"] is None
    assert len(c["ratios"]) == 3 and all(r > 0 for r in c["ratios"])
    assert c["measured"] == statistics.median(c["ratios"])
    # PoCL keeps the loop rolled: unrolling it is predicted to gain (about 14x; nested's 1.2x had been
    # used here, too close to 1 for costings that time PoCL's code on a shared host's cores)
    assert c["predicted"] > 2.0
    assert report["rounds"] == 3 and report["summary"]["compared"] == 1
    md = (tmp_path / "rewrite_speedups_pocl.md").read_text()
    assert "median ratio of 3 alternating round(s)" in md and case in md
    # the predictions file holds every case, the report only the one asked for
    assert len(json.loads((tmp_path / "pred.json").read_text())["cases"]) > 1
