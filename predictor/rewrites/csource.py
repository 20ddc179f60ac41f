"""The kernel body as a tree: what the rewrites need to know about the C source to change it safely.

tree-sitter's C grammar parses OpenCL C once the address-space qualifiers and comments are blanked; the
tree comes from ``frontend.parse_tree``, so a node's ``start_byte``/``end_byte`` are character offsets into
the user's text (a non-ASCII character is one byte there) and a rewrite never counts bytes. On top of the
tree this module answers the questions every rewrite asks: which locals are *pure* (declared once with an
initialiser, never assigned), which of them are work-item indices (``int i = get_global_id(0)``), which
identifiers are assigned anywhere, and what an index expression is as a polynomial over identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter as ts

from clperf.core import frontend

Poly = dict[tuple[str, ...], int]  # sorted tuple of symbols -> integer coefficient; () is the constant
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+?)[ \t]*$", re.M)
_GID = re.compile(r"\bget_global_id\s*\(\s*([012])\s*\)")
# builtins whose value is the same for every work-item of a launch (safe inside a guard evaluated for
# another work-item) and pure math a guard may use
UNIFORM_CALLS = {"get_global_size", "get_local_size", "get_num_groups", "get_work_dim", "get_global_offset",
                 "min", "max", "abs", "clamp", "select", "mad24", "mul24"}


def gid_symbol(dim: int) -> str:
    return f"@gid{dim}"


@dataclass(frozen=True)
class Local:
    name: str
    type: str  # declared type text ("const int", "size_t")
    value: ts.Node | None  # the initialiser
    decl: ts.Node  # the declaration statement


@dataclass
class Body:
    """One kernel's source tree plus what is known about its names."""

    text: str  # the user's text; node offsets index it (characters)
    fn: ts.Node
    body: ts.Node
    params: dict[str, frontend.Param]
    locals: dict[str, Local] = field(default_factory=dict)
    declared_twice: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)  # assigned or incremented anywhere in the body
    macros: dict[str, str] = field(default_factory=dict)

    def src(self, node: ts.Node) -> str:
        return self.text[node.start_byte:node.end_byte]

    def pos(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset (a node's ``start_byte``)."""
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def is_pure(self, name: str) -> bool:
        loc = self.locals.get(name)
        return (loc is not None and loc.value is not None and name not in self.assigned
                and name not in self.declared_twice)

    def index_var(self, dim: int) -> Local | None:
        """A pure local whose value is exactly ``get_global_id(dim)`` (casts allowed)."""
        for loc in self.locals.values():
            if self.is_pure(loc.name) and loc.value is not None:
                p = self.poly(loc.value, expand=False)
                if p == {(gid_symbol(dim),): 1}:
                    return loc
        return None

    def _identifier_poly(self, node: ts.Node, expand: bool, depth: int) -> Poly | None:
        """A name: a pure local's value (``expand``), an integer macro's, else the name itself."""
        name = self.src(node)
        if expand and self.is_pure(name):
            return self.poly(self.locals[name].value, expand, depth + 1)  # type: ignore[arg-type]
        if name in self.macros and name not in self.locals and name not in self.params:
            mv = macro_value(self.macros[name])
            if mv is not None:
                return {(): mv} if mv else {}
        return {(name,): 1}

    def _call_poly(self, node: ts.Node) -> Poly | None:
        """``get_global_id(d)`` as the symbol ``@gid{d}``; any other call is not a polynomial."""
        fn = self.src(node.child_by_field_name("function")).strip()  # type: ignore[arg-type]
        args = node.child_by_field_name("arguments")
        if fn == "get_global_id" and args is not None:
            m = re.fullmatch(r"\(\s*([012])\s*\)", self.src(args))
            if m:
                return {(gid_symbol(int(m.group(1))),): 1}
        return None

    def poly(self, node: ts.Node, expand: bool = True, _depth: int = 0) -> Poly | None:
        """``node`` as a polynomial over identifiers with integer coefficients, or None when it is not one
        (a division, a load, a call). Pure locals are expanded (``expand``); ``get_global_id(d)`` is the
        symbol ``@gid{d}``; object-like ``#define`` macros with integer bodies are their values."""
        if _depth > 40:
            return None
        t = node.type
        if t == "number_literal":
            s = self.src(node).rstrip("uUlL")
            try:
                return {(): int(s, 0)} if int(s, 0) else {}
            except ValueError:
                return None
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children]
            return self.poly(inner[0], expand, _depth + 1) if len(inner) == 1 else None
        if t == "cast_expression":
            ty = node.child_by_field_name("type")
            if ty is None or not re.fullmatch(r"\s*(const\s+)?(unsigned\s+)?(int|uint|long|ulong|size_t|"
                                              r"ptrdiff_t|short|ushort)\s*", self.src(ty)):
                return None
            value = node.child_by_field_name("value")
            return None if value is None else self.poly(value, expand, _depth + 1)
        if t == "identifier":
            return self._identifier_poly(node, expand, _depth)
        if t == "call_expression":
            return self._call_poly(node)
        if t == "unary_expression":
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if op is None or arg is None:
                return None
            p = self.poly(arg, expand, _depth + 1)
            if p is None:
                return None
            o = self.src(op)
            return {k: -v for k, v in p.items()} if o == "-" else (p if o == "+" else None)
        if t == "binary_expression":
            bop = self.src(node.child_by_field_name("operator"))  # type: ignore[arg-type]
            a = self.poly(node.child_by_field_name("left"), expand, _depth + 1)  # type: ignore[arg-type]
            b = self.poly(node.child_by_field_name("right"), expand, _depth + 1)  # type: ignore[arg-type]
            if a is None or b is None:
                return None
            if bop == "+":
                return add(a, b)
            if bop == "-":
                return add(a, {k: -v for k, v in b.items()})
            if bop == "*":
                return mul(a, b)
        return None


def add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
        if not out[k]:
            del out[k]
    return out


def mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ka, va in a.items():
        for kb, vb in b.items():
            k = tuple(sorted(ka + kb))
            out[k] = out.get(k, 0) + va * vb
            if not out[k]:
                del out[k]
    return out


def symbols(p: Poly) -> set[str]:
    return {s for mono in p for s in mono}


def constant(p: Poly) -> int | None:
    if not p:
        return 0
    return p.get(()) if set(p) == {()} else None


def macro_value(body: str) -> int | None:
    body = body.strip()
    m = re.fullmatch(r"\(?\s*(-?\s*(?:0x[0-9a-fA-F]+|\d+))[uUlL]*\s*\)?", body)
    return int(m.group(1).replace(" ", ""), 0) if m else None


def to_c(p: Poly) -> str:
    """A polynomial as C text (``2*k + w*ky - 1``); ``0`` when empty."""
    if not p:
        return "0"
    parts = []
    for mono, c in sorted(p.items(), key=lambda kv: (len(kv[0]) == 0, kv[0])):
        names = [s.replace("@gid", "get_global_id(") + (")" if s.startswith("@gid") else "") for s in mono]
        if not names:
            term = str(abs(c))
        else:
            term = "*".join(names) if abs(c) == 1 else f"{abs(c)}*" + "*".join(names)
        parts.append(("- " if c < 0 else "+ ") + term)
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def walk(node: ts.Node) -> Iterator[ts.Node]:
    yield node
    for c in node.children:
        yield from walk(c)


def parse_kernel(text: str, kernel: str) -> Body | None:
    """The tree of ``kernel``'s body, or None when it cannot be found (unfinished code)."""
    clean, tree = frontend.parse_tree(text)
    kernels = {k.name: k for k in frontend.parse(text)}
    if kernel not in kernels:
        return None
    for fn in walk(tree.root_node):
        if fn.type != "function_definition":
            continue
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        name = decl.child_by_field_name("declarator") if decl is not None else None
        body = fn.child_by_field_name("body")
        if name is None or body is None:
            continue
        if text[name.start_byte:name.end_byte] != kernel:
            continue
        b = Body(text, fn, body, {p.name: p for p in kernels[kernel].params})
        b.macros = {m.group(1): m.group(2) for m in _DEFINE.finditer(clean)}
        _collect(b)
        return b
    return None


def _collect(b: Body) -> None:
    for n in walk(b.body):
        if n.type == "declaration":
            first = n.child_by_field_name("declarator")
            type_text = b.text[n.start_byte:first.start_byte] if first is not None else ""
            for d in n.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
                else:
                    target, value = d, None
                if target is None or target.type != "identifier":
                    continue  # arrays, pointers: never pure scalars
                name = b.src(target)
                if name in b.locals:
                    b.declared_twice.add(name)
                b.locals[name] = Local(name, " ".join(type_text.split()), value, n)
        elif n.type in ("assignment_expression", "update_expression"):
            target = n.child_by_field_name("left") or n.child_by_field_name("argument")
            while target is not None and target.type == "parenthesized_expression":
                target = target.named_children[0] if target.named_children else None
            if target is not None and target.type == "identifier":
                b.assigned.add(b.src(target))
        elif n.type == "pointer_expression" and b.src(n).startswith("&"):
            arg = n.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier":
                b.assigned.add(b.src(arg))  # its address escapes: it may change


def replace_gid(text: str, names: dict[int, str]) -> str:
    """``get_global_id(d)`` -> the name standing for it in generated code."""
    return _GID.sub(lambda m: names.get(int(m.group(1)), m.group(0)), text)
