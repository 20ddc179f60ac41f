"""The IR analysis, one feature per test: a tiny kernel and its expected result, written by hand."""

from __future__ import annotations

import pytest

from clperf.core.records import Scenario
from clperf.predictor.analysis import opcounts
from clperf.predictor.analysis.pipeline import KernelReport, analyze_text
from clperf.predictor.model import roofline as rl


def kernel(src: str, name: str | None = None) -> KernelReport:
    rep = analyze_text(src)
    assert rep.compiled, [d.message for d in rep.diagnostics]
    ks = [k for k in rep.kernels if name is None or k.name == name]
    assert ks, f"kernel {name} not found"
    return ks[0]


def accesses(k: KernelReport, param: str, kind: str = "load"):
    return [a for a in k.accesses if a.param == param and a.kind == kind]


def one(k: KernelReport, param: str, kind: str = "load"):
    found = accesses(k, param, kind)
    assert len(found) == 1, found
    return found[0]


def test_contiguous_copy():
    k = kernel("""
kernel void copy(global const float *a, global float *b) {
    int i = get_global_id(0);
    b[i] = a[i];
}""")
    a, b = one(k, "a"), one(k, "b", "store")
    assert (a.pattern, a.stride, a.line, a.in_loop, a.element_size) == ("contiguous", 1, 4, False, 4)
    assert (b.pattern, b.stride, b.line) == ("contiguous", 1, 4)
    assert a.address_space == "global"
    params = {p.name: p for p in k.params}
    assert params["a"].read and not params["a"].written and params["a"].const
    assert params["b"].written and not params["b"].read
    assert k.ops.global_load_bytes == 4 and k.ops.global_store_bytes == 4


def test_strided_by_constant():
    k = kernel("""
kernel void s(global const float *a, global float *b) {
    int i = get_global_id(0);
    b[i] = a[i * 4 + 1];
}""")
    a = one(k, "a")
    assert (a.pattern, a.stride, a.stride_expr) == ("strided", 4, None)


def test_strided_by_argument():
    k = kernel("""
kernel void s(global const float *a, global float *b, int n) {
    int i = get_global_id(0);
    b[i] = a[i * n];
}""")
    a = one(k, "a")
    assert (a.pattern, a.stride, a.stride_expr) == ("strided", None, "n")


def test_2d_row_versus_column_access():
    k = kernel("""
kernel void t(global const float *a, global float *b, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    b[x * h + y] = a[y * w + x];
}""")
    row, col = one(k, "a"), one(k, "b", "store")
    assert k.dims == 2
    assert (row.pattern, row.stride) == ("contiguous", 1)
    assert (row.dim1_pattern, row.dim1_stride_expr) == ("strided", "w")
    assert (col.pattern, col.stride_expr) == ("strided", "h")
    assert (col.dim1_pattern, col.dim1_stride) == ("contiguous", 1)


def test_gather_through_index_array_is_indirect():
    k = kernel("""
kernel void g(global const float *a, global const int *idx, global float *b) {
    int i = get_global_id(0);
    b[i] = a[idx[i]];
}""")
    assert one(k, "idx").pattern == "contiguous"
    a = one(k, "a")
    assert (a.pattern, a.stride) == ("indirect", None)


def test_index_loaded_from_a_uniform_address_is_not_indirect():
    k = kernel("""
kernel void g(global const float *a, global const int *off, global float *b) {
    int i = get_global_id(0);
    b[i] = a[off[0] + i];
}""")
    assert one(k, "off").pattern == "uniform"
    assert one(k, "a").pattern == "contiguous"


def test_broadcast_is_uniform():
    k = kernel("""
kernel void b(global const float *a, global const float *s, global float *out, int k) {
    int i = get_global_id(0);
    out[i] = a[i] * s[k] + s[3];
}""")
    loads = accesses(k, "s")
    assert [(x.pattern, x.stride) for x in loads] == [("uniform", 0), ("uniform", 0)]


def test_local_tile_with_barriers():
    k = kernel("""
#define T 16
kernel void transpose(global const float *in, global float *out, int n) {
    local float tile[T][T + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = in[get_global_id(1) * n + get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * T + lx, oy = get_group_id(0) * T + ly;
    out[oy * n + ox] = tile[lx][ly];
}""")
    assert k.barriers == 1
    store = one(k, "tile", "store")
    load = one(k, "tile", "load")
    assert store.address_space == "local" and (store.pattern, store.stride) == ("contiguous", 1)
    assert (store.dim1_pattern, store.dim1_stride) == ("strided", 17)
    assert (load.pattern, load.stride) == ("strided", 17)  # the transposed read walks a column of the tile
    assert one(k, "out", "store").pattern == "contiguous"
    assert k.ops.local_load_bytes == 4 and k.ops.local_store_bytes == 4
    assert k.staged == ("in",)
    assert k.divergent_barriers == ()


def test_constant_trip_count_multiplies_counts():
    k = kernel("""
kernel void f(global const float *x, global float *y) {
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k];
    y[i] = acc;
}""")
    loops = [(lp.line, lp.depth, lp.trip_count, lp.trip_expr, lp.unroll) for lp in k.loops]
    assert loops == [(5, 1, 8, None, None)]
    x = one(k, "x")
    assert x.in_loop and x.loop_line == 5
    assert k.ops.global_load_bytes == 8 * 4 and k.ops.flops == 8
    assert not k.ops.trip_unknown


def test_symbolic_trip_counts_and_ops_for():
    k = kernel("""
kernel void f(global const float *m, global float *out, int rows, int n) {
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        for (int c = 1; c < n; c += 2)
            acc += m[r * n + c];
    out[i] = acc;
}""")
    outer, inner = k.loops
    assert (outer.line, outer.depth, outer.trip_count, outer.trip_expr) == (5, 1, None, "rows")
    assert (inner.line, inner.depth, inner.trip_count, inner.trip_expr) == (6, 2, None, "ceil((n - 1) / 2)")
    assert inner.parent == 0
    assert k.ops.trip_unknown  # without argument values each loop counts once
    ops = k.ops_for({"rows": 10, "n": 9})  # 10 * 4 iterations
    assert ops.global_load_bytes == 10 * 4 * 4 + 0
    assert ops.global_store_bytes == 4
    assert not ops.trip_unknown
    counts = {(a.param, a.kind): w for a, w in k.access_counts_for({"rows": 10, "n": 9})}
    assert counts == {("m", "load"): 40, ("out", "store"): 1}
    missing = k.ops_for({"rows": 10})
    assert missing.trip_unknown and missing.global_load_bytes == 10 * 4


def test_trip_count_n_minus_one():
    k = kernel("""
kernel void f(global float *a, int n) {
    int i = get_global_id(0);
    for (int j = 1; j < n; j++)
        a[i] += 1.0f;
}""")
    assert k.loops[0].trip_expr == "n - 1"
    assert k.loops[0].trips_for({"n": 5}) == 4


def test_unknown_trip_counts():
    k = kernel("""
kernel void f(global const int *len, global float *out) {
    int i = get_global_id(0);
    float acc = 1.0f;
    for (int j = 0; j < len[i]; j++)
        acc *= 2.0f;
    int t = 0;
    while (t < i) { acc += 1.0f; t++; }
    out[i] = acc;
}""")
    assert [(lp.line, lp.trip_count, lp.trip_expr, lp.varies) for lp in k.loops] == [
        (5, None, None, True), (8, None, None, True)]
    assert k.ops.trip_unknown
    assert k.ops_for({"n": 4}).trip_unknown


def test_unroll_pragma_is_read_and_loop_kept():
    k = kernel("""
kernel void f(global float *b) {
    int i = get_global_id(0);
    float acc = 0.0f;
    #pragma unroll
    for (int k = 0; k < 4; k++) acc += b[i + k];
    #pragma unroll 2
    for (int k = 0; k < 6; k++) acc *= b[i];
    b[i] = acc;
}""")
    assert [(lp.line, lp.trip_count, lp.unroll) for lp in k.loops] == [(6, 4, 0), (8, 6, 2)]


def test_vector_types_move_whole_vectors():
    k = kernel("""
kernel void v(global const float4 *a, global float4 *b) {
    int i = get_global_id(0);
    b[i] = a[i] * 2.0f;
}""")
    a, b = one(k, "a"), one(k, "b", "store")
    assert (a.element_size, a.pattern, a.stride) == (16, "contiguous", 1)
    assert (b.element_size, b.pattern) == (16, "contiguous")
    assert {p.name: p.type for p in k.params} == {"a": "float4", "b": "float4"}
    assert k.ops.global_load_bytes == 16 and k.ops.flops == 4


def test_double_precision():
    k = kernel("""
kernel void d(global const double *x, global double *y, double s) {
    int i = get_global_id(0);
    y[i] = x[i] * s + y[i];
}""")
    assert one(k, "x").element_size == 8
    assert k.ops.global_load_bytes == 16 and k.ops.global_store_bytes == 8
    assert k.ops.flops == 2  # one fused multiply-add
    assert k.ops.fp64_ops == 1 and k.ops.special_ops == 0  # the FMA is one double instruction


def test_special_functions_and_double_precision_are_counted_apart():
    k = kernel("""
kernel void f(global double *a, global float4 *b, global float *c) {
    int i = get_global_id(0);
    a[i] = exp(a[i]) + a[i] / a[i + 1];
    b[i] = native_sin(b[i]) * b[i];
    c[i] = fma(c[i], c[i], fabs(c[i])) + sqrt(c[i]);
}""")
    # double: exp, the division and the add; special: exp, the division, 4 lanes of sin and the sqrt
    assert k.ops.fp64_ops == 3
    assert k.ops.special_ops == 2 + 4 + 1
    # fabs is not special, the fma counts 2 flops and is single precision
    assert k.ops.flops == 3 + (4 + 4) + (1 + 2 + 1 + 1)
    # all of them one special-function result and a fix-up: the two in double precision cost more
    assert (k.ops.math_short, k.ops.math_long, k.ops.math_pow, k.ops.math_fp64) == (7, 0, 0, 2)


def test_special_functions_are_classed_by_what_a_call_compiles_to():
    k = kernel("""
kernel void f(global float *a, global double *b) {
    int i = get_global_id(0);
    a[i] = sin(a[i]) + log(a[i] + 1.0f) + fmod(a[i], 3.0f) + pow(a[i], 1.5f) + native_log(a[i]);
    b[i] = cos(b[i]);
}""")
    assert k.ops.math_long == 4  # sin, log, fmod and the double cos: a range reduction and a polynomial
    assert k.ops.math_pow == 1
    assert k.ops.math_short == 1  # native_log: the hardware approximation
    assert k.ops.math_fp64 == 1 and k.ops.special_ops == 6


def test_a_blocks_dependent_path_counts_independent_chains_once():
    k = {r.name: r for r in analyze_text("""
kernel void one(global float *out, float a, float b) {
    float x = get_global_id(0);
    x = fma(x, a, b); x = fma(x, a, b); x = fma(x, a, b); x = fma(x, a, b);
    out[get_global_id(0)] = x;
}
kernel void four(global float *out, float a, float b) {
    float x = get_global_id(0), y = x + 1.0f, z = x + 2.0f, w = x + 3.0f;
    x = fma(x, a, b); y = fma(y, a, b); z = fma(z, a, b); w = fma(w, a, b);
    vstore4((float4)(x, y, z, w), get_global_id(0), out);
}
kernel void special(global float *out, float a) {
    out[get_global_id(0)] = sin(a) + sqrt(a);
}
kernel void two_long(global float *out, float a) {
    out[get_global_id(0)] = sin(a) + cos(a);
}""").kernels}
    lat = opcounts.LATENCY
    assert k["one"].ops.path_cycles == 4 * lat["float"]  # the conversion of the id is no arithmetic
    # an add, then an FMA: the four chains run side by side, though more operations issue
    assert k["four"].ops.path_cycles == 2 * lat["float"]
    assert k["one"].ops.op_cycles == k["one"].ops.path_cycles  # one chain: no parallelism
    assert k["four"].ops.op_cycles >= (3 + 4) * lat["float"]
    assert k["four"].ops.flops == 3 + 4 * 2 > k["one"].ops.flops
    # a short function overlaps an independent long one; two long ones run one after another
    assert k["special"].ops.path_cycles == lat["math_long"] + lat["float"]
    assert k["two_long"].ops.path_cycles == 2 * lat["math_long"] + lat["float"]


def test_atomics_builtin_and_local():
    k = kernel("""
kernel void h(global const int *data, global int *hist, local int *bins) {
    int i = get_global_id(0);
    atomic_inc(&bins[data[i] & 15]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) < 16) atomic_add(&hist[get_local_id(0)], bins[get_local_id(0)]);
}""")
    kinds = {(a.param, a.kind, a.address_space) for a in k.accesses}
    assert ("bins", "atomic", "local") in kinds and ("hist", "atomic", "global") in kinds
    assert k.ops.atomics == 2
    hist = {p.name: p for p in k.params}["hist"]
    assert hist.read and hist.written
    # the roofline's atomic bound counts the global one only, for every work-item (the analysis does not
    # know how many take the branch)
    t = rl.traffic(k, Scenario(global_size=(4096,), local_size=(256,), args={}), "gpu")
    assert t.global_atomics == 4096


def test_atomics_on_a_table_every_group_updates_are_told_from_a_groups_own():
    src = """
kernel void grid(global uint *bins, global const uint *d, uint mask) {
    atomic_inc(&bins[d[get_global_id(0)] & mask]);       // data picks a bin of one table: shared
    atomic_inc(&bins[0]);                                // one counter: all 32 lanes on it
    atomic_add(&bins[get_local_id(0)], 1u);              // a bin per lane, the same in every group
}
kernel void own(global uint *hists, global const uint *d) {
    atomic_inc(&hists[get_group_id(0) * 32 + (d[get_global_id(0)] & 31)]);  // the group's own table
    atomic_inc(&hists[get_global_id(0)]);                                    // a word per work-item
}"""
    scenario = Scenario(global_size=(4096,), local_size=(256,), args={"bins": 1024, "hists": 4096, "d": 4096})
    t = rl.traffic(kernel(src, "grid"), scenario, "gpu")
    assert sorted((lanes, table) for _, lanes, table in t.shared_atomics) == [
        (1.0, 4096.0), (1.0, 4096.0), (32.0, 4096.0)]
    assert rl.traffic(kernel(src, "own"), scenario, "gpu").shared_atomics == ()


def test_atomics_cl20_atomicrmw():
    rep = analyze_text("""
// clperf-build: -cl-std=CL2.0
kernel void c(global atomic_int *counter, global const int *x) {
    if (x[get_global_id(0)] > 0)
        atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}""")
    assert rep.compiled, [d.message for d in rep.diagnostics]
    counter = [a for a in rep.kernels[0].accesses if a.param == "counter"]
    assert [(a.kind, a.pattern) for a in counter] == [("atomic", "uniform")]


@pytest.mark.parametrize("index, pattern, stride", [
    ("i / 2", "contiguous", None),          # pairs of work-items share an element
    ("(i >> 4) * 64 + (i & 15)", "contiguous", 1),  # blocked layout: rows of 16 consecutive elements
    ("min(i + 1, n - 1)", "contiguous", 1),  # a clamp keeps the varying side
    ("i * i", "unknown", None),
])
def test_index_algebra(index: str, pattern: str, stride: int | None):
    k = kernel(f"""
kernel void f(global const float *a, global float *b, int n) {{
    int i = get_global_id(0);
    b[i] = a[{index}];
}}""")
    a = one(k, "a")
    assert (a.pattern, a.stride) == (pattern, stride)


def test_grid_stride_loop_is_contiguous():
    k = kernel("""
kernel void f(global float *a, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        a[i] *= 2.0f;
}""")
    assert [a.pattern for a in k.accesses] == ["contiguous", "contiguous"]
    assert k.loops[0].trip_count is None and k.loops[0].varies


def test_json_shape_matches_issue():
    rep = analyze_text("""
kernel void copy(global const float *a, global float *b) {
    int i = get_global_id(0);
    b[i] = a[i];
}""")
    d = rep.to_json()
    assert set(d) >= {"file", "diagnostics", "kernels", "findings"}
    k = d["kernels"][0]
    assert set(k) >= {"name", "line", "params", "accesses", "loops", "barriers", "ops"}
    assert set(k["params"][0]) >= {"name", "type", "address_space", "pointer", "read", "written"}
    assert set(k["accesses"][0]) >= {"param", "kind", "address_space", "pattern", "stride", "stride_expr",
                                     "line", "in_loop"}
    assert set(k["ops"]) >= {"flops", "int_ops", "global_load_bytes", "global_store_bytes",
                             "local_load_bytes", "local_store_bytes"}
    assert k["line"] == 2 and k["accesses"][0]["line"] == 4


def test_loop_carried_non_induction_values_terminate():
    # a compare-and-swap retry loop: the loaded value goes round the loop (no induction variable)
    k = kernel("""
inline void atomic_addf(volatile global float *p, float v) {
    union { uint u; float f; } o, nv;
    do { o.f = *p; nv.f = o.f + v; }
    while (atomic_cmpxchg((volatile global uint *)p, o.u, nv.u) != o.u);
}
kernel void f(global const int *idx, global float *y) {
    atomic_addf(&y[idx[get_global_id(0)]], 1.0f);
}""")
    assert {(a.param, a.kind, a.pattern) for a in k.accesses} == {
        ("idx", "load", "contiguous"), ("y", "load", "indirect"), ("y", "atomic", "indirect")}
    assert k.loops[0].trip_count is None and k.loops[0].varies


def test_an_escape_loop_counts_its_iteration_bound_as_the_most_it_runs():
    k = kernel("""
kernel void esc(global int *out, int maxit) {
    float x = get_global_id(0) * 0.001f, y = 0.0f;
    int it = 0;
    while (x * x + y * y < 4.0f && it < maxit) {
        float t = x * x - y * y + 0.3f;
        y = 2.0f * x * y + 0.1f;
        x = t;
        ++it;
    }
    out[get_global_id(0)] = it;
}""")
    (lp,) = k.loops
    assert lp.trip is not None and lp.trip.bound and lp.varies
    assert lp.trip_expr == "at most maxit" and lp.trips_for({"maxit": 200}) == 200
    assert k.ops_for({"maxit": 200}).flops > 100 * k.ops_for({"maxit": 1}).flops / 2


def test_a_loop_stepping_by_the_work_group_size_counts_per_launch():
    from clperf.predictor.analysis.records import launch_args

    k = kernel("""
kernel void gridsum(global const float *in, global float *out, int m) {
    float acc = 0.0f;
    for (int i = get_local_id(0); i < m; i += get_local_size(0))
        acc += in[i];
    out[get_global_id(0)] = acc;
}""")
    (lp,) = k.loops
    assert lp.trip_count is None and lp.varies  # taken at work-item 0: the most any work-item runs
    assert lp.trips_for({"m": 4096}) is None  # no launch size given
    assert lp.trips_for(launch_args({"m": 4096}, [256], [256])) == 16
    assert lp.trips_for(launch_args({"m": 4096}, [256], [64])) == 64
    counts = dict((a.param, n) for a, n in k.access_counts_for(launch_args({"m": 4096}, [256], [128])))
    assert counts["in"] == 32


def test_a_loop_between_loaded_bounds_shares_the_buffer_it_walks_among_the_work_items():
    from clperf.predictor.analysis.records import launch_args

    k = kernel("""
kernel void rows(global const int *rowptr, global const int *col, global const float *x, global float *y) {
    int r = get_global_id(0);
    float acc = 0.0f;
    for (int e = rowptr[r]; e < rowptr[r + 1]; ++e)
        acc += x[col[e]];
    y[r] = acc;
}""")
    (lp,) = k.loops
    assert lp.trip is not None and lp.trip.average and lp.varies
    assert lp.trip_expr == "about ceil(col / rowptr) on average"
    args = launch_args({"rowptr": 1025, "col": 8192, "x": 1024, "y": 1024}, [1024], [64])
    assert lp.trips_for(args) == 8
    counts = {a.param: n for a, n in k.access_counts_for(args) if a.kind == "load"}
    assert counts["col"] == 8 and counts["x"] == 8 and counts["rowptr"] == 1


def test_a_frontier_walks_the_average_segment_and_interleaved_lanes_share_one():
    from clperf.predictor.analysis.records import launch_args

    k = kernel("""
kernel void expand(global const int *frontier, global const int *row_off, global const int *adj,
                   global int *seen) {
    int v = frontier[get_global_id(0)];
    for (int e = row_off[v]; e < row_off[v + 1]; ++e)
        seen[adj[e]] = 1;
}""")
    (lp,) = k.loops
    args = launch_args({"frontier": 64, "row_off": 4097, "adj": 65536, "seen": 4096}, [64], [64])
    assert lp.trips_for(args) == 16  # the average degree, not adj / 64 work-items
    k = kernel("""
kernel void warp_row(global const int *rowptr, global const float *val, global float *y) {
    int row = get_global_id(0) / 32, lane = get_local_id(0) % 32;
    float s = 0.0f;
    for (int j = rowptr[row] + lane; j < rowptr[row + 1]; j += 32)
        s += val[j];
    y[row] = s;
}""")
    (lp,) = k.loops
    args = launch_args({"rowptr": 1025, "val": 1024 * 320, "y": 1024}, [32768], [256])
    assert lp.trips_for(args) == 10  # 320 per row over 32 lanes


def test_a_range_that_moves_with_the_work_group_counts_its_length():
    # the tiled matrix multiply's loop: start and bound both hold the group's offset, which cancels
    k = kernel("""
#define TS 16
kernel void tiles(global const float *A, global float *C, int wA) {
    int first = wA * TS * get_group_id(1);
    int last = first + wA - 1;
    float s = 0.0f;
    for (int a = first; a <= last; a += TS)
        s += A[a + get_local_id(0)];
    C[get_global_id(0)] = s;
}""")
    (lp,) = k.loops
    assert lp.trips_for({"wA": 2048}) == 128 and not lp.varies


def test_a_search_over_a_range_that_moves_with_the_work_group_is_not_counted_at_its_bound():
    # a __local tile loader looking for the lane that holds an element stops long before the group's end
    k = kernel("""
kernel void find(global const int *want, global int *out) {
    int base = get_group_id(0) * get_local_size(0), hit = -1;
    for (int j = base; j < base + get_local_size(0) && hit < 0; j++)
        if (want[j] == 7) hit = j;
    out[get_global_id(0)] = hit;
}""")
    (lp,) = k.loops
    assert lp.trip is None


def test_a_bound_divided_by_a_constant_counts_its_quotient():
    k = kernel("""
kernel void quot(global const float *A, global float *C, int n) {
    float s = 0.0f;
    for (int t = 0; t < n / 16; t++)
        s += A[t * 16 + get_local_id(0)];
    C[get_global_id(0)] = s;
}""")
    (lp,) = k.loops
    assert lp.trips_for({"n": 2048}) == 128
    assert lp.trips_for({"n": 2040}) in (127, 128)  # floor(n / 16) read as n / 16: at most one more


def test_mad24_and_mul24_index_like_their_full_width_forms():
    k = kernel("""
kernel void t24(global const float *in, global float *out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    out[mad24(y, w, x)] = in[mul24(x, w) + y];
}""")
    st, ld = one(k, "out", "store"), one(k, "in")
    assert (st.pattern, st.stride) == ("contiguous", 1)
    assert (ld.pattern, ld.stride_expr) == ("strided", "w")


@pytest.mark.parametrize("header, lsz, expected", [
    ("for (int s = get_local_size(0) / 2; s > 0; s >>= 1)", 256, 8),  # tree reduction
    ("for (int s = get_local_size(0) / 2; s > 0; s >>= 1)", 64, 6),
    ("for (int d = 1; d < get_local_size(0); d <<= 1)", 128, 7),  # scan
    ("for (int d = 1; d < 256; d *= 2)", 64, 8),
    ("for (int d = 128; d >= 64; d >>= 1)", 64, 2),
])
def test_a_counter_scaled_each_iteration_counts_its_steps(header: str, lsz: int, expected: int):
    from clperf.predictor.analysis.records import launch_args

    k = kernel(f"""
kernel void tree(global float *data) {{
    local float s_[1024];
    int lid = get_local_id(0);
    s_[lid] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    {header} {{
        if (lid % 2 == 0) s_[lid] += s_[lid ^ 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    data[get_global_id(0)] = s_[lid];
}}""")
    (lp,) = k.loops
    assert lp.trips_for(launch_args({"data": 4096}, [4096], [lsz])) == expected


@pytest.mark.parametrize("search, n, expected", [
    # bins of a histogram: the last edge <= x, both ends kept
    ("int lo = 0, hi = n; while (hi > lo + 1) { int mid = (lo + hi) >> 1;"
     " if (x >= e[mid]) lo = mid; else hi = mid; } r = lo;", 32, 5),
    ("int lo = 0, hi = n; while (hi > lo + 1) { int mid = (lo + hi) >> 1;"
     " if (x >= e[mid]) lo = mid; else hi = mid; } r = lo;", 1024, 10),
    ("unsigned int lo = 0, hi = 20; while (hi > lo + 1) { unsigned int k2 = (lo + hi) / 2;"
     " if (x >= e[k2]) hi = k2; else lo = k2; } r = hi - 1;", 0, 5),
    # a lower bound, one end moved past the midpoint
    ("int lo = 0, hi = n; while (lo < hi) { int mid = lo + (hi - lo) / 2;"
     " if (e[mid] < x) lo = mid + 1; else hi = mid; } r = lo;", 1024, 11),
    # a classic search, both ends moved past the midpoint: at most floor(log2 n) + 1 steps
    ("int lo = 0, hi = n - 1; while (lo <= hi) { int mid = (lo + hi) / 2;"
     " if (e[mid] < x) lo = mid + 1; else hi = mid - 1; } r = hi;", 1000, 10),
])
def test_a_binary_search_runs_log2_of_its_range(search: str, n: int, expected: int):
    k = kernel(f"""
kernel void search(global const float *keys, global const float *e, global int *out, int n) {{
    float x = keys[get_global_id(0)];
    int r;
    {search}
    out[get_global_id(0)] = r;
}}""")
    (lp,) = k.loops
    assert lp.trips_for({"n": n, "keys": 64, "e": max(n, 20), "out": 64}) == expected


@pytest.mark.parametrize("bound, args, expected", [
    ("min(n, 64)", {"n": 1000}, 64),
    ("min(n, 64)", {"n": 10}, 10),
    ("max(n, m)", {"n": 10, "m": 30}, 30),
    ("clamp(n, 1, 64)", {"n": 100}, 64),
    ("clamp(n, 1, 64)", {"n": 0}, 1),
    ("(lda == m ? n : m)", {"lda": 5, "m": 5, "n": 7}, 7),
    ("(lda == m ? n : m)", {"lda": 4, "m": 5, "n": 7}, 5),
    ("(n > 2 * m ? m : n - m)", {"n": 100, "m": 40}, 40),
    ("(n > 2 * m ? m : n - m)", {"n": 70, "m": 40}, 30),
])
def test_a_bound_chosen_among_scenario_values_is_counted_for_the_scenario(bound: str, args: dict[str, int],
                                                                           expected: int):
    k = kernel(f"""
kernel void pick(global const float *A, global float *C, int n, int m, int lda) {{
    float s = 0.0f;
    int stop = {bound};
    for (int j = 0; j < stop; j++)
        s += A[j];
    C[get_global_id(0)] = s;
}}""")
    (lp,) = k.loops
    assert lp.trips_for({"n": 0, "m": 0, "lda": 0} | args) == expected
    assert lp.trip is not None and "pick:" not in lp.trip.expr


def test_a_bound_set_in_an_if_and_its_else_is_the_branch_the_scenario_takes():
    k = kernel("""
kernel void branch(global const float *A, global float *C, int n, int m, int lda) {
    float s = 0.0f;
    int stop;
    if (lda == m) { C[1] = 1.0f; stop = n; } else { C[2] = 2.0f; stop = m; }
    for (int j = 0; j < stop; j++)
        s += A[j];
    C[get_global_id(0)] = s;
}""")
    (lp,) = k.loops
    assert lp.trips_for({"n": 70, "m": 30, "lda": 30}) == 70
    assert lp.trips_for({"n": 70, "m": 30, "lda": 31}) == 30


def test_a_start_set_on_a_condition_read_roughly_takes_the_mean_of_its_values():
    k = kernel("""
kernel void odd(global const float *A, global float *C, int n) {
    float s = 0.0f;
    int start = 0;
    if (n % 2) { s = A[0]; start = 1; }
    for (int j = start; j < n; j += 2)
        s += A[j] + A[j + 1];
    C[get_global_id(0)] = s;
}""")
    (lp,) = k.loops
    assert lp.trips_for({"n": 100}) == 50  # ceil((100 - 0.5) / 2): the even case's 50, the odd's 50
    assert "0 or 1" in lp.trip_expr


def test_a_range_narrowed_by_one_each_iteration_is_no_binary_search():
    k = kernel("""
kernel void walk(global const float *keys, global const float *e, global int *out, int n) {
    float x = keys[get_global_id(0)];
    int lo = 0, hi = n;
    while (hi > lo + 1) {
        if (x >= e[lo + 1]) lo++; else hi--;
    }
    out[get_global_id(0)] = lo;
}""")
    (lp,) = k.loops
    assert lp.trip is None or lp.trip.geometric is None


def test_each_work_items_share_of_the_launch_counts_as_a_quotient():
    from clperf.predictor.analysis.records import launch_args

    k = kernel("""
kernel void chunks(global const float *in, global float *out, int n) {
    int per = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * per, stop = min(start + per, n);
    float acc = 0.0f;
    for (int i = start; i < stop; ++i)
        acc += in[i];
    out[get_global_id(0)] = acc;
}""")
    (lp,) = k.loops
    assert lp.trips_for(launch_args({"n": 1 << 20}, [4096], [256])) == 256
    assert lp.trips_for(launch_args({"n": 1000}, [64], [64])) == 16  # ceil(1000 / 64)


def test_steps_of_an_argument_or_a_share_of_the_launch_and_shrinking_bounds_are_counted():
    from clperf.predictor.analysis.records import launch_args

    k = kernel("""
kernel void strided(global const float *x, global float *out, int n, int stride) {
    float s = 0.0f;
    for (int i = get_global_id(0); i < n; i += stride)
        s += x[i];
    out[get_global_id(0)] = s;
}""")
    (lp,) = k.loops
    assert lp.trip_expr == "ceil(n / stride)" and lp.trips_for({"n": 1 << 20, "stride": 4096}) == 256
    k = kernel("""
kernel void warp_rows(global const float *x, global float *out, int rows) {
    float s = 0.0f;
    for (int row = get_global_id(0) / 32; row < rows; row += get_global_size(0) / 32)
        s += x[row];
    out[get_global_id(0)] = s;
}""")
    (lp,) = k.loops
    assert lp.trips_for(launch_args({"rows": 4096}, [32768], [256])) == 4  # 1,024 warps, 4 rows each
    k = kernel("""
kernel void tri(global const float *x, global float *out, int n) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < n - 1 - i; j++)
        s += x[j];
    out[i] = s;
}""")
    (lp,) = k.loops
    assert lp.varies and lp.trips_for({"n": 1000}) == 999  # work-item 0: the most any work-item runs


def test_a_radius_of_half_a_width_keeps_cs_floor():
    k = kernel("""
kernel void conv(global const float *in, global float *out, int w, int n) {
    int i = get_global_id(0), r = w / 2;
    float s = 0.0f;
    for (int j = -r; j <= r; j++)
        s += in[i + j + r];
    out[i] = s;
}""")
    (lp,) = k.loops
    assert [lp.trips_for({"w": w}) for w in (3, 5, 4)] == [3, 5, 5]
    assert "floor(w / 2)" in lp.trip_expr


HELPER = """
#define STEP(c) s = s * c + x[(k * stride + c) % n]; s = native_sqrt(s * s + c) * (s - c) + native_sin(s);
float walk(__global const float* x, int n, int stride, float bias) {
    float s = bias;
    for (int k = 0; k < n; ++k) {
        STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8)
        STEP(9) STEP(10) STEP(11) STEP(12) STEP(13) STEP(14) STEP(15) STEP(16)
    }
    return s;
}
__kernel void three(__global const float* x, __global float* out, int n, int mode) {
    int i = get_global_id(0);
    float r;
    if (mode == 0) r = walk(x + i, n, 1, 0.0f);
    else if (mode == 1) r = walk(x + i, n, 2, 1.0f);
    else r = walk(x + i, n, 4, 2.0f);
    out[i] = r;
}
"""


def test_a_helper_too_large_for_clangs_own_inlining_is_analysed_inside_its_kernel() -> None:
    # -O1 leaves the three calls of walk() calls (a GPU compiler inlines them): its loop and its sixteen
    # loads an iteration count at each call, as in the kernel itself
    k = analyze_text(HELPER).kernel("three")
    assert len(k.loops) == 3 and all(lp.trip_expr == "n" for lp in k.loops)
    loads = [a for a in k.accesses if a.kind == "load" and a.param == "x"]
    assert len(loads) == 3 * 16 and all(a.loops for a in loads)
    ops = k.ops_for({"n": 100})
    assert ops.flops >= 3 * 16 * 2 * 100 and ops.global_load_bytes == 3 * 16 * 4 * 100


SWITCH = """
__kernel void pick(__global float* x, int mode) {
    int i = get_global_id(0);
    switch (mode) {
        case 0: x[i] += 1.0f; break;
        case 1: x[i] *= 2.0f; break;
        case 2: x[i] -= 3.0f; break;
        default: x[i] = 0.0f;
    }
    for (int k = 0; k < mode; ++k) x[i] += x[k];
}
"""


def test_a_switch_printed_over_several_lines_keeps_every_source_position() -> None:
    # clang prints a switch's cases one a line: read as instructions of their own, they had shifted every
    # instruction's text from its debug location, and every access and loop lost its position
    k = analyze_text(SWITCH).kernel("pick")
    assert k.accesses and all(a.line >= 5 for a in k.accesses)
    assert [lp.line for lp in k.loops] == [10]
