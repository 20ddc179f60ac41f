"""What llvmlite does not expose, read from clang's IR text: debug locations, loop metadata, kernel
argument metadata, GEP source types and type sizes.

llvmlite gives the use-def graph (operands as ValueRefs) but prints single instructions with renumbered
metadata and has no API for a GEP's source element type or a DILocation. clang prints one instruction per
line, in the order llvmlite iterates them, so the text lines of each function are zipped with llvmlite's
instructions (``IRText.function_lines``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MD_LINE = re.compile(r"^!(\d+) = (?:distinct )?(.*)$")
_DILOC = re.compile(r"!DILocation\(line: (\d+), column: (\d+), scope: !(\d+)(?:, inlinedAt: !(\d+))?")
_SCOPE_FILE = re.compile(r"!DI(?:Subprogram|LexicalBlock|LexicalBlockFile)\(.*?\bfile: !(\d+)")
_DIFILE = re.compile(r'!DIFile\(filename: "((?:[^"\\]|\\.)*)"')
_MD_REF = re.compile(r"!(\d+)")
_MD_STRINGS = re.compile(r'!"((?:[^"\\]|\\.)*)"')
_MD_INTS = re.compile(r"i32 (-?\d+)")
_DEFINE = re.compile(r"^define\b.*?@([\w.$\"-]+)\((.*)\)(.*)\{\s*$")
_STRUCT = re.compile(r"^(%[\w.\"$-]+) = type (.*)$")
_GLOBAL = re.compile(
    r"^@([\w.$\"-]+) = .*?(?:addrspace\((\d+)\) )?(?:global|constant) "
    r"(.*?)(?:,|$| undef| zeroinitializer| poison)"
)
_DBG = re.compile(r"!dbg !(\d+)")
_LOOP = re.compile(r"!llvm\.loop !(\d+)")
_KERNEL_MD = re.compile(r"!(kernel_arg_\w+|reqd_work_group_size) !(\d+)")


@dataclass
class FunctionText:
    name: str
    is_kernel: bool
    lines: list[str]  # instruction lines, in order
    metadata: dict[str, int]  # kernel_arg_type (and reqd_work_group_size) -> metadata id
    subprogram: int | None


@dataclass
class IRText:
    locations: dict[int, tuple[int, int, int, int | None]] = field(default_factory=dict)
    scope_file: dict[int, int] = field(default_factory=dict)
    files: dict[int, str] = field(default_factory=dict)
    nodes: dict[int, str] = field(default_factory=dict)
    structs: dict[str, str] = field(default_factory=dict)
    globals: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (addrspace, type)
    functions: dict[str, FunctionText] = field(default_factory=dict)
    subprogram_line: dict[int, int] = field(default_factory=dict)
    main_file: str = "<stdin>"

    def location(self, md: int | None) -> tuple[int, int] | None:
        """(line, column) in the main file for a !dbg id, following inlinedAt out of other files."""
        seen = 0
        while md is not None and seen < 64:
            loc = self.locations.get(md)
            if loc is None:
                return None
            line, col, scope, inlined = loc
            fname = self.files.get(self.scope_file.get(scope, -1))
            if fname == self.main_file or inlined is None:
                return (line, col) if fname in (self.main_file, None) else None
            md = inlined
            seen += 1
        return None

    def strings(self, md: int) -> list[str]:
        return [s.replace('\\"', '"') for s in _MD_STRINGS.findall(self.nodes.get(md, ""))]

    def ints(self, md: int) -> list[int]:
        return [int(x) for x in _MD_INTS.findall(self.nodes.get(md, ""))]

    def loop_start(self, md: int) -> tuple[int, int] | None:
        """Source position of a loop from its ``!llvm.loop`` node: the first DILocation in it."""
        for ref in _MD_REF.findall(self.nodes.get(md, ""))[1:]:
            r = int(ref)
            if r in self.locations:
                return self.location(r)
        return None


def parse(ir: str) -> IRText:
    out = IRText()
    current: FunctionText | None = None
    for line in ir.split("\n"):
        if current is not None:
            if line.startswith("}"):
                current = None
            else:
                _body_line(current, line)
        elif line.startswith("!"):
            _metadata_line(out, line)
        elif line.startswith("define "):
            current = _define_line(out, line)
        elif line.startswith("%"):
            m = _STRUCT.match(line)
            if m:
                out.structs[m.group(1)] = m.group(2)
        elif line.startswith("@"):
            m = _GLOBAL.match(line)
            if m:
                out.globals[m.group(1).strip('"')] = (int(m.group(2) or 0), m.group(3).strip())
    return out


def _body_line(current: FunctionText, line: str) -> None:
    """An instruction line of a function body; labels, comments and blank lines are left out, and the
    lines of a ``switch``'s case list (printed one case a line, up to ``]``) join their instruction's."""
    s = line.strip()
    if not s or s.startswith(";") or (s.endswith(":") or re.match(r"^[\w.$\"-]+:\s*(;.*)?$", s)):
        return
    last = current.lines[-1] if current.lines else ""
    if last.startswith("switch ") and last.count("[") > last.count("]"):
        current.lines[-1] = f"{last} {s}"
        return
    current.lines.append(s)


def _define_line(out: IRText, line: str) -> FunctionText | None:
    """``define ... @name(...) ... {``: the function whose body follows, or None for a line not read."""
    m = _DEFINE.match(line)
    if not m:
        return None
    name = m.group(1).strip('"')
    md = {k: int(v) for k, v in _KERNEL_MD.findall(m.group(3))}
    sp = re.search(r"!dbg !(\d+)", m.group(3))
    current = FunctionText(name, " spir_kernel " in line, [], md, int(sp.group(1)) if sp else None)
    out.functions[name] = current
    return current


def _metadata_line(out: IRText, line: str) -> None:
    """``!N = ...``: every node by id, and the debug locations, files and scopes read from them."""
    m = _MD_LINE.match(line)
    if not m:
        return
    i, body = int(m.group(1)), m.group(2)
    out.nodes[i] = body
    if body.startswith("!DILocation("):
        d = _DILOC.match(body)
        if d:
            out.locations[i] = (
                int(d.group(1)),
                int(d.group(2)),
                int(d.group(3)),
                int(d.group(4)) if d.group(4) else None,
            )
    elif body.startswith("!DIFile("):
        f = _DIFILE.match(body)
        if f:
            out.files[i] = f.group(1)
    elif body.startswith(("!DISubprogram(", "!DILexicalBlock")):
        f = _SCOPE_FILE.match(body)
        if f:
            out.scope_file[i] = int(f.group(1))
        if body.startswith("!DISubprogram("):
            ln = re.search(r"\bline: (\d+)", body)
            if ln:
                out.subprogram_line[i] = int(ln.group(1))


def dbg_id(inst_line: str) -> int | None:
    m = _DBG.search(inst_line)
    return int(m.group(1)) if m else None


def loop_id(inst_line: str) -> int | None:
    m = _LOOP.search(inst_line)
    return int(m.group(1)) if m else None


# ---- types -------------------------------------------------------------------------------------------


class TypeLayout:
    """Sizes of LLVM types as spir64 lays them out (natural alignment, 64-bit pointers)."""

    def __init__(self, structs: dict[str, str]):
        self.structs = structs
        self._cache: dict[str, tuple[int, int]] = {}

    def size(self, text: str) -> int | None:
        try:
            return self.layout(text)[0]
        except (ValueError, KeyError, IndexError, RecursionError):
            return None

    def layout(self, text: str) -> tuple[int, int]:
        text = text.strip()
        hit = self._cache.get(text)
        if hit is None:
            hit, rest = self._parse(text)
            self._cache[text] = hit
        return hit

    def _parse(self, s: str) -> tuple[tuple[int, int], str]:
        s = s.lstrip()
        m = re.match(r"i(\d+)", s)
        if m:
            bits = int(m.group(1))
            size = max(1, (bits + 7) // 8)
            size = 1 << (size - 1).bit_length()
            return (size, size), s[m.end() :]
        for name, sz in (("half", 2), ("bfloat", 2), ("float", 4), ("double", 8)):
            if s.startswith(name):
                return (sz, sz), s[len(name) :]
        if s.startswith("ptr"):
            rest = s[3:]
            m = re.match(r"\s*addrspace\(\d+\)", rest)
            if m:
                rest = rest[m.end() :]
            return (8, 8), rest
        if s.startswith("<{") or s.startswith("{"):
            packed = s.startswith("<{")
            rest = s[2:] if packed else s[1:]
            size, align = 0, 1
            rest = rest.lstrip()
            while not rest.startswith("}"):
                (esz, eal), rest = self._parse(rest)
                if not packed:
                    size = (size + eal - 1) // eal * eal
                    align = max(align, eal)
                size += esz
                rest = rest.lstrip()
                if rest.startswith(","):
                    rest = rest[1:].lstrip()
            rest = rest[1:]
            if packed:
                rest = rest.lstrip()[1:]  # '>'
                return (size, 1), rest
            return ((size + align - 1) // align * align, align), rest
        m = re.match(r"([<\[])\s*(\d+) x ", s)
        if m:
            n = int(m.group(2))
            (esz, eal), rest = self._parse(s[m.end() :])
            rest = rest.lstrip()[1:]  # '>' or ']'
            if m.group(1) == "<":
                total = esz * (4 if n == 3 else n)
                return (total, total), rest
            return (esz * n, eal), rest
        m = re.match(r"%[\w.\"$-]+", s)
        if m:
            body = self.structs[m.group(0)]
            if body.strip() == "opaque":
                raise ValueError("opaque struct")
            return self._parse(body)[0], s[m.end() :]
        raise ValueError(f"unknown type {s[:20]!r}")

    def split_first_type(self, s: str) -> tuple[str, str]:
        """``'float, ptr %a, i64 %i'`` -> ``('float', ', ptr %a, i64 %i')``."""
        _, rest = self._parse(s)
        return s[: len(s) - len(rest)].strip(), rest

    def index_step(self, cur: str, index: int | None) -> tuple[int | None, int, str]:
        """One GEP index into type ``cur``: (element size for an array/vector index, or None for a
        struct, the struct field's byte offset (0 for arrays), the type indexed into)."""
        cur = cur.strip()
        while cur.startswith("%"):
            cur = self.structs[cur].strip()
        m = re.match(r"([<\[])\s*(\d+) x (.*)[>\]]$", cur)
        if m:
            inner = m.group(3).strip()
            return self.layout(inner)[0], 0, inner
        if cur.startswith("{") or cur.startswith("<{"):
            if index is None:
                raise ValueError("struct index must be constant")
            packed = cur.startswith("<{")
            rest = (cur[2:-2] if packed else cur[1:-1]).strip()
            off = 0
            k = 0
            while rest:
                t, rest = self.split_first_type(rest)
                sz, al = self.layout(t)
                if not packed:
                    off = (off + al - 1) // al * al
                if k == index:
                    return None, off, t
                off += sz
                k += 1
                rest = rest.lstrip()
                if rest.startswith(","):
                    rest = rest[1:].lstrip()
            raise ValueError("struct index out of range")
        raise ValueError(f"cannot index into {cur!r}")
