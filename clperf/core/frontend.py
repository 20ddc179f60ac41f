"""Tolerant parse of OpenCL C: kernels, parameters, loops and their lines, on half-typed code.

Runs on every keystroke in the server, so it never compiles anything. tree-sitter's C grammar does the
work once OpenCL's qualifiers are blanked out with spaces (same length). tree-sitter counts bytes, Python
counts characters: ``tree_text`` is the one place they meet, where every character becomes one byte, so
every offset and column handed out (here and in ``clperf.predictor.rewrites``) counts characters. Kernel
headers that tree-sitter cannot place (an unfinished parameter list) are still found by a scan of the
text. Lines and columns are 1-based.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter as ts
import tree_sitter_c as tsc

from clperf.core.records import AddressSpace, Param
from clperf.core.scenario import DIRECTIVE

_QUALIFIERS = re.compile(
    r"\b(__kernel|kernel|__global|global|__local|local|__constant|constant|__private|private|"
    r"__read_only|read_only|__write_only|write_only|__read_write|read_write)\b"
)
_SPACE = {
    "__global": "global", "global": "global", "__local": "local", "local": "local",
    "__constant": "constant", "constant": "constant", "__private": "private", "private": "private",
}
_KERNEL_HEAD = re.compile(  # `__kernel void name(` or, as some suites write it, `void __kernel name(`
    r"(?:\b(?:__kernel|kernel)\b(?:\s+__attribute__\s*\(\(.*?\)\))*\s+void"
    r"|\bvoid\s+(?:__kernel|kernel)\b(?:\s+__attribute__\s*\(\(.*?\)\))*)\s+([A-Za-z_]\w*)\s*\(", re.S
)
_UNROLL = re.compile(r"^\s*#\s*pragma\s+unroll(?:\s*\(?\s*(\d+)\s*\)?)?\s*$")
_WORK_ITEM_FN = re.compile(r"\bget_(?:global|local|group)_id\s*\(\s*(\d)\s*\)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@dataclass(frozen=True)
class Loop:
    line: int  # line of the for/while/do keyword
    end_line: int
    column: int
    depth: int  # 1 for an outermost loop
    kind: str  # "for" | "while" | "do"
    unroll: int | None  # N of a `#pragma unroll N` right above; 0 for a bare `#pragma unroll`
    pragma_line: int | None


@dataclass(frozen=True)
class Kernel:
    name: str
    line: int  # line of the kernel's name
    column: int  # column of the kernel's name
    end_line: int  # closing brace (or the last line when unfinished)
    params: tuple[Param, ...]
    loops: tuple[Loop, ...]
    dims_used: int  # 1 + highest work-item dimension the body asks for (at least 1)
    directive: str | None  # text of the `// clperf:` lines right above, joined
    directive_line: int | None
    header_line: int  # first line of the kernel's declaration (where a directive goes above)
    complete: bool  # False when tree-sitter could not find a body


@lru_cache(maxsize=1)
def _parser() -> ts.Parser:
    return ts.Parser(ts.Language(tsc.language()))


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _blank_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _one_byte(m: re.Match[str]) -> str:
    # a space stays a space (a no-break space between tokens, a BOM); anything else is a name character,
    # as clang reads a UTF-8 identifier, so a token keeps its extent
    ch = m.group(0)
    return " " if ch.isspace() or ch == "\ufeff" else "_"


def tree_text(text: str) -> tuple[str, bytes]:
    """What tree-sitter parses for ``text``: the text with comments blanked (for scans), and the bytes for
    tree-sitter, qualifiers blanked too and every non-ASCII character one ASCII byte. A node's
    ``start_byte``/``end_byte`` are then character offsets into ``text`` and its points' columns are
    0-based character columns."""
    clean = _blank_comments(text)
    blanked = _QUALIFIERS.sub(_blank, clean)
    if not blanked.isascii():
        blanked = _NON_ASCII.sub(_one_byte, blanked)
    return clean, blanked.encode("ascii")


def parse_tree(text: str) -> tuple[str, ts.Tree]:
    """``text`` with comments blanked, and its tree (offsets in characters, see ``tree_text``)."""
    clean, data = tree_text(text)
    return clean, _parser().parse(data)


def parse_param(text: str) -> Param | None:
    """``'__global const float4 * restrict a'`` -> Param(a, float4, global, pointer, const)."""
    text = " ".join(text.replace("*", " * ").split())
    if not text or text == "void":
        return None
    tokens = text.split(" ")
    name = tokens[-1].strip("[]")
    m = re.match(r"[A-Za-z_]\w*", name)
    if not m:
        return None
    name = m.group(0)
    space: AddressSpace = "private"
    const = False
    pointer = "*" in tokens or text.endswith("]")
    type_tokens: list[str] = []
    for tok in tokens[:-1]:
        if tok in _SPACE:
            space = _SPACE[tok]  # type: ignore[assignment]
        elif tok == "const":
            const = True
        elif tok in ("*", "restrict", "__restrict", "volatile", "__read_only", "read_only",
                     "__write_only", "write_only", "__read_write", "read_write"):
            continue
        else:
            type_tokens.append(tok)
    type_name = " ".join(type_tokens) or "int"
    if type_name.startswith("unsigned "):
        type_name = {"unsigned int": "uint", "unsigned char": "uchar", "unsigned short": "ushort",
                     "unsigned long": "ulong"}.get(type_name, type_name)
    elif type_name == "unsigned":
        type_name = "uint"
    if pointer and space == "private":
        space = "global"  # OpenCL 2.0 generic pointers in a kernel signature point to global memory
    return Param(name, type_name, space, pointer, const)


def _split_params(text: str) -> list[str]:
    depth = 0
    cur: list[str] = []
    out: list[str] = []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p for p in (s.strip() for s in out) if p]


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _loops(body: ts.Node, lines: list[str]) -> list[Loop]:
    out: list[Loop] = []

    def walk(node: ts.Node, depth: int) -> None:
        for child in node.children:
            kind = {"for_statement": "for", "while_statement": "while", "do_statement": "do"}.get(child.type)
            if kind:
                line = child.start_point[0] + 1
                unroll, pragma_line = _pragma_above(lines, line)
                out.append(Loop(line, child.end_point[0] + 1, child.start_point[1] + 1, depth + 1, kind,
                                unroll, pragma_line))
                walk(child, depth + 1)
            else:
                walk(child, depth)

    walk(body, 0)
    return out


def _pragma_above(lines: list[str], loop_line: int) -> tuple[int | None, int | None]:
    i = loop_line - 2
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i >= 0:
        m = _UNROLL.match(lines[i])
        if m:
            return (int(m.group(1)) if m.group(1) else 0), i + 1
    return None, None


def _directive(lines: list[str], header_line: int) -> tuple[str | None, int | None]:
    texts: list[str] = []
    first: int | None = None
    i = header_line - 2
    while i >= 0:
        stripped = lines[i].strip()
        m = DIRECTIVE.match(lines[i])
        if m:
            texts.insert(0, m.group(1).strip())
            first = i + 1
        elif not stripped.startswith("//"):
            break
        i -= 1
    return (" ".join(texts) if texts else None), first


def parse(text: str) -> list[Kernel]:
    """Every kernel in ``text``, in source order. Never raises on bad input."""
    clean, tree = parse_tree(text)
    lines = text.split("\n")
    bodies: dict[int, ts.Node] = {}  # offset of the kernel name (characters) -> function body

    def collect(node: ts.Node) -> None:
        for child in node.children:
            if child.type == "function_definition":
                body = child.child_by_field_name("body")
                decl = child.child_by_field_name("declarator")
                while decl is not None and decl.type not in ("function_declarator",):
                    decl = decl.child_by_field_name("declarator")
                if body is not None and decl is not None:
                    name = decl.child_by_field_name("declarator")
                    if name is not None:
                        bodies[name.start_byte] = body
            elif child.type in ("ERROR", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                                "linkage_specification", "declaration_list"):
                collect(child)

    collect(tree.root_node)
    kernels: list[Kernel] = []
    for m in _KERNEL_HEAD.finditer(clean):
        name = m.group(1)
        name_off = m.start(1)
        line, col = _line_col(text, name_off)
        header_line, _ = _line_col(text, m.start())
        # parameter list: up to the matching ')' or the end of the text
        depth, j = 1, m.end()
        while j < len(clean) and depth:
            depth += {"(": 1, ")": -1}.get(clean[j], 0)
            j += 1
        params = tuple(p for p in (parse_param(s) for s in _split_params(
            _QUALIFIERS.sub(lambda q: q.group(0), clean[m.end():j - 1 if depth == 0 else j]))) if p)
        body = bodies.get(name_off)
        directive, directive_line = _directive(lines, header_line)
        if body is not None:
            end_line = body.end_point[0] + 1
            body_text = clean[body.start_byte:body.end_byte]
            loops = tuple(_loops(body, lines))
            complete = not body.has_error
        else:
            nxt = _KERNEL_HEAD.search(clean, j)
            stop = nxt.start() if nxt else len(clean)
            end_line = _line_col(text, max(stop - 1, 0))[0]
            body_text = clean[j:stop]
            loops = ()
            complete = False
        dims = [int(d) for d in _WORK_ITEM_FN.findall(body_text)]
        dims_used = min(3, max(dims) + 1) if dims else 1
        kernels.append(Kernel(name, line, col, end_line, params, loops, dims_used, directive, directive_line,
                              header_line, complete))
    return kernels


ALWAYS_INLINE = "__attribute__((always_inline)) "
_INLINE_SET = re.compile(r"\b(?:always_inline|noinline|__noinline__)\b")


def inline_helpers(text: str) -> str:
    """``text`` with every function defined in it that is not a kernel marked ``always_inline`` (the attribute
    goes before the definition, on its line: no other line moves): what a compiler that honours no
    inlining option (Oclgrind's) needs to inline the helpers as clperf's analysis and GPU compilers do. A
    definition already marked inline-always or never, or one tree-sitter cannot place, is left as it is;
    ``text`` itself where nothing is marked."""
    clean, tree = parse_tree(text)
    kernels = {m.start(1) for m in _KERNEL_HEAD.finditer(clean)}
    starts: list[int] = []

    def collect(node: ts.Node) -> None:
        for child in node.children:
            if child.type == "function_definition":
                decl = child.child_by_field_name("declarator")
                while decl is not None and decl.type != "function_declarator":
                    decl = decl.child_by_field_name("declarator")
                name = decl.child_by_field_name("declarator") if decl is not None else None
                head = clean[child.start_byte:name.start_byte] if name is not None else ""
                if name is not None and name.start_byte not in kernels and not _INLINE_SET.search(head):
                    # tree-sitter saw the definition start after an address-space qualifier (blanked)
                    line = clean.rfind("\n", 0, child.start_byte) + 1
                    before = clean[line:child.start_byte]
                    bare = not _QUALIFIERS.sub("", before).strip()
                    starts.append(line + len(before) - len(before.lstrip()) if bare else child.start_byte)
            elif child.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
                collect(child)

    collect(tree.root_node)
    for start in sorted(starts, reverse=True):
        text = text[:start] + ALWAYS_INLINE + text[start:]
    return text


def kernel_at(kernels: list[Kernel], line: int) -> Kernel | None:
    """The kernel whose declaration or body contains 1-based ``line``."""
    for k in kernels:
        if k.header_line <= line <= k.end_line:
            return k
    return None
