"""Scenarios: how a kernel is launched, written as the CLI's flags.

The same flags work in three places, later ones overriding earlier ones:

* a workspace file ``clperf.toml`` (``[kernels.NAME] scenario = "--global n --arg n=4096"``),
* a comment directive right above the kernel: ``// clperf: --global n --local 256 --arg n=1048576``,
* the command line: ``clperf bench k.cl --kernel K --global 1048576 --local 256 --arg n=1048576``.

``--arg NAME=EXPR`` sets a scalar's value or a pointer parameter's length in elements; ``--fill
NAME=random|zeros|ones|range:LO:HI`` says how a buffer is filled. Expressions use integers, other argument
names, ``+ - * / // % ** << >>`` and ``min``/``max``; ``--global``/``--local`` take one expression per
dimension, comma separated.

Anyone can write a directive, so everything is bounded: an expression has at most 200 characters and 64
terms and no value past 2**63 (a power or shift is checked before it is computed); an integer argument
must fit its C type (``int`` up to 2147483647); a global size is at most 2**32-1 per dimension and 2**40
work-items in all, and a local size divides it. ``check_launch`` (predictor) adds the device's limits.

Defaults (each one used is named in ``Scenario.defaulted``): the global size is 1048576 work-items for a
1-D kernel, 1024x1024 for 2-D and 128x128x64 for 3-D; the local size is left to the runtime (``null``); an
integer scalar is the global size along dimension 0; a floating-point scalar is 1.5; a ``__global`` or
``__constant`` buffer holds one element per work-item; a ``__local`` buffer one element per work-item of a
work-group (256 when the local size is left to the runtime); buffers are filled with seeded random values.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from clperf.core.errors import ScenarioError
from clperf.core.records import Param, Scenario, split_vector

DEFAULT_GLOBAL = {1: (1048576,), 2: (1024, 1024), 3: (128, 128, 64)}
DEFAULT_FLOAT = 1.5
DEFAULT_LOCAL_ITEMS = 256
FILL_KINDS = ("random", "zeros", "ones", "range")
DIRECTIVE = re.compile(r"^\s*//\s*clperf:\s?(.*)$")

# The values an integer scalar of each type holds (size_t and the pointer-sized types as on a 64-bit
# device): a value outside would reach the kernel wrapped around, a different launch than the one written.
_INT_RANGES: dict[str, tuple[int, int]] = {
    **{t: (-(2**(bits - 1)), 2**(bits - 1) - 1) for t, bits in (
        ("char", 8), ("short", 16), ("int", 32), ("long", 64), ("ptrdiff_t", 64), ("intptr_t", 64))},
    **{t: (0, 2**bits - 1) for t, bits in (
        ("uchar", 8), ("unsigned char", 8), ("bool", 8), ("ushort", 16), ("unsigned short", 16),
        ("uint", 32), ("unsigned int", 32), ("unsigned", 32), ("ulong", 64), ("unsigned long", 64),
        ("size_t", 64), ("uintptr_t", 64))},
}
HALF_MAX = 65504.0  # the largest finite half; float and double hold every value an expression can make

# Launch sizes no device runs: OpenCL's size_t is 64 bits wide on a 64-bit host, but no device reports
# more than 2**32-1 work-items along a dimension, and 2**40 work-items would take hours on any of them.
MAX_GLOBAL_DIM = 2**32 - 1
MAX_WORK_ITEMS = 2**40


@dataclass(frozen=True)
class ScenarioSpec:
    """A scenario as the user wrote it: expressions, not yet numbers."""

    global_size: tuple[str, ...] | None = None
    local_size: tuple[str, ...] | None = None
    args: Mapping[str, str] = field(default_factory=dict)
    fills: Mapping[str, str] = field(default_factory=dict)

    def merged(self, other: ScenarioSpec) -> ScenarioSpec:
        """``other`` overrides this spec field by field (argument by argument)."""
        return ScenarioSpec(
            global_size=other.global_size if other.global_size is not None else self.global_size,
            local_size=other.local_size if other.local_size is not None else self.local_size,
            args={**self.args, **other.args},
            fills={**self.fills, **other.fills},
        )

    def is_empty(self) -> bool:
        return self.global_size is None and self.local_size is None and not self.args and not self.fills

    def to_flags(self) -> str:
        """The spec back in flag form, e.g. for a directive a quick fix inserts."""
        parts: list[str] = []
        if self.global_size is not None:
            parts += ["--global", ",".join(self.global_size)]
        if self.local_size is not None:
            parts += ["--local", ",".join(self.local_size)]
        for k, v in self.args.items():
            parts += ["--arg", f"{k}={v}"]
        for k, v in self.fills.items():
            parts += ["--fill", f"{k}={v}"]
        return " ".join(shlex.quote(p) for p in parts)


def _split_assignments(items: Iterable[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, expr = item.partition("=")
        name, expr = name.strip(), expr.strip()
        if not sep or not name.isidentifier() or not expr:
            raise ScenarioError(f"{flag} expects NAME=VALUE, got {item!r}")
        out[name] = expr
    return out


def _check_fill(name: str, fill: str) -> None:
    kind = fill.split(":", 1)[0]
    if kind not in FILL_KINDS:
        raise ScenarioError(f"--fill {name}: unknown fill {fill!r}; use random, zeros, ones or range:LO:HI")
    if kind == "range" and len(fill.split(":")) != 3:
        raise ScenarioError(f"--fill {name}: a range is written range:LO:HI, got {fill!r}")
    if kind != "range" and fill != kind:
        raise ScenarioError(f"--fill {name}: {kind} takes no bounds, got {fill!r}")


def make_spec(
    global_size: str | None = None,
    local_size: str | None = None,
    args: Sequence[str] = (),
    fills: Sequence[str] = (),
) -> ScenarioSpec:
    """Build a spec from flag values (as argparse hands them over)."""
    fill_map = _split_assignments(fills, "--fill")
    for name, fill in fill_map.items():
        _check_fill(name, fill)

    def dims(text: str | None, flag: str) -> tuple[str, ...] | None:
        if text is None:
            return None
        if text.strip().lower() in ("null", "none", "auto"):
            return None
        parts = tuple(p.strip() for p in text.split(","))
        if not 1 <= len(parts) <= 3 or not all(parts):
            raise ScenarioError(f"{flag} takes 1 to 3 comma-separated sizes, got {text!r}")
        return parts

    return ScenarioSpec(dims(global_size, "--global"), dims(local_size, "--local"),
                        _split_assignments(args, "--arg"), fill_map)


def parse_flags(text: str) -> ScenarioSpec:
    """Parse ``--global G --local L --arg N=E --fill N=F`` (as in a directive or a workspace file)."""
    try:
        tokens = shlex.split(text, comments=False)
    except ValueError as e:
        raise ScenarioError(f"cannot read scenario {text!r}: {e}") from e
    g: str | None = None
    loc: str | None = None
    args: list[str] = []
    fills: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        flag, eq, inline = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        if flag not in ("--global", "--local", "--arg", "--fill"):
            raise ScenarioError(f"unknown scenario flag {tok!r}; use --global, --local, --arg, --fill")
        if eq:
            value = inline
        else:
            if i + 1 >= len(tokens):
                raise ScenarioError(f"{flag} needs a value")
            i += 1
            value = tokens[i]
        if flag == "--global":
            g = value
        elif flag == "--local":
            loc = value
        elif flag == "--arg":
            args.append(value)
        else:
            fills.append(value)
        i += 1
    return make_spec(g, loc, args, fills)


# --- expressions ------------------------------------------------------------------------------------------

# An expression comes from a file anyone can write: it is short and small, so evaluating one costs
# microseconds and no value can grow without bound (``9**9**9``, ``1<<100000``, a chain of ``a*a*a*a``).
MAX_EXPR_CHARS = 200
MAX_EXPR_NODES = 64
MAX_MAGNITUDE = 2**63
MAX_EXPONENT = 64  # with a base of 2**63 at most, the power stays under 4100 bits before it is checked
MAX_NAME_CHAIN = 32  # arguments defined through arguments: n=m*2, m=k+1, ...

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
}


def _shown(expr: str) -> str:
    """The expression as a message quotes it: its start only, however long it is."""
    return repr(expr if len(expr) <= 40 else expr[:40] + "...")


def _bounded(v: int | float, expr: str) -> int | float:
    if (isinstance(v, float) and not math.isfinite(v)) or abs(v) > MAX_MAGNITUDE:
        raise ScenarioError(f"{_shown(expr)} goes past 2**63 (the largest value a launch can use)")
    return v


def _binop(op: ast.operator, a: int | float, b: int | float, expr: str) -> int | float:
    """One operation, refused before it is computed when its result could not be bounded."""
    fn = _BINOPS.get(type(op))
    if isinstance(op, ast.Div):
        fn = operator.floordiv if isinstance(a, int) and isinstance(b, int) else operator.truediv
    if fn is None:
        raise ScenarioError(f"operator not allowed in {_shown(expr)}")
    if isinstance(op, ast.Pow) and abs(a) > 1 and b > MAX_EXPONENT:
        raise ScenarioError(f"{_shown(expr)} goes past 2**63 (the largest value a launch can use)")
    if isinstance(op, (ast.LShift, ast.RShift)) and isinstance(b, int) and not 0 <= b < MAX_EXPONENT:
        raise ScenarioError(f"shift by {b} in {_shown(expr)}: shifts go from 0 to {MAX_EXPONENT - 1}")
    try:
        v = fn(a, b)
    except ZeroDivisionError as e:
        raise ScenarioError(f"division by zero in {_shown(expr)}") from e
    except (TypeError, ValueError, OverflowError) as e:  # a float where integers are needed, a float overflow
        raise ScenarioError(f"cannot compute {_shown(expr)}: {e}") from e
    if not isinstance(v, (int, float)):  # a negative number to a fractional power is complex
        raise ScenarioError(f"{_shown(expr)} is not a real number")
    return v


def evaluate(expr: str, lookup: Mapping[str, int | float] | None = None,
             resolve: Callable[[str], int | float] | None = None) -> int | float:
    """Evaluate an integer expression safely. ``resolve(name)`` is called for names not in ``lookup``.

    Refused (ScenarioError): over ``MAX_EXPR_CHARS`` characters or ``MAX_EXPR_NODES`` terms, and any
    value past ``MAX_MAGNITUDE`` on the way (checked before a power or a shift is computed)."""
    if len(expr) > MAX_EXPR_CHARS:
        raise ScenarioError(f"expression {_shown(expr)} is {len(expr)} characters long; "
                            f"at most {MAX_EXPR_CHARS} are allowed")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, MemoryError, RecursionError) as e:  # the parser's own nesting limits
        raise ScenarioError(f"bad expression {_shown(expr)}") from e
    if sum(isinstance(n, ast.expr) for n in ast.walk(tree)) > MAX_EXPR_NODES:
        raise ScenarioError(f"expression {_shown(expr)} has more than {MAX_EXPR_NODES} terms")

    def ev(node: ast.AST) -> int | float:  # recursion is bounded: the tree has at most 64 nodes
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return _bounded(node.value, expr)
        if isinstance(node, ast.Name):
            if lookup is not None and node.id in lookup:
                return _bounded(lookup[node.id], expr)
            if resolve is not None:
                return _bounded(resolve(node.id), expr)
            raise ScenarioError(f"unknown name {node.id!r} in {_shown(expr)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            return _bounded(_binop(node.op, ev(node.left), ev(node.right), expr), expr)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("min", "max") and node.args and not node.keywords:
            vals = [ev(a) for a in node.args]
            return min(vals) if node.func.id == "min" else max(vals)
        raise ScenarioError(f"unsupported expression {_shown(expr)}")

    return ev(tree.body)


def resolve(spec: ScenarioSpec, params: Sequence[Param], dims_used: int = 1,
            required_local: Sequence[int] | None = None) -> Scenario:
    """Turn a spec into numbers for a kernel's parameters, filling documented defaults.

    ``dims_used`` is the highest work-item dimension the kernel reads plus one (from the front end).
    ``required_local``: the kernel's ``reqd_work_group_size``; the local size when none is given, and
    any other is refused (the launch would fail with CL_INVALID_WORK_GROUP_SIZE).
    """
    by_name = {p.name: p for p in params}
    for name in list(spec.args) + list(spec.fills):
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise ScenarioError(f"no parameter named {name!r} (parameters: {known})")
    for name in spec.fills:
        if not by_name[name].pointer:
            raise ScenarioError(f"--fill {name}: {name} is not a buffer")
    defaulted: list[str] = []
    values: dict[str, int | float] = {}
    visiting: set[str] = set()

    def value_of(name: str) -> int | float:
        if name in values:
            return values[name]
        if name not in spec.args:
            if name in by_name:
                raise ScenarioError(f"{name!r} is used in an expression but has no --arg value")
            raise ScenarioError(f"unknown name {name!r} in scenario")
        if name in visiting:
            raise ScenarioError(f"argument {name!r} is defined in terms of itself")
        if len(visiting) >= MAX_NAME_CHAIN:  # each link nests evaluate() once more
            raise ScenarioError(f"argument {name!r} is defined through more than {MAX_NAME_CHAIN} others")
        visiting.add(name)
        v = evaluate(spec.args[name], resolve=value_of)
        visiting.discard(name)
        values[name] = v
        return v

    for name in spec.args:
        value_of(name)

    def sizes(exprs: tuple[str, ...], what: str) -> tuple[int, ...]:
        out = []
        for e in exprs:
            v = evaluate(e, resolve=value_of)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ScenarioError(f"{what} size {e!r} must be a positive integer, got {v!r}")
            out.append(v)
        return tuple(out)

    if spec.global_size is not None:
        global_size = sizes(spec.global_size, "global")
    else:
        global_size = DEFAULT_GLOBAL[max(1, min(3, dims_used))]
        defaulted.append("global")
    local_size = sizes(spec.local_size, "local") if spec.local_size is not None else None
    if required_local:
        need = tuple(required_local[:len(global_size)])
        if any(r != 1 for r in required_local[len(global_size):]):
            raise ScenarioError(f"the kernel requires a work-group of {_sizes_text(required_local)} "
                                f"(reqd_work_group_size): a {len(global_size)}-D launch cannot have it")
        if local_size is None:
            local_size = need
        elif local_size != need:
            raise ScenarioError(f"local size {_sizes_text(local_size)} differs from the kernel's "
                                f"reqd_work_group_size {_sizes_text(need)}")
    check_sizes(global_size, local_size)
    work_items = math.prod(global_size)
    group_items = 1
    for lo in local_size or (DEFAULT_LOCAL_ITEMS,):
        group_items *= lo

    args: dict[str, int | float] = {}
    for p in params:
        if p.name in values:
            v = values[p.name]
            if p.pointer and (not isinstance(v, int) or v <= 0):
                raise ScenarioError(f"length of buffer {p.name!r} must be a positive integer, got {v!r}")
            args[p.name] = v if p.pointer else _scalar_value(p, v, "")
            continue
        defaulted.append(p.name)
        if p.pointer:
            args[p.name] = group_items if p.address_space == "local" else work_items
        elif split_vector(p.type)[0] in _INT_RANGES:
            args[p.name] = _scalar_value(p, global_size[0], " (its default: the global size)")
        else:
            args[p.name] = DEFAULT_FLOAT

    fills: dict[str, str] = {}
    for name, fill in spec.fills.items():
        if fill.startswith("range:"):
            _, lo_expr, hi_expr = fill.split(":")
            lo_v, hi_v = evaluate(lo_expr, resolve=value_of), evaluate(hi_expr, resolve=value_of)
            if lo_v >= hi_v:
                raise ScenarioError(f"--fill {name}: empty range {fill!r}")
            fills[name] = f"range:{lo_v}:{hi_v}"
        else:
            fills[name] = fill
    return Scenario(global_size, local_size, args, fills, tuple(defaulted))


def _scalar_value(p: Param, v: int | float, whence: str) -> int | float:
    """``v`` as scalar parameter ``p`` holds it: an integer type's value whole and in its range."""
    base = split_vector(p.type)[0]
    if base in _INT_RANGES:
        if isinstance(v, float):
            if not v.is_integer():
                raise ScenarioError(f"{p.name!r} is a {p.type} (an integer), got {v!r}")
            v = int(v)
        lo, hi = _INT_RANGES[base]
        if not lo <= v <= hi:
            raise ScenarioError(f"{p.name!r} = {v}{whence} does not fit in a {p.type} ({lo} to {hi})")
    elif base == "half" and abs(v) > HALF_MAX:
        raise ScenarioError(f"{p.name!r} = {v}{whence} does not fit in a half (at most {HALF_MAX:g})")
    return v


def check_sizes(global_size: Sequence[int], local_size: Sequence[int] | None) -> None:
    """Refuse launch sizes no device runs (see ``MAX_GLOBAL_DIM``, ``MAX_WORK_ITEMS``) and a local size
    that does not divide the global one. Also for scenarios built without ``resolve`` (sweeps)."""
    for what, sizes in (("global", global_size), ("local", local_size or ())):
        for s in sizes:
            if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
                raise ScenarioError(f"{what} size {s!r} must be a positive integer")
    if not 1 <= len(global_size) <= 3:
        raise ScenarioError(f"a launch has 1 to 3 dimensions, not {len(global_size)}")
    if any(g > MAX_GLOBAL_DIM for g in global_size):
        raise ScenarioError(f"global size {_sizes_text(global_size)}: at most {MAX_GLOBAL_DIM} work-items "
                            "along a dimension")
    if math.prod(global_size) > MAX_WORK_ITEMS:
        raise ScenarioError(f"global size {_sizes_text(global_size)} is {math.prod(global_size)} "
                            "work-items; at most 2**40 are launched")
    if local_size is not None:
        if len(local_size) != len(global_size):
            raise ScenarioError(
                f"local size has {len(local_size)} dimensions, global size {len(global_size)}")
        for g, lo in zip(global_size, local_size, strict=True):
            if g % lo:
                raise ScenarioError(f"global size {g} is not a multiple of local size {lo} (clperf "
                                    "launches uniform work-groups, as OpenCL 1.2 requires)")


def _sizes_text(sizes: Sequence[int]) -> str:
    return ",".join(str(s) for s in sizes)


def with_launch(scenario: Scenario, global_size: tuple[int, ...] | None = None,
                local_size: tuple[int, ...] | None = None) -> Scenario:
    """A copy with other launch sizes (used by sweeps)."""
    return replace(scenario,
                   global_size=global_size if global_size is not None else scenario.global_size,
                   local_size=local_size if local_size is not None else scenario.local_size)
