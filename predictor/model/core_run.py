"""The cycles of a straight run of PoCL's instructions on this machine's own cores.

``compiled.launch_cycles`` costs K passes of each loop's body laid out as one straight sequence of
instructions. This module runs that sequence as it is: assembled into a function that repeats it
(``ASM``), timed by a small C driver in turn with a chain of dependent adds (one a cycle on every x86-64
core), so that the ratio is the core's cycles whatever its clock. llvm-mca's scheduling model is wrong in
places that decide unroll gains (scalar FMAs, reads folded into arithmetic, conversions); the core is not.

A run counts only from a quiet process: each process also times chains of integer and float adds and of
taken jumps (``QUIET``, ``JUMP_SLACK``), since a virtual machine's neighbour on the same core slows a
sequence without slowing the clock chain; more processes follow until quiet ones agree (``PROCESSES``,
``AGREE``, ``MAX_PROCESSES``) and the fastest run stands.

To run anywhere, the sequence is changed where the kernel's context is missing: memory operands address
private regions (``runnable``; reads and writes apart, spill slots shared), vector accesses move on by
their width each pass (``vector_bytes``), masks are made all ones (``ones``), jumps go to the next
instruction as often as the counted run took them, gathers, scatters, calls, stack writes and integer
divisions are left to ``compiled.pass_cycles``, floats are flushed to zero. A sequence with a string,
atomic or trapping instruction is not run (None: llvm-mca costs it).

Needs x86-64 and a C compiler that assembles AT&T syntax; else None. Runs are serialised in a process and
cached by their text. Why each rule, with its measurements: docs/design-decisions.md.
"""

from __future__ import annotations

import functools
import logging
import platform
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from clperf.core import children
from clperf.predictor.model.x86 import GATHER, MASKED_STORE, for_mca

log = logging.getLogger(__name__)

# disp(base, index, scale), disp alone allowed: 8(%rdi), (%rsi,%rcx,4), .LCPI1_0(%rip), -8(%rsp)
MEMORY = re.compile(r"(-?[\w.$+-]*)\((%\w*)?(?:,\s*(%\w+))?(?:,\s*(\d))?\)")
MASK = re.compile(r"\s*\{%k[1-7]\}(\s*\{z\})?")
# bytes of PoCL's vectors over work-items (its vectoriser prefers 256-bit vectors on x86-64, AVX-512 hosts
# too): a masked read or write this wide is the work-item loop's guard
WORK_ITEM_VECTOR = 32
MASK_WRITE = re.compile(r",\s*(%k[0-7])(\s*\{%k[1-7]\})?$")  # writes a mask: vpcmpgtd ..., %k1 {%k2}
KEEPS_ONES = re.compile(r"^k(and|or|xnor|unpck)[bwdq]*$|^k(or)?test")  # of masks of ones: ones (or flags)
# an element or part of a register: a scalar, broadcast, insert or conversion (``vector_bytes``: none)
NARROW = re.compile(r"^v?(p?broadcast|p?insert|pinsr|extract|pextr|movd$|movq$|pmov[sz]x|cvt|mov[hl]p)"
                    r"|s[sdh]$")
SYMBOL = re.compile(r"[A-Za-z_.$][\w.$]*\(%rip\)")  # a constant of the code: .LCPI1_0(%rip)
NOT_RUN = re.compile(r"^(rep|movs[bwlq]?$|stos|lods|cmps[bwlq]?$|scas|syscall|sysenter|int|ud|hlt|cpuid|"
                     r"xlat|enter|leave|in[bwl]?$|out|lock|xchg|cmpxchg|rdrand|rdseed|wrfsbase|xsave|xrstor)")
SKIP = ("j", "nop", "ret", "call", "push", "pop")
# the jumps of a pass sequence as they went in the counted run (``compiled.launch_cycles``); llvm-mca skips
# them as it skips every jump
TAKEN = "jmp\t<taken>"
NOT_TAKEN = "j\t<not taken>"
WRITES_RSP = re.compile(r",\s*%[re]?sp$")
VERSION = "12"  # of how sequences are made runnable and timed: part of compiled.COST_VERSION (bump it)
REGION = 66560  # 65 KB: regions 1 KB apart in their low 12 bits (no 4K aliasing between them)
REGIONS = 15
BUFFER = 4096 + REGION * REGIONS
TARGET_INSTRUCTIONS = 3_000_000  # per timed run: about 1 ms
CLOCK_RUNS = 4000  # of 256 adds: about 0.3 ms
PASSES_PER_LOOP = 400  # instructions at least between two decrements of the run's counter
PROCESSES = 3  # quiet timings of a sequence, each in its own process
AGREE = 1.05  # quiet timings further apart than this: three more
MAX_PROCESSES = 24  # processes at most to find them; the fastest run of all stands
BUSY_PAUSE_S = 0.1  # after a busy process
QUIET = 1.05  # a process is quiet when its chains of adds ran within 5% of the core's width
# and its chain of taken jumps within 10% of the fastest such chain timed in this process (Zen 4: 1.09-1.16
# core cycles a jump when quiet, 1.5-1.8 while the host's neighbour shares the core's front end; another
# core's front end has its own rate, so the bound is relative)
JUMP_SLACK = 1.1

ASM = """.bss
.p2align 6
clperf_buf: .zero {buffer}
.text
.globl clperf_sequence
clperf_sequence:
 pushq %rbp
 pushq %rbx
 pushq %r12
 pushq %r13
 pushq %r14
 pushq %r15
 movq %rsp, %rax
 subq $64, %rsp
 andq $-64, %rsp
 movq %rax, (%rsp)
 movq %rdi, 8(%rsp)
{masks}
 stmxcsr 16(%rsp)
 orl $0x8040, 16(%rsp)
 ldmxcsr 16(%rsp)
 .p2align 6
.Lclperf_pass:
{body}
 decq 8(%rsp)
 jnz .Lclperf_pass
 vzeroupper
 movq (%rsp), %rsp
 popq %r15
 popq %r14
 popq %r13
 popq %r12
 popq %rbx
 popq %rbp
 ret
.globl clperf_clock
clperf_clock:
 .p2align 6
.Lclperf_add:
{adds}
 decq %rdi
 jnz .Lclperf_add
 ret
.globl clperf_width
clperf_width:
 .p2align 6
.Lclperf_wide:
{wide}
 decq %rdi
 jnz .Lclperf_wide
 ret
.globl clperf_jumps
clperf_jumps:
 .p2align 6
.Lclperf_jumps:
{jumps}
 decq %rdi
 jnz .Lclperf_jumps
 ret
.globl clperf_fp_width
clperf_fp_width:
 .p2align 6
.Lclperf_fp_wide:
{fp_wide}
 decq %rdi
 jnz .Lclperf_fp_wide
 vzeroupper
 ret
"""

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define ADDS 256
void clperf_sequence(long n);
void clperf_clock(long n);
void clperf_width(long n);
void clperf_fp_width(long n);
void clperf_jumps(long n);
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char** argv) {
    long n = atol(argv[1]), m = atol(argv[2]);
    double best = 1e30, clock = 1e30, wide = 1e30, fp = 1e30, jumps = 1e30;
    for (int r = 0; r < 7; r++) {  /* the body, the clock's chain and the chains side by side in turn */
        double t0 = now(); clperf_sequence(n); double t1 = now(); clperf_clock(m); double t2 = now();
        clperf_width(m); double t3 = now(); clperf_fp_width(m); double t4 = now(); clperf_jumps(m);
        double t5 = now();
        if ((t1 - t0) / n < best) best = (t1 - t0) / n;
        if ((t2 - t1) / m < clock) clock = (t2 - t1) / m;
        if ((t3 - t2) / m < wide) wide = (t3 - t2) / m;
        if ((t4 - t3) / m < fp) fp = (t4 - t3) / m;
        if ((t5 - t4) / m < jumps) jumps = (t5 - t4) / m;
    }
    /* core cycles per run of the body; how much slower than the core's width 4 chains of integer adds
       (4 a cycle) and 8 of float adds (2 a cycle) ran: 1 when the core's units are all this process's;
       core cycles per taken jump of a chain of them (the front end's rate: about 1.1 on Zen 4) */
    double slower = wide / clock * 4 > fp / clock * 2 ? wide / clock * 4 : fp / clock * 2;
    printf("%.3f %.4f %.4f\n", best / clock * ADDS, slower, jumps / clock);
    return 0;
}
"""

_lock = threading.Lock()
_cache: dict[str, float | None] = {}
_fastest_jumps = [float("inf")]  # core cycles a taken jump, the fastest chain timed in this process


@functools.lru_cache(maxsize=1)
def compiler() -> str | None:
    """A C compiler that assembles x86-64, or None (another architecture, or none installed)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    return next((c for c in ("cc", "gcc", "clang", "clang-15") if shutil.which(c)), None)


def runnable(instructions: list[str]) -> list[str] | None:
    """``instructions`` (llc's AT&T assembly, one pass sequence of ``launch_cycles``) as they are run here
    (the module's docstring): memory operands moved into the private buffer, masks set to ones, jumps as
    counted (``TAKEN``, ``NOT_TAKEN``; others left out), gathers, scatters and writes to ``%rsp`` left out;
    None when one of them must not run here."""
    regions: dict[tuple[str | None, ...], int] = {}
    symbols: dict[str, int] = {}
    passes: dict[tuple[str | None, ...], int] = {}
    out: list[str] = []
    for line in instructions:
        op = line.split()[0]
        if line in (TAKEN, NOT_TAKEN):
            if out and out[-1].startswith(("cmp", "test")):
                out.pop()  # the jump's own compare (one macro-op with it in the core): replaced here
            out += (["jmp 1f", "1:"] if line == TAKEN  # to the next instruction: the target is not here
                    else ["cmpq $0, %rsp", "je 1f", "1:"])  # %rsp is not 0: never taken nor mispredicted
            continue
        if op.startswith(SKIP) or GATHER.match(line):
            continue
        if NOT_RUN.match(op):
            return None
        for x in for_mca(line):
            if WRITES_RSP.search(x):
                continue
            x = ones(x)  # a mask it writes is all ones
            if op.startswith("lea") or "(" not in x:  # an address computed, not read: a constant's is ours
                out.append(SYMBOL.sub("clperf_buf(%rip)", x))
                continue
            if MASKED_STORE.match(x):
                mask = x.split(",")[1].strip()
                out.append(f"vpcmpeqd {mask}, {mask}, {mask}")
            width = vector_bytes(x)
            if width < WORK_ITEM_VECTOR:  # a select of the kernel's own, on an element: as a plain read
                x = MASK.sub("", x)
            out.append(MEMORY.sub(functools.partial(_moved, regions=regions, symbols=symbols, passes=passes,
                                                    width=width), x))
    return out


def ones(instruction: str) -> str:
    """``instruction`` made to write a mask of ones where it writes an AVX-512 mask register (the kernel's
    guards, all ones but at a grid's edge; the registers' arbitrary values could give zeros): a compare
    compares its last source with itself (``vpcmpeqd``, same width: it keeps its source, its writemask and
    the wait of what the mask guards), a mask operation that cannot make zeros of ones stays, any other
    (``kandn``, ``kxor``, ``knot``, a shift, a move from a general register) becomes ``kxnorq`` of its
    destination with itself."""
    m = MASK_WRITE.search(instruction)
    if m is None:
        return instruction
    op, dest = instruction.split()[0], m.group(1)
    vectors = re.findall(r"%[xyz]mm\d+", instruction)
    if op.startswith(("vpcmp", "vcmp", "vptest", "vfpclass")) and vectors:
        mask = re.search(r"\{%k[1-7]\}", instruction)
        return f"vpcmpeqd {vectors[-1]}, {vectors[-1]}, {dest}" + (f" {mask.group(0)}" if mask else "")
    if KEEPS_ONES.match(op) or re.match(r"^kmov[bwdq]\s+%k\d,", instruction):
        return instruction  # ones of ones, or no mask written (a test sets flags)
    return f"kxnorq {dest}, {dest}, {dest}"


def vector_bytes(instruction: str) -> int:
    """Bytes a vector instruction's memory operand spans (its widest register's), or 0 for a scalar,
    broadcast, insert or conversion (an element or half a register: they do not cross lines as vectors)."""
    op = instruction.split()[0]
    if NARROW.search(op):
        return 0
    return next((w for reg, w in (("%zmm", 64), ("%ymm", 32), ("%xmm", 16)) if reg in instruction), 0)


def _moved(m: re.Match[str], regions: dict[tuple[str | None, ...], int], symbols: dict[str, int],
           passes: dict[tuple[str | None, ...], int], width: int) -> str:
    disp, base, index, scale = m.groups()
    write = not re.search(r",\s*%", m.string[m.end():])  # AT&T: the last operand is the one written
    spill = base in ("%rsp", "%rbp") and not index
    key = ("spill", base) if spill else ("write" if write else "read", base, index, scale)
    region = regions.setdefault(key, len(regions)) % REGIONS
    try:
        offset = int(disp, 0) % (REGION - 1024) if disp else 0
    except ValueError:  # a symbol: a constant of the code (.LCPI1_0(%rip))
        offset = 64 * (symbols.setdefault(disp, len(symbols)) % 1000)
    if width and not spill:  # each pass moves on by a vector, as the work-item loop does
        n = passes[(*key, disp)] = passes.get((*key, disp), -1) + 1
        offset += n * width % 64
    return f"clperf_buf+{4096 + REGION * region + offset}(%rip)"


def cycles(instructions: list[str]) -> float | None:
    """Core cycles of one run of ``instructions`` here, over and over (the module's docstring), or None
    when they cannot be run here (another architecture, no compiler, an instruction left to llvm-mca, a
    build or run that failed)."""
    cc = compiler()
    if cc is None:
        return None
    body = runnable(instructions)
    if body is None:
        return None
    if not body:
        return 0.0
    text = "\n".join(body)
    with _lock:
        if text not in _cache:
            _cache[text] = _time(cc, body)
        return _cache[text]


def _time(cc: str, body: list[str]) -> float | None:
    copies = max(1, -(-PASSES_PER_LOOP // len(body)))
    runs = max(100, TARGET_INSTRUCTIONS // (len(body) * copies))
    cycles = _cycles(cc, body * copies, runs)
    return None if cycles is None else cycles / copies


def _cycles(cc: str, body: list[str], runs: int) -> float | None:
    """Core cycles per run of ``body``: in each process its best time of 7 over ``runs`` runs against the
    best time of the clock's dependent adds timed in turn with it; the fastest of ``PROCESSES`` quiet
    processes (the module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="clperf-core-") as d:
        folder = Path(d)
        (folder / "driver.c").write_text(DRIVER)
        masks = "%k" in "".join(body)  # AVX-512's: all ones, as in the kernel but at a grid's edge
        (folder / "sequence.s").write_text(ASM.format(
            buffer=BUFFER, body="\n".join(" " + x for x in body),
            masks="\n".join(f" kxnorq %k{k}, %k{k}, %k{k}" for k in range(8) if masks),
            adds="\n".join([" addq $1, %rax"] * 256),
            wide="\n".join(f" addq $1, %r{8 + k % 4}" for k in range(256)),
            jumps="\n".join(f" jmp {k}f\n{k}:" for k in range(1, 257)),
            fp_wide="\n".join(f" vaddps %ymm{8 + k % 8}, %ymm0, %ymm{8 + k % 8}" for k in range(256))))
        exe = folder / "sequence"
        try:
            # the compiler and the driver in their own process groups, ended with clperf, bounded in memory
            memory = children.clang_memory_bytes()
            built = children.run([cc, "-O2", "-o", str(exe), str(folder / "driver.c"),
                                  str(folder / "sequence.s")], timeout_s=60, memory_bytes=memory)
            if built.returncode:
                log.info("not run on the core: %s", built.stderr.decode("utf-8", "replace").strip()[:300])
                return None
            quiet: list[float] = []
            timed: list[float] = []
            for _ in range(MAX_PROCESSES):
                ran = children.run([str(exe), str(runs), str(CLOCK_RUNS)], timeout_s=60, memory_bytes=memory)
                if ran.returncode:
                    return None
                cycles, slower, jumps = (float(x) for x in ran.stdout.decode().split())
                timed.append(cycles)
                _fastest_jumps[0] = min(_fastest_jumps[0], jumps)
                if slower <= QUIET and jumps <= JUMP_SLACK * _fastest_jumps[0]:
                    quiet.append(cycles)
                    if len(quiet) >= PROCESSES and (max(quiet) <= AGREE * min(quiet)
                                                    or len(quiet) >= 2 * PROCESSES):
                        break
                else:  # the neighbour's spells last a second or more: let this one pass
                    time.sleep(BUSY_PAUSE_S)
            return min(timed)  # a busy core only slows a run
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            log.info("not run on the core: %s", e)
            return None
