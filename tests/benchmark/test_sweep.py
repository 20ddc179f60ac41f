"""Sweeps on PoCL: variants, a crashing variant recorded while the sweep goes on, resuming, budgets."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from clperf.benchmark import dataset
from clperf.benchmark.sweep import kernels_in_file, parse_shard, run_sweep, shard_of, variants
from clperf.benchmark.timing import Policy
from clperf.core.errors import ClperfError

DATA = Path(__file__).parent / "data"


def kernels():
    found, skipped = kernels_in_file(DATA / "sweepme.cl")
    return {k.name: k for k in found}, skipped


def test_kernels_without_a_spec_are_skipped():
    found, skipped = kernels()
    assert set(found) == {"vadd", "crashy"}
    assert any("unswept" in s for s in skipped)


def test_variants_follow_the_spec_and_the_device(device):
    k = kernels()[0]["vadd"]
    vs = variants(k, device, max_variants=100)
    sizes = {v.scenario.global_size[0] for v in vs}
    locals_ = {v.scenario.local_size[0] for v in vs}
    assert sizes == {1024, 2048, 4096, 8192, 16384} and locals_ == {16, 32, 64, 128, 256}
    assert len(vs) == 25
    for v in vs:
        n = v.scenario.args["n"]
        assert v.scenario.args["a"] == n == v.scenario.global_size[0]
        assert v.values["local"] == v.scenario.local_size[0]
    order = [v.scenario.global_size[0] for v in vs]
    assert order == sorted(order, reverse=True)
    small = variants(k, device, max_variants=7)
    assert len(small) == 7 and small == variants(k, device, max_variants=7)  # deterministic
    tiny_gpu = replace(device, max_work_group_size=64)
    assert max(v.scenario.local_size[0] for v in variants(k, tiny_gpu, max_variants=100)) == 64
    capped = variants(k, device, max_variants=100, max_buffer_bytes=8192 * 4)
    assert max(v.scenario.global_size[0] for v in capped) == 8192


def test_shards_partition_the_kernels():
    ks = list(kernels()[0].values())
    parts = [[k for k in ks if shard_of(k, 3) == s] for s in range(3)]
    assert sorted(k.name for p in parts for k in p) == sorted(k.name for k in ks)
    assert parse_shard("2/3") == (1, 3)
    with pytest.raises(ClperfError):
        parse_shard("4/3")


def test_sweep_records_failures_goes_on_and_resumes(device, tmp_path):
    found, _ = kernels()
    out = tmp_path / "d.jsonl.gz"
    ks = [found["crashy"], found["vadd"]]
    s1 = run_sweep(ks, device, out, max_variants=6, policy=Policy.quick(), variant_timeout_s=30)
    recs = list(dataset.read(out))
    assert s1.measured == len(recs) == 5 + 6
    crashy = [r for r in recs if r["kernel"] == "crashy"]
    assert {r["scenario"]["args"]["n"]: r["status"] for r in crashy} == {
        1024: "ok", 2048: "ok", 4096: "ok", 8192: "crash", 16384: "crash"}
    assert s1.restarts >= 1 and s1.failed == {"crash": 2}
    assert all(r["status"] == "ok" for r in recs if r["kernel"] == "vadd")
    assert all(dataset.validate(r) == [] for r in recs)
    assert all(r["sweep"]["spec"] for r in recs)
    sources = [json.loads(line) for line in __import__("gzip").open(tmp_path / "d.sources.jsonl.gz", "rt")]
    assert {s["source_hash"] for s in sources} == {recs[0]["source_hash"]}
    s2 = run_sweep(ks, device, out, max_variants=6, policy=Policy.quick())
    assert s2.measured == 0 and s2.resumed == 11
    s3 = run_sweep(ks, device, out, max_variants=8, policy=Policy.quick())
    assert s3.measured == 2 and len(list(dataset.read(out))) == 13


def test_time_budget_stops_cleanly(device, tmp_path):
    found, _ = kernels()
    out = tmp_path / "b.jsonl"
    # every variant repeats for 0.15 s of wall time, so 25 variants cannot fit in a 2.5 s budget
    slow = Policy(min_total_ms=1e9, max_repetitions=10**6, max_wall_s=0.15, stable_rel=None)
    start = time.monotonic()
    s = run_sweep([found["vadd"]], device, out, max_variants=25, policy=slow, time_budget_s=2.5)
    took = time.monotonic() - start
    assert s.stopped_by_budget and 0 < s.measured < 25 and took < 4.0
    assert len(list(dataset.read(out))) == s.measured


def test_kernels_compiled_ahead_give_the_same_records(device, tmp_path):
    """With lookahead the next files compile in builder processes; a build error still lands on its kernel."""
    spec = "// clperf: --global n --arg n=1024 --arg out=n\n// clperf-sweep: n=1024..2048\n"
    bodies = {"scale": "out[get_global_id(0)] *= 2.0f;", "shift": "out[get_global_id(0)] += 1.0f;",
              "broken": "out[get_global_id(0)] = no_such_name;"}
    ks = []
    for name, body in bodies.items():
        f = tmp_path / f"{name}.cl"
        f.write_text(spec + f"__kernel void {name}(__global float* out, int n) {{ {body} }}\n")
        ks += kernels_in_file(f)[0]
    ahead = run_sweep(ks, device, tmp_path / "a.jsonl", max_variants=2, policy=Policy.quick(), lookahead=2)
    plain = run_sweep(ks, device, tmp_path / "p.jsonl", max_variants=2, policy=Policy.quick(), lookahead=0)
    status = {r["kernel"]: r["status"] for r in dataset.read(tmp_path / "a.jsonl")}
    assert status == {"scale": "ok", "shift": "ok", "broken": "build-error"}
    assert status == {r["kernel"]: r["status"] for r in dataset.read(tmp_path / "p.jsonl")}
    assert ahead.measured == plain.measured == 6 and ahead.restarts == 0
    assert set(ahead.phases) == {"build", "setup", "run"} and ahead.phases["run"] > 0
