"""Per-work-item operation counts: floating-point and integer instructions, integer divisions, double
precision and special functions, tallied per group of enclosing loops and turned into ``Ops``; and each
block's longest chain of dependent arithmetic in cycles (``path_cycles``).

A vector instruction counts once per lane; an FMA counts as two flops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.records import Ops

Tally = dict[str, float]  # Ops field name -> count, for one group of loops

FLOAT_OPS = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg"}
INT_OPS = {
    "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor", "icmp",
}
_DIVS = {"udiv", "sdiv", "urem", "srem"}
_FMA_CALLS = ("llvm.fmuladd", "llvm.fma", "_Z3mad", "_Z3fma")
_FLOAT_RESULT = re.compile(
    r"^%[\w.$\"-]+ = (?:tail )?call [^@]*?(?:float|double|half|x (?:float|double|half)>) @"
)
# OpenCL built-ins that are not one FMA-class instruction on any device: a GPU runs them on its special
# function units (or as a longer sequence when full precision is asked for), a CPU calls a vector library
_SPECIAL = {
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "pow", "pown", "powr", "rootn",
    "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi", "atan2pi",
    "erf", "erfc", "tgamma", "lgamma", "lgamma_r", "hypot", "fmod", "remainder", "remquo", "divide", "recip",
}
# What one call compiles to on a GPU, its cost class (``Ops.math_short`` / ``math_long`` / ``math_pow``;
# the rest of ``_SPECIAL`` is long): about one special-function-unit result and a fix-up (the hardware
# approximations, square roots, divisions and the exponentials, whose range reduction is one multiply),
# a range reduction and a polynomial (trigonometric and inverse functions, logarithms, erf, fmod), or a
# logarithm and an exponential in extended precision (powers).
_SHORT = {"sqrt", "rsqrt", "exp", "exp2", "exp10", "expm1", "sinh", "cosh", "tanh", "divide", "recip"}
_POW = {"pow", "powr", "pown", "rootn"}
_MANGLED = re.compile(r"_Z(\d+)(\w+)")


def bump(g: Tally, key: str, n: float) -> None:
    g[key] = g.get(key, 0) + n


def to_ops(g: Tally) -> Ops:
    return Ops(**{k: v for k, v in g.items()})


@dataclass(frozen=True)
class Operation:
    """What one instruction computes: its ``LATENCY`` class (``float``, ``fp64``, ``int``, ``int_div``,
    ``math_short``, ``math_long``, ``math_pow``), whether in double precision, its FMA-counted flops a lane
    (0: an integer operation) and, for a special function or a floating-point division, its cost class."""

    latency: str
    double: bool = False
    flops: int = 0
    special: str | None = None


def operation(f: FunctionIR, inst: int) -> Operation | None:
    """The arithmetic an instruction computes, None for anything else (memory, control, casts, selects,
    calls that compute no floating-point result). A division by a run-time value is ``int_div``: one IR
    op, but no GPU has an integer divider (``Ops.int_divs``). A float-result call other than an FMA or a
    special function (``fabs``, ``fmin``, ``floor``) takes an FP32 operation's latency."""
    op = f.opc(inst)
    if op in FLOAT_OPS:
        double = "double" in f.tstr(inst)
        special = {"fdiv": "math_short", "frem": "math_long"}.get(op)
        return Operation(special or ("fp64" if double else "float"), double, 1, special)
    if op in INT_OPS:
        return Operation("int_div" if op in _DIVS and f.const(f.opers(inst)[1]) is None else "int")
    if op == "call":
        callee = f.callee(inst)
        double = "double" in f.tstr(inst)
        if callee.startswith(_FMA_CALLS):
            return Operation("fp64" if double else "float", double, 2)
        if _FLOAT_RESULT.match(f.text[inst]):
            special = special_class(callee)
            return Operation(special or "float", double, 1, special)
    return None


def count_operation(f: FunctionIR, inst: int, g: Tally) -> bool:
    """Tally one instruction's ``operation``: flops (an FMA two) or integer ops per lane (a comparison
    once), double-precision ops, divisions by a run-time value and special functions by cost class. False
    for an instruction that computes none."""
    o = operation(f, inst)
    if o is None:
        return False
    lanes = f.lanes(inst)
    if o.flops:
        bump(g, "flops", o.flops * lanes)
        if o.double:
            bump(g, "fp64_ops", lanes)
        if o.special is not None:
            _special(g, o.special, lanes, o.double)
    else:
        bump(g, "int_ops", lanes if f.opc(inst) != "icmp" else 1)
        if o.latency == "int_div":
            bump(g, "int_divs", lanes)
    return True


def _special(g: Tally, cls: str, lanes: float, double: bool) -> None:
    bump(g, "special_ops", lanes)
    bump(g, cls, lanes)
    if double:
        bump(g, "math_fp64", lanes)


def is_special(callee: str) -> bool:
    """``_Z3expf`` / ``_Z10native_sinDv4_f`` / ``llvm.sqrt.f32``: a special function?"""
    return special_class(callee) is not None


def special_class(callee: str) -> str | None:
    """The ``Ops`` field of a special function's cost class (``math_short``, ``math_long``,
    ``math_pow``), None for any other callee. ``native_`` and ``half_`` forms are hardware
    approximations: short, whatever the function."""
    if callee.startswith("llvm."):
        name = callee.split(".")[1]
        approx = False
    else:
        m = _MANGLED.match(callee)
        if not m:
            return None
        name = m.group(2)[: int(m.group(1))]
        approx = name.startswith(("native_", "half_"))
        name = name.removeprefix("native_").removeprefix("half_")
    if name not in _SPECIAL:
        return None
    if approx or name in _SHORT:
        return "math_short"
    return "math_pow" if name in _POW else "math_long"


# Cycles from an instruction's issue until an instruction that needs its result can issue, on NVIDIA's SM
# (Hopper), measured by bench/gpu_chain.py (data/h100/gpu_chain.json: one warp an SM, one chain, the
# loop's own 3 cycles an iteration taken off): FP32 add and FMA 4, integer multiply-add 4, double FMA 8,
# an integer division by a run-time value 135, a float division, square root or exponential 41-45, a
# sine 110, a power 356. Instructions that compute no arithmetic result (casts, selects, vector lanes
# moved, phis) pass their operands' readiness on at no cost; a load's wait is the roofline's load chain.
LATENCY = {"float": 4.0, "int": 4.0, "fp64": 8.0, "int_div": 135.0, "math_short": 43.0, "math_long": 110.0,
           "math_pow": 356.0}
# The cost classes that run one after another however independent (the same measurement: two sines take
# 1.6 times one, four 2.8 times, powers add up in full; the compiler does not interleave their long
# sequences), where independent divisions and short functions overlap (two take 1.0-1.1 times one).
SERIAL = ("math_long", "math_pow")


def path_cycles(f: FunctionIR, block: int) -> tuple[float, float]:
    """The block's longest chain of dependent operations, and all its operations, in ``LATENCY`` cycles:
    each instruction is ready its own latency after the last of its operands the block computes (values
    from other blocks are ready when it starts); the ``SERIAL`` functions one after another besides. A
    vector instruction counts once in both, as the roofline's chain charges its lanes together. Their
    ratio is the block's parallelism: how many independent chains overlap."""
    ready: dict[int, float] = {}
    longest = total = unit = 0.0  # unit: when the last SERIAL function's sequence ends
    for inst in f.insts[block]:
        if f.opc(inst) == "phi":
            continue
        o = operation(f, inst)
        cycles = LATENCY[o.latency] if o is not None else 0.0
        start = max((ready.get(v, 0.0) for v in f.opers(inst)), default=0.0)
        if o is not None and o.latency in SERIAL:
            start = max(start, unit)
            unit = start + cycles
        ready[inst] = start + cycles
        longest = max(longest, ready[inst])
        total += cycles
    return longest, total
