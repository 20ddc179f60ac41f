"""The prediction cache: JSON values, survives reopening, and degrades to no cache with one warning."""

from __future__ import annotations

import logging
import os
import pickle
import sqlite3
from pathlib import Path

import pytest

from clperf.core.cache import JsonCache, key


def test_values_round_trip_as_json_across_instances(tmp_path: Path) -> None:
    k = key("estimate", "abc", {"global": [1024]})
    c = JsonCache(tmp_path / "c")
    c.set(k, {"time_ms": 1.5, "model": {"name": "roofline"}})
    c.close()
    assert JsonCache(tmp_path / "c").get(k) == {"time_ms": 1.5, "model": {"name": "roofline"}}
    assert key("a", 1) != key("a", 2)


def test_a_corrupt_cache_database_means_no_cache_and_one_warning(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    d = tmp_path / "c"
    d.mkdir()
    (d / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    c = JsonCache(d)
    with caplog.at_level(logging.WARNING, logger="clperf.core.cache"):
        assert c.get("x") is None
        c.set("x", {"a": 1})
        assert c.get("x") is None
    assert not c.enabled
    assert len([r for r in caplog.records if "cache disabled" in r.message]) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_a_read_only_cache_directory_means_no_cache(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        c = JsonCache(d)
        with caplog.at_level(logging.WARNING, logger="clperf.core.cache"):
            c.set("x", {"a": 1})
            assert c.get("x") is None
        assert any("cache disabled" in r.message for r in caplog.records)
    finally:
        d.chmod(0o700)


def test_a_cache_directory_that_cannot_be_created_means_no_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    c = JsonCache(blocker / "cache")
    c.set("x", {"a": 1})
    assert c.get("x") is None and not c.enabled


def test_a_pickled_row_planted_in_the_cache_is_never_unpickled(tmp_path: Path) -> None:
    d = tmp_path / "c"
    c = JsonCache(d)
    c.set("x", {"a": 1})
    c.close()

    class Boom:
        def __reduce__(self):  # would run on unpickling
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    con = sqlite3.connect(d / "cache.db")
    cur = con.execute("UPDATE Cache SET value = ?, mode = 4 WHERE key = 'x'", (pickle.dumps(Boom()),))
    assert cur.rowcount == 1
    con.commit()
    con.close()
    assert JsonCache(d).get("x") is None
    assert not (tmp_path / "pwned").exists()
