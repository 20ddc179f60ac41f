"""Loads a loop's exit or next address waits for (``analysis.gating``), and what the roofline charges them."""

from __future__ import annotations

from pathlib import Path

import pytest

from clperf.api import select_device
from clperf.core.records import Scenario
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl

SOURCE = r"""
__kernel void linear(__global const double* cdf, __global const double* u, __global int* out, int n) {
  int i = get_global_id(0); int idx = -1;
  for (int x = 0; x < n; x++) { if (cdf[x] >= u[i]) { idx = x; break; } }
  out[i] = idx;
}
__kernel void bisect(__constant float* edges, __global const float* v, __global int* out, int nb) {
  int i = get_global_id(0); float x = v[i]; int lo = 0, hi = nb;
  while (lo < hi) { int mid = (lo + hi) / 2; if (edges[mid] <= x) lo = mid + 1; else hi = mid; }
  out[i] = lo;
}
__kernel void csr(__global const int* rowptr, __global const int* col, __global const float* val,
                  __global const float* x, __global float* y) {
  int i = get_global_id(0); float s = 0;
  for (int j = rowptr[i]; j < rowptr[i + 1]; j++) s += val[j] * x[col[j]];
  y[i] = s;
}
__kernel void chase(__global const int* next, __global int* out, int steps) {
  int p = get_global_id(0);
  for (int s = 0; s < steps; s++) p = next[p];
  out[get_global_id(0)] = p;
}
__kernel void levels(__global const int* child, __global const float* keys, __global int* node,
                     __global int* out, int height) {
  int g = get_group_id(0), t = get_local_id(0);
  for (int l = 0; l < height; l++) {
    if (keys[node[g] * 64 + t] > 0.5f && t == 0) node[g] = child[node[g] * 64 + t];
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  out[get_global_id(0)] = node[g];
}
__kernel void gather(__global const int* idx, __global const float* x, __global float* y, int n) {
  int i = get_global_id(0); float s = 0;
  for (int k = 0; k < n; k++) s += x[idx[k * 64 + i]];
  y[i] = s;
}
"""


@pytest.fixture(scope="module")
def kernels() -> dict:
    report = analyze_text(SOURCE, Path("gating.cl"), "")
    return {k.name: k for k in report.kernels}


def waits(kernel) -> dict[str, str | None]:
    return {a.param: a.wait for a in kernel.accesses if a.kind == "load"}


def test_a_search_that_breaks_on_a_loaded_value_waits_for_each_load(kernels) -> None:
    assert waits(kernels["linear"]) == {"cdf": "walk", "u": None}  # u[i] is read once, before the loop


def test_a_binary_search_waits_for_its_midpoint_whose_address_the_loads_decide(kernels) -> None:
    assert waits(kernels["bisect"])["edges"] == "chase"
    assert waits(kernels["bisect"])["v"] is None


def test_loads_of_a_loop_whose_exit_does_not_wait_for_them_overlap(kernels) -> None:
    # the row's bounds are loaded before the loop; the gather x[col[j]] feeds only the sum
    assert set(waits(kernels["csr"]).values()) == {None}


def test_a_pointer_chase_waits_for_each_step_even_with_a_counted_loop(kernels) -> None:
    assert waits(kernels["chase"]) == {"next": "chase"}


def test_a_level_read_through_an_index_of_this_iteration_waits_where_a_barrier_holds_the_loop(kernels
                                                                                               ) -> None:
    # node[g] is stored by one work-item and read by all after the barrier: the node's keys and child
    # wait for it every level; without a barrier, a gather through loaded indices overlaps
    assert waits(kernels["levels"]) == {"node": None, "keys": "chase", "child": "chase"}
    assert set(waits(kernels["gather"]).values()) == {None}


def test_the_roofline_charges_a_waited_load_the_devices_measured_latency(kernels) -> None:
    h200 = select_device("h200")
    mem = profiles.facts(h200).gpu_memory
    assert mem is not None and mem.chase_ns and mem.search_ns
    n = 4096  # one wave of one-item chains: the chain bound decides
    sc = Scenario(global_size=(n,), local_size=(256,), args={"cdf": n, "u": n, "out": n, "n": n})
    t = rl.traffic(kernels["linear"], sc, h200.type)
    (wait, where, region, execs), = t.waits
    assert (wait, where, region) == ("walk", "global", n * 8.0)
    per_iteration = mem.wait_ns("walk", n * 8.0)
    assert per_iteration == next(ns for b, ns in mem.search_ns if b >= n * 8)
    _, load_chain = rl.chain_ms(t, h200)
    others = t.global_loads - execs
    assert load_chain == pytest.approx((execs * per_iteration + others * rl.LOAD_CHAIN_NS) / n * 1e-6)
    # without the waits, the same loads overlap at LOAD_CHAIN_NS each: the measured latency is longer
    assert rl.chain_ms(rl.replace(t, waits=()), h200)[1] < load_chain


def test_measured_latencies_grow_with_the_region_and_stop_at_the_last_row() -> None:
    mem = profiles.facts(select_device("h200")).gpu_memory
    assert mem is not None
    l1, l2, far = (mem.wait_ns("chase", b) for b in (16 << 10, 4 << 20, 64 << 30))
    assert l1 < l2 < far == mem.chase_ns[-1][1]
    assert mem.wait_ns("fixed", 1 << 30) == mem.search_ns[0][1]  # one address: always a hit
    assert mem.wait_ns("walk", None) == mem.wait_ns("walk", mem.l2_bytes / 2)  # unknown size: the L2's


ROUNDS = r"""
__kernel void stride_copy(__global const uint* a, __global uint* b, uint n) {
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) b[i] = a[i] * 3u + 1u;
}
__kernel void lower_mm(__global const float* A, __global const float* B, __global float* C, int n) {
  int r = get_global_id(1), c = get_global_id(0); float s = 0;
  for (int k = 0; k <= r; k++) s += A[r * n + k] * B[k * n + c];
  C[r * n + c] = s;
}
__kernel void naive_mm(__global const float* A, __global const float* B, __global float* C, int n) {
  int r = get_global_id(1), c = get_global_id(0); float s = 0;
  for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
  C[r * n + c] = s;
}
__kernel void csr(__global const int* rowptr, __global const int* col, __global const float* val,
                  __global const float* x, __global float* y) {
  int i = get_global_id(0); float s = 0;
  for (int j = rowptr[i]; j < rowptr[i + 1]; j++) s += val[j] * x[col[j]];
  y[i] = s;
}
__kernel void fixed(__global const float* a, __global float* out) {
  float s = 0;
  for (int k = 0; k < 16; k++) s += a[get_global_id(0) * 16 + k];
  out[get_global_id(0)] = s;
}
"""


@pytest.fixture(scope="module")
def rounds_kernels(tmp_path_factory: pytest.TempPathFactory) -> dict:
    path = tmp_path_factory.mktemp("rounds") / "rounds.cl"
    path.write_text(ROUNDS)
    return {k.name: k for k in analyze_text(ROUNDS, path, "").kernels}


def _latencies() -> tuple[float, float, float]:
    mem = profiles.facts(select_device("h200")).gpu_memory
    assert mem is not None
    near = max(ns for size, ns in mem.chase_ns if size <= mem.l2_bytes / 2)
    return mem.chase_ns[0][1], near, mem.chase_ns[-1][1]


def test_a_grid_stride_loop_waits_a_round_trip_of_the_level_its_buffer_is_in(rounds_kernels) -> None:
    # bench/gpu_stream_loop.py: each iteration of a warp waits for its load, 387 ns over 512 MiB
    h200 = select_device("h200")
    hit, near, far = _latencies()
    items = 132 * 32 * 4  # four warps per SM: one wave
    for words, wait in ((1 << 27, far), (1 << 20, near)):  # 512 MiB past the L2; 4 MiB in it
        sc = Scenario(global_size=(items,), local_size=(32,), args={"a": words, "b": words, "n": words})
        t = rl.traffic(rounds_kernels["stride_copy"], sc, h200.type)
        ((execs, body),) = t.rounds
        assert execs == pytest.approx(words, rel=0.02) and body[0][0] == 1.0  # a new line every iteration
        per_item = rl.round_trips_ns(t, h200) / items
        assert per_item == pytest.approx(execs / items * wait, rel=1e-3)
        assert rl.chain_ms(t, h200)[1] == pytest.approx(per_item * 1e-6, rel=1e-3)  # it binds the chain
        # at 40 ns a load, as before, the same launch's chain is several times shorter
        assert rl.chain_ms(rl.replace(t, rounds=()), h200)[1] < rl.chain_ms(t, h200)[1] / 3


def test_a_loop_waits_for_its_slowest_load_and_for_a_load_whose_address_a_load_gives(rounds_kernels) -> None:
    h200 = select_device("h200")
    hit, near, far = _latencies()
    n = 4096  # 64 MiB a matrix: past the L2
    sc = Scenario(global_size=(n, n), local_size=(16, 16), args={"A": n * n, "B": n * n, "C": n * n, "n": n})
    lower = rounds_kernels["lower_mm"].with_trips({0: n / 2})  # a triangle: trips vary by row, as counted
    t = rl.traffic(lower, sc, h200.type)
    ((execs, body),) = t.rounds
    shares = sorted(new for new, _, _ in body)
    assert shares == [pytest.approx(4 / 128), 1.0]  # A's row re-reads its line; B's column a new one
    a_wait = 4 / 128 * (near + (far - near) * body[0][1]) + (1 - 4 / 128) * hit
    b_dram = next(dram for new, dram, _ in body if new == 1.0)
    assert b_dram < 0.01  # B is read n times over: DRAM serves little of it
    assert rl.round_trips_ns(t, h200) == pytest.approx(execs * max(a_wait, near + (far - near) * b_dram))
    rows = 4096
    sc = Scenario(global_size=(rows,), local_size=(256,),
                  args={"rowptr": rows + 1, "col": rows * 8, "val": rows * 8, "x": rows, "y": rows})
    t = rl.traffic(rounds_kernels["csr"], sc, h200.type)
    ((_, body),) = t.rounds
    assert sorted(dep for _, _, dep in body) == [0.0, 0.0, 1.0]  # x[col[j]] waits for col[j] first


def test_a_loop_of_the_same_trips_for_every_work_item_waits_for_no_round_trip(rounds_kernels) -> None:
    sc = Scenario(global_size=(4096,), local_size=(256,), args={"a": 4096 * 16, "out": 4096})
    assert rl.traffic(rounds_kernels["fixed"], sc, "gpu").rounds == ()
    n = 1024
    sc = Scenario(global_size=(n, n), local_size=(16, 16), args={"A": n * n, "B": n * n, "C": n * n, "n": n})
    assert rl.traffic(rounds_kernels["naive_mm"], sc, "gpu").rounds == ()
