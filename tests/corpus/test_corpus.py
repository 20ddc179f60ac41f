"""The corpus: every kernel has a valid directive and sweep spec, compiles with clang, stays within the
buffer limits over its whole sweep, and (slow) runs on PoCL; the generator is deterministic and big."""

from __future__ import annotations

import math
import re

import pytest

from clperf.benchmark.corpus import (
    families,
    family_of,
    generated,
    hand_written,
    kernels_in,
    max_buffer_bytes,
    write_generated,
)
from clperf.benchmark.corpus.check_corpus import compile_error, run_isolated
from clperf.benchmark.corpus.launch import all_points, corners, front_kernel
from clperf.benchmark.corpus.sweepspec import parse_sweep
from clperf.core.errors import ScenarioError
from clperf.core.scenario import parse_flags, resolve

GENERATED_MAX_BYTES = 16 << 20
MAX_GROUP = 1024
_KERNEL_WORD = re.compile(r"^\s*(?:__kernel|kernel)\b", re.M)

HAND = hand_written()
GEN_SAMPLE = [k for name, src in generated(2000, 0)[::20] for k in kernels_in(src, family_of(name))]


def _ids(ks):
    return [k.name for k in ks]


def test_at_least_60_families_each_with_several_kernels():
    fams = families()
    assert len(fams) >= 60
    per = {p.stem: sum(1 for k in HAND if k.family == p.stem) for p in fams}
    assert min(per.values()) >= 2, {f: c for f, c in per.items() if c < 2}


def test_every_kernel_in_a_family_file_has_directive_and_sweep():
    for path in families():
        text = path.read_text()
        declared = len(_KERNEL_WORD.findall(text))
        found = [k for k in HAND if k.path == path]
        assert declared == len(found), f"{path.name}: {declared} kernels, {len(found)} with directive+sweep"


def test_kernel_names_are_unique_and_families_resolve():
    names = [k.name for k in HAND]
    assert len(names) == len(set(names))
    for k in HAND:
        assert family_of(k.name) == k.family
        assert family_of(k.path) == k.family


@pytest.mark.parametrize("ck", HAND + GEN_SAMPLE, ids=_ids(HAND + GEN_SAMPLE))
def test_directive_resolves_and_sweep_names_args(ck):
    spec = parse_flags(ck.directive)
    fk = front_kernel(ck)
    resolve(spec, fk.params, fk.dims_used)
    for r in ck.sweep.args:
        assert r.name in spec.args, f"sweep range {r.name} is not an --arg"
    assert ck.sweep.local is None or spec.local_size is not None


@pytest.mark.parametrize("ck", HAND + GEN_SAMPLE, ids=_ids(HAND + GEN_SAMPLE))
def test_every_sweep_point_fits_the_limits(ck):
    """Over the whole sweep: buffers within the folder's limit (16 MiB; 1 GiB for ``large/``), groups at
    most 1024 items, the largest global buffer at least 4 KB at the smallest size, and the directive's own
    local size valid at every point."""
    limit = max_buffer_bytes(ck.path) if ck.path is not None else GENERATED_MAX_BYTES
    fk = front_kernel(ck)
    pointers = [p for p in fk.params if p.pointer and p.address_space != "local"]
    count = 0
    for sc in all_points(ck):
        count += 1
        sizes = [int(sc.args[p.name]) * (p.element_size or 4) for p in pointers]
        assert max(sizes) <= limit, (sc, sizes)
        assert math.prod(sc.local_size or (1,)) <= MAX_GROUP, sc
    assert count >= 1
    smallest = corners(ck)[0]
    assert max(int(smallest.args[p.name]) * (p.element_size or 4) for p in pointers) >= 4096


@pytest.mark.slow
def test_every_family_file_compiles_with_clang():
    bad = {p.name: compile_error(p.read_text()) for p in families()}
    assert {k: v for k, v in bad.items() if v} == {}


@pytest.mark.slow
def test_sample_of_generated_kernels_compiles():
    sample = generated(2000, 0)[::10]
    assert len(sample) == 200
    bad = {name: compile_error(src) for name, src in sample}
    assert {k: v for k, v in bad.items() if v} == {}


def test_generator_is_deterministic_and_large():
    a = generated(2000, 0)
    assert a == generated(2000, 0)
    assert len(a) == 2000
    assert len({src.replace(name, "K") for name, src in a}) == 2000
    assert generated(50, 1) != generated(50, 0)
    fams = {family_of(name) for name, _ in a}
    assert {"gen-gather", "gen-stencil", "gen-strided", "gen-tiled", "gen-compute", "gen-twod"} <= fams


def test_generated_kernels_cover_the_axes():
    text = "\n".join(src for _, src in generated(2000, 0))
    for needle in ("#pragma unroll", "barrier(CLK_LOCAL_MEM_FENCE)", "double8", "char4", "float2", "idx[gid]",
                   "get_global_id(1)", "(gid & 1)", "sqrt(", "exp(", "sin(", "for (int k = 0; k < t;"):
        assert needle in text, needle


def test_write_generated_writes_one_file_per_kernel(tmp_path):
    paths = write_generated(tmp_path / "gen", count=5, seed=3)
    assert [p.stem for p in paths] == [name for name, _ in generated(5, 3)]
    assert all(len(list(kernels_in(p.read_text(), family_of(p)))) == 1 for p in paths)


def test_sweep_spec_errors():
    assert parse_sweep("n=1024..4096 local=16..64").local.values() == (16, 32, 64)
    for bad in ("n=1000..4096", "n=4096..1024", "n", "n=1..2 n=1..2", ""):
        with pytest.raises(ScenarioError):
            parse_sweep(bad)


def test_family_of_unknown_and_generated_names():
    assert family_of("gen_gather_00042") == "gen-gather"
    assert family_of("no_such_kernel") == "unknown"


@pytest.mark.slow
@pytest.mark.parametrize("ck", HAND, ids=_ids(HAND))
def test_each_family_kernel_runs_on_pocl_at_its_smallest_size(ck):
    pytest.importorskip("pyopencl")
    smallest = [s for s in corners(ck) if s.work_items == corners(ck)[0].work_items]
    assert run_isolated(ck, smallest, timeout=120) is None
