"""The ``__local`` caching rewrite: stage the part of a read-only buffer that a work-group reads into a
``__local`` tile (with its halo), barrier once, then read the neighbours from the tile.

One mechanism covers 1-D and 2-D stencils, sliding windows, convolution windows and matrix row/column
tiles: every read ``P[expr]`` of the buffer is written as ``U + X + Y*W`` where ``U`` and ``W`` are the same
for every work-item (arguments, macros), ``X = cx*gid0 + Xs(k)`` and ``Y = cy*gid1 + Ys(k)`` with ``cx, cy``
0 or 1 and ``Xs, Ys`` integer polynomials of the enclosing loops' counters (constant bounds). The tile
holds the rectangle of ``(X, Y)`` that the work-group can touch.

Why it is correct at the edges and for any work-group size:

* **exact halo loads.** A tile element is loaded only if some work-item of the group really reads it in
  the original kernel: for each read site the load loop solves for the work-item (and loop counters) that
  would read it and evaluates that read's own guard (its enclosing ``if`` conditions, ternaries, ``&&``
  operands and earlier ``if (...) return;``) for that work-item, with the original types. So no address
  is loaded that the original did not load: the original bounds checks are preserved, not guessed.
* **any work-group size.** The tile has a fixed capacity (sized for the largest work-group the target
  device allows, or the scenario's when that is too big for local memory); when a launch's work-group
  needs more, ``use`` is 0 for the whole group and every read takes the original global path. Adding
  ``reqd_work_group_size`` instead would make launches with another local size (or none) fail.
* **barrier safety.** The tile is loaded at the top of the kernel, before any early ``return``, and the
  single barrier is executed by every work-item.

A read site that does not fit (a division in the index, a guard that reads memory or depends on
``get_local_id``, a loop with non-constant bounds) keeps reading global memory: still correct.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import tree_sitter as ts

from clperf.predictor.rewrites import csource as cs
from clperf.predictor.rewrites.edits import TextEdit

_LOOPS = ("for_statement", "while_statement", "do_statement")


class Refused(Exception):
    """Why a site (or the whole rewrite) cannot be done safely."""


@dataclass
class LoopVar:
    name: str
    type: str
    lo: int
    hi: int  # exclusive


@dataclass
class Site:
    node: ts.Node  # the subscript expression
    index: ts.Node
    poly: cs.Poly
    conds: list[str]
    loops: list[LoopVar]
    x: cs.Poly = field(default_factory=dict)  # offset polynomials over loop counters
    y: cs.Poly = field(default_factory=dict)


@dataclass
class Plan:
    param: str
    elem_type: str
    sites: list[Site]
    skipped: list[tuple[int, str]]  # (line, why) for reads that stay global
    cx: int
    cy: int
    w: cs.Poly | None
    min_x: int
    max_x: int
    min_y: int
    max_y: int
    dims: int  # work-item dimensions the kernel uses

    def extent(self, lsz: tuple[int, int]) -> int:
        ex = (lsz[0] if self.cx else 1) + self.max_x - self.min_x
        ey = (lsz[1] if self.cy else 1) + self.max_y - self.min_y
        return ex * ey


# ---- analysis of the reads --------------------------------------------------------------------------------


def _loop_var(b: cs.Body, loop: ts.Node) -> LoopVar:
    if loop.type != "for_statement":
        raise Refused("it is inside a while/do loop")
    init, cond, upd = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or upd is None:
        raise Refused("it is inside a for loop without initialiser, condition or update")
    if init.type == "declaration":
        decls = init.children_by_field_name("declarator")
        if len(decls) != 1 or decls[0].type != "init_declarator":
            raise Refused("its loop declares more than one counter")
        name = b.src(decls[0].child_by_field_name("declarator"))  # type: ignore[arg-type]
        value = decls[0].child_by_field_name("value")
        first = init.child_by_field_name("declarator")
        type_text = " ".join(b.text[init.start_byte:first.start_byte].split())  # type: ignore[union-attr]
    else:
        raise Refused("its loop counter is declared outside the loop")
    lo_p = b.poly(value) if value is not None else None  # type: ignore[arg-type]
    lo = cs.constant(lo_p) if lo_p is not None else None
    if cond.type != "binary_expression" or b.src(cond.child_by_field_name("left")) != name:  # type: ignore[arg-type]
        raise Refused("its loop condition is not 'counter < bound'")
    op = b.src(cond.child_by_field_name("operator"))  # type: ignore[arg-type]
    hi_p = b.poly(cond.child_by_field_name("right"))  # type: ignore[arg-type]
    hi = cs.constant(hi_p) if hi_p is not None else None
    if op not in ("<", "<=") or lo is None or hi is None:
        raise Refused("its loop bounds are not compile-time constants")
    hi = hi + 1 if op == "<=" else hi
    if re.sub(r"\s", "", b.src(upd)) not in (f"{name}++", f"++{name}", f"{name}+=1"):
        raise Refused("its loop does not step by 1")
    body = loop.child_by_field_name("body")
    for n in cs.walk(body):  # type: ignore[arg-type]
        if n.type in ("assignment_expression", "update_expression"):
            t = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if t is not None and b.src(t) == name:
                raise Refused(f"its loop counter '{name}' is changed inside the loop")
    if hi <= lo:
        raise Refused("its loop never runs")
    return LoopVar(name, type_text or "int", lo, hi)


def _early_exit(b: cs.Body, stmt: ts.Node, in_loop: bool) -> str | None:
    """``if (C) return;`` (or ``continue;`` directly in a loop body) before a read: the read needs !C.
    Raise when an earlier statement can leave in another way."""
    jumps = [n for n in cs.walk(stmt) if n.type in ("return_statement", "break_statement",
                                                    "continue_statement", "goto_statement")]
    if not jumps:
        return None
    if stmt.type == "if_statement" and stmt.child_by_field_name("alternative") is None:
        cons = stmt.child_by_field_name("consequence")
        inner = cons.named_children if cons is not None and cons.type == "compound_statement" else [cons]
        ok = ("return_statement",) + (("continue_statement",) if in_loop else ())
        if len(inner) == 1 and inner[0] is not None and inner[0].type in ok and \
                (inner[0].type != "return_statement" or inner[0].named_child_count == 0):
            return "!" + b.src(stmt.child_by_field_name("condition"))  # type: ignore[arg-type]
    raise Refused(f"the statement at line {b.pos(stmt.start_byte)[0]} may leave early")


def _path(b: cs.Body, site: ts.Node) -> tuple[list[str], list[LoopVar]]:
    """The guard under which ``site`` executes and the loops around it (outermost first)."""
    conds: list[str] = []
    loops: list[LoopVar] = []
    node = site
    while node.id != b.body.id:
        parent = node.parent
        if parent is None:
            raise Refused("it is outside the kernel body")
        t = parent.type
        if t == "if_statement":
            cond = parent.child_by_field_name("condition")
            if parent.child_by_field_name("consequence") == node:
                conds.append(b.src(cond))  # type: ignore[arg-type]
            elif node.type == "else_clause" or parent.child_by_field_name("alternative") == node:
                conds.append("!" + b.src(cond))  # type: ignore[arg-type]
        elif t == "else_clause":
            pass
        elif t == "conditional_expression":
            cond = parent.child_by_field_name("condition")
            if parent.child_by_field_name("consequence") == node:
                conds.append("(" + b.src(cond) + ")")  # type: ignore[arg-type]
            elif parent.child_by_field_name("alternative") == node:
                conds.append("!(" + b.src(cond) + ")")  # type: ignore[arg-type]
        elif t == "binary_expression" and parent.child_by_field_name("right") == node:
            op = b.src(parent.child_by_field_name("operator"))  # type: ignore[arg-type]
            left = b.src(parent.child_by_field_name("left"))  # type: ignore[arg-type]
            if op == "&&":
                conds.append("(" + left + ")")
            elif op == "||":
                conds.append("!(" + left + ")")
        elif t in _LOOPS:
            if parent.child_by_field_name("body") != node:
                raise Refused("it is in a loop's header")
            loops.insert(0, _loop_var(b, parent))
        elif t in ("switch_statement", "case_statement", "labeled_statement"):
            raise Refused("it is inside a switch or after a label")
        elif t == "compound_statement":
            in_loop = parent.parent is not None and parent.parent.type in _LOOPS
            for sib in parent.named_children:
                if sib.start_byte >= node.start_byte:
                    break
                c = _early_exit(b, sib, in_loop)
                if c is not None:
                    conds.append(c)
        node = parent
    return conds, loops


_ALLOWED_TOKEN = re.compile(r"[A-Za-z_]\w*")


def _check_text(b: cs.Body, node_text: str, loop_names: set[str], what: str, seen: set[str] | None = None,
                ) -> set[str]:
    """Identifiers of ``node_text`` may be evaluated for another work-item: return the pure locals it needs
    (transitively); raise when it reads memory, calls a work-item function, or uses a changing local."""
    seen = seen if seen is not None else set()
    if "[" in node_text or re.search(r"(?<![=!<>])=(?!=)|\+\+|--", node_text):
        raise Refused(f"{what} reads memory or assigns")
    needed: set[str] = set()
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*(\()?", node_text):
        name, call = m.group(1), m.group(2)
        if call:
            if name == "get_global_id" or name in cs.UNIFORM_CALLS:
                continue
            raise Refused(f"{what} calls {name}()")
        if name in loop_names or name in seen:
            continue
        if name in b.locals:
            if not b.is_pure(name):
                raise Refused(f"{what} uses '{name}', which changes")
            seen.add(name)
            needed.add(name)
            init = b.src(b.locals[name].value)  # type: ignore[arg-type]
            needed |= _check_text(b, init, loop_names, f"'{name}'", seen)
            continue
        p = b.params.get(name)
        if p is not None and p.pointer:
            raise Refused(f"{what} uses the pointer '{name}'")
        # scalar arguments, macros, types and literals' suffixes are uniform
    return needed


def _decompose(site: Site, loop_names: set[str]) -> tuple[int, int, tuple[str, ...] | None, cs.Poly]:
    """``(cx, cy, W monomial, U)`` of one site, filling ``site.x``/``site.y``."""
    groups: dict[tuple[str, ...], cs.Poly] = {}
    for mono, c in site.poly.items():
        var = tuple(s for s in mono if s.startswith("@gid") or s in loop_names)
        uni = tuple(s for s in mono if not (s.startswith("@gid") or s in loop_names))
        groups.setdefault(uni, {})[var] = groups.get(uni, {}).get(var, 0) + c
    q1 = groups.pop((), {})
    moving = {u: q for u, q in groups.items() if cs.symbols(q)}
    if len(moving) > 1:
        raise Refused("its index has more than one row stride")
    w = next(iter(moving), None)
    qw = groups.pop(w, {}) if w is not None else {}
    u: cs.Poly = {uni: q.get((), 0) for uni, q in groups.items()}
    cx = q1.pop(("@gid0",), 0)
    cy = qw.pop(("@gid1",), 0)
    if w is None and q1.get(("@gid1",), 0) > 1:  # a compile-time row stride (`row * K`, K a macro)
        w, cy = (f"#{q1.pop(('@gid1',))}",), 1
    if cx not in (0, 1) or cy not in (0, 1):
        raise Refused("neighbouring work-items do not read neighbouring elements")
    for q in (q1, qw):
        if any(s.startswith("@gid") for s in cs.symbols(q)) or any(len(m) > 1 for m in q):
            raise Refused("its index mixes work-item indices in a way a tile cannot follow")
    site.x, site.y = q1, qw
    return cx, cy, w, u


def _range(p: cs.Poly, loops: list[LoopVar]) -> tuple[int, int]:
    lo = hi = p.get((), 0)
    for lv in loops:
        c = p.get((lv.name,), 0)
        lo += min(c * lv.lo, c * (lv.hi - 1))
        hi += max(c * lv.lo, c * (lv.hi - 1))
    return lo, hi


def plan(b: cs.Body, param: str) -> Plan:
    p = b.params.get(param)
    if p is None or not p.pointer:
        raise Refused(f"'{param}' is not a buffer parameter of the kernel")
    if p.address_space not in ("global", "constant"):
        raise Refused(f"'{param}' is not in global or constant memory")
    if re.search(r"\bget_global_id\s*\(\s*2\s*\)", b.src(b.body)):
        raise Refused("the kernel is 3-D; the tile covers 1-D and 2-D work-groups")
    sites: list[Site] = []
    skipped: list[tuple[int, str]] = []
    for n in cs.walk(b.body):
        if n.type == "identifier" and b.src(n) == param:
            par = n.parent
            if par is None or par.type != "subscript_expression" or par.child_by_field_name("argument") != n:
                raise Refused(f"'{param}' is used other than by indexing (line {b.pos(n.start_byte)[0]}): "
                              "it may be written or aliased")
            up = par.parent
            assigned = up is not None and up.type == "assignment_expression" \
                and up.child_by_field_name("left") == par
            if up is not None and (assigned or up.type == "update_expression"
                                   or (up.type == "pointer_expression" and b.src(up).startswith("&"))):
                raise Refused(f"'{param}' is written in the kernel (line {b.pos(n.start_byte)[0]}): a tile "
                              "would go stale")
            index = par.child_by_field_name("index")
            line = b.pos(par.start_byte)[0]
            try:
                poly = b.poly(index) if index is not None else None
                if poly is None:
                    raise Refused("its index is not a sum of products of names and integers")
                conds, loops = _path(b, par)
                names = {lv.name for lv in loops}
                for c in conds:
                    _check_text(b, c, names, "its guard")
                _check_text(b, b.src(index), names, "its index")  # type: ignore[arg-type]
                sites.append(Site(par, index, poly, conds, loops))  # type: ignore[arg-type]
            except Refused as e:
                skipped.append((line, str(e)))
    if not sites:
        raise Refused(f"no read of '{param}' can be served from a tile"
                      + (f" ({skipped[0][1]}, line {skipped[0][0]})" if skipped else ""))
    shape = None
    kept: list[Site] = []
    for s in sites:
        try:
            d = _decompose(s, {lv.name for lv in s.loops})
        except Refused as e:
            skipped.append((b.pos(s.node.start_byte)[0], str(e)))
            continue
        if shape is None:
            shape = d
        if d != shape:
            skipped.append((b.pos(s.node.start_byte)[0], "its index has another form than the first read"))
            continue
        kept.append(s)
    if shape is None or not kept:
        raise Refused(f"no read of '{param}' can be served from a tile "
                      f"({skipped[-1][1]}, line {skipped[-1][0]})")
    cx, cy, w, _u = shape
    xs = [_range(s.x, s.loops) for s in kept]
    ys = [_range(s.y, s.loops) for s in kept]
    min_x, max_x = min(a for a, _ in xs), max(c for _, c in xs)
    min_y, max_y = min(a for a, _ in ys), max(c for _, c in ys)
    distinct = {(tuple(sorted(s.x.items())), tuple(sorted(s.y.items()))) for s in kept}
    reuse = len(distinct) > 1 or max_x > min_x or max_y > min_y or not cx or (b_dims(b) > 1 and not cy)
    if not reuse:
        raise Refused(f"each work-item reads a different element of '{param}': nothing to share")
    return Plan(param, p.type, kept, skipped, cx, cy, _w_poly(w), min_x, max_x, min_y, max_y, b_dims(b))


def _w_poly(w: tuple[str, ...] | None) -> cs.Poly | None:
    if w is None:
        return None
    if len(w) == 1 and w[0].startswith("#"):
        return {(): int(w[0][1:])}
    return {w: 1}


def b_dims(b: cs.Body) -> int:
    return 2 if re.search(r"\bget_(global|local|group)_id\s*\(\s*1\s*\)", b.src(b.body)) else 1


# ---- code generation --------------------------------------------------------------------------------------


def capacity(pl: Plan, max_group: int, scenario_local: tuple[int, ...] | None) -> tuple[int, int]:
    """(tile elements for every work-group shape up to ``max_group`` items, for the scenario's shape)."""
    full = max(pl.extent(s) for s in _shapes(pl.dims, max_group))
    sl = scenario_local or ((256,) if pl.dims == 1 else (16, 16))
    scen = pl.extent((sl[0], sl[1] if len(sl) > 1 else 1))
    return full, scen


def _wrapped(text: str) -> bool:
    """``(a && b)``: one pair of parentheses around the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(text) - 1
    return False


def _guard(conds: list[str]) -> str:
    """The conditions as one ``if`` condition, parenthesised: ``(i > 0 && i < n - 1)``."""
    if len(conds) == 1:
        return conds[0] if _wrapped(conds[0]) else f"({conds[0]})"
    return "(" + " && ".join(c if _wrapped(c) else f"({c})" for c in conds) + ")" if conds else ""


def _plus(base: str, p: cs.Poly) -> str:
    """``base + p`` without the ``+ 0`` and ``+ -1`` a generator leaves: ``lid + k``, ``lid - 1``."""
    if not p:
        return base
    text = cs.to_c(p)
    return f"{base} - {text[1:]}" if text.startswith("-") else f"{base} + {text}"


def _shift(p: cs.Poly, by: int) -> cs.Poly:
    out = dict(p)
    out[()] = out.get((), 0) + by
    return {m: c for m, c in out.items() if c}


_ROLES = ("tile", "w", "h", "use", "cap", "x0", "y0", "lw", "lh", "tx", "ty", "gx", "gy", "t", "loaded",
          "wx", "wy")


def names(b: cs.Body, param: str) -> dict[str, str]:
    """The generated code's names, after the buffer (``tile_a`` for ``a``) as a person would write them;
    where one is already a name in the file, all of them get the buffer's name as a prefix instead."""
    n = {"tile": f"tile_{param}", "w": f"tile_{param}_w", "h": f"tile_{param}_h", "use": f"use_tile_{param}",
         "cap": f"TILE_{param.upper()}_CAPACITY", "x0": "group_x0", "y0": "group_y0", "lw": "group_w",
         "lh": "group_h", "tx": "tx", "ty": "ty", "gx": "gx", "gy": "gy", "t": "t", "loaded": "loaded",
         "wx": "wx", "wy": "wy"}
    taken = set(re.findall(r"[A-Za-z_]\w*", b.text))
    if taken & set(n.values()):
        n = {k: v if k in ("tile", "w", "h", "use", "cap") else f"{param}_{v}" for k, v in n.items()}
    while taken & set(n.values()):
        n = {k: f"{v}_" for k, v in n.items()}
    return n


def _shapes(dims: int, max_group: int) -> list[tuple[int, int]]:
    """The work-group shapes a tile is sized for: every power-of-two split of ``max_group`` in 2-D."""
    if dims == 1:
        return [(max_group, 1)]
    out, a = [], 1
    while a <= max_group:
        out.append((a, max(1, max_group // a)))
        a *= 2
    return out


def _capacity_text(pl: Plan, cap: int, max_group: int | None) -> tuple[str, str]:
    """The tile's capacity as the sum it is, and what it is for: ``1024 + 7``, the largest work-group."""
    hx, hy = pl.max_x - pl.min_x, pl.max_y - pl.min_y
    if max_group is None:
        return str(cap), "elements: the work-group with its halo"
    for a, c in _shapes(pl.dims, max_group):
        bx, by = (a if pl.cx else 1), (c if pl.cy else 1)
        if (bx + hx) * (by + hy) == cap:
            where = f"a work-group of up to {max_group} work-items with its halo"
            if not pl.cy and not hy:
                return (f"{bx} + {hx}" if hx else str(bx)), where
            return f"({bx} + {hx}) * ({by} + {hy})", where
    return str(cap), "the scenario's work-group with its halo"


def generate(b: cs.Body, pl: Plan, cap: int, fallback: bool = True,
             settle_first: bool = False, max_group: int | None = None) -> list[TextEdit]:
    """Edits: the tile block after the body's ``{`` and each served read. ``fallback=False`` reads the tile
    unconditionally (what runs when the tile fits: the variant the prediction analyses).

    ``settle_first`` (prediction only, not a correct kernel): the loader tries only the first read site,
    at its loops' first counter values. The analysis counts every site's check for every element, but a
    work-item that runs its loader on its own (``ProfileFacts.scalar_loop_regions``: PoCL) stops at the
    first site that serves the element, which for all but the halo is the first one tried."""
    n = names(b, pl.param)
    gid = {0: f"((size_t){n['wx']})", 1: f"((size_t){n['wy']})"}
    two = pl.dims > 1 or bool(pl.cy) or pl.max_y > pl.min_y
    ind = "    "
    span_x, span_y = pl.max_x - pl.min_x, pl.max_y - pl.min_y
    size, meaning = _capacity_text(pl, cap, max_group)
    L: list[str] = [f"/* clperf: '{pl.param}' staged in __local memory once per work-group (tile + halo) */",
                    f"enum {{ {n['cap']} = {size} }}; /* {meaning} */",
                    f"__local {pl.elem_type} {n['tile']}[{n['cap']}];",
                    f"const int {n['w']} = " + _extent_text(0, pl.cx, span_x)]
    if two:
        L.append(f"const int {n['h']} = " + _extent_text(1, pl.cy, span_y))
    L.append(f"const int {n['use']} = {n['w']}{' * ' + n['h'] if two else ''} <= {n['cap']};")
    L.append(f"if ({n['use']}) {{")
    L.append(ind + f"const int {n['x0']} = (int)(get_global_id(0) - get_local_id(0)), "
             f"{n['lw']} = (int)get_local_size(0);")
    if two:
        L.append(ind + f"const int {n['y0']} = (int)(get_global_id(1) - get_local_id(1)), "
                 f"{n['lh']} = (int)get_local_size(1);")
    # rows by local id 1, columns by local id 0: no division by the (run-time) tile width, about 20
    # instructions per element on a GPU
    depth = 1
    if two:
        L.append(ind + f"for (int {n['ty']} = (int)get_local_id(1); {n['ty']} < {n['h']}; "
                 f"{n['ty']} += {n['lh']}) {{")
        L.append(ind * 2 + f"const int {n['gy']} = {_offset(n['y0'] if pl.cy else '', pl.min_y, n['ty'])};")
        depth = 2
    L.append(ind * depth + f"for (int {n['tx']} = (int)get_local_id(0); {n['tx']} < {n['w']}; "
             f"{n['tx']} += {n['lw']}) {{")
    body: list[str] = [f"const int {n['gx']} = {_offset(n['x0'] if pl.cx else '', pl.min_x, n['tx'])};"]
    if two:
        body.append(f"const int {n['t']} = {n['ty']} * {n['w']} + {n['tx']};")
    body.append(f"int {n['loaded']} = 0;")
    sites = pl.sites[:1] if settle_first else pl.sites
    for i, s in enumerate(sites):
        body += _site_block(b, pl, s, n, gid, settle_first, first_site=i == 0, two=two)
    L += [ind * (depth + 1) + line for line in body]
    while depth > 0:
        L.append(ind * depth + "}")
        depth -= 1
    L.append("}")
    L.append("barrier(CLK_LOCAL_MEM_FENCE);")
    # where the block goes: right after the body's opening brace, indented like the body's first statement
    first = b.body.named_children[0] if b.body.named_children else None
    col = b.pos(first.start_byte)[1] if first is not None else b.pos(b.body.start_byte)[1] + 4
    pad = " " * (col - 1)
    open_line, open_col = b.pos(b.body.start_byte)
    edits = [TextEdit(open_line, open_col + 1, open_line, open_col + 1,
                      "\n" + "\n".join(pad + x if x else x for x in L))]
    for s in pl.sites:
        tx = _plus("(int)get_local_id(0)" if pl.cx else "", _shift(s.x, -pl.min_x)).lstrip(" +") or "0"
        if tx.startswith("- "):
            tx = "-" + tx[2:]
        if two:
            ty = _plus("(int)get_local_id(1)" if pl.cy else "", _shift(s.y, -pl.min_y)).lstrip(" +") or "0"
            if ty.startswith("- "):
                ty = "-" + ty[2:]
            idx = f"({ty}) * {n['w']} + {tx}" if " " in ty else f"{ty} * {n['w']} + {tx}"
        else:
            idx = tx
        tile = f"{n['tile']}[{idx}]"
        new = f"({n['use']} ? {tile} : {b.src(s.node)})" if fallback else tile
        l0, c0 = b.pos(s.node.start_byte)
        l1, c1 = b.pos(s.node.end_byte)
        edits.append(TextEdit(l0, c0, l1, c1, new))
    return edits


def _extent_text(dim: int, moves: int, span: int) -> str:
    """The tile's width (``dim`` 0) or height: the work-group's size plus the halo, or a fixed span."""
    return f"(int)get_local_size({dim}) + {span};" if moves else f"{span + 1};"


def _minus(var: str, p: cs.Poly) -> str:
    """``var - (p)`` as a person writes it: ``gx - k``, ``gx + 1``, ``gx``."""
    if not p:
        return var
    c = cs.constant(p)
    if c is not None:
        return f"{var} - {c}" if c > 0 else f"{var} + {-c}"
    text = cs.to_c(p)
    return f"{var} - {text}" if len(p) == 1 and not text.startswith("-") else f"{var} - ({text})"


def _solve_counters(pl: Plan, s: Site, n: dict[str, str], emit: Callable[..., None]) -> dict[int, str]:
    """A coordinate ``±k + c`` along a dimension the work-item does not move gives the counter ``k``:
    declare it, and open its range check. Returns dimension -> counter."""
    solved: dict[int, str] = {}
    by_name = {lv.name: lv for lv in s.loops}
    for d, (c, p) in {0: (pl.cx, s.x), 1: (pl.cy, s.y)}.items():
        loop_terms = [m for m in p if m]
        if not c and len(loop_terms) == 1 and loop_terms[0][0] in by_name and abs(p[loop_terms[0]]) == 1 \
                and loop_terms[0][0] not in solved.values():
            lv = by_name[loop_terms[0][0]]
            a, rest = p[loop_terms[0]], p.get((), 0)
            value = _minus(n["gx" if d == 0 else "gy"], {(): rest} if rest else {})
            emit(f"const {lv.type} {lv.name} = {value if a == 1 else f'-({value})'};")
            emit(f"if ({lv.name} >= {lv.lo} && {lv.name} < {lv.hi}) {{", True)
            solved[d] = lv.name
    return solved


def _offset(base: str, lo: int, counter: str) -> str:
    """``base + lo + counter`` written as a person would: ``group_x0 - 1 + tx``, ``tx``."""
    parts = [base] if base else []
    if lo:
        parts.append(f"- {-lo}" if lo < 0 else f"+ {lo}")
    parts.append(f"+ {counter}")
    text = " ".join(parts)
    if text.startswith("+ "):
        text = text[2:]
    elif text.startswith("- "):
        text = "-" + text[2:]
    return text


def _needs(b: cs.Body, s: Site) -> tuple[set[str], dict[int, bool]]:
    """The pure locals a site's guard and index need, and the work-item dimensions they depend on."""
    loop_names = {lv.name for lv in s.loops}
    needed: set[str] = set()
    texts = [*s.conds, b.src(s.index)]
    for t in texts:
        needed |= _check_text(b, t, loop_names, "guard")
    uses = " ".join(texts + [b.src(b.locals[x].value) for x in needed])  # type: ignore[arg-type]
    dim_used = {d: bool(re.search(rf"\bget_global_id\s*\(\s*{d}\s*\)", uses)) for d in (0, 1)}
    for name in needed:  # an index variable stands for get_global_id(d) of its dimension
        for d in (0, 1):
            if b.is_pure(name) and b.poly(b.locals[name].value) == {(cs.gid_symbol(d),): 1}:  # type: ignore[arg-type]
                dim_used[d] = True
    return needed, dim_used


def _site_block(b: cs.Body, pl: Plan, s: Site, n: dict[str, str], gid: dict[int, str],
                first: bool = False, *, first_site: bool = False, two: bool = True) -> list[str]:
    """Does a work-item of this group read tile element (gx, gy) through this site? Then load it.

    Unknowns: the work-item (wx, wy) and the loop counters. A coordinate ``±k + c`` along a dimension the
    work-item does not move gives ``k`` directly; remaining counters are looped over; ``w`` along a
    dimension it moves is solved; along a dimension it does not move, ``w`` only matters to the guard
    (any work-item of the group will do, so it is looped over only when the guard uses it)."""
    needed, dim_used = _needs(b, s)
    out: list[str] = [] if first_site else [f"if (!{n['loaded']}) {{"]
    pad = "    "
    depth = 0 if first_site else 1
    opened = depth

    def emit(line: str, opens: bool = False) -> None:
        nonlocal depth
        out.append(pad * depth + line)
        if opens:
            depth += 1

    coords = {0: (pl.cx, s.x), 1: (pl.cy, s.y)}
    solved = _solve_counters(pl, s, n, emit)  # dimension -> loop counter solved from it
    for lv in s.loops:
        if lv.name in solved.values():
            continue
        if first:
            emit(f"const {lv.type} {lv.name} = {lv.lo};")
        else:
            emit(f"for ({lv.type} {lv.name} = {lv.lo}; {lv.name} < {lv.hi} && !{n['loaded']}; "
                 f"{lv.name}++) {{", True)
    checks: list[str] = []
    free: list[int] = []
    for d, (c, p) in coords.items():  # the reading work-item's index where the address gives it
        var = n["gx" if d == 0 else "gy"]
        w, base, size = n["wx" if d == 0 else "wy"], n["x0" if d == 0 else "y0"], n["lw" if d == 0 else "lh"]
        if c:
            emit(f"const int {w} = {_minus(var, p)};")
            checks.append(f"{w} >= {base} && {w} < {base} + {size}")
        else:
            single = (pl.max_x == pl.min_x) if d == 0 else (pl.max_y == pl.min_y)
            if d not in solved and not single:  # a tile one element deep along d: always equal
                checks.append(f"({cs.to_c(p)}) == {var}")
            if dim_used[d]:
                free.append(d)
    if checks:
        emit(f"if ({' && '.join(checks)}) {{", True)
    for d in free:  # the guard depends on a dimension the address does not: any work-item of the group
        w, base, size = n["wx" if d == 0 else "wy"], n["x0" if d == 0 else "y0"], n["lw" if d == 0 else "lh"]
        if first:
            emit(f"const int {w} = {base};")
        else:
            emit(f"for (int {w} = {base}; {w} < {base} + {size} && !{n['loaded']}; {w}++) {{", True)
    for name in sorted(needed, key=lambda x: _declared_at(b.locals[x])):
        loc = b.locals[name]
        ty = re.sub(r"\bconst\b\s*", "", loc.type).strip() or "int"
        emit(f"const {ty} {name} = {cs.replace_gid(b.src(loc.value), gid)};")  # type: ignore[arg-type]
    slot = n["t"] if two else n["tx"]
    load = f"{n['tile']}[{slot}] = {pl.param}[{cs.replace_gid(b.src(s.index), gid)}];"
    guard = cs.replace_gid(_guard(s.conds), gid)
    if guard:
        emit(f"if {guard} {{ {load} {n['loaded']} = 1; }}")
    else:
        emit(f"{load} {n['loaded']} = 1;")
    while depth > opened:
        depth -= 1
        out.append(pad * depth + "}")
    if not first_site:
        out.append("}")
    return out


def _declared_at(loc: cs.Local) -> tuple[int, int]:
    """Source order of a local, also among several declared in one statement (``int x = .., y = ..;``):
    the set the names come from has no order of its own, and the text must not depend on the hash seed."""
    return loc.decl.start_byte, loc.value.start_byte if loc.value is not None else 0


def variables_used(pl: Plan) -> list[str]:
    return sorted({lv.name for s in pl.sites for lv in s.loops})

