"""Scenarios: how a kernel is launched, written as the CLI's flags.

The same flags work in three places, later ones overriding earlier ones:

* a workspace file ``clperf.toml`` (``[kernels.NAME] scenario = "--global n --arg n=4096"``),
* a comment directive right above the kernel: ``// clperf: --global n --local 256 --arg n=1048576``,
* the command line: ``clperf bench k.cl --kernel K --global 1048576 --local 256 --arg n=1048576``.

``--arg NAME=EXPR`` sets a scalar's value or a pointer parameter's length in elements; ``--fill NAME=FILL``
says how a buffer (or a struct buffer's field, ``NAME.FIELD``) is filled, in the language of
``clperf.core.fills``: random data, ranges, sorted keys, permutations, histogram bins, ``.npy`` files and
views of named random matrices and graphs (``--fill m=csr:n:n:16 --fill rowptr=m.rowptr``).
Expressions use integers, other argument names, a matrix's sizes (``m.nnz``), ``+ - * / // % ** << >>``
and ``min``/``max``; ``--global``/``--local`` take one expression per dimension, comma separated.
docs/scenarios.md is the user's page.

Anyone can write a directive, so everything is bounded: an expression has at most 200 characters and 64
terms and no value past 2**63 (a power or shift is checked before it is computed); an integer argument
must fit its C type (``int`` up to 2147483647); a global size is at most 2**32-1 per dimension and 2**40
work-items in all, and a local size divides it. ``check_launch`` (predictor) adds the device's limits.

Defaults (each one used is named in ``Scenario.defaulted``): the global size is 1048576 work-items for a
1-D kernel, 1024x1024 for 2-D and 128x128x64 for 3-D; the local size is left to the runtime (``null``); an
integer scalar is the global size along dimension 0; a floating-point scalar is 1.5; a ``__global`` or
``__constant`` buffer holds one element per work-item; a ``__local`` buffer one element per work-item of a
work-group (256 when the local size is left to the runtime); buffers are filled with seeded random values.
A buffer filled with a matrix's view or a data file and given no length holds exactly the view or the file.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from clperf.core import datafiles
from clperf.core.errors import ScenarioError
from clperf.core.fills import FillText, Structure, parse_fill, simple, structure
from clperf.core.records import Param, Scenario, split_vector

DEFAULT_GLOBAL = {1: (1048576,), 2: (1024, 1024), 3: (128, 128, 64)}
DEFAULT_FLOAT = 1.5
DEFAULT_LOCAL_ITEMS = 256
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


def _split_assignments(items: Iterable[str], flag: str, dotted: bool = False) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, expr = item.partition("=")
        name, expr = name.strip(), expr.strip()
        parts = name.split(".") if dotted else [name]
        if not sep or not all(p.isidentifier() for p in parts) or not expr:
            raise ScenarioError(f"{flag} expects NAME=VALUE, got {item!r}")
        out[name] = expr
    return out


def make_spec(
    global_size: str | None = None,
    local_size: str | None = None,
    args: Sequence[str] = (),
    fills: Sequence[str] = (),
) -> ScenarioSpec:
    """Build a spec from flag values (as argparse hands them over)."""
    fill_map = _split_assignments(fills, "--fill", dotted=True)
    for name, fill in fill_map.items():
        parse_fill(name, fill)  # syntax only: the numbers wait for resolve

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


def _name_of(node: ast.AST) -> str | None:
    """``n`` for a name, ``m.nnz`` for a matrix's size; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


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
        name = _name_of(node)
        if name is not None:
            if lookup is not None and name in lookup:
                return _bounded(lookup[name], expr)
            if resolve is not None:
                return _bounded(resolve(name), expr)
            raise ScenarioError(f"unknown name {name!r} in {_shown(expr)}")
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
            required_local: Sequence[int] | None = None, *, data_root: Path | None = None) -> Scenario:
    """Turn a spec into numbers for a kernel's parameters, filling documented defaults.

    ``dims_used`` is the highest work-item dimension the kernel reads plus one (from the front end).
    ``required_local``: the kernel's ``reqd_work_group_size``; the local size when none is given, and
    any other is refused (the launch would fail with CL_INVALID_WORK_GROUP_SIZE). ``data_root``: the
    kernel file's folder, where ``file:`` fills are found (none: such fills are refused).
    """
    r = _Resolver(spec, params, data_root)
    for name in spec.args:
        r.value_of(name)
    defaulted: list[str] = []
    if spec.global_size is not None:
        global_size = r.sizes(spec.global_size, "global")
    else:
        global_size = DEFAULT_GLOBAL[max(1, min(3, dims_used))]
        defaulted.append("global")
    local_size = r.sizes(spec.local_size, "local") if spec.local_size is not None else None
    local_size = _required_local(global_size, local_size, required_local)
    check_sizes(global_size, local_size)
    args = r.arguments(global_size, local_size, defaulted)
    return Scenario(global_size, local_size, args, r.fills(), tuple(defaulted))


def _required_local(global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                    required_local: Sequence[int] | None) -> tuple[int, ...] | None:
    if not required_local:
        return local_size
    need = tuple(required_local[:len(global_size)])
    if any(r != 1 for r in required_local[len(global_size):]):
        raise ScenarioError(f"the kernel requires a work-group of {_sizes_text(required_local)} "
                            f"(reqd_work_group_size): a {len(global_size)}-D launch cannot have it")
    if local_size is None:
        return need
    if local_size != need:
        raise ScenarioError(f"local size {_sizes_text(local_size)} differs from the kernel's "
                            f"reqd_work_group_size {_sizes_text(need)}")
    return local_size


class _Resolver:
    """The numbers of one spec: argument values on demand (each evaluated once, cycles refused), the
    matrices and graphs its fills name, and each buffer's length and fill."""

    def __init__(self, spec: ScenarioSpec, params: Sequence[Param], data_root: Path | None) -> None:
        self.spec = spec
        self.by_name = {p.name: p for p in params}
        self.data_root = data_root
        self.values: dict[str, int | float] = {}
        self.visiting: set[str] = set()
        self.structures: dict[str, Structure] = {}
        self.files: dict[str, tuple[str, int]] = {}  # fill path -> (path as stored, elements)
        self.parsed = {n: parse_fill(n, t) for n, t in spec.fills.items()}
        for name in spec.args:
            self._check_parameter(name)
        for name, ft in self.parsed.items():
            self._check_fill_name(name, ft)

    def _check_parameter(self, name: str) -> Param:
        p = self.by_name.get(name)
        if p is None:
            known = ", ".join(self.by_name) or "none"
            raise ScenarioError(f"no parameter named {name!r} (parameters: {known})")
        return p

    def _check_fill_name(self, name: str, ft: FillText) -> None:
        head = name.split(".", 1)[0]
        if ft.defines_structure:
            if head in self.by_name:
                raise ScenarioError(f"--fill {name}: a {ft.kind} fill defines a matrix or graph: give it "
                                    f"a name of its own (--fill m={self.spec.fills[name]}) and fill {head} "
                                    f"with one of its views (--fill {head}=m.rowptr)")
            if "." in name:
                raise ScenarioError(f"--fill {name}: a matrix's name is one word")
            return
        if not self._check_parameter(head).pointer:
            raise ScenarioError(f"--fill {name}: {head} is not a buffer")
        if "." in name and ft.kind == "file":
            raise ScenarioError(f"--fill {name}: a data file fills a whole buffer (--fill {head}=file:...)")
        if ft.kind == "view" and not self.parsed.get(ft.parts[0], FillText("")).defines_structure:
            raise ScenarioError(f"--fill {name}: no matrix or graph named {ft.parts[0]!r} (define one: "
                                f"--fill {ft.parts[0]}=csr:ROWS:COLS:NNZ_PER_ROW)")

    def evaluate(self, expr: str) -> int | float:
        return evaluate(expr, resolve=self.value_of)

    def value_of(self, name: str) -> int | float:
        if name in self.values:
            return self.values[name]
        head, dot, prop = name.partition(".")
        if dot and self.parsed.get(head, FillText("")).defines_structure:
            return self.structure(head).prop(prop)
        if name not in self.spec.args:
            p = self.by_name.get(name)
            if p is not None and p.pointer and (need := self.fill_length(name)) is not None:
                return need[0]  # a buffer as long as its file or view: ``--global x``
            if p is not None:
                raise ScenarioError(f"{name!r} is used in an expression but has no --arg value")
            raise ScenarioError(f"unknown name {name!r} in scenario")
        with self._visit(name, "argument"):
            v = self.evaluate(self.spec.args[name])
        self.values[name] = v
        return v

    def structure(self, name: str) -> Structure:
        if name not in self.structures:
            with self._visit(name, "matrix"):
                self.structures[name] = structure(name, self.parsed[name], self.evaluate)
        return self.structures[name]

    def _visit(self, name: str, what: str) -> _Visit:
        if name in self.visiting:
            raise ScenarioError(f"{what} {name!r} is defined in terms of itself")
        if len(self.visiting) >= MAX_NAME_CHAIN:  # each link nests evaluate() once more
            raise ScenarioError(f"{what} {name!r} is defined through more than {MAX_NAME_CHAIN} others")
        return _Visit(self.visiting, name)

    def sizes(self, exprs: tuple[str, ...], what: str) -> tuple[int, ...]:
        out = []
        for e in exprs:
            v = self.evaluate(e)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ScenarioError(f"{what} size {e!r} must be a positive integer, got {v!r}")
            out.append(v)
        return tuple(out)

    def _file(self, text: str) -> tuple[str, int]:
        if text not in self.files:
            path = datafiles.data_path(self.data_root, text)
            assert self.data_root is not None
            self.files[text] = (datafiles.relative_text(self.data_root, path), datafiles.elements(path))
        return self.files[text]

    def fill_length(self, name: str) -> tuple[int, str] | None:
        """The length a buffer's fill gives it (a view's or a file's) and the fill, or None."""
        found: tuple[int, str] | None = None
        for fname, ft in self.parsed.items():
            if fname.split(".", 1)[0] != name or ft.kind not in ("view", "file"):
                continue
            if ft.kind == "file":
                return self._file(ft.parts[0])[1], f"file:{ft.parts[0]}"
            n = self.structure(ft.parts[0]).view_length(ft.parts[1])
            if found is None or n > found[0]:
                found = (n, ".".join(ft.parts))
        return found

    def arguments(self, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                  defaulted: list[str]) -> dict[str, int | float]:
        work_items = math.prod(global_size)
        group_items = math.prod(local_size or (DEFAULT_LOCAL_ITEMS,))
        args: dict[str, int | float] = {}
        for p in self.by_name.values():
            need = self.fill_length(p.name) if p.pointer else None
            if p.name in self.values:
                args[p.name] = self._given(p, self.values[p.name], need)
                continue
            if need is not None:
                args[p.name] = need[0]
                continue
            defaulted.append(p.name)
            if p.pointer:
                args[p.name] = group_items if p.address_space == "local" else work_items
            elif split_vector(p.type)[0] in _INT_RANGES:
                args[p.name] = _scalar_value(p, global_size[0], " (its default: the global size)")
            else:
                args[p.name] = DEFAULT_FLOAT
        return args

    def _given(self, p: Param, v: int | float, need: tuple[int, str] | None) -> int | float:
        if not p.pointer:
            return _scalar_value(p, v, "")
        if not isinstance(v, int) or v <= 0:
            raise ScenarioError(f"length of buffer {p.name!r} must be a positive integer, got {v!r}")
        if need is not None and need[1].startswith("file:") and v != need[0]:
            raise ScenarioError(f"--fill {p.name}={need[1]}: the file holds {need[0]} elements; the buffer "
                                f"has {v} (--arg {p.name}={self.spec.args[p.name]})")
        if need is not None and v < need[0]:
            raise ScenarioError(f"--fill {p.name}={need[1]}: the view has {need[0]} values; the buffer "
                                f"holds {v} (--arg {p.name}={self.spec.args[p.name]})")
        return v

    def fills(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, ft in self.parsed.items():
            if ft.defines_structure:
                out[name] = self.structure(name).text
            elif ft.kind == "view":
                self.structure(ft.parts[0]).view_length(ft.parts[1])  # a frontier of a plain matrix fails
                out[name] = ".".join(ft.parts)
            elif ft.kind == "file":
                out[name] = f"file:{self._file(ft.parts[0])[0]}"
            else:
                out[name] = simple(name, ft, self.evaluate).text
        return out


class _Visit:
    """Marks a name as being evaluated (``with``), so a definition through itself is caught."""

    def __init__(self, visiting: set[str], name: str) -> None:
        self.visiting, self.name = visiting, name

    def __enter__(self) -> None:
        self.visiting.add(self.name)

    def __exit__(self, *exc: object) -> None:
        self.visiting.discard(self.name)


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
