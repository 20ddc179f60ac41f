"""The commands as a user runs them: ``clperf devices``, ``clperf bench``, ``clperf sweep``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clperf.cli import main
from clperf.core.records import Device

DATA = Path(__file__).parent / "data"
ISSUE_KEYS = {"kernel", "file", "device", "scenario", "status", "error", "median_ms", "min_ms", "cv",
              "repetitions", "outliers_removed", "times_ms"}


def test_devices_json(capsys):
    assert main(["devices", "--json"]) == 0
    devices = json.loads(capsys.readouterr().out)
    assert devices
    d = devices[0]
    for key in ("name", "platform", "type", "compute_units", "clock_mhz", "local_mem_bytes",
                "max_work_group_size", "driver", "peak_bandwidth_gbs", "peak_gflops"):
        assert key in d
    assert d["type"] in ("gpu", "cpu", "accelerator")
    assert d["peak_bandwidth_gbs"] > 0 and d["peak_gflops"] > 0  # measured once, then cached
    for d in devices:  # a CPU's copy within its last-level cache: not slower than from memory (each one
        if d["type"] == "cpu" and d["cache_bytes"] >= 1 << 20:  # measured once, on a shared, loaded host)
            assert d["cache_bandwidth_gbs"] > 0.75 * d["peak_bandwidth_gbs"]


def test_peaks_cached_before_the_cache_bandwidth_was_measured_are_measured_again(tmp_path, monkeypatch):
    from clperf.benchmark import devices as devs
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    pocl = next(d for d in devs.discover(measure=False) if d.matches("pocl"))
    path = devs.cache_path(pocl)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = {"key": pocl.key, "peak_bandwidth_gbs": 1.5, "peak_gflops": 2.5}
    path.write_text(json.dumps(old))

    def found(measure: bool) -> Device:
        return next(d for d in devs.discover(measure=measure) if d.key == pocl.key)

    # a caller that does not measure (the language server) keeps the old peaks, without the cache's
    kept = found(measure=False)
    assert (kept.peak_bandwidth_gbs, kept.cache_bandwidth_gbs) == (1.5, None)
    # one that may measure measures them all again, once
    again = found(measure=True)
    assert again.peak_bandwidth_gbs != 1.5 and again.cache_bandwidth_gbs
    assert "cache_bandwidth_gbs" in json.loads(path.read_text())
    path.write_text("[1, 2]")  # a corrupt cache is no cache, not an error
    assert found(measure=False).peak_bandwidth_gbs is None


def test_bench_json_shape():
    proc = subprocess.run([sys.executable, "-m", "clperf", "bench", str(DATA / "sweepme.cl"),
                           "--kernel", "vadd", "--device", "pocl", "--arg", "n=2048", "--policy", "quick",
                           "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)
    assert ISSUE_KEYS <= set(m)
    assert {"name", "platform", "type", "clock_mhz", "compute_units", "driver"} <= set(m["device"])
    assert m["scenario"]["global"] == [2048] and m["scenario"]["local"] == [64]
    assert m["scenario"]["args"] == {"a": 2048, "b": 2048, "c": 2048, "n": 2048}
    assert m["status"] == "ok" and m["error"] is None and m["repetitions"] == len(m["times_ms"]) >= 5
    assert m["min_ms"] <= m["median_ms"] and m["cv"] >= 0


def test_bench_failure_exit_code_and_message(capsys):
    rc = main(["bench", str(DATA / "faulty.cl"), "--kernel", "past_end", "--device", "pocl",
               "--global", "64", "--policy", "quick"])
    out = capsys.readouterr().out
    assert rc == 1 and "crash: out-of-bounds write" in out


def test_bench_bad_scenario_is_one_line(capsys):
    rc = main(["bench", str(DATA / "faulty.cl"), "--kernel", "fine", "--device", "pocl", "--arg", "n=(("])
    out = capsys.readouterr()
    assert rc == 1 and "invalid-scenario: bad expression" in out.out and "Traceback" not in out.err


def test_sweep_command(tmp_path, capsys):
    out = tmp_path / "s.jsonl"
    args = ["sweep", str(DATA / "sweepme.cl"), "--device", "pocl", "--out", str(out), "--max-variants", "3",
            "--policy", "quick", "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["measured"] == 6 and first["kernels"] == 2
    assert any("unswept" in s for s in first["skipped"])
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["measured"] == 0 and again["already_done"] == 6
