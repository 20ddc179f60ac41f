"""Rules over a KernelReport: what in the kernel costs time (or is wrong), with a fix a developer can act on.

Each finding carries ``data`` with what a quick fix needs later (the array, the stride, the neighbour
offsets of a stencil, the loop and its trip count). Rule pages: ``docs/rules/<rule>.md``.

Messages are plain text (an editor shows a diagnostic as it is): names in single quotes, as clang
writes them, never Markdown.

Severities: ``barrier-divergence`` is an ``error`` (undefined behaviour, may hang); a strided global
access is a ``warning``; the rest are ``information`` (worth a look, not always a win).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from clperf.predictor.analysis import poly
from clperf.predictor.analysis.records import Access, KernelReport

RULES = ("uncoalesced-access", "local-cache-candidate", "unroll-candidate", "barrier-divergence")
UNROLL_MAX_TRIPS = 32  # fully unrolling more than this bloats code for little gain
STENCIL_MAX_RADIUS = 8  # neighbour offsets beyond this are not "neighbours" a tile can hold


@dataclass(frozen=True)
class Finding:
    kernel: str
    rule: str
    line: int
    column: int
    severity: str  # "error" | "warning" | "information" | "hint"
    message: str
    data: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "rule": self.rule,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "message": self.message,
            "data": self.data,
        }


def find(kernels: Iterable[KernelReport]) -> list[Finding]:
    out: list[Finding] = []
    for k in kernels:
        if not k.analyzed:
            continue
        out += barrier_divergence(k)
        out += uncoalesced(k)
        out += local_cache(k)
        out += unroll(k)
    out.sort(key=lambda f: (f.line, f.column, f.rule))
    return out


# ---- barrier-divergence ------------------------------------------------------------------------------


def barrier_divergence(k: KernelReport) -> list[Finding]:
    out = []
    for line, col, cond_line in k.divergent_barriers:
        where = f"the condition at line {cond_line}" if cond_line else "a work-item dependent condition"
        out.append(
            Finding(
                k.name,
                "barrier-divergence",
                line,
                col,
                "error",
                f"barrier() is reached by only some work-items of a work-group: it depends on {where} "
                f"(e.g. if (get_local_id(0) < k) or an early return). Work-items that skip it make the "
                f"others wait forever or read stale __local data (undefined behaviour). "
                f"Move the barrier out of "
                f"the condition so every work-item of the work-group executes it; keep only the work inside.",
                {"barrier_line": line, "condition_line": cond_line},
            )
        )
    return out


# ---- uncoalesced-access ------------------------------------------------------------------------------


def _stride_text(a: Access) -> str:
    if a.stride is not None:
        return f"{a.stride} elements"
    return f"{a.stride_expr} elements"


def uncoalesced(k: KernelReport) -> list[Finding]:
    out = []
    seen: set[tuple[str | None, int, str]] = set()
    for a in k.accesses:
        if a.address_space != "global" or a.pattern not in ("strided", "indirect"):
            continue
        key = (a.param, a.line, a.pattern)
        if key in seen:
            continue
        seen.add(key)
        verb = {"load": "read", "store": "written", "atomic": "updated atomically"}[a.kind]
        name = f"'{a.param}'" if a.param else "this buffer"
        data: dict[str, Any] = {
            "param": a.param,
            "kind": a.kind,
            "pattern": a.pattern,
            "stride": a.stride,
            "stride_expr": a.stride_expr,
            "element_size": a.element_size,
            "loop_line": a.loop_line,
            "dim1_pattern": a.dim1_pattern,
        }
        if a.pattern == "strided":
            swap = a.dim1_pattern == "contiguous"
            data["swap_dims"] = swap
            hint = (
                "dimension 1 walks this array contiguously: swap get_global_id(0) and get_global_id(1) "
                "(and the global/local sizes)"
                if swap
                else "make get_global_id(0) the fastest-moving (last) index, transpose the data on the host, "
                "or stage a tile through __local memory and read it transposed"
            )
            out.append(
                Finding(
                    k.name,
                    "uncoalesced-access",
                    a.line,
                    a.column,
                    "warning",
                    f"{name} is {verb} with a stride of {_stride_text(a)} between neighbouring work-items "
                    f"(dimension 0), so one memory transaction serves one work-item "
                    f"instead of a whole group: "
                    f"{hint}.",
                    data,
                )
            )
        else:
            out.append(
                Finding(
                    k.name,
                    "uncoalesced-access",
                    a.line,
                    a.column,
                    "information",
                    f"{name} is {verb} at addresses loaded from memory (a gather/scatter through an index "
                    f"array): neighbouring work-items touch unrelated addresses. "
                    f"If the indices can be sorted, "
                    f"or the data reordered so that index i mostly maps near i, the accesses coalesce again.",
                    data,
                )
            )
    return out


# ---- local-cache-candidate ---------------------------------------------------------------------------


def _elements(p: poly.Poly, unit: int) -> poly.Poly:
    return poly.scale(p, Fraction(1, unit))


def _neighbour_offset(diff: poly.Poly, row: poly.Poly | None) -> tuple[int, int] | None:
    """``diff`` (elements) as ``dx + dy * row`` with small integers; None when it is not of that form."""
    c = poly.constant_value(diff)
    if c is not None:
        return (int(c), 0) if c.denominator == 1 else None
    if not row:
        return None
    rest = poly.without(diff, [])
    dx = rest.pop((), Fraction(0))
    # dy such that rest == dy * row
    m0 = next(iter(row))
    if m0 not in rest:
        return None
    dy = rest[m0] / row[m0]
    if dy.denominator != 1 or poly.sub(rest, poly.scale(row, dy)):
        return None
    if dx.denominator != 1:
        return None
    return int(dx), int(dy)


def local_cache(k: KernelReport) -> list[Finding]:
    out: list[Finding] = []
    written = {p.name for p in k.params if p.written}
    loads: dict[str, list[Access]] = {}
    for a in k.accesses:
        if (
            a.kind == "load"
            and a.address_space in ("global", "constant")
            and a.param
            and a.param not in written
            and a.param not in k.staged
        ):
            loads.setdefault(a.param, []).append(a)
    for name, acc in loads.items():
        f = _stencil(k, name, acc) or _window(k, name, acc) or _tile_reuse(k, name, acc)
        if f is not None:
            out.append(f)
    return out


def _stencil(k: KernelReport, name: str, acc: list[Access]) -> Finding | None:
    group = [a for a in acc if a.pattern == "contiguous"]
    if len(group) < 3:
        return None
    unit = group[0].element_size or 1
    first = poly.thaw(group[0].offset)
    row = poly.coefficient(first, "gid1") if k.dims >= 2 else None
    row_el = _elements(row, unit) if row else None
    offsets: set[tuple[int, int]] = set()
    for a in group:
        if a.loops != group[0].loops or a.element_size != unit:
            continue
        off = _neighbour_offset(_elements(poly.sub(poly.thaw(a.offset), first), unit), row_el)
        if off is None or max(abs(off[0]), abs(off[1])) > STENCIL_MAX_RADIUS:
            continue
        offsets.add(off)
    if len(offsets) < 3:
        return None
    # centre the offsets on the access nearest the middle
    cx = sorted(o[0] for o in offsets)[len(offsets) // 2]
    cy = sorted(o[1] for o in offsets)[len(offsets) // 2]
    rel = sorted(((x - cx), (y - cy)) for x, y in offsets)
    rx = max(abs(x) for x, _ in rel)
    ry = max(abs(y) for _, y in rel)
    two_d = any(y for _, y in rel)
    shape = f"a {2 * rx + 1}x{2 * ry + 1} neighbourhood" if two_d else f"{2 * rx + 1} neighbouring elements"
    tile = (
        f"a (local size + {2 * rx}) x (local size + {2 * ry}) tile"
        if two_d
        else f"local size + {2 * rx} elements"
    )
    a0 = group[0]
    return Finding(
        k.name,
        "local-cache-candidate",
        a0.line,
        a0.column,
        "information",
        f"'{name}' is read at {len(rel)} neighbouring offsets ({shape}): each element is loaded from global "
        f"memory by up to {len(rel)} work-items. Load {tile} into __local memory once per work-group "
        f"(halo included), barrier(CLK_LOCAL_MEM_FENCE), then read the neighbours from it.",
        {
            "param": name,
            "reuse": "stencil",
            "offsets": [list(o) for o in rel],
            "radius": [rx, ry],
            "dims": 2 if two_d else 1,
            "lines": sorted({a.line for a in group}),
        },
    )


def _window(k: KernelReport, name: str, acc: list[Access]) -> Finding | None:
    for a in acc:
        if a.pattern != "contiguous" or not a.loops:
            continue
        inner = a.loops[-1]
        lp = k.loops[inner]
        off = poly.thaw(a.offset)
        civ = poly.constant_value(poly.coefficient(off, f"it:{inner}") or {})
        trips = lp.trip_count
        if civ is None or civ == 0 or trips is None or trips < 2:
            continue
        step = abs(civ) / (a.element_size or 1)
        if step * trips <= 1:
            continue
        if step > 1:
            continue
        return Finding(
            k.name,
            "local-cache-candidate",
            a.line,
            a.column,
            "information",
            f"'{name}' is read through a sliding window: work-item i reads {trips} consecutive elements "
            f"starting at i, so neighbouring work-items load the same elements {trips} times over. Load "
            f"local size + {trips - 1} elements into __local memory once per work-group, barrier, then run "
            f"the loop over the __local copy.",
            {
                "param": name,
                "reuse": "window",
                "loop_line": lp.line,
                "trip_count": trips,
                "window": trips,
                "offsets": [[i, 0] for i in range(trips)],
            },
        )
    return None


def _tile_reuse(k: KernelReport, name: str, acc: list[Access]) -> Finding | None:
    for a in acc:
        if not a.loops:
            continue
        off = poly.thaw(a.offset)
        uses_iv = any(s.startswith("it:") for s in poly.symbols(off))
        if not uses_iv:
            continue
        if k.dims >= 2 and a.pattern == "uniform" and a.dim1_pattern not in (None, "uniform"):
            shared, along = "row", 0
        elif k.dims >= 2 and a.dim1_pattern == "uniform" and a.pattern != "uniform":
            shared, along = "column", 1
        elif a.pattern == "uniform":
            shared, along = "broadcast", 0
        else:
            continue
        lp = k.loops[a.loops[-1]]
        what = {
            "row": "all work-items along dimension 0 with the same get_global_id(1) read the same "
            "elements (a matrix row reused across the tile)",
            "column": "all work-items along dimension 1 with the same get_global_id(0) read the same "
            "elements (a matrix column reused across the tile)",
            "broadcast": "every work-item of the work-group reads the same element in each iteration",
        }[shared]
        return Finding(
            k.name,
            "local-cache-candidate",
            a.line,
            a.column,
            "information",
            f"'{name}' is read in the loop at line {lp.line} where {what}. Stage a tile of it in __local "
            f"memory (each work-item loads one element, barrier, loop over the tile, barrier) so it is "
            f"fetched from global memory once per work-group instead of once per work-item.",
            {
                "param": name,
                "reuse": shared,
                "shared_along_dim": along,
                "loop_line": lp.line,
                "trip_count": lp.trip_count,
                "trip_expr": lp.trip_expr,
            },
        )
    return None


# ---- unroll-candidate --------------------------------------------------------------------------------


def unroll(k: KernelReport) -> list[Finding]:
    out = []
    parents = {lp.parent for lp in k.loops if lp.parent is not None}
    for i, lp in enumerate(k.loops):
        if lp.unroll is not None or lp.trip_count is None or not 2 <= lp.trip_count <= UNROLL_MAX_TRIPS:
            continue
        if i in parents:
            continue  # unroll the innermost loop first
        out.append(
            Finding(
                k.name,
                "unroll-candidate",
                lp.line,
                lp.column,
                "information",
                f"This loop always runs {lp.trip_count} times: "
                f"put #pragma unroll on the line above it so the "
                f"compiler unrolls it fully (no counter or branch, "
                f"loads of all iterations can issue together, "
                f"constant indices fold).",
                {
                    "loop_line": lp.line,
                    "trip_count": lp.trip_count,
                    "pragma": "#pragma unroll",
                    "insert_line": lp.line,
                    "indent": lp.column - 1,
                },
            )
        )
    return out
