"""Integer polynomials over named symbols: the algebra of address arithmetic.

An address offset such as ``(y + 1) * w + x`` becomes ``{(gid1, w): 1, (w,): 1, (gid0,): 1}``. The
coefficient of ``gid0`` is then the stride along work-item dimension 0, whatever way the source wrote it.
Monomials are sorted tuples of symbol names; coefficients are Fractions so that a shift right or a
division by a constant stays exact.

Symbol names: ``gid0 lid0 grp0 lsz0 gsz0 ngr0`` (work-item functions, per dimension), ``arg:NAME``
(a scalar kernel argument), ``it:K`` (the iteration number of loop K, from 0), ``ld:N`` (a value loaded
from memory), ``v:N`` (any other value the algebra cannot see through).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction

Monomial = tuple[str, ...]
Poly = dict[Monomial, Fraction]
FrozenPoly = tuple[tuple[Monomial, Fraction], ...]

ONE: Monomial = ()


def const(c: int | Fraction) -> Poly:
    return {ONE: Fraction(c)} if c else {}


def sym(name: str) -> Poly:
    return {(name,): Fraction(1)}


def add(a: Poly, b: Poly, scale: int | Fraction = 1) -> Poly:
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, Fraction(0)) + c * scale
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def sub(a: Poly, b: Poly) -> Poly:
    return add(a, b, -1)


def mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            v = out.get(m, Fraction(0)) + ca * cb
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def scale(a: Poly, c: int | Fraction) -> Poly:
    return {m: v * c for m, v in a.items()} if c else {}


def constant_value(a: Poly) -> Fraction | None:
    """The value of a constant polynomial, None when it has symbols."""
    if not a:
        return Fraction(0)
    if len(a) == 1 and ONE in a:
        return a[ONE]
    return None


def symbols(a: Poly) -> set[str]:
    return {s for m in a for s in m}


def coefficient(a: Poly, name: str) -> Poly | None:
    """``d a / d name`` for a polynomial linear in ``name``; None when ``name`` appears squared."""
    out: Poly = {}
    for m, c in a.items():
        n = m.count(name)
        if n == 0:
            continue
        if n > 1:
            return None
        i = m.index(name)
        rest = m[:i] + m[i + 1 :]
        out[rest] = out.get(rest, Fraction(0)) + c
    return {m: c for m, c in out.items() if c}


def without(a: Poly, names: Iterable[str]) -> Poly:
    """The terms of ``a`` that contain none of ``names``."""
    ns = set(names)
    return {m: c for m, c in a.items() if not ns.intersection(m)}


def freeze(a: Poly) -> FrozenPoly:
    return tuple(sorted(a.items()))


def thaw(a: FrozenPoly) -> Poly:
    return dict(a)


def evaluate(a: Poly | FrozenPoly, values: Mapping[str, int | float]) -> float | None:
    """Numeric value with ``values`` for the symbols; None when a symbol has no value."""
    items = a if isinstance(a, tuple) else tuple(a.items())
    total = 0.0
    for m, c in items:
        term = float(c)
        for s in m:
            v = values.get(s)
            if v is None:
                return None
            term *= v
        total += term
    return total


def _pretty_symbol(s: str) -> str:
    if s.startswith("floor:"):
        return f"floor({s[6:]})"
    if s.startswith("pick:"):
        return s[5:]
    return s[4:] if s.startswith("arg:") else s


def _format_coefficient(c: Fraction) -> str:
    return str(c.numerator) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"


def format_poly(a: Poly | FrozenPoly) -> str:
    """``{(arg:n,): 1, (): -1}`` -> ``'n - 1'``: symbols by name, constants last, as a person writes it."""
    items = list(a if isinstance(a, tuple) else a.items())
    if not items:
        return "0"
    items.sort(key=lambda mc: (len(mc[0]) == 0, -len(mc[0]), mc[0]))
    parts: list[str] = []
    for m, c in items:
        names = " * ".join(_pretty_symbol(s) for s in m)
        mag = abs(c)
        if not names:
            body = _format_coefficient(mag)
        elif mag == 1:
            body = names
        else:
            body = f"{_format_coefficient(mag)} * {names}"
        if not parts:
            parts.append(body if c > 0 else f"-{body}")
        else:
            parts.append(f"{'+' if c > 0 else '-'} {body}")
    return " ".join(parts)


def ceil_div(num: float, den: int) -> int:
    return math.ceil(num / den - 1e-9)
