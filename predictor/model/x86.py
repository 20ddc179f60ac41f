"""The x86 instructions the CPU cost model treats apart from llvm-mca's model of them: masked stores,
gathers and scatters (microcode, element by element), inserts from memory and integer divisions (measured
wrong by llvm-mca on the hosts of ``bench/cpu_core_facts.py``). Shared by the costing (``cpu_code.py``) and
the runs on this machine's cores (``core_run.py``)."""

from __future__ import annotations

import re

INSERT_FROM_MEMORY = re.compile(r"^vpinsr[dq](\s+\$\d+,\s*[^,%]*\()")  # vpinsrd $k, 8(%rax), ...
DIVISION = re.compile(r"^i?div([bwlq])\s+(\S+)$")  # idivl %ecx, divq 8(%rsp), ...
MASKED_STORE = re.compile(r"^v(?:p)?maskmov[a-z]*\s+%[xyz]mm\d+,\s*%[xyz]mm\d+,\s*[^%\s]*\(")  # to memory
# a gather or a scatter (AVX2's vpgatherdd, AVX-512's vpgatherqd ... {%k1}, vscatterqps): index size (d/q)
# and the index register, whose lanes are its elements; the core builds it from microcode, element by element
GATHER = re.compile(r"^v(?:p)?(gather|scatter)([dq])[a-z]*\s.*\(%?\w*,\s*%([xyz])mm\d+")


def for_mca(instruction: str) -> list[str]:
    """``instruction`` as llvm-mca is given it, where its model of this CPU is measured wrong (the cost
    model's docstring, ``cpu_code.py``): an insert from memory as a blend from memory; an integer
    division as two multiplies, the quotient's (from the dividend and the divisor) and the remainder's
    (from the quotient), which keep its dependencies and about its latency while the divider's
    throughput is ``cpu_code.DIVIDE_CYCLES``' bound in ``cpu_code.launch_cycles``."""
    m = DIVISION.match(instruction)
    if m:
        size, source = m.groups()
        a, d = ("%rax", "%rdx") if size == "q" else ("%eax", "%edx")
        op = "imulq" if size == "q" else "imull"
        first = f"{op} {source}, {a}" if size in "lq" else f"{op} {a}, {a}"
        return [first, f"{op} {a}, {d}"]
    return [INSERT_FROM_MEMORY.sub(r"vpblendd\1", instruction)]
