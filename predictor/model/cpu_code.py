"""What PoCL's code for a kernel costs on this CPU: the cost half of the PoCL cost model.

PoCL turns a kernel into a work-group function: a loop over the work-items of each region between
barriers, vectorised by LLVM where it can, loops unswitched, values live across a barrier kept in
per-work-item arrays. None of that can be read from the kernel's own IR, and it decides a CPU kernel's
speed by up to the SIMD width. ``clperf.benchmark.pocl_code`` builds the kernel with PoCL and counts
every block of that function in a run of the scenario; this module costs the result: ``llc-15``
compiles the IR to assembly whose comments name each machine block's IR block and loop (``blocks``).
K passes of each loop body, blocks repeated as the counts say, form one straight sequence, run on this
machine's cores (``core_run``) or, where it cannot run there, costed by ``llvm-mca`` (``for_mca``
corrects the facts of the host CPU its model gets wrong, measured by ``bench/cpu_core_facts.py``). A
pass costs at least its taken jumps (``TAKEN_CYCLES``), its atomics (``LOCKED_CYCLES``) and its
divisions (``DIVIDE_CYCLES``); masked stores, gathers and scatters are added by their elements
(``ELEMENT_CYCLES``). The launch's cycles are the sum over loops of passes / K x the cycles of K passes
(``launch_cycles``). Why each rule, with its measurements: docs/design-decisions.md.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from clperf.core import children
from clperf.predictor.model import core_run
from clperf.predictor.model.x86 import DIVISION, GATHER, INSERT_FROM_MEMORY, MASKED_STORE, for_mca

log = logging.getLogger(__name__)
ENTRY = "<entry>"  # the name of a function's first block when it has none


MCA = ("llvm-mca-19", "llvm-mca-15", "llvm-mca")


CAP = 3000  # instructions of K loop passes handed to llvm-mca at once


MAX_PASSES = 8  # K: enough passes that a block run every other pass counts as half


TAKEN_CYCLES = 1.0  # core cycles per taken branch (bench/cpu_core_facts.py: 1.0 on Zen 3, 1.1 on Zen 4)


LOCKED_CYCLES = 8.0  # core cycles per atomic read-modify-write, uncontended (cpu_core_facts.py: 8.0)




# core cycles per integer division by operand size: the divider takes one at a time, each in about its
# latency (cpu_core_facts.py: 4.0 for 8 and 16 bits, 6.0 for 32, 7.1 for 64; llvm-mca: 10, 11, 13, 17)
DIVIDE_CYCLES = {"b": 4.0, "w": 4.0, "l": 6.0, "q": 7.0}








# core cycles per element a gather reads or a scatter writes (cpu_core_facts.py, Zen 4: 1.05-1.25, 1.5-1.9)
ELEMENT_CYCLES = {"gather": 1.15, "scatter": 1.9}


L1_FILL_CYCLES = 3.3  # core cycles per line the L1 data cache refills from L2 (cpu_core_facts.py: 3.3)


# what a costing depends on besides the kernel, its scenario and the device (for caches across processes):
# bump the first part when the counting or costing changes
COST_VERSION = (f"6:{core_run.VERSION if core_run.compiler() else 'mca'}:{TAKEN_CYCLES}:{LOCKED_CYCLES}"
                f":{sorted(DIVIDE_CYCLES.items())}"
                f":{sorted(ELEMENT_CYCLES.items())}:{INSERT_FROM_MEMORY.pattern}:{CAP}:{MAX_PASSES}")


LABEL = re.compile(r"^(\.LBB\d+_\d+|# %bb\.\d+):\s*(?:#\s*%(\S+))?")


@dataclass(frozen=True)
class CompiledCode:
    """The cost of one launch of the scenario in PoCL's code."""

    cycles: float  # core cycles of the launch, all work-groups, as costed (``pass_cycles``)
    work_items: int
    function: str = ""  # the work-group function that ran
    loops: tuple[str, ...] = field(default=())  # per loop: its IR header, passes, cycles per pass

    @property
    def item_cycles(self) -> float:
        return self.cycles / max(1, self.work_items)

    @property
    def costed_by(self) -> str:
        """What costed the passes: ``core-run`` (this machine's cores; llvm-mca for a pass they cannot
        run) or ``llvm-mca``."""
        return "core-run" if core_run.compiler() else "llvm-mca"


def tool(names: tuple[str, ...]) -> str | None:
    return next((n for n in names if shutil.which(n)), None)


def run_tool(*args: str, stdin: str | None = None) -> str:
    """An LLVM tool's stdout; raises CalledProcessError when it fails. Its own process group, ended with
    clperf, and clang's memory limit (``CLPERF_CLANG_MEMORY_MB``)."""
    proc = children.run(args, input=None if stdin is None else stdin.encode(), timeout_s=120,
                        memory_bytes=children.clang_memory_bytes())
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, list(args), proc.stdout,
                                            proc.stderr.decode("utf-8", "replace"))
    return proc.stdout.decode("utf-8", "replace")


@dataclass
class Block:
    """A machine block of ``llc``'s assembly: its IR block, instructions and loop."""

    label: str
    ir: str
    instructions: list[str] = field(default_factory=list)
    loop: str | None = None  # label of the header of the innermost loop holding it
    header: bool = False
    parents: list[tuple[str, int]] = field(default_factory=list)  # enclosing loops' headers, depths


def blocks(asm: str, function: str) -> list[Block]:
    """The machine blocks of ``function`` in ``llc``'s assembly, in layout order; the first is the
    function's entry (IR name ``<entry>`` when it has none)."""
    m = re.search(r"^" + re.escape(function) + r":.*?^\.Lfunc_end", asm, re.S | re.M)
    if not m:
        return []
    number = re.search(r"\.LBB(\d+)_", m.group(0))
    prefix = f".LBB{number.group(1) if number else 0}_"
    out = [Block(".entry", ENTRY)]
    for line in m.group(0).splitlines()[1:]:
        lm = LABEL.match(line)
        if lm:
            first = len(out) == 1 and not out[0].instructions
            name = lm.group(2) or (ENTRY if first else "")
            out.append(Block(lm.group(1).replace("# %bb.", prefix), name))
            continue
        b, t = out[-1], line.strip()
        if c := re.match(r"#\s*in Loop: Header=(BB\d+_\d+)", t):
            b.loop = ".L" + c.group(1)
        elif re.match(r"#\s*=>\s*This (?:Inner )?Loop Header", t):
            b.loop, b.header = b.label, True
        elif c := re.match(r"#\s*Parent Loop (BB\d+_\d+) Depth=(\d+)", t):
            b.parents.append((".L" + c.group(1), int(c.group(2))))
        elif t and not t.startswith(("#", ".")):
            b.instructions.append(t.split("#")[0].strip())
    return out if out[0].instructions else out[1:]


def launch_cycles(code: list[Block], counts: dict[str, int],
                  root: str = "work-group") -> tuple[float, list[str]]:
    """Cycles of the counted run: each loop (and the function itself, a loop over its ``root`` passes:
    work-groups, or calls of a library function) costed by llvm-mca for K passes of its body, blocks and
    inner loops repeated by their counts (``counts``: IR block -> runs; a machine block without an IR
    name runs as the last named block of its loop)."""
    runs: dict[str, int] = {}
    last: dict[str | None, int] = {}
    for b in code:
        if b.ir in counts:
            last[b.loop] = counts[b.ir]
        runs[b.label] = counts.get(b.ir, last.get(b.loop, 0))
    headers = [b.label for b in code if b.header]
    parent: dict[str | None, str | None] = {
        b.label: max(b.parents, key=lambda p: p[1])[0] if b.parents else None for b in code if b.header}
    owner = {b.label: b.loop if b.loop in parent else None for b in code}
    loops: list[str | None] = [None, *headers]
    passes = {h: runs[h] if h else runs[code[0].label] for h in loops}
    children = {h: [c for c in headers if parent[c] == h] for h in loops}
    position = {b.label: i for i, b in enumerate(code)}
    own = {h: [b for b in code if owner[b.label] == h] for h in loops}
    ir = {b.label: b.ir for b in code}
    notes: list[str] = []
    sizes: dict[str | None, float] = {}

    def size(h: str | None) -> float:  # instructions of one pass of h, inner loops included
        if h not in sizes:
            n = max(1, passes[h])
            sizes[h] = (sum(len(b.instructions) * runs[b.label] for b in own[h])
                        + sum(size(c) * passes[c] for c in children[h])) / n
        return sizes[h]

    taken = taken_branches(code, runs)
    ran: dict[str, int] = {}

    def run_of(b: Block) -> list[str]:
        """One run of block b, its jumps taken as often as the counts say, spread evenly over its runs:
        ``core_run.TAKEN`` per jump taken, ``core_run.NOT_TAKEN`` per jump that fell through."""
        i = ran[b.label] = ran.get(b.label, -1) + 1
        jumps = sum(x.startswith("j") for x in b.instructions)
        went = min(jumps, _share(taken[b.label] / runs[b.label], i)) if runs[b.label] else 0
        return ([x for x in b.instructions if not x.startswith("j")]
                + [core_run.TAKEN] * went + [core_run.NOT_TAKEN] * (jumps - went))

    def sequence(h: str | None, k: int, inner: bool = True) -> list[str]:
        """The instructions of k passes of h in layout order, blocks and inner loops by their counts."""
        n = max(1, passes[h])
        parts: list[tuple[int, Block | str]] = [(position[b.label], b) for b in own[h]]
        parts += [(position[c], c) for c in children[h]] if inner else []
        out: list[str] = []
        for i in range(k):
            for _p, x in sorted(parts, key=lambda q: q[0]):
                if isinstance(x, Block):
                    out += [y for _ in range(_share(runs[x.label] / n, i)) for y in run_of(x)]
                elif m := _share(passes[x] / n, i):
                    out += sequence(x, m)
        return out

    locked = {b.label: float(runs[b.label] * sum(map(is_locked, b.instructions))) for b in code}
    divides = {b.label: runs[b.label] * sum(map(divide_cycles, b.instructions)) for b in code}

    def per_pass(events: dict[str, float], h: str | None, whole: bool) -> float:
        def total(x: str | None) -> float:
            return (sum(events[b.label] for b in own[x])
                    + (sum(total(c) for c in children[x]) if whole else 0.0))
        return total(h) / max(1, passes[h])

    def cost(h: str | None) -> float:
        if not passes[h]:
            return 0.0
        name = ir.get(h, "") if h else root
        whole = size(h) <= CAP
        body = size(h) if whole else sum(len(b.instructions) * runs[b.label] for b in own[h]) / passes[h]
        k = max(1, min(MAX_PASSES, int(CAP // max(1.0, body))))
        per = max(pass_cycles(sequence(h, k, inner=whole)) / k, TAKEN_CYCLES * per_pass(taken, h, whole),
                  LOCKED_CYCLES * per_pass(locked, h, whole), per_pass(divides, h, whole))
        notes.append(f"{name}: {passes[h]} passes, {per:.3g} cycles each"
                     + ("" if whole else " without its inner loops"))
        return passes[h] * per + (0.0 if whole else sum(cost(c) for c in children[h]))

    return cost(None), notes


def pass_cycles(instructions: list[str]) -> float:
    """Cycles of a pass of ``instructions`` run over and over: their run on this machine's cores
    (``core_run``; gathers and scatters costed apart, as in ``mca``), or llvm-mca's (``mca``) where the run
    cannot be made (another architecture, no C compiler, an instruction that must not run here)."""
    core = core_run.cycles(instructions)
    total = None if core is None else core + sum(map(gather_cycles, instructions))
    return total if total else mca(instructions)


def is_locked(instruction: str) -> bool:
    """An atomic read-modify-write: a ``lock`` prefix, or ``xchg`` with memory (locked implicitly)."""
    return instruction.startswith("lock") or (instruction.startswith("xchg") and "(" in instruction)


@functools.cache
def l1_data_cache() -> tuple[int, int, int] | None:
    """``(sets, ways, line bytes)`` of this CPU's level-1 data cache (Linux sysfs, read once), or None."""
    def read(index: Path, name: str) -> str:
        return (index / name).read_text().strip()

    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if read(index, "level") == "1" and read(index, "type") == "Data":
                sets, ways, line = (int(read(index, f)) for f in
                                    ("number_of_sets", "ways_of_associativity", "coherency_line_size"))
                return sets, ways, line
        except (OSError, ValueError):
            return None
    return None


def conflict_misses(offsets: list[int], cache: tuple[int, int, int]) -> float:
    """L1 misses of one work-item's reads and writes at byte ``offsets`` (from one base, in order), when
    the work-item before it made the same pass (its neighbour touches the same lines: ``x + 4`` bytes), in
    a cache of ``cache`` = (sets, ways, line bytes) with LRU replacement. A column of a matrix with a
    power-of-two pitch maps all its lines to a few sets: more lines than ways in one set and every read
    misses, though the lines would all fit in the cache."""
    sets, ways, line = cache
    held: dict[int, list[int]] = {}
    misses = 0
    for rep in range(2):
        for offset in offsets:
            tag = offset // line
            way = held.setdefault(tag % sets, [])
            if tag in way:
                way.remove(tag)
            else:
                misses += rep
                if len(way) >= ways:
                    way.pop(0)
            way.append(tag)
    return float(misses)


def divide_cycles(instruction: str) -> float:
    """Core cycles the divider is busy with ``instruction``: ``DIVIDE_CYCLES`` for an integer division,
    else 0."""
    m = DIVISION.match(instruction)
    return DIVIDE_CYCLES[m.group(1)] if m else 0.0




def taken_branches(code: list[Block], runs: dict[str, int]) -> dict[str, float]:
    """How often the jumps of each block are taken, from block runs alone: an unconditional jump is
    taken whenever its block runs; a conditional jump's edge is its target's runs when the target has no
    other predecessor, the block's runs less its fall-through's when that block has no other, and else
    the target's runs shared among its predecessors in proportion to their runs."""
    labels = [b.label for b in code]
    jumps: dict[str, list[tuple[str, str]]] = {}
    falls: dict[str, str | None] = {}
    preds: dict[str, list[str]] = {label: [] for label in labels}
    for i, b in enumerate(code):
        js = [(x.split()[0], x.split()[-1]) for x in b.instructions if x.split()[0].startswith("j")]
        ends = any(x.split()[0].startswith(("jmp", "ret")) for x in b.instructions)  # jmpq *%rax too
        fall = labels[i + 1] if not ends and i + 1 < len(labels) else None
        jumps[b.label], falls[b.label] = js, fall
        for target in [t for _op, t in js if t in preds] + ([fall] if fall else []):
            preds[target].append(b.label)
    out: dict[str, float] = {}
    for b in code:
        n = float(runs.get(b.label, 0))
        left, taken = n, 0.0
        fall = falls[b.label]
        for op, target in jumps[b.label]:
            if op.startswith("jmp"):
                taken += left
                break
            if target not in runs:
                continue
            if len(preds[target]) == 1:
                edge = float(runs[target])
            elif fall and len(preds[fall]) == 1 and len(jumps[b.label]) == 1:
                edge = n - runs.get(fall, 0)
            else:
                into = sum(runs.get(p, 0) for p in preds[target])
                edge = runs[target] * n / into if into else 0.0
            edge = max(0.0, min(left, edge))
            taken += edge
            left -= edge
        out[b.label] = taken
    return out


def _share(rate: float, i: int) -> int:
    """How many of ``rate`` runs per pass fall in pass ``i`` (spread evenly: 0.5 is every other pass)."""
    return math.floor((i + 1) * rate + 1e-9) - math.floor(i * rate + 1e-9)


_mca_cache: dict[str, float] = {}


def mca(instructions: list[str]) -> float:
    """llvm-mca's cycles per pass of ``instructions`` run over and over (jumps, calls, returns, stack
    pushes and pops left out: llvm-mca does not follow them; inserts from memory costed as blends, see
    the module's docstring), and at least the rest of the pass plus its microcoded instructions, which do
    not overlap it (the module's docstring): masked stores at llvm-mca's cycles for them alone, gathers and
    scatters at ``ELEMENT_CYCLES`` per element."""
    stores = [i for i in instructions if MASKED_STORE.match(i)]
    gathered = sum(map(gather_cycles, instructions))
    if not stores and not gathered:
        return _mca(instructions)
    rest = [i for i in instructions if not (MASKED_STORE.match(i) or GATHER.match(i))]
    return max(_mca(instructions), _mca(rest) + _mca(stores) + gathered)


def gather_cycles(instruction: str) -> float:
    """Core cycles of a gather or a scatter (``ELEMENT_CYCLES`` per element: 8 elements for a ``ymm``
    index of 32 bits or a ``zmm`` index of 64 bits), 0 for any other instruction."""
    m = GATHER.match(instruction)
    if not m:
        return 0.0
    kind, index, register = m.groups()
    return ELEMENT_CYCLES[kind] * {"x": 128, "y": 256, "z": 512}[register] / (32 if index == "d" else 64)


def _mca(instructions: list[str]) -> float:
    skip = ("j", "nop", "ret", "call", "push", "pop")
    text = "\n".join(x for i in instructions if not i.split()[0].startswith(skip) for x in for_mca(i))
    if not text:
        return 0.0
    if text not in _mca_cache:
        _mca_cache[text] = mca_text(text)
    return _mca_cache[text]


def mca_text(text: str) -> float:
    """llvm-mca's cycles per pass of the assembly ``text`` as it is (no instruction left out or
    rewritten), over enough passes to reach a steady state."""
    n = max(10, min(200, 20000 // max(1, text.count("\n") + 1)))
    out = run_tool(tool(MCA) or "", "-mcpu=native", f"-iterations={n}", stdin=text)
    m = re.search(r"Total Cycles:\s*(\d+)", out)
    if not m:
        raise ValueError("llvm-mca printed no cycle count")
    return int(m.group(1)) / n
