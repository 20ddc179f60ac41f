"""PoCL's own code, counted and costed (predictor/model/cpu_code.py): real PoCL builds and runs, real llc-15,
llvm-mca."""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from clperf.benchmark import pocl_code
from clperf.core.records import Scenario
from clperf.predictor.model import cpu_code as compiled

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

# Collatz steps of the work-item's id: a loop whose trip count only a run knows
COLLATZ = """
__kernel void collatz(__global int* steps) {
    int i = get_global_id(0);
    long x = i + 1;
    int s = 0;
    while (x > 1) { x = (x & 1) ? 3 * x + 1 : x / 2; s++; }
    steps[i] = s;
}
"""


def collatz_steps(n: int) -> int:
    total = 0
    for i in range(1, n + 1):
        x = i
        while x > 1:
            x = 3 * x + 1 if x & 1 else x // 2
            total += 1
    return total


def test_blocks_are_counted_in_a_run_of_the_scenario(device):
    run = pocl_code.counted(COLLATZ, "collatz", Scenario((1024,), (64,), {"steps": 1024}), device)
    assert run is not None and run.launches == 1
    counts = run.counts[run.function]
    assert counts[compiled.ENTRY] == 1024 // 64  # the work-group function runs once per group
    # the loop's body ran once per step of every work-item's own sequence (in each copy of the loop
    # that LLVM's unroll of the work-item loop made)
    body = [n for b, n in counts.items() if b.startswith("while.body.") and "preheader" not in b]
    assert sum(body) == collatz_steps(1024)
    assert run.function.startswith("_pocl_kernel_collatz")


@pytest.mark.slow
def test_cycles_follow_the_work_the_run_did(device):
    short = pocl_code.cpu_code(COLLATZ, "collatz", Scenario((1024,), (64,), {"steps": 1024}), device)
    long = pocl_code.cpu_code(COLLATZ.replace("long x = i + 1;", "long x = i + 1 + 100000;"), "collatz",
                             Scenario((1024,), (64,), {"steps": 1024}), device)
    assert short is not None and long is not None
    ratio = long.cycles / short.cycles
    steps = sum(_steps(i + 1 + 100000) for i in range(1024)) / collatz_steps(1024)
    assert 0.5 * steps < ratio < 2 * steps  # the loop dominates both: cycles scale with its steps


def _steps(x: int) -> int:
    s = 0
    while x > 1:
        x = 3 * x + 1 if x & 1 else x // 2
        s += 1
    return s


@pytest.mark.slow
def test_vector_code_costs_less_per_work_item_than_scalar_code(device):
    rolled = pocl_code.cpu_code(LOOP, "horner", SCENARIO, device)
    flat = pocl_code.cpu_code(UNROLLED, "horner", SCENARIO, device)
    assert rolled is not None and flat is not None
    # the loop keeps the work-items scalar (8 dependent FMAs each); unrolled, 8 work-items share a
    # vector instruction: measured on this machine 9.5x faster (reports/rewrite_speedups_pocl.md)
    assert rolled.item_cycles > 3 * flat.item_cycles
    assert 0.1 < flat.item_cycles < 10
    assert any("passes" in note for note in rolled.loops)


@pytest.mark.slow
def test_library_functions_the_kernel_calls_are_counted_and_costed(device):
    src = """
    #pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void f(__global const double* x, __global double* y) {
        int i = get_global_id(0);
        y[i] = EXPR;
    }
    """
    sc = Scenario((4096,), (64,), {"x": 4096, "y": 4096})
    calls = pocl_code.cpu_code(src.replace("EXPR", "pow(x[i], 1.7) + exp(x[i])"), "f", sc, device)
    plain = pocl_code.cpu_code(src.replace("EXPR", "x[i] * 1.7 + x[i]"), "f", sc, device)
    assert calls is not None and plain is not None
    called = [note for note in calls.loops if not note.startswith(("work-group", "pregion"))]
    assert called and all(": calls: " in note for note in called)  # "<function>: calls: 4096 passes, ..."
    assert calls.item_cycles > 10 * plain.item_cycles  # pow and exp are tens of instructions each


@pytest.mark.slow
def test_results_are_cached_per_source_and_scenario(device):
    first = pocl_code.cpu_code(UNROLLED, "horner", SCENARIO, device)
    assert pocl_code.cpu_code(UNROLLED, "horner", SCENARIO, device) is first
    other = pocl_code.cpu_code(UNROLLED, "horner", replace(SCENARIO, local_size=(32,)), device)
    assert other is not None and other is not first


@pytest.mark.slow
def test_callers_with_a_budget_start_no_backlog_of_runs(device):
    # an editor asking for each new text while slow runs are going: no more than BACKGROUND_RUNS at once
    busy = [Scenario((64 * (i + 3),), (64,), {"out": 64 * (i + 3), "n": 0})
            for i in range(pocl_code.BACKGROUND_RUNS)]
    for sc in busy:
        assert pocl_code.cpu_code(FOREVER, "spin", sc, device, timeout_s=6, wait_s=0) is None
    text = UNROLLED.replace("float acc = 0.0f;", "float acc = 3.0f;")  # not costed yet in this process
    t0 = time.monotonic()
    assert pocl_code.cpu_code(text, "horner", SCENARIO, device, wait_s=5) is None
    assert time.monotonic() - t0 < 1  # not started, not waited for
    # once they have ended (their timeout), the same request starts its run and gets it
    assert all(pocl_code.cpu_code(FOREVER, "spin", sc, device, timeout_s=6) is None for sc in busy)
    assert pocl_code.cpu_code(text, "horner", SCENARIO, device, wait_s=60) is not None


@pytest.mark.slow
def test_concurrent_callers_share_one_costing(device, monkeypatch):
    calls = []
    real = pocl_code._cost

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - the real costing, counted
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pocl_code, "_cost", counting)
    text = UNROLLED.replace("float acc = 0.0f;", "float acc = 1.0f;")  # not costed yet in this process
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: pocl_code.cpu_code(text, "horner", SCENARIO, device), range(3)))
    assert len(calls) == 1 and results[0] is not None and all(r is results[0] for r in results)


def test_none_where_no_code_can_be_costed(device):
    assert pocl_code.cpu_code(LOOP, "horner", SCENARIO, replace(device, platform="NVIDIA CUDA")) is None
    broken = LOOP.replace("acc * v", "acc * undefined_name")
    assert pocl_code.cpu_code(broken, "horner", SCENARIO, device) is None


FOREVER = """
__kernel void spin(__global int* out, int n) {
    int i = get_global_id(0);
    int s = 0;
    for (int k = 0; k >= 0; k += n) s += k;
    out[i] = s;
}
"""


@pytest.mark.slow
def test_a_kernel_that_never_ends_gives_none_within_the_timeout(device):
    sc = Scenario((64,), (64,), {"out": 64, "n": 0})
    assert pocl_code.cpu_code(FOREVER, "spin", sc, device, timeout_s=10) is None


@pytest.mark.slow
def test_a_caller_with_a_wait_budget_is_not_held_by_a_slow_run(device):
    sc = Scenario((128,), (64,), {"out": 128, "n": 0})  # not costed yet in this process
    t0 = time.monotonic()
    assert pocl_code.cpu_code(FOREVER, "spin", sc, device, timeout_s=8, wait_s=0.5) is None
    assert time.monotonic() - t0 < 3  # the run goes on in the background
    # a caller without a budget waits for that same run, which the timeout ends: None, cached
    assert pocl_code.cpu_code(FOREVER, "spin", sc, device, timeout_s=8) is None
    assert time.monotonic() - t0 < 30
    # a version that is quick to cost arrives within a budget once its run has ended
    quick = pocl_code.cpu_code(UNROLLED, "horner", SCENARIO, device, wait_s=60)
    assert quick is not None and pocl_code.cpu_code(UNROLLED, "horner", SCENARIO, device, wait_s=0) is quick


ASM = """\
_pocl_kernel_k_workgroup:                  # @_pocl_kernel_k_workgroup
# %bb.0:
\tmovq\t(%rdi), %rax
\txorl\t%ecx, %ecx
.LBB1_1:                                # %pregion_for_entry.entry.i
                                        # =>This Loop Header: Depth=1
                                        #     Child Loop BB1_2 Depth 2
\tvxorps\t%xmm0, %xmm0, %xmm0
.LBB1_2:                                # %for.body.i
                                        #   Parent Loop BB1_1 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
\tvaddss\t(%rax,%rdx,4), %xmm0, %xmm0
\tincq\t%rdx
\tjne\t.LBB1_2
# %bb.3:                                # %for.end.i
                                        #   in Loop: Header=BB1_1 Depth=1
\tvmovss\t%xmm0, (%rsi,%rcx,4)
\tincq\t%rcx
\tjne\t.LBB1_1
# %bb.4:
\tretq
.Lfunc_end1:
"""


def test_blocks_read_ir_names_and_loop_nests_from_llc_assembly():
    code = compiled.blocks(ASM, "_pocl_kernel_k_workgroup")
    assert [(b.label, b.ir, b.loop, b.header) for b in code] == [
        (".LBB1_0", "<entry>", None, False),
        (".LBB1_1", "pregion_for_entry.entry.i", ".LBB1_1", True),
        (".LBB1_2", "for.body.i", ".LBB1_2", True),
        (".LBB1_3", "for.end.i", ".LBB1_1", False),
        (".LBB1_4", "", None, False)]
    assert code[2].parents == [(".LBB1_1", 1)] and code[1].parents == []
    assert code[2].instructions == ["vaddss\t(%rax,%rdx,4), %xmm0, %xmm0", "incq\t%rdx", "jne\t.LBB1_2"]
    assert compiled.blocks(ASM, "other") == []


@pytest.mark.slow
def test_launch_cycles_repeat_blocks_and_inner_loops_by_their_counts(monkeypatch):
    # the composition, costed by llvm-mca (as where the code cannot run here): a timed run on shared
    # cores varies by tens of percent from one pass to the next
    monkeypatch.setattr(compiled.core_run, "cycles", lambda instructions: None)
    code = compiled.blocks(ASM, "_pocl_kernel_k_workgroup")
    counts = {"<entry>": 1, "pregion_for_entry.entry.i": 100, "for.body.i": 800, "for.end.i": 100}
    cycles, notes = compiled.launch_cycles(code, counts)
    # 100 work-items of 8 dependent adds (3 cycles each on AMD and Intel cores): the inner loop's chain
    # is the floor; successive work-items overlap (a fresh accumulator each), so not 100 x 24
    assert 100 * 3 < cycles < 100 * 8 * 3 * 1.2
    assert len(notes) == 1 and notes[0].startswith("work-group: 1 passes")  # all in one llvm-mca run
    twice = compiled.launch_cycles(code, {k: 2 * v for k, v in counts.items()})[0]
    assert twice == pytest.approx(2 * cycles, rel=0.05)
    # a work-group too long for one llvm-mca run: its loops are costed on their own, and add up the same
    big = {k: v if k == "<entry>" else 100 * v for k, v in counts.items()}
    cycles100, notes = compiled.launch_cycles(code, big)
    assert "without its inner loops" in notes[0] and any("10000 passes" in n for n in notes)
    assert cycles100 == pytest.approx(100 * cycles, rel=0.05)


def test_taken_branches_are_read_from_block_runs():
    code = compiled.blocks(ASM, "_pocl_kernel_k_workgroup")
    runs = {".LBB1_0": 1, ".LBB1_1": 100, ".LBB1_2": 800, ".LBB1_3": 100, ".LBB1_4": 1}
    # the inner loop's back edge: 800 passes less the 100 that fall through to for.end; the outer
    # loop's: 100 less the one exit
    assert compiled.taken_branches(code, runs) == {".LBB1_0": 0, ".LBB1_1": 0, ".LBB1_2": 700,
                                                   ".LBB1_3": 99, ".LBB1_4": 0}


TINY_LOOP = """\
f:
# %bb.0:
\txorl\t%ecx, %ecx
.LBB2_1:                                # %loop
                                        # =>This Inner Loop Header: Depth=1
\tmovl\t$1, %eax
\tjne\t.LBB2_1
# %bb.2:                                # %exit
\tretq
.Lfunc_end2:
"""


@pytest.mark.slow
def test_a_loop_pass_costs_at_least_a_cycle_per_taken_branch():
    code = compiled.blocks(TINY_LOOP, "f")
    cycles, _notes = compiled.launch_cycles(code, {"<entry>": 1, "loop": 1000, "exit": 1})
    # llvm-mca alone: half a cycle per pass (one move, the jump left out); the core follows
    # one taken branch per cycle (bench/cpu_core_facts.py)
    assert compiled.mca(["movl\t$1, %eax"]) < 0.75
    assert cycles >= 999 * compiled.TAKEN_CYCLES


LOCKED_LOOP = """\
f:
# %bb.0:
\txorl\t%ecx, %ecx
.LBB3_1:                                # %loop
                                        # =>This Inner Loop Header: Depth=1
\tlock\t\txaddl\t%eax, (%rsi,%rcx,4)
\tincq\t%rcx
\tcmpq\t%rcx, %rdx
\tjne\t.LBB3_1
# %bb.2:                                # %exit
\tretq
.Lfunc_end3:
"""


@pytest.mark.slow
def test_an_atomic_read_modify_write_costs_at_least_its_measured_cycles():
    code = compiled.blocks(LOCKED_LOOP, "f")
    assert [compiled.is_locked(i) for i in code[1].instructions] == [True, False, False, False]
    assert compiled.is_locked("xchgl\t%eax, (%rdi)") and not compiled.is_locked("xchgl\t%eax, %ebx")
    cycles, _notes = compiled.launch_cycles(code, {"<entry>": 1, "loop": 1000, "exit": 1})
    assert cycles >= 1000 * compiled.LOCKED_CYCLES  # llvm-mca alone: about 5 per lock xadd


DIVIDE_LOOP = """\
f:
# %bb.0:
\txorl\t%ecx, %ecx
.LBB4_1:                                # %loop
                                        # =>This Inner Loop Header: Depth=1
\tmovl\t(%rsi,%rcx,4), %eax
\tcltd
\tidivl\t%r8d
\taddl\t%edx, %r9d
\tincq\t%rcx
\tcmpq\t%rcx, %r10
\tjne\t.LBB4_1
# %bb.2:                                # %exit
\tretq
.Lfunc_end4:
"""


@pytest.mark.slow
@pytest.mark.usefixtures("needs_core_timing")
def test_an_integer_division_costs_the_dividers_measured_cycles_not_llvm_mcas():
    forms = ("idivl\t%r8d", "divq\t8(%rsp)", "idivb\t%cl", "divss\t%xmm1, %xmm0", "vdivps\t%ymm1, %ymm0")
    assert [compiled.divide_cycles(i) for i in forms] == [6.0, 7.0, 4.0, 0.0, 0.0]
    # llvm-mca is given two multiplies that keep the division's dependencies: quotient, then remainder
    assert compiled.for_mca("idivl\t(%rsi)") == ["imull (%rsi), %eax", "imull %eax, %edx"]
    assert compiled.for_mca("divq\t%rcx") == ["imulq %rcx, %rax", "imulq %rax, %rdx"]
    code = compiled.blocks(DIVIDE_LOOP, "f")
    cycles, _notes = compiled.launch_cycles(code, {"<entry>": 1, "loop": 1000, "exit": 1})
    # llvm-mca would cost the idivl alone at 13 cycles a pass; the divider takes 6 (cpu_core_facts.py)
    assert 1000 * compiled.DIVIDE_CYCLES["l"] <= cycles < 1000 * 9
    assert compiled.mca_text("cltd\nidivl\t%r8d") > 10


def test_inserts_from_memory_are_costed_as_blends():
    inserts = [f"vpinsrd\t${k}, {4 * k}(%rsi,%rax,4), %xmm{r}, %xmm{r}" for r in range(4) for k in (1, 2, 3)]
    blends = [x.replace("vpinsrd", "vpblendd") for x in inserts]
    assert compiled.mca(inserts) == pytest.approx(compiled.mca(blends))
    from_register = [f"vpinsrd\t$1, %eax, %xmm{r}, %xmm{r}" for r in range(4)]
    assert compiled.INSERT_FROM_MEMORY.sub("x", from_register[0]) == from_register[0]  # left as it is


def test_masked_stores_do_not_overlap_the_rest_of_the_pass():
    store = "vmaskmovps\t%ymm6, %ymm11, (%rcx,%rsi,4)"
    assert compiled.MASKED_STORE.match(store)
    assert compiled.MASKED_STORE.match("vpmaskmovd %xmm1, %xmm7, 32(%rsi)")
    assert not compiled.MASKED_STORE.match("vmaskmovps\t-8(%rax,%rsi,4), %ymm6, %ymm14")  # a masked load
    adds = [f"vpaddq\t%ymm{k % 5}, %ymm6, %ymm{k % 5}" for k in range(20)]
    alone, rest = compiled.mca([store]), compiled.mca(adds)
    # the core (microcode) runs the rest of the pass after the store, whatever llvm-mca's model of this
    # host says (on Zen it overlaps them: 12 cycles beside the adds)
    assert compiled.mca([store, *adds]) >= alone + rest - 1e-9
    assert rest >= 4
    assert not compiled.MASKED_STORE.match("vmovups\t%ymm1, (%rsi)")  # a plain store is left to llvm-mca


def test_gathers_and_scatters_cost_their_elements_and_do_not_overlap_the_rest_of_the_pass():
    gather = "vpgatherdd\t%ymm9, 4(%rsi,%ymm7,4), %ymm8"  # AVX2: 8 ints by 32-bit indices
    each = compiled.ELEMENT_CYCLES
    assert compiled.gather_cycles(gather) == pytest.approx(8 * each["gather"])
    assert compiled.gather_cycles("vpgatherqd\t8(%rax,%zmm12,4), %ymm13 {%k1}") == pytest.approx(
        8 * each["gather"])  # 8 64-bit indices
    assert compiled.gather_cycles("vpgatherdd\t(%rax,%zmm1,4), %zmm2 {%k1}") == pytest.approx(
        16 * each["gather"])
    assert compiled.gather_cycles("vscatterqps\t%xmm6, (%r8,%ymm5,4) {%k1}") == pytest.approx(
        4 * each["scatter"])
    assert compiled.gather_cycles("vmovups\t(%rax,%rcx,4), %ymm1") == 0.0
    assert compiled.gather_cycles("vpinsrd\t$1, 4(%rax), %xmm0, %xmm0") == 0.0
    adds = [f"vpaddq\t%ymm{k % 5}, %ymm6, %ymm{k % 5}" for k in range(20)]
    rest = compiled.mca(adds)
    # the core builds a gather from microcode, element by element, and runs little else meanwhile: at
    # least the rest plus its elements, whatever llvm-mca's model of this host says (on Zen: a cycle)
    assert compiled.mca([gather, *adds]) >= rest + 8 * each["gather"] - 1e-9


def test_instrumented_ir_counts_every_block_after_its_phis_and_compiles():
    ll = """\
target triple = "x86_64-pc-linux-gnu"

define void @_pocl_kernel_k_workgroup(ptr %0, i64 %1) {
  br label %loop

loop:                                             ; preds = %loop, %2
  %i = phi i64 [ 0, %2 ], [ %n, %loop ]
  %n = add i64 %i, 1
  %c = icmp ult i64 %n, %1
  br i1 %c, label %loop, label %end

end:                                              ; preds = %loop
  ret void
}

define internal float @helper(float %x) {
  ret float %x
}
"""
    text, names = pocl_code.instrument(ll, "k", compiled.Path("/tmp/counts.bin"))
    # every function is counted: the work-group function and what it calls (a library function)
    assert names == [("_pocl_kernel_k_workgroup", "<entry>"), ("_pocl_kernel_k_workgroup", "loop"),
                     ("_pocl_kernel_k_workgroup", "end"), ("helper", "<entry>")]
    body = text.split("loop:")[1]
    assert body.index("phi") < body.index("__clperf_counts")  # counters go after the phi nodes
    assert text.count("%__clperf.") == 4 * 4  # per block: a load, an add of it, a store of the sum
    assert "@llvm.global_dtors" in text and 'c"/tmp/counts.bin\\00"' in text
    tools = pocl_code._llvm()
    assert tools is not None
    subprocess.run([tools[0], "-O1", "-filetype=null", "-"], input=text, text=True, check=True)
