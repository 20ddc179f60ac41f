"""Dataset files: append, read back (also after a cut-short write), validate, keys for resuming."""

from __future__ import annotations

import gzip

import pytest

from clperf.benchmark import dataset
from clperf.benchmark.runner import make_measurement
from clperf.core import store
from clperf.core.records import Device, Scenario

DEV = Device("Test GPU", "Test Platform", "gpu", 10, 1000, 49152, 1024, "1.2.3")


def measurement(n: int, status: str = "ok", times=(1.0, 1.1, 0.9, 1.0, 5.0)):
    return make_measurement(kernel="k", file="k.cl", source="kernel void k() {}", options="-DX=1",
                            scenario=Scenario((n,), (64,), {"n": n}), device=DEV, status=status,
                            error=None if status == "ok" else "boom",
                            times_ms=times if status == "ok" else ())


def test_measurement_statistics_come_from_the_repetitions():
    m = measurement(64)
    assert m.median_ms == 1.0 and m.outliers_removed == 1 and m.repetitions == 5 and m.times_ms[-1] == 5.0


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.gz"])
def test_append_read_validate_and_keys(tmp_path, name):
    path = tmp_path / name
    recs = [dataset.to_record(measurement(n)) for n in (64, 128)]
    assert dataset.append(path, recs) == 2
    dataset.append(path, [dataset.to_record(measurement(256, "crash"))])
    back = list(dataset.read(path))
    assert [r["scenario"]["global"] for r in back] == [[64], [128], [256]]
    assert all(dataset.validate(r) == [] for r in back)
    assert dataset.keys(path) == {r["key"] for r in back} and len(dataset.keys(path)) == 3


def test_validate_rejects_incomplete_records():
    good = dataset.to_record(measurement(64))
    assert dataset.validate({**good, "times_ms": None}) == ["missing raw repetitions (times_ms)"]
    assert "missing device driver" in dataset.validate({**good, "device": {**good["device"], "driver": ""}})
    assert "missing device" in dataset.validate({k: v for k, v in good.items() if k != "device"})
    assert "missing status" in dataset.validate({**good, "status": None})
    assert "status ok but no repetitions" in dataset.validate({**good, "times_ms": [], "repetitions": 0})
    assert "unknown status 'great'" in dataset.validate({**good, "status": "great"})


def test_key_ignores_results_but_not_the_launch():
    a, b = measurement(64), measurement(64, times=(2.0, 2.0, 2.0))
    assert dataset.to_record(a)["key"] == dataset.to_record(b)["key"]
    assert dataset.to_record(a)["key"] != dataset.to_record(measurement(128))["key"]


def test_reading_survives_a_write_cut_short(tmp_path):
    plain = tmp_path / "d.jsonl"
    dataset.append(plain, [dataset.to_record(measurement(64))])
    with open(plain, "a") as f:
        f.write('{"kernel": "k", "trunc')
    assert len(list(dataset.read(plain))) == 1
    gz = tmp_path / "d.jsonl.gz"
    dataset.append(gz, [dataset.to_record(measurement(64))])
    dataset.append(gz, [dataset.to_record(measurement(128))])
    data = gz.read_bytes()
    gz.write_bytes(data[:-8])  # the second member loses its trailer: its complete line is still good
    assert [r["scenario"]["global"] for r in dataset.read(gz)] == [[64], [128]]
    gz.write_bytes(data[:-150])  # the second member loses the end of its line: that record is dropped
    assert [r["scenario"]["global"] for r in dataset.read(gz)] == [[64]]
    with gzip.open(tmp_path / "d.jsonl.gz", "rb") as f:  # still a normal gzip file up to the cut
        assert f.read(10)


def test_store_records_and_filters_by_device(clperf_home):
    store.record(measurement(64))
    other = make_measurement(kernel="k", file="", source="x", options="", scenario=Scenario((1,), None, {}),
                             device=Device("Other", "P", "cpu", 1, 1, 1, 1, "9"), status="ok", error=None,
                             times_ms=(1.0,))
    store.record(other)
    mine = store.load(DEV.key)
    assert mine and all(m.device.key == DEV.key for m in mine)
    assert len(store.load()) >= len(mine) + 1
