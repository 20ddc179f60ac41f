"""Inputs per parameter type: host-side generation by hand, and real runs that check what arrived."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clperf.benchmark.inputs import (
    ArrayCache,
    BufferPlan,
    element_type,
    make_array,
    plan_buffers,
    scalar_value,
)
from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy
from clperf.core.errors import ScenarioError
from clperf.core.records import Param
from clperf.core.scenario import parse_flags

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name,dtype,lanes", [
    ("char", np.int8, 1), ("uchar", np.uint8, 1), ("short", np.int16, 1), ("ushort", np.uint16, 1),
    ("int", np.int32, 1), ("uint", np.uint32, 1), ("long", np.int64, 1), ("ulong", np.uint64, 1),
    ("half", np.float16, 1), ("float", np.float32, 1), ("double", np.float64, 1),
    ("float4", np.float32, 4), ("int2", np.int32, 2), ("float3", np.float32, 4), ("uchar16", np.uint8, 16),
])
def test_element_types(name, dtype, lanes):
    et = element_type(name)
    assert et.dtype == np.dtype(dtype) and et.lanes == lanes


def test_unknown_type_is_a_scenario_error():
    with pytest.raises(ScenarioError):
        element_type("struct particle")


def test_fills():
    f = element_type("float")
    r = make_array(f, 1000, "random", 1)
    assert r.dtype == np.float32 and r.size == 1000 and 0 <= r.min() and r.max() < 1
    assert np.array_equal(r, make_array(f, 1000, "random", 1))  # seeded
    assert not np.array_equal(r, make_array(f, 1000, "random", 2))
    i = make_array(element_type("int4"), 100, "range:5:9", 3)
    assert i.size == 400 and i.min() >= 5 and i.max() <= 8
    assert make_array(element_type("uchar"), 10, "ones", 0).tolist() == [1] * 10
    with pytest.raises(ScenarioError):
        make_array(element_type("uchar"), 10, "range:0:1000", 0)


def _plan(type_name: str, length: int, fill: str = "random") -> BufferPlan:
    return plan_buffers([Param("x", type_name, "global", True)], {"x": length}, {"x": fill})[0]


def test_array_cache_serves_prefixes_of_longer_arrays():
    cache = ArrayCache()
    big = cache.get(_plan("float", 1000), 7)
    small = cache.get(_plan("float", 10), 7)
    assert np.shares_memory(big, small) and np.array_equal(small, big[:10])
    # a sorted or permuted buffer is not a prefix of a longer one: made again for its own length
    long_perm, short_perm = cache.get(_plan("int", 1000, "perm"), 7), cache.get(_plan("int", 10, "perm"), 7)
    assert sorted(short_perm.tolist()) == list(range(10)) and not np.shares_memory(long_perm, short_perm)


def test_scalar_values_are_typed_and_range_checked():
    assert scalar_value(Param("n", "uchar", "private", False), 200).dtype == np.uint8
    v = scalar_value(Param("v", "float4", "private", False), 1.5)
    assert v.dtype == np.float32 and v.tolist() == [1.5] * 4
    with pytest.raises(ScenarioError):
        scalar_value(Param("n", "char", "private", False), 300)
    with pytest.raises(ScenarioError):
        scalar_value(Param("n", "int", "private", False), 2.5)


SCALARS = ("--global 64 --arg flag=64 --arg a=-3 --arg b=200 --arg c=-3000 --arg d=60000 --arg e=-100000 "
           "--arg f=4000000000 --arg g=-5000000000 --arg h=10000000000 --arg x=1.5 --arg y=0.25 --arg v=2 "
           "--arg w=7 --arg n=64")


def test_every_scalar_type_arrives_with_its_value(device):
    src = (DATA / "types.cl").read_text()
    m = benchmark(src, "scalars", parse_flags(SCALARS), device, policy=Policy.quick(), timeout_s=60)
    assert m.status == "ok", m.error
    wrong = benchmark(src, "scalars", parse_flags(SCALARS.replace("--arg e=-100000", "--arg e=5")), device,
                      policy=Policy.quick(), timeout_s=60)
    assert wrong.status == "crash" and "past the end of buffer 'flag'" in (wrong.error or "")


def test_every_buffer_type_holds_its_fill(device):
    src = (DATA / "types.cl").read_text()
    flags = ("--global 256 --arg n=256 --arg flag=n --arg f=n --arg d=n --arg i=n --arg u=n --arg f4=n "
             "--arg idx=n --arg z=n --fill idx=range:10:20 --fill z=zeros")
    m = benchmark(src, "buffers", parse_flags(flags), device, policy=Policy.quick(), timeout_s=60)
    assert m.status == "ok", m.error
    bad = benchmark(src, "buffers", parse_flags(flags.replace("z=zeros", "z=ones")), device,
                    policy=Policy.quick(), timeout_s=60)
    assert bad.status == "crash"


def test_local_buffers_are_sized_from_the_scenario(device):
    src = (DATA / "types.cl").read_text()
    ok = benchmark(src, "local_scratch", parse_flags("--global 256 --local 64 --arg out=256 --arg tmp=64"),
                   device, policy=Policy.quick(), check=True, timeout_s=60)
    assert ok.status == "ok" and ok.checked and ok.error is None
    too_big = benchmark(src, "local_scratch",
                        parse_flags("--global 256 --local 64 --arg out=256 --arg tmp=1<<30"), device,
                        policy=Policy.quick(), timeout_s=60)
    assert too_big.status == "out-of-memory" and "__local" in (too_big.error or "")
