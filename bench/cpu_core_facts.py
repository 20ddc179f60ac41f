"""Facts of this machine's CPU cores that the PoCL cost model (``predictor/model/cpu_code.py``) relies on,
measured with small assembly loops, next to what llvm-mca's model of the CPU says of the same code.

* the core clock, from a chain of dependent integer adds (one per cycle on every x86 core): the clock
  OpenCL reports (``Device.clock_mhz``) is the nominal one, the cores may run faster;
* core cycles per taken branch, from a chain of jumps one cache line apart (the bound ``TAKEN_CYCLES``
  that ``launch_cycles`` puts under llvm-mca for small loops);
* core cycles per atomic read-modify-write (``lock xadd`` to 8 lines in L1, no other core touching
  them: ``LOCKED_CYCLES``);
* core cycles per integer division (8, 16, 32 and 64 bits; independent divisions, small quotients:
  ``DIVIDE_CYCLES``), which llvm-mca costs at more than twice that;
* core cycles per line the L1 data cache refills from L2, from 32 reads 2 KB apart (a matrix column:
  16 lines in each of 2 sets of 8 ways, so every read misses though the lines would fit) against 32
  reads in 32 sets (``L1_FILL_CYCLES``);
* 24 element inserts from memory (``vpinsrd``, ``vpinsrq``: how LLVM gathers a strided read across
  work-items) into 8 registers: core cycles measured, llvm-mca's cycles for the same instructions, and
  llvm-mca's cycles with the inserts written as blends from memory (``vpblendd``), as ``compiled.mca``
  hands them to llvm-mca;
* a masked store (``vmaskmovps`` of 8 lanes: how LLVM vectorises a guarded store) alone, then with 20
  vector adds and with 5 loads and 20 adds in the same pass: core cycles measured, llvm-mca's cycles
  and ``compiled.mca``'s, which keeps the store apart from the rest of the pass;
* scalar FMAs, which llvm-mca's Zen 4 model runs at one a cycle (packed ones at two);
* gathers and scatters of 4-16 elements (AVX2's, and AVX-512's where the CPU has it): core cycles each
  and per element, llvm-mca's and ``compiled.mca``'s (``ELEMENT_CYCLES`` per element);
* an AVX-512 masked store with a mask of ones and with a mask of zeros (microcode: ``core_run`` runs
  every masked store with a mask of ones);
* ``unroll_outside_counter``'s loop as ``predictor/model/core_run.py`` runs it on the core, against llvm-mca.

Each loop runs 2-5 million times; the figure is the median of 5 runs. Needs a C compiler (``cc``,
``gcc`` or ``clang``) and llvm-mca.

    .venv/bin/python bench/cpu_core_facts.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HARNESS = r"""
#include <stdio.h>
#include <time.h>
int A[1 << 16];
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(void) {
    for (int k = 0; k < 16; k++) A[k] = 16 * k;  /* gather indices: 16 lines apart */
    long n = %(n)d;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        __asm__ volatile(%(body)s :: "S"(A) : "rax", "rcx", "rdx", "xmm0", "xmm1", "xmm2", "xmm3",
                         "xmm4", "xmm5", "xmm6", "xmm7", %(more)s"memory", "cc");
    }
    printf("%%.6f\n", (now() - t0) * 1e9 / n);  /* ns per pass */
    return 0;
}
"""


def asm_string(lines: list[str]) -> str:
    return "\n".join('"' + x.replace("%", "%%").replace("{", "%{").replace("}", "%}") + '\\n"' for x in lines)


def ns_per_pass(cc: str, folder: Path, name: str, lines: list[str], n: int, avx512: bool = False) -> float:
    """Median ns per pass of ``lines`` (AT&T assembly; ``%rsi`` points at a zeroed array whose first 16
    ints are gather indices 16 apart) over ``n`` passes, of 5 runs. ``avx512``: the code uses ``zmm8``
    and ``k1`` too."""
    src, exe = folder / f"{name}.c", folder / name
    more = '"xmm8", "k1", ' if avx512 else ""
    src.write_text(HARNESS % {"n": n, "body": asm_string(lines), "more": more})
    flags = ["-mavx512f"] if avx512 else []
    subprocess.run([cc, "-O2", *flags, "-o", str(exe), str(src)], check=True, capture_output=True)
    return statistics.median(float(subprocess.run([str(exe)], check=True, capture_output=True,
                                                  text=True).stdout) for _ in range(5))


def inserts(op: str) -> list[str]:
    mov = "vmovd" if op == "vpinsrd" else "vmovq"
    out = []
    for r in range(8):
        out.append(f"{mov} {64 * r}(%rsi), %xmm{r}")
        out += [f"{op} ${k if op == 'vpinsrd' else 1}, {64 * r + 4 * k}(%rsi), %xmm{r}, %xmm{r}"
                for k in (1, 2, 3)]
    return out


def main() -> int:
    from clperf.predictor.model import core_run
    from clperf.predictor.model import cpu_code as compiled
    cc = core_run.compiler()
    if cc is None or compiled.tool(compiled.MCA) is None:
        print("needs x86-64, a C compiler and llvm-mca", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        adds = ns_per_pass(cc, folder, "adds", ["add $1, %rax"] * 256, 2_000_000)
        ghz = 256 / adds
        print(f"core clock: {1000 * ghz:.0f} MHz (256 dependent adds in {adds:.1f} ns)")
        jumps = ns_per_pass(cc, folder, "jumps", ["jmp 1f", ".p2align 6", "1:"] * 64, 2_000_000)
        print(f"taken branches: {jumps * ghz / 65:.2f} core cycles each (64 jumps a cache line apart and "
              f"the loop's own; compiled.TAKEN_CYCLES = {compiled.TAKEN_CYCLES})")
        locked = [f"lock xaddl %eax, {64 * i}(%rsi)" for i in range(8)]
        xadd = ns_per_pass(cc, folder, "locked", locked, 2_000_000) * ghz / 8
        xadd_mca = compiled.mca_text("\n".join(locked)) / 8
        print(f"atomic read-modify-write (lock xadd, 8 cache lines, one core): {xadd:.1f} core cycles each, "
              f"llvm-mca {xadd_mca:.1f} (compiled.LOCKED_CYCLES = "
              f"{compiled.LOCKED_CYCLES})")
        for size, setup in (("b", ["mov $100, %eax"]), ("w", ["mov $1000, %eax", "xor %edx, %edx"]),
                            ("l", ["mov $1000000, %eax", "xor %edx, %edx"]),
                            ("q", ["mov $1000000, %rax", "xor %edx, %edx"])):
            divisor = {"b": "%cl", "w": "%cx", "l": "%ecx", "q": "%rcx"}[size]
            lines = ["mov $7, %ecx"] + (setup + [f"idiv{size} {divisor}"]) * 32
            real = ns_per_pass(cc, folder, f"div{size}", lines, 200_000) * ghz / 32
            print(f"integer division idiv{size} (32 independent, small quotients): {real:.1f} core cycles "
                  f"each, llvm-mca {compiled.mca_text(chr(10).join(lines)) / 32:.1f} "
                  f"(compiled.DIVIDE_CYCLES = {compiled.DIVIDE_CYCLES[size]})")
        hits = ns_per_pass(cc, folder, "rows", [f"movl {64 * k}(%rsi), %eax" for k in range(32)], 2_000_000)
        column = ns_per_pass(cc, folder, "column", [f"movl {2048 * k}(%rsi), %eax" for k in range(32)],
                             2_000_000)
        print(f"L1 refills from L2: {(column - hits) * ghz / 32:.1f} core cycles each (32 reads 2 KB apart, "
              f"16 lines in each of 2 sets of 8 ways, against 32 reads of 32 sets: {column * ghz:.0f} and "
              f"{hits * ghz:.0f} cycles a pass; compiled.L1_FILL_CYCLES = {compiled.L1_FILL_CYCLES})")
        for op in ("vpinsrd", "vpinsrq"):
            lines = inserts(op)
            real = ns_per_pass(cc, folder, op, lines, 5_000_000) * ghz
            as_is = compiled.mca_text("\n".join(lines))
            print(f"{op} from memory, 24 inserts + 8 loads into 8 registers: {real:.1f} core cycles "
                  f"measured, llvm-mca {as_is:.1f} as written, {compiled.mca(lines):.1f} as blends")
        store = ["vpcmpeqd %ymm7, %ymm7, %ymm7", "vmaskmovps %ymm1, %ymm7, (%rsi)"]
        loads = [f"vmovups {8192 + 32 * k}(%rsi), %ymm{k}" for k in range(5)]
        adds = [f"vpaddq %ymm{k % 5}, %ymm6, %ymm{k % 5}" for k in range(20)]
        for what, lines in (("alone", store), ("with 20 vector adds", store + adds),
                            ("with 5 loads and 20 vector adds", store + loads + adds)):
            real = ns_per_pass(cc, folder, "masked", lines, 2_000_000) * ghz
            print(f"masked store (vmaskmovps, 8 lanes) {what}: {real:.1f} core cycles a pass, llvm-mca "
                  f"{compiled.mca_text(chr(10).join(lines)):.1f}, compiled.mca {compiled.mca(lines):.1f}")
        fmas = [f"vfmadd231ss %xmm6, %xmm7, %xmm{k % 6}" for k in range(32)]
        real = ns_per_pass(cc, folder, "fma", fmas, 2_000_000) * ghz
        print(f"scalar FMA (vfmadd231ss), 32 in 6 chains: {real:.1f} core cycles a pass, llvm-mca "
              f"{compiled.mca_text(chr(10).join(fmas)):.1f} (packed, vfmadd231ps: "
              f"{compiled.mca_text(chr(10).join(f.replace('ss ', 'ps ') for f in fmas)):.1f}; not corrected, "
              f"docs/rewrites.md)")
        gathers(cc, folder, ghz)
        core_runs()
    return 0


def gathers(cc: str, folder: Path, ghz: float) -> None:
    """Gathers (AVX2: ``vpgatherdd`` of 8 ints; AVX-512 where the CPU has it: ``vpgatherqd`` of 8,
    ``vpgatherdd`` of 16, and scatters of 4, 8 and 16 elements), four independent ones a pass."""
    from clperf.predictor.model import cpu_code as compiled
    def line(what: str, lines: list[str], count: int, avx512: bool) -> None:
        real = ns_per_pass(cc, folder, "gather", lines, 1_000_000, avx512) * ghz / 4
        print(f"{what}: {real:.1f} core cycles each ({real / count:.2f} an element), llvm-mca "
              f"{compiled.mca_text(chr(10).join(lines)) / 4:.1f}, compiled.mca "
              f"{compiled.mca(lines) / 4:.1f}")

    avx2 = ["vmovdqu (%rsi), %ymm7"]
    for k in range(4):
        avx2 += ["vpcmpeqd %ymm6, %ymm6, %ymm6", f"vpgatherdd %ymm6, {4 * k}(%rsi,%ymm7,4), %ymm{k}"]
    line("gather vpgatherdd, 8 ints (ymm indices)", avx2, 8, False)
    if "avx512f" not in Path("/proc/cpuinfo").read_text():
        return
    for what, op, index, data, count in (
            ("gather vpgatherqd, 8 ints (zmm indices)", "vpgatherqd", "zmm8", "ymm", 8),
            ("gather vpgatherdd, 16 ints (zmm indices)", "vpgatherdd", "zmm8", "zmm", 16),
            ("scatter vscatterqps, 4 floats (ymm indices)", "vscatterqps", "ymm8", "xmm", 4),
            ("scatter vscatterqps, 8 floats (zmm indices)", "vscatterqps", "zmm8", "ymm", 8),
            ("scatter vscatterdps, 16 floats (zmm indices)", "vscatterdps", "zmm8", "zmm", 16)):
        wide = "gatherq" in op or "scatterq" in op  # 64-bit indices
        lines = [f"vpmovzxdq (%rsi), %{index}" if wide else f"vmovdqu32 (%rsi), %{index}"]
        for k in range(4):
            operands = (f"{4 * k}(%rsi,%{index},4), %{data}{k} {{%k1}}" if "gather" in op
                        else f"%{data}{k}, {4096 + 4 * k}(%rsi,%{index},4) {{%k1}}")
            lines += ["kxnorw %k0, %k0, %k1", f"{op} {operands}"]
        line(what, lines, count, True)
    for what, mask in (("all ones", "kxnorw %k0, %k0, %k1"), ("all zeros", "kxorw %k0, %k0, %k1")):
        lines = [mask] + [f"vmovups %ymm{k}, {4096 + 64 * k}(%rsi) {{%k1}}" for k in range(4)]
        real = ns_per_pass(cc, folder, "masked512", lines, 200_000, True) * ghz / 4
        print(f"AVX-512 masked store (vmovups ymm {{%k1}}), mask of {what}: {real:.1f} core cycles each "
              f"(core_run gives every masked store an all-ones mask)")


def core_runs() -> None:
    """unroll_outside_counter's inner loop (a conversion, a multiply and a dependent FMA, 12 passes a
    work-item, 8 work-items), as ``core_run`` runs it, against llvm-mca's cycles for it."""
    from clperf.predictor.model import core_run
    from clperf.predictor.model import cpu_code as compiled
    item = ["vmovss (%r8,%rdi,4), %xmm3", "xorl %eax, %eax", "vmovaps %xmm0, %xmm4"]
    item += ["vcvtsi2ss %eax, %xmm6, %xmm5", "vmulss %xmm5, %xmm3, %xmm5", "vfmadd132ss %xmm1, %xmm5, %xmm4",
             "incl %eax", "cmpl $12, %eax", core_run.TAKEN] * 12
    item += ["vaddss %xmm2, %xmm4, %xmm3", "vmovss %xmm3, (%rcx,%rdi,4)", "incq %rdi"]
    core = core_run.cycles(item * 8)
    print(f"unroll_outside_counter's loop, 8 work-items: core_run {core or float('nan'):.0f} core cycles, "
          f"llvm-mca {compiled.mca(item * 8):.0f} (the unroll's measured gain: bench/rewrite_speedups.py)")


if __name__ == "__main__":
    raise SystemExit(main())
