"""PoCL's instructions run on this machine's cores (``predictor/model/core_run.py``): what is changed so that
they can run anywhere, and real runs of them."""

from __future__ import annotations

import re
import subprocess

import pytest

from clperf.predictor.model import core_run
from clperf.predictor.model import cpu_code as compiled

LOOP_WITH_A_GUARD = """
	.type	f,@function
f:
# %bb.0:                                # %<entry>
	xorl	%eax, %eax
.LBB0_1:                                # %loop
                                        # =>This Inner Loop Header: Depth=1
	addl	$1, %ecx
	cmpl	$3, %ecx
	jl	.LBB0_3
# %bb.2:                                # %skip
                                        #   in Loop: Header=BB0_1 Depth=1
	addl	$2, %edx
.LBB0_3:                                # %latch
                                        #   in Loop: Header=BB0_1 Depth=1
	incl	%eax
	cmpl	$100, %eax
	jne	.LBB0_1
# %bb.4:                                # %exit
	retq
.Lfunc_end0:
	.size	f, .Lfunc_end0-f
"""

needs_core = pytest.mark.skipif(core_run.compiler() is None, reason="needs x86-64 and a C compiler")


def test_memory_operands_move_into_the_buffer_reads_and_writes_apart_spills_together() -> None:
    body = core_run.runnable([
        "vmovups (%rax,%rsi,4), %ymm1",      # a read of the work-item's element
        "vmovups %ymm1, (%rax,%rsi,4)",      # a write at the same operand: its own region
        "movq %rcx, -8(%rsp)",               # a spill ...
        "movq -8(%rsp), %rdx",               # ... and its reload: one place
        "leaq 8(%rax,%rsi,4), %rdi",         # an address computed, not read: as it is
        "vaddps .LCPI1_0(%rip), %ymm1, %ymm1",
    ])
    assert body is not None
    places = [re.findall(r"clperf_buf\+(\d+)\(%rip\)", x) for x in body]
    assert all(len(p) == 1 for p in places[:4] + places[5:]) and not places[4]
    read, write, spill, reload, constant = (int(p[0]) for p in places[:4] + places[5:])
    assert read != write and spill == reload and len({read, write, spill, constant}) == 4
    assert body[4] == "leaq 8(%rax,%rsi,4), %rdi"
    # the address of a constant of the code (not in the sequence's own text): the buffer's
    assert core_run.runnable(["leaq .LCPI1_0(%rip), %rax"]) == ["leaq clperf_buf(%rip), %rax"]
    # no two regions share their low 12 bits at the same displacement (4K aliasing stalls reads)
    assert len({x % 4096 for x in (read, write, spill)}) == 3
    assert all(0 <= int(p[0]) < core_run.BUFFER - 64 for p in places if p)


def test_jumps_gathers_and_writes_to_the_stack_pointer_are_left_out() -> None:
    body = core_run.runnable([
        "vmaskmovps %ymm1, %ymm7, (%rsi)",
        "vpgatherdd %ymm2, (%rax,%ymm3,4), %ymm4",
        "subq $64, %rsp",
        "pushq %rbx",
        "idivl %ecx",
        "jne .LBB1_2",
    ])
    assert body is not None
    text = "\n".join(body)
    assert "gather" not in text and "%rsp" not in text and "push" not in text
    assert "idiv" not in text and "imull" in text  # compiled.for_mca's multiplies
    assert "jne" not in text
    assert body.index("vpcmpeqd %ymm7, %ymm7, %ymm7") + 1 == body.index(
        next(x for x in body if x.startswith("vmaskmovps")))  # an all-ones mask before the masked store


def test_avx512_masks_are_made_ones_by_what_writes_them_and_kept_on_vector_reads_and_writes() -> None:
    body = core_run.runnable([
        "vpcmpgtd %ymm6, %ymm1, %k1",
        "vpcmpgtd %ymm2, %ymm0, %k2 {%k1}",
        "kandw %k1, %k2, %k3",
        "kandnw %k1, %k2, %k4",
        "kmovw %eax, %k5",
        "vmovups (%rax,%rsi,4), %ymm5 {%k1} {z}",
        "vmovups %ymm5, (%rcx,%rsi,4) {%k1}",
    ])
    assert body is not None
    # a compare compares its last source with itself: ones, still after its source and under its writemask;
    # what keeps ones ones stays; what could make zeros of them (kandn, a general register) is ones itself
    assert body[:5] == ["vpcmpeqd %ymm1, %ymm1, %k1", "vpcmpeqd %ymm0, %ymm0, %k2 {%k1}",
                        "kandw %k1, %k2, %k3", "kxnorq %k4, %k4, %k4", "kxnorq %k5, %k5, %k5"]
    assert core_run.runnable(["kxorb %k2, %k0, %k0"]) == ["kxnorq %k0, %k0, %k0"]  # %k0 too
    assert core_run.runnable(["kortestw %k1, %k1"]) == ["kortestw %k1, %k1"]  # flags, no mask written
    # vector reads and writes (the work-item loop's guards) keep their masks: a masked read is not a plain one
    assert body[5].endswith("%ymm5 {%k1} {z}") and body[6].endswith("(%rip) {%k1}")
    # a masked read of an element is a select of the kernel's, decided by its data: it runs unmasked
    assert core_run.runnable(["vmovsd (%rax), %xmm0 {%k1}"]) == ["vmovsd clperf_buf+4096(%rip), %xmm0"]


def _avx512() -> bool:
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return " avx512f" in flags and " avx512bw" in flags


@pytest.mark.slow
@needs_core
@pytest.mark.skipif(not _avx512(), reason="needs AVX-512 (masks)")
def test_masked_writes_run_at_the_rate_of_writes_their_masks_set_to_ones() -> None:
    """The compare that computed a mask (here from arbitrary registers, which could give zeros: a masked
    write of nothing costs hundreds of cycles in microcode) compares a register with itself: ones."""
    masked = core_run.cycles(["vpcmpgtd %ymm6, %ymm1, %k1", "vmovups %ymm5, (%rcx,%rsi,4) {%k1}",
                              "addq $32, %rsi"] * 8)
    assert masked is not None and 0 < masked < 8 * 20
    # a mask made through %k0 and mask operations (a bitonic step's guard), whose values here would give
    # zeros (ones xor ones): ones too
    through_k0 = core_run.cycles(["vpxor %ymm4, %ymm4, %ymm4", "vptestnmd %ymm4, %ymm0, %k0",
                                  "vpcmpeqd %ymm6, %ymm6, %k2",
                                  "kxorb %k2, %k0, %k0", "kandb %k0, %k1, %k1",
                                  "vmovups %ymm6, (%rcx,%rsi,4) {%k1}"] * 8)
    assert through_k0 is not None and 0 < through_k0 < 8 * 20


def test_each_pass_of_a_vector_read_moves_on_by_its_width_as_the_work_item_loop_does() -> None:
    passes = ["vmovups 4(%rax,%rsi,4), %ymm1", "vmovss 4(%rax,%rsi,4), %xmm2", "vmovups %xmm1, (%rcx)"] * 3
    body = core_run.runnable(passes)
    assert body is not None
    at = [int(re.findall(r"clperf_buf\+(\d+)\(%rip\)", x)[0]) for x in body]
    ymm, scalar, xmm = at[0::3], at[1::3], at[2::3]
    # a 32-byte read at 4 bytes into a line: every other pass crosses into the next line, as the kernel's
    assert [x - ymm[0] for x in ymm] == [0, 32, 0] and (ymm[0] - 4) % 64 == 0
    assert [x - xmm[0] for x in xmm] == [0, 16, 32]
    assert len(set(scalar)) == 1  # an element read does not cross lines: it stays
    assert core_run.vector_bytes("vbroadcastss (%rax), %ymm1") == 0
    assert core_run.vector_bytes("vaddps (%rax), %zmm1, %zmm2") == 64


def test_jumps_run_as_the_count_says_they_went_never_mispredicted() -> None:
    taken = core_run.runnable(["incq %rax", "cmpq $5, %rax", core_run.TAKEN])
    fell = core_run.runnable(["incq %rax", "cmpq $5, %rax", core_run.NOT_TAKEN])
    # the jump's own compare is replaced: a taken jump to the next instruction, or one never taken
    assert taken == ["incq %rax", "jmp 1f", "1:"]
    assert fell == ["incq %rax", "cmpq $0, %rsp", "je 1f", "1:"]
    arithmetic = core_run.runnable(["addl %eax, %ebx", core_run.NOT_TAKEN])  # a result, not a compare: kept
    assert arithmetic is not None and arithmetic[0] == "addl %eax, %ebx"


def test_launch_cycles_hand_the_core_each_blocks_jumps_as_taken_as_counted() -> None:
    code = compiled.blocks(LOOP_WITH_A_GUARD, "f")
    seen: list[list[str]] = []
    real = compiled.pass_cycles
    try:
        compiled.pass_cycles = lambda instructions: seen.append(instructions) or 1.0  # type: ignore[assignment]
        compiled.launch_cycles(code, {"<entry>": 1, "loop": 100, "skip": 25, "latch": 100, "exit": 1})
    finally:
        compiled.pass_cycles = real  # type: ignore[assignment]
    whole = max(seen, key=len)
    # K passes of the function, each of 100 loop passes with 2 jumps: the guard's, over skip, taken in
    # 75 of 100 passes, the back edge in 99 of 100
    jumps = whole.count(core_run.TAKEN) + whole.count(core_run.NOT_TAKEN)
    assert jumps % 200 == 0 and jumps == 2 * sum(x.startswith("addl\t$1") for x in whole)
    assert whole.count(core_run.NOT_TAKEN) == pytest.approx(26 * jumps / 200, abs=jumps / 200)
    assert not [x for x in whole if x.startswith("j") and x not in (core_run.TAKEN, core_run.NOT_TAKEN)]


@pytest.mark.parametrize("instruction", ["rep movsb", "syscall", "lock xaddl %eax, (%rdi)", "ud2"])
def test_instructions_that_must_not_run_here_leave_the_sequence_to_llvm_mca(instruction: str) -> None:
    assert core_run.runnable(["addl %ecx, %eax", instruction]) is None
    assert core_run.cycles(["addl %ecx, %eax", instruction]) is None


@pytest.mark.slow
@needs_core
@pytest.mark.usefixtures("needs_core_timing")
def test_a_run_sees_dependencies_in_core_cycles() -> None:
    chain = core_run.cycles(["addq $1, %rax"] * 64)
    spread = core_run.cycles([f"addq $1, %r{k}" for k in (8, 9, 10, 11)] * 16)
    assert chain is not None and spread is not None
    assert 40 < chain < 200  # one add a cycle on every x86-64 core
    assert spread < chain / 2  # four chains side by side


@pytest.mark.slow
@needs_core
def test_pass_cycles_are_the_cores_and_llvm_mcas_where_the_core_cannot_run_them() -> None:
    assert core_run.cycles(["frobnicate %eax, %ecx"]) is None
    lines = ["vfmadd231ss %xmm6, %xmm7, %xmm0", "vcvtsi2ss %eax, %xmm6, %xmm5", "vmulss %xmm5, %xmm3, %xmm1"]
    core = core_run.cycles(lines)
    assert core is not None and core > 0
    assert compiled.pass_cycles(lines) == core
    gather = "vpgatherdd %ymm2, (%rax,%ymm3,4), %ymm4"  # costed apart: ELEMENT_CYCLES per element
    assert compiled.pass_cycles([*lines, gather]) == pytest.approx(core + compiled.gather_cycles(gather))
    assert compiled.pass_cycles(lines + ["syscall"]) == compiled.mca(lines + ["syscall"])


@pytest.mark.slow
@needs_core
@pytest.mark.usefixtures("needs_core_timing")
def test_the_driver_times_a_chain_of_taken_jumps_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real driver prints the body's cycles, how much slower the chains of adds ran than the core's
    width, and the cycles a taken jump of a chain of them took (about 1-1.2 on a quiet core)."""
    printed: list[str] = []
    run = core_run.children.run

    def spy(args: list[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
        done = run(args, **kw)  # type: ignore[arg-type]
        if str(args[0]).endswith("sequence"):
            printed.append(done.stdout.decode())
        return done

    monkeypatch.setattr(core_run.children, "run", spy)
    core_run._cache.clear()
    assert core_run.cycles(["addq $1, %rax"] * 32) is not None
    cycles, slower, jumps = (float(x) for x in printed[0].split())
    copies = -(-core_run.PASSES_PER_LOOP // 32)  # the body as the driver repeats it
    assert cycles == pytest.approx(32 * copies, rel=0.3) and 0.8 < slower and 0.8 < jumps < 20


def test_a_sequence_costs_the_fastest_of_its_runs_and_busy_runs_ask_for_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Processes whose adds or jumps ran slow (the host's neighbour on the core; jumps against the fastest
    chain of them timed before) are busy: another process follows after a pause, and the fastest run of all
    stands once three quiet ones agree."""
    if core_run.compiler() is None:
        pytest.skip("needs x86-64 and a C compiler")
    outputs = iter(["150.0 1.00 1.10", "90.0 1.00 1.60", "100.0 1.30 1.10", "101.0 1.00 1.12",
                    "100.5 1.01 1.09", "102.0 1.02 1.15", "101.5 1.00 1.10", "103.0 1.00 1.11", "1 1 1"])
    runs: list[str] = []
    run = core_run.children.run

    def driver(args: list[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
        if not str(args[0]).endswith("sequence"):
            return run(args, **kw)  # type: ignore[arg-type]  # the build is real
        runs.append(next(outputs))
        return subprocess.CompletedProcess(args, 0, runs[-1].encode(), b"")

    monkeypatch.setattr(core_run.children, "run", driver)
    monkeypatch.setattr(core_run, "BUSY_PAUSE_S", 0.0)
    monkeypatch.setattr(core_run, "_fastest_jumps", [1.08])  # this core's: a jump a cycle and a bit
    # busy: 90 (its jumps), 100 (its adds); quiet: 150, 101, 100.5, which disagree, so three more
    assert core_run._cycles(core_run.compiler() or "cc", ["addq $1, %rax"], 100) == 90.0
    assert len(runs) == 8
