"""Each rule on a kernel that should trigger it and on one that should not, with the data a fix needs."""

from __future__ import annotations

from clperf.predictor.analysis.pipeline import Finding, analyze_text


def findings(src: str, rule: str) -> list[Finding]:
    rep = analyze_text(src)
    assert rep.compiled, [d.message for d in rep.diagnostics]
    return [f for f in rep.findings if f.rule == rule]


def test_uncoalesced_strided_by_argument():
    (f,) = findings("""
kernel void column_sum(global const float *m, global float *sums, int rows) {
    int col = get_global_id(0);
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        acc += m[col * rows + r];
    sums[col] = acc;
}""", "uncoalesced-access")
    assert (f.kernel, f.line, f.severity) == ("column_sum", 6, "warning")
    assert f.data["param"] == "m" and f.data["stride_expr"] == "rows" and f.data["loop_line"] == 5
    assert "rows elements" in f.message and "`" not in f.message


def test_uncoalesced_suggests_swapping_dims_for_column_walk():
    (f,) = findings("""
kernel void t(global const float *a, global float *b, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    b[x * h + y] = a[x * h + y] * 2.0f;
}""", "uncoalesced-access")[:1]
    assert f.data["swap_dims"] is True
    assert "swap get_global_id(0) and get_global_id(1)" in f.message


def test_gather_is_information_not_warning():
    (f,) = findings("""
kernel void g(global const float *a, global const int *idx, global float *b) {
    int i = get_global_id(0);
    b[i] = a[idx[i]];
}""", "uncoalesced-access")
    assert f.severity == "information" and f.data["pattern"] == "indirect" and f.data["param"] == "a"


def test_contiguous_kernel_has_no_findings():
    rep = analyze_text("""
kernel void copy(global const float *a, global float *b) {
    int i = get_global_id(0);
    b[i] = a[i];
}""")
    assert rep.findings == ()


def test_local_cache_candidate_for_five_point_stencil():
    (f,) = findings("""
kernel void blur(global const float *in, global float *out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = in[y * w + x] + in[y * w + x - 1] + in[y * w + x + 1]
                   + in[(y - 1) * w + x] + in[(y + 1) * w + x];
}""", "local-cache-candidate")
    assert f.data["param"] == "in" and f.data["reuse"] == "stencil"
    assert sorted(map(tuple, f.data["offsets"])) == [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)]
    assert f.data["radius"] == [1, 1] and f.line == 4


def test_local_cache_candidate_for_sliding_window():
    (f,) = findings("""
kernel void fir(global const float *x, global float *y) {
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k];
    y[i] = acc;
}""", "local-cache-candidate")
    assert f.data["reuse"] == "window" and f.data["window"] == 8 and f.data["loop_line"] == 5


def test_local_cache_candidate_for_matrix_row_reused_across_tile():
    fs = findings("""
kernel void mm(global const float *A, global const float *B, global float *C, int N) {
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < N; k++)
        acc += A[row * N + k] * B[k * N + col];
    C[row * N + col] = acc;
}""", "local-cache-candidate")
    by_param = {f.data["param"]: f.data for f in fs}
    assert by_param["A"]["reuse"] == "row" and by_param["B"]["reuse"] == "column"
    assert by_param["A"]["loop_line"] == 5 and by_param["A"]["trip_expr"] == "N"


def test_no_local_cache_candidate_when_already_tiled():
    fs = findings("""
kernel void blur(global const float *in, global float *out, int w) {
    local float t[18];
    int x = get_global_id(0), l = get_local_id(0);
    t[l + 1] = in[x];
    if (l == 0) t[0] = in[x - 1];
    if (l == 15) t[17] = in[x + 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[x] = t[l] + t[l + 1] + t[l + 2];
}""", "local-cache-candidate")
    assert fs == []


def test_unroll_candidate_for_small_constant_loop():
    (f,) = findings("""
kernel void f(global float *a) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < 4; k++)
        s += a[i * 4 + k];
    a[i] = s;
}""", "unroll-candidate")
    assert (f.line, f.column, f.severity) == (5, 5, "information")
    assert f.data == {"loop_line": 5, "trip_count": 4, "pragma": "#pragma unroll", "insert_line": 5,
                      "indent": 4}


def test_no_unroll_candidate_with_pragma_or_large_or_unknown_trip_count():
    assert findings("""
kernel void f(global float *a, int n) {
    int i = get_global_id(0);
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 4; k++) s += a[i + k];
    for (int k = 0; k < 1000; k++) s += a[i];
    for (int k = 0; k < n; k++) s += a[i];
    a[i] = s;
}""", "unroll-candidate") == []


def test_barrier_divergence_under_local_id_condition():
    (f,) = findings("""
kernel void r(global float *a, local float *s, int k) {
    int l = get_local_id(0);
    s[l] = a[get_global_id(0)];
    if (get_local_id(0) < k) {
        s[l] += s[l + 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    a[get_global_id(0)] = s[l];
}""", "barrier-divergence")
    assert (f.line, f.severity) == (7, "error")
    assert f.data == {"barrier_line": 7, "condition_line": 5}


def test_barrier_after_early_return_is_divergent():
    (f,) = findings("""
kernel void r(global float *a, local float *s, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    s[get_local_id(0)] = a[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    a[i] = s[0];
}""", "barrier-divergence")
    assert f.line == 6


def test_barrier_under_uniform_condition_or_loop_is_fine():
    assert findings("""
kernel void r(global float *a, local float *s, int n) {
    int l = get_local_id(0);
    s[l] = a[get_global_id(0)];
    if (n > 4) barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < n; k++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        s[l] += 1.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    a[get_global_id(0)] = s[l];
}""", "barrier-divergence") == []


def test_every_rule_has_a_documentation_page():
    from pathlib import Path

    from clperf.predictor.analysis.findings import RULES

    docs = Path(__file__).resolve().parents[2] / "docs" / "rules"
    for rule in RULES:
        page = docs / f"{rule}.md"
        assert page.is_file(), page
        text = page.read_text()
        assert "## Why" in text and "## How to fix" in text
