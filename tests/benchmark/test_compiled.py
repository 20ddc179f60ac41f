"""PoCL's own code for a kernel (benchmark/compiled.py): real PoCL builds, real objdump."""

from __future__ import annotations

from dataclasses import replace

from clperf.benchmark import compiled

from clperf.records import Scenario

# Horner's rule with a fixed 8-iteration loop: PoCL keeps the loop, so the work-item loop is not
# innermost and stays scalar. Unrolled by hand, the body is loop-free and LLVM vectorises the work-items.
LOOP = """
__kernel void horner(__global const float* x, __constant float* c, __global float* y) {
    int i = get_global_id(0);
    float v = x[i];
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) acc = acc * v + c[k];
    y[i] = acc;
}
"""
UNROLLED = LOOP.replace("for (int k = 0; k < 8; k++) acc = acc * v + c[k];",
                        " ".join(f"acc = acc * v + c[{k}];" for k in range(8)))
SCENARIO = Scenario((4096,), (64,), {"x": 4096, "c": 8, "y": 4096})


def test_the_work_item_loop_is_vectorised_only_without_an_inner_loop(device):
    rolled = compiled.cpu_code(LOOP, "horner", SCENARIO, device)
    flat = compiled.cpu_code(UNROLLED, "horner", SCENARIO, device)
    assert rolled is not None and flat is not None
    assert rolled.instructions > 10 and not rolled.vectorized
    assert flat.vectorized and flat.vector_ops >= compiled.VECTORIZED_MIN_OPS
    assert flat.masked_ops == 0  # no guard: plain vector loads and stores


def test_a_guard_keeps_vector_code_with_masked_loads_and_stores(device):
    guarded = """
    __kernel void scale(__global const float* a, __global float* b, int n) {
        int i = get_global_id(0);
        if (i < n) b[i] = a[i] * 1.5f + 2.0f;
    }
    """
    code = compiled.cpu_code(guarded, "scale", Scenario((4096,), (256,), {"a": 4096, "b": 4096, "n": 4000}),
                             device)
    assert code is not None and code.vectorized and code.masked_ops > 0


SMOOTH = """
__kernel void smooth(__global const float* in, __global float* out, int n) {
    int i = get_global_id(0);
    if (i > 0 && i < n - 1) out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
"""


def test_llvm_mca_costs_the_work_item_loop_of_a_kernel_without_loops_of_its_own(device):
    vector = compiled.cpu_code(UNROLLED, "horner", SCENARIO, device, own_loops=False)
    sc = Scenario((4096,), (256,), {"in": 4096, "out": 4096, "n": 4096})
    scalar = compiled.cpu_code(SMOOTH, "smooth", sc, device, own_loops=False)
    assert vector is not None and scalar is not None and not scalar.vectorized
    assert vector.item_cycles is not None and scalar.item_cycles is not None
    # 8 dependent FMAs spread over 8 lanes: about a cycle per work-item; the scalar guarded 3-point
    # stencil: its loads, compares and stores one work-item at a time (measured: 3 cycles, session 7)
    assert 0.2 < vector.item_cycles < 3 and 1 < scalar.item_cycles < 20
    # a kernel with a loop of its own: the work-item loop's body is not the whole cost
    assert compiled.cpu_code(UNROLLED, "horner", SCENARIO, device).item_cycles is None


def test_loops_are_backward_jumps_nested_by_address_range():
    ins = [(0x10, "mov", ""), (0x14, "add", ""), (0x18, "jne", "14 <k+0x14>"), (0x1c, "jmp", "10 <k>"),
           (0x20, "ret", "")]
    assert sorted(compiled.loops(ins)) == [(0x10, 0x1c, 0), (0x14, 0x18, 1)]


def test_results_are_cached_per_source_and_local_size(device):
    first = compiled.cpu_code(UNROLLED, "horner", SCENARIO, device)
    assert compiled.cpu_code(UNROLLED, "horner", SCENARIO, device) is first
    other = compiled.cpu_code(UNROLLED, "horner", replace(SCENARIO, local_size=(32,)), device)
    assert other is not None and other is not first


def test_none_where_no_code_can_be_read(device):
    assert compiled.cpu_code(LOOP, "horner", replace(SCENARIO, local_size=None), device) is None
    assert compiled.cpu_code(LOOP, "horner", SCENARIO, replace(device, platform="NVIDIA CUDA")) is None
    broken = LOOP.replace("acc * v", "acc * undefined_name")
    assert compiled.cpu_code(broken, "horner", SCENARIO, device) is None


def test_parse_reads_only_the_kernel_function():
    asm = "\n".join([
        "0000000000001000 <_pocl_kernel_k>:",
        "    1000:\tvmovups (%rdi),%ymm0",
        "    1004:\tvmaskmovps %ymm0,%ymm1,(%rsi)",
        "    1008:\tret",
        "",
        "0000000000001100 <_pocl_kernel_k_workgroup>:",
        "    1100:\tvmovups (%rdi),%ymm0",
    ])
    assert compiled.parse(asm, "k") == compiled.CompiledCode(3, 2, 1)
    assert compiled.parse(asm, "other") is None
