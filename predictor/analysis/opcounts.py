"""Per-work-item operation counts: floating-point and integer instructions, integer divisions, double
precision and special functions, tallied per group of enclosing loops and turned into ``Ops``.

A vector instruction counts once per lane; an FMA counts as two flops.
"""

from __future__ import annotations

import re

from clperf.predictor.analysis.function import FunctionIR
from clperf.predictor.analysis.records import Ops

Tally = dict[str, float]  # Ops field name -> count, for one group of loops

FLOAT_OPS = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg"}
INT_OPS = {
    "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor", "icmp",
}
# divisions by a run-time value: one IR op, but no GPU has an integer divider (``Ops.int_divs``)
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
_MANGLED = re.compile(r"_Z(\d+)(\w+)")


def bump(g: Tally, key: str, n: float) -> None:
    g[key] = g.get(key, 0) + n


def to_ops(g: Tally) -> Ops:
    return Ops(**{k: v for k, v in g.items()})


def count_arithmetic(f: FunctionIR, inst: int, op: str, g: Tally) -> None:
    """An instruction whose opcode is in ``FLOAT_OPS`` or ``INT_OPS``."""
    if op in FLOAT_OPS:
        bump(g, "flops", f.lanes(inst))
        if op in ("fdiv", "frem"):
            bump(g, "special_ops", f.lanes(inst))
        if "double" in f.tstr(inst):
            bump(g, "fp64_ops", f.lanes(inst))
    else:
        bump(g, "int_ops", f.lanes(inst) if op != "icmp" else 1)
        if op in _DIVS and f.const(f.opers(inst)[1]) is None:
            bump(g, "int_divs", f.lanes(inst))


def count_math_call(f: FunctionIR, inst: int, callee: str, g: Tally) -> bool:
    """A call that computes a floating-point result (an FMA, a built-in math function): counted, True."""
    if callee.startswith(_FMA_CALLS):
        bump(g, "flops", 2 * f.lanes(inst))
        if "double" in f.tstr(inst):
            bump(g, "fp64_ops", f.lanes(inst))
        return True
    if _FLOAT_RESULT.match(f.text[inst]):
        bump(g, "flops", f.lanes(inst))
        if "double" in f.tstr(inst):
            bump(g, "fp64_ops", f.lanes(inst))
        if is_special(callee):
            bump(g, "special_ops", f.lanes(inst))
        return True
    return False


def is_special(callee: str) -> bool:
    """``_Z3expf`` / ``_Z10native_sinDv4_f`` / ``llvm.sqrt.f32``: a special function?"""
    if callee.startswith("llvm."):
        return callee.split(".")[1] in _SPECIAL
    m = _MANGLED.match(callee)
    if not m:
        return False
    name = m.group(2)[: int(m.group(1))]
    for prefix in ("native_", "half_"):
        name = name.removeprefix(prefix)
    return name in _SPECIAL
