"""The share of the peak DRAM rate a launch's loads reach (``roofline.stream_share``): the bytes each compute
unit's work-items keep in flight over DRAM's round trip (Little's law), read from the real analysis."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clperf.api import select_device
from clperf.core.records import Scenario
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl

SOURCE = r"""
__kernel void triad(__global float* a, __global const float* b, __global const float* c, float s) {
  int i = get_global_id(0); a[i] = b[i] + s * c[i];
}
__kernel void triad4(__global float4* a, __global const float4* b, __global const float4* c, float s) {
  int i = get_global_id(0); a[i] = b[i] + s * c[i];
}
__kernel void sum8(__global const float* p, __global const float* q, __global const float* r,
                   __global const float* s, __global const float* t, __global const float* u,
                   __global const float* v, __global const float* w, __global float* out) {
  int i = get_global_id(0); out[i] = p[i] + q[i] + r[i] + s[i] + t[i] + u[i] + v[i] + w[i];
}
__kernel void fill(__global float* a, float x) { a[get_global_id(0)] = x; }
__kernel void rows(__global const float* a, __global float* out) {
  float s = 0;
  for (int k = 0; k < 16; k++) s += a[k * get_global_size(0) + get_global_id(0)];
  out[get_global_id(0)] = s;
}
"""


@pytest.fixture(scope="module")
def kernels() -> dict:
    return {k.name: k for k in analyze_text(SOURCE, Path("stream.cl"), "").kernels}


def _traffic(kernel, items: int, group: int, elements: int, arrays: tuple[str, ...]) -> rl.Traffic:
    sc = Scenario(global_size=(items,), local_size=(group,), args={a: elements for a in arrays})
    return rl.traffic(kernel, sc, "gpu")


def test_each_work_items_loads_are_the_bytes_it_keeps_in_flight(kernels) -> None:
    n = 1 << 26
    triad = _traffic(kernels["triad"], n, 256, n, ("a", "b", "c"))
    assert triad.load_flight_bytes == pytest.approx(8.0)  # b[i] and c[i]
    assert triad.load_dram_share == pytest.approx(2 / 3)  # a is stored
    assert _traffic(kernels["triad4"], n // 4, 256, n // 4, ("a", "b", "c")).load_flight_bytes == 32.0
    fill = _traffic(kernels["fill"], n, 256, n, ("a",))
    assert fill.load_flight_bytes == 0.0 and fill.load_dram_share == 0.0
    # 16 iterations of the same trips for every work-item: the compiler issues four together
    rows = _traffic(kernels["rows"], n // 16, 256, n, ("a", "out"))
    assert rows.load_flight_bytes == pytest.approx(rl.UNROLLED_TRIPS * 4.0)


def test_few_bytes_in_flight_stream_from_dram_below_the_peak(kernels) -> None:
    h200 = select_device("h200")
    bw, fl, _ = profiles.peaks(h200)
    n = 1 << 28  # 1 GiB arrays
    args = ("a", "b", "c")
    triad = _traffic(kernels["triad"], n, 256, n, args)
    triad4 = _traffic(kernels["triad4"], n // 4, 256, n // 4, args)
    share, share4 = rl.stream_share(triad, h200, bw), rl.stream_share(triad4, h200, bw)
    # data/h200-large: the float triad at 3.47 TB/s in groups of 256, its float4 form at 4.38
    slower = rl.dram_ms(triad, h200, bw) / rl.dram_ms(triad4, h200, bw)
    assert slower == pytest.approx(4.38 / 3.47, rel=0.05)
    assert share < 0.8 < 0.97 < share4 <= 1.0
    # eight loads of 4 bytes keep as many in flight as two of 16
    many = _traffic(kernels["sum8"], n // 4, 256, n // 4, ("p", "q", "r", "s", "t", "u", "v", "w", "out"))
    assert rl.stream_share(many, h200, bw) > 0.97
    # stores stream at the peak
    fill = _traffic(kernels["fill"], n, 256, n, ("a",))
    assert rl.dram_ms(fill, h200, bw) == pytest.approx(fill.dram_bytes / (bw * 1e6))
    # fewer resident work-items (32 groups of 32 on a compute unit) keep fewer bytes in flight
    small_groups = _traffic(kernels["triad"], n, 32, n, args)
    assert rl.resident_items(small_groups, h200) == 1024
    assert rl.stream_share(small_groups, h200, bw) < share
    # arrays that fit half the L2 wait for the L2's shorter round trip
    in_l2 = _traffic(kernels["triad"], 1 << 20, 256, 1 << 20, args)
    assert share < rl.stream_share(in_l2, h200, bw) < 1.0


def test_a_device_without_a_measured_latency_streams_loads_at_the_peak(kernels) -> None:
    h200 = select_device("h200")
    n = 1 << 26
    triad = _traffic(kernels["triad"], n, 256, n, ("a", "b", "c"))
    assert rl.stream_share(triad, replace(h200, name="Other GPU"), 1000.0) == 1.0
    assert rl.stream_share(triad, select_device("pocl"), 100.0) == 1.0
