"""Caches and state files are data, never instructions.

A planted prediction-cache row must not delete or read files outside the cache (diskcache removes the file
a row names when it culls the row, and reads it when the row is fetched); a malformed row is a miss that is
recomputed, never an internal error or a NaN shown; device-peak files and measurement-store lines are
validated on read; and a state folder that cannot be written keeps the result of the benchmark just run.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import diskcache
import pytest

from clperf.core import cache as cache_mod

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "benchmark" / "data"
KERNEL = DATA / "sweepme.cl"
PREDICT = ["predict", str(KERNEL), "--kernel", "vadd", "--device", "h200", "--arg", "n=4096", "--json"]
MODE_TEXT = 3  # diskcache.core.MODE_TEXT: the value lives in the file the row names


def clperf(args: list[str], home: Path | str,
           cache_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLPERF_HOME": str(home)}
    env.pop("CLPERF_DEBUG", None)
    if cache_dir is not None:
        env["CLPERF_CACHE_DIR"] = str(cache_dir)
    return subprocess.run([sys.executable, "-m", "clperf", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)


def predicted(home: Path, cache_dir: Path) -> dict[str, Any]:
    proc = clperf(PREDICT, home, cache_dir)
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr
    return json.loads(proc.stdout)


def rows(cache_dir: Path) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(cache_dir / "cache.db")
    try:
        return con.execute("SELECT key, mode, filename, value FROM Cache").fetchall()
    finally:
        con.close()


def plant(cache_dir: Path, key: str, *, filename: str | None, value: str | None = None, mode: int = MODE_TEXT,
          expired: bool = True) -> None:
    """A row as another program would write it into the cache's database."""
    diskcache.Cache(str(cache_dir)).close()  # the schema, as diskcache makes it
    now = time.time()
    con = sqlite3.connect(cache_dir / "cache.db")
    con.execute("INSERT INTO Cache (key, raw, store_time, expire_time, access_time, access_count, tag, size,"
                " mode, filename, value) VALUES (?, 1, ?, ?, ?, 0, NULL, 0, ?, ?, ?)",
                (key, now - 100, now - 50 if expired else None, now - 100, mode, filename, value))
    con.commit()
    con.close()


@pytest.fixture
def victims(tmp_path: Path) -> dict[str, Path]:
    """Files and folders of the user's, outside the cache, that a planted row names."""
    out = {"file": tmp_path / "victim.txt", "folder": tmp_path / "victim_dir",
           "empty": tmp_path / "empty_dir", "linked": tmp_path / "linked_dir",
           "sibling": tmp_path / "sibling.txt"}
    out["file"].write_text("precious")
    out["folder"].mkdir()
    (out["folder"] / "only.txt").write_text("precious")  # removing it would also remove the folder
    out["empty"].mkdir()
    out["linked"].mkdir()
    (out["linked"] / "secret.txt").write_text("precious")
    out["sibling"].write_text("precious")
    return out


def plant_victim_rows(cache_dir: Path, victims: dict[str, Path]) -> None:
    plant(cache_dir, "a", filename=str(victims["file"]))  # an absolute name escapes the cache
    plant(cache_dir, "b", filename=str(victims["folder"] / "only.txt"))
    plant(cache_dir, "c", filename=str(victims["empty"]) + "/")
    plant(cache_dir, "d", filename="../sibling.txt")
    (cache_dir / "ab").symlink_to(victims["linked"])  # a folder in the cache that leads out of it
    plant(cache_dir, "e", filename="ab/secret.txt")


def assert_untouched(victims: dict[str, Path]) -> None:
    assert victims["file"].read_text() == "precious"
    assert (victims["folder"] / "only.txt").read_text() == "precious"
    assert victims["empty"].is_dir()
    assert (victims["linked"] / "secret.txt").read_text() == "precious"
    assert victims["sibling"].read_text() == "precious"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, pocl: Any) -> Path:
    """The tests' state folder (PoCL's peaks measured there once): every ``clperf`` run finds them."""
    return Path(os.environ["CLPERF_HOME"])


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory: pytest.TempPathFactory, home: Path) -> tuple[Path, dict[str, Any]]:
    """A cache holding the learned model's estimate of vadd on the H200 profile, and that estimate."""
    d = tmp_path_factory.mktemp("warm") / "cache"
    first = predicted(home, d)
    assert not first["cached"] and first["model"]["name"] != "roofline"
    (row,) = rows(d)
    assert row[2] is None
    return d, first


def copy_of(warm: tuple[Path, dict[str, Any]], tmp_path: Path) -> tuple[Path, str, dict[str, Any]]:
    src, first = warm
    d = tmp_path / "cache"
    shutil.copytree(src, d)
    (row,) = rows(d)
    return d, row[0], first


@pytest.mark.slow
def test_a_real_estimate_that_culls_planted_rows_deletes_nothing_outside_the_cache(
        tmp_path: Path, home: Path, victims: dict[str, Path]) -> None:
    d = tmp_path / "cache"
    plant_victim_rows(d, victims)
    out = predicted(home, d)  # a miss: the estimate is stored, and diskcache culls the expired rows
    assert out["time_ms"] > 0
    assert_untouched(victims)


def test_culling_expiring_and_clearing_planted_rows_deletes_nothing_outside_the_cache(
        tmp_path: Path, victims: dict[str, Path]) -> None:
    d = tmp_path / "cache"
    plant_victim_rows(d, victims)
    c = cache_mod.JsonCache(d)
    c.set("x", {"time_ms": 1.0})  # a set culls expired rows
    c.close()
    plant_victim_rows(tmp_path / "cache2", victims)
    with diskcache.Cache(str(tmp_path / "cache2"), disk=cache_mod.InlineJsonDisk) as raw:
        raw.expire()
        raw.cull()
        raw.clear()
    assert_untouched(victims)


def test_a_value_is_never_written_to_a_file(tmp_path: Path) -> None:
    c = cache_mod.JsonCache(tmp_path / "cache")
    c.set("big", {"text": "x" * 200_000})  # diskcache writes values over 32 kB to files of their own
    c.set("small", {"time_ms": 1.0})
    c.close()
    assert all(filename is None for _k, _m, filename, _v in rows(tmp_path / "cache"))
    assert cache_mod.JsonCache(tmp_path / "cache").get("small") == {"time_ms": 1.0}


@pytest.mark.slow
@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_a_row_naming_a_file_serves_no_planted_estimate(tmp_path: Path, home: Path, warm_cache: Any,
                                                       where: str) -> None:
    d, key, first = copy_of(warm_cache, tmp_path)
    planted = {**first, "time_ms": 4242.0, "cycles": 1.0, "interval_ms": [4000.0, 5000.0]}
    (tmp_path / "planted.json").write_text(json.dumps(planted))
    name = str(tmp_path / "planted.json") if where == "absolute" else "../planted.json"
    con = sqlite3.connect(d / "cache.db")
    con.execute("UPDATE Cache SET mode = ?, filename = ?, value = NULL WHERE key = ?", (MODE_TEXT, name, key))
    con.commit()
    con.close()
    out = predicted(home, d)
    assert out["time_ms"] == pytest.approx(first["time_ms"]) and out["time_ms"] != 4242.0
    assert (tmp_path / "planted.json").exists()  # the row is dropped, the file it names left alone
    assert all(filename is None for _k, _m, filename, _v in rows(d))


def _bad_values(first: dict[str, Any]) -> dict[str, str]:
    return {
        "not JSON": "{this is not json",
        "NaN time": json.dumps({**first, "time_ms": float("nan")}),
        "infinite time": json.dumps({**first, "time_ms": float("inf")}),
        "negative time": json.dumps({**first, "time_ms": -3.0}),
        "missing keys": json.dumps({"time_ms": 1.0}),
        "wrong types": json.dumps({**first, "interval_ms": "wide", "bound": 7}),
        "not an object": json.dumps([1, 2, 3]),
    }


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["not JSON", "NaN time", "infinite time", "negative time", "missing keys",
                                 "wrong types", "not an object"])
def test_a_malformed_row_is_recomputed_with_one_warning(tmp_path: Path, home: Path, warm_cache: Any,
                                                       bad: str) -> None:
    d, key, first = copy_of(warm_cache, tmp_path)
    con = sqlite3.connect(d / "cache.db")
    con.execute("UPDATE Cache SET value = ? WHERE key = ?", (_bad_values(first)[bad], key))
    con.commit()
    con.close()
    proc = clperf(PREDICT, home, d)
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert out["time_ms"] == pytest.approx(first["time_ms"]) and not out["cached"]
    warnings = [line for line in proc.stderr.splitlines() if "prediction cache" in line]
    assert len(warnings) == 1 and "dropped" in warnings[0], proc.stderr
    assert predicted(home, d)["cached"]  # the bad row was replaced: the cache still works


def test_a_pickled_or_file_row_is_a_miss_and_only_its_database_row_goes(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    d = tmp_path / "cache"
    (tmp_path / "kept.json").write_text('{"time_ms": 1.0}')
    plant(d, "file", filename=str(tmp_path / "kept.json"), expired=False)
    plant(d, "pickled", filename=None, value="x", mode=4, expired=False)
    c = cache_mod.JsonCache(d)
    with caplog.at_level(logging.WARNING, logger="clperf.core.cache"):
        assert c.get("file") is None and c.get("pickled") is None
        c.set("ok", {"time_ms": 2.0})
        assert c.get("ok") == {"time_ms": 2.0}  # the cache is still on
    assert (tmp_path / "kept.json").exists()
    assert [r[0] for r in rows(d)] == ["ok"]
    assert len([r for r in caplog.records if "dropped" in r.message]) == 2


def test_a_getter_validates_the_shape_it_needs(tmp_path: Path) -> None:
    c = cache_mod.JsonCache(tmp_path / "cache")
    c.set("k", {"cycles": -1.0})

    def positive_cycles(v: Any) -> float:
        x = cache_mod.positive(v["cycles"], "cycles")
        return x

    assert c.get("k", positive_cycles) is None
    assert rows(tmp_path / "cache") == []
    c.set("k", {"cycles": 2.5})
    assert c.get("k", positive_cycles) == 2.5


def test_settings_planted_in_the_cache_database_are_not_applied(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    d = tmp_path / "cache"
    diskcache.Cache(str(d)).close()
    con = sqlite3.connect(d / "cache.db")  # diskcache applies what its Settings table holds when it opens
    con.executemany("INSERT OR REPLACE INTO Settings VALUES (?, ?)",
                    [("eviction_policy", "bogus"), ("disk_min_file_size", 0), ("sqlite_cell_size_check", 1)])
    con.commit()
    con.close()
    c = cache_mod.JsonCache(d)
    with caplog.at_level(logging.WARNING, logger="clperf.core.cache"):
        c.set("k", {"time_ms": 1.0})
        assert c.get("k") == {"time_ms": 1.0} and c.enabled
    c.close()
    assert all(filename is None for _k, _m, filename, _v in rows(d))  # the value stayed in its row
    con = sqlite3.connect(d / "cache.db")
    settings = dict(con.execute("SELECT key, value FROM Settings").fetchall())
    con.close()
    assert settings["eviction_policy"] == "least-recently-stored" and "sqlite_cell_size_check" not in settings
    assert any("unknown settings" in r.message for r in caplog.records)


# --- device peaks ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("peaks", [
    {"peak_bandwidth_gbs": "fast", "peak_gflops": 100.0, "cache_bandwidth_gbs": 50.0},
    {"peak_bandwidth_gbs": float("nan"), "peak_gflops": 100.0, "cache_bandwidth_gbs": 50.0},
    {"peak_bandwidth_gbs": -5.0, "peak_gflops": 100.0, "cache_bandwidth_gbs": 50.0},
    {"peak_bandwidth_gbs": 20.0, "peak_gflops": [1], "cache_bandwidth_gbs": 50.0},
    {"peak_bandwidth_gbs": 20.0, "peak_gflops": 100.0, "cache_bandwidth_gbs": "x"},
    {"peak_bandwidth_gbs": 20.0},
], ids=["string", "NaN", "negative", "list", "cache string", "missing"])
def test_an_invalid_device_peak_file_is_ignored_with_a_warning_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, pocl: Any,
        peaks: dict[str, Any]) -> None:
    from clperf.benchmark import devices as devs
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    local = next(d for d in devs.discover(measure=False) if d.key == pocl.key)
    path = devs.cache_path(local)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"key": local.key, **peaks}))
    with caplog.at_level(logging.WARNING):
        found = next(d for d in devs.discover(measure=False) if d.key == pocl.key)
    assert found.peak_bandwidth_gbs is None and found.peak_gflops is None
    assert [r.message for r in caplog.records if str(path) in r.message], caplog.text


@pytest.mark.slow
def test_an_invalid_device_peak_file_never_switches_the_device(tmp_path: Path, pocl: Any) -> None:
    from clperf.benchmark import devices as devs
    home = tmp_path / "home"
    path = home / devs.cache_path(pocl).relative_to(os.environ["CLPERF_HOME"])
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"key": pocl.key, "peak_bandwidth_gbs": "fast", "peak_gflops": 1.0,
                                "cache_bandwidth_gbs": 1.0}))
    proc = clperf(["predict", str(KERNEL), "--kernel", "vadd", "--device", "pocl", "--arg", "n=4096",
                   "--model", "roofline", "--json"], home)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["device"]["source"] == "discovered"  # the local PoCL, not its profile
    assert str(path) in proc.stderr


# --- the measurement store -------------------------------------------------------------------------------

def _stored_line(**changes: Any) -> str:
    from clperf.predictor.model import profiles
    h200 = profiles.select_device("h200")
    m = {"kernel": "vadd", "file": str(KERNEL), "source_hash": "0" * 16, "build_options": "",
         "device": h200.to_json(), "scenario": {"global": [4096], "local": [64], "args": {"n": 4096}},
         "status": "ok", "error": None, "median_ms": 0.01, "min_ms": 0.009, "cv": 0.01, "repetitions": 2,
         "outliers_removed": 0, "times_ms": [0.01, 0.011], "checked": False,
         "timestamp": "2026-01-01T00:00:00Z", "clperf_version": "0"}
    return json.dumps({**m, **changes}) + "\n"


def test_invalid_measurement_lines_are_skipped_with_a_warning_naming_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from clperf.core import store
    monkeypatch.setenv("CLPERF_HOME", str(tmp_path))
    good = _stored_line()
    bad = [_stored_line(median_ms="fast"), _stored_line(median_ms=float("nan")),
           _stored_line(times_ms=[-1.0]), _stored_line(timestamp=5),
           _stored_line(status="pwned"), _stored_line(scenario="x"), "[1]\n"]
    store.store_path().write_text(good + "".join(bad) + good)
    with caplog.at_level(logging.WARNING, logger="clperf.core.store"):
        assert len(store.load()) == 2
    (warning,) = [r.message for r in caplog.records]
    assert str(store.store_path()) in warning and "7" in warning


@pytest.mark.slow
def test_an_invalid_stored_measurement_never_breaks_an_estimate(tmp_path: Path, home: Path) -> None:
    state = tmp_path / "home"
    shutil.copytree(home / "devices", state / "devices")
    (state / "measurements.jsonl").write_text(_stored_line(median_ms="fast") + _stored_line(timestamp=5))
    proc = clperf(PREDICT, state, tmp_path / "cache")
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["time_ms"] > 0


# --- a state folder that cannot be written ---------------------------------------------------------------

def _unwritable(tmp_path: Path, how: str) -> Path:
    """A state folder that really cannot be written, also by root (who ignores permission bits)."""
    if how == "home is a file":
        home = tmp_path / "home"
        home.write_text("not a folder")
        return home
    home = tmp_path / "home"
    if how == "disk is full":
        home.mkdir()
        (home / "measurements.jsonl").symlink_to("/dev/full")  # every write fails with ENOSPC
        return home
    (home / "measurements.jsonl").mkdir(parents=True)  # the store's file is a folder
    return home


@pytest.mark.slow
@pytest.mark.parametrize("how", ["home is a file", "store is a folder", "disk is full"])
def test_bench_with_an_unwritable_state_folder_prints_its_measurement(tmp_path: Path, how: str) -> None:
    home = _unwritable(tmp_path, how)
    proc = clperf(["bench", str(KERNEL), "--kernel", "vadd", "--device", "pocl", "--arg", "n=2048",
                   "--policy", "quick"], home)
    assert proc.returncode == 0, proc.stderr
    assert "median" in proc.stdout
    notes = [line for line in (proc.stdout + proc.stderr).splitlines() if "measurement not stored:" in line]
    assert len(notes) == 1, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("how", ["home is a file", "store is a folder"])
def test_a_server_benchmark_with_an_unwritable_state_folder_keeps_its_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pocl: Any, how: str) -> None:
    from clperf.core import frontend
    from clperf.server import benchmarking
    from clperf.server.settings import Settings

    monkeypatch.setenv("CLPERF_HOME", str(_unwritable(tmp_path, how)))
    text = KERNEL.read_text()
    kernels = [k for k in frontend.parse(text) if k.name == "vadd"]
    messages: list[str] = []
    (outcome,) = benchmarking.run(text, str(KERNEL), kernels, pocl, Settings(), policy_name="quick",
                                  timeout_s=60, on_progress=lambda f, m: messages.append(m),
                                  cancel=__import__("threading").Event())
    shown = outcome.to_json()
    assert shown["status"] == "ok" and shown["median_ms"] > 0
    assert str(shown["not_stored"]).strip()
    assert any("measurement not stored:" in m for m in messages)
