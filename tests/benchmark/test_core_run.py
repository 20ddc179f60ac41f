"""PoCL's instructions run on this machine's cores (``benchmark/core_run.py``): what is changed so that
they can run anywhere, and real runs of them."""

from __future__ import annotations

import re

import pytest
from clperf.benchmark import compiled, core_run

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
    # no two regions share their low 12 bits at the same displacement (4K aliasing stalls reads)
    assert len({x % 4096 for x in (read, write, spill)}) == 3
    assert all(0 <= int(p[0]) < core_run.BUFFER - 64 for p in places if p)


def test_masks_jumps_gathers_and_writes_to_the_stack_pointer_are_left_out() -> None:
    body = core_run.runnable([
        "vmovups (%rax,%rsi,4), %ymm5 {%k1} {z}",
        "vmovups %ymm5, (%rcx,%rsi,4) {%k1}",
        "vmaskmovps %ymm1, %ymm7, (%rsi)",
        "vpgatherdd %ymm2, (%rax,%ymm3,4), %ymm4",
        "subq $64, %rsp",
        "pushq %rbx",
        "idivl %ecx",
        "jne .LBB1_2",
    ])
    assert body is not None
    text = "\n".join(body)
    assert "{" not in text and "gather" not in text and "%rsp" not in text and "push" not in text
    assert "idiv" not in text and "imull" in text  # compiled.for_mca's multiplies
    assert body[-2:] == ["jne 1f", "1:"]  # a jump to the next instruction: its slots, not its target
    assert body.index("vpcmpeqd %ymm7, %ymm7, %ymm7") + 1 == body.index(
        next(x for x in body if x.startswith("vmaskmovps")))  # an all-ones mask before the masked store


@pytest.mark.parametrize("instruction", ["rep movsb", "syscall", "lock xaddl %eax, (%rdi)", "ud2"])
def test_instructions_that_must_not_run_here_leave_the_sequence_to_llvm_mca(instruction: str) -> None:
    assert core_run.runnable(["addl %ecx, %eax", instruction]) is None
    assert core_run.cycles(["addl %ecx, %eax", instruction]) is None


@needs_core
def test_a_run_sees_dependencies_in_core_cycles() -> None:
    chain = core_run.cycles(["addq $1, %rax"] * 64)
    spread = core_run.cycles([f"addq $1, %r{k}" for k in (8, 9, 10, 11)] * 16)
    assert chain is not None and spread is not None
    assert 40 < chain < 200  # one add a cycle on every x86-64 core
    assert spread < chain / 2  # four chains side by side


@needs_core
def test_garbage_is_not_run_and_pass_cycles_falls_back_to_llvm_mca() -> None:
    assert core_run.cycles(["frobnicate %eax, %ecx"]) is None
    lines = ["vfmadd231ss %xmm6, %xmm7, %xmm0", "vcvtsi2ss %eax, %xmm6, %xmm5", "vmulss %xmm5, %xmm3, %xmm1"]
    model, core = compiled.mca(lines), core_run.cycles(lines)
    assert core is not None and core > 0
    both = compiled.pass_cycles(lines)
    assert min(model, core) <= both <= max(model, core)
    assert compiled.pass_cycles(lines + ["syscall"]) == compiled.mca(lines + ["syscall"])
