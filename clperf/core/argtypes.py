"""Kernel parameter types as the compiler sees them: typedefs resolved, vectors, structs with their layout.

The tolerant front end reads a parameter's type as written (``DATA_TYPE``, ``particle_t``); only the
compiler knows what that is. One clang call (``-O0 -g``, cached like every compile) gives, per kernel:

* ``!kernel_arg_addr_space``, ``!kernel_arg_type`` and ``!kernel_arg_type_qual``: where a parameter lives,
  its type as written and whether it is ``const``;
* the kernel's debug-info signature (``DISubroutineType``): each parameter's type with typedefs, vector
  widths, struct members at their byte offsets and sizes. LLVM 19's pointers are opaque, so the IR alone
  no longer says what a pointer points at; the debug info does;
* the ``align N`` of each pointer parameter in the ``define`` line: the pointee's alignment (explicit
  ``__attribute__((aligned))`` included).

Layouts are those of ``spir64`` (64-bit pointers and ``size_t``), which is what OpenCL C defines for
every type a kernel argument may hold (each scalar and vector aligned to its size, a 3-vector taking 4).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from threading import Lock
from typing import Any, Literal

from clperf.core.compile import compile_source
from clperf.core.errors import CompileError
from clperf.core.records import AddressSpace, Param

Kind = Literal["scalar", "vector", "struct", "array", "opaque"]
_SPACES: dict[int, AddressSpace] = {0: "private", 1: "global", 2: "constant", 3: "local"}
# debug-info names of C's scalar types -> OpenCL C's
_SCALAR_NAMES = {
    "char": "char", "signed char": "char", "unsigned char": "uchar", "short": "short",
    "unsigned short": "ushort", "int": "int", "unsigned int": "uint", "long": "long",
    "unsigned long": "ulong", "long long": "long", "unsigned long long": "ulong", "half": "half",
    "float": "float", "double": "double", "_Bool": "bool", "bool": "bool",
}
_KINDS = {"DW_ATE_float": "f", "DW_ATE_signed": "i", "DW_ATE_signed_char": "i", "DW_ATE_unsigned": "u",
          "DW_ATE_unsigned_char": "u", "DW_ATE_boolean": "u"}


@dataclass(frozen=True)
class Field:
    """A struct member: its name, byte offset and type."""

    name: str
    offset: int
    type: CType


@dataclass(frozen=True)
class CType:
    """One OpenCL C type and how it lies in memory (bytes).

    ``scalar`` is the OpenCL name of a scalar or of a vector's element (``"float"``), ``count`` the
    vector's width as written (3 for ``float3``, which takes the room of 4) or an array's length.
    """

    name: str  # as the source names it: "DATA_TYPE", "struct edge", "float4"
    kind: Kind
    size: int
    align: int
    scalar: str = ""
    count: int = 1
    fields: tuple[Field, ...] = ()
    element: CType | None = None  # an array's element type

    @property
    def canonical(self) -> str:
        """The name every other part of clperf understands: ``"float"``, ``"uint4"``; a struct's own."""
        if self.kind == "scalar":
            return self.scalar
        if self.kind == "vector":
            return f"{self.scalar}{self.count}"
        return self.name

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "size": self.size, "align": self.align}
        if self.scalar:
            out["scalar"] = self.scalar
        if self.count != 1:
            out["count"] = self.count
        if self.fields:
            out["fields"] = [{"name": f.name, "offset": f.offset, "type": f.type.to_json()}
                             for f in self.fields]
        if self.element is not None:
            out["element"] = self.element.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CType:
        return cls(name=d["name"], kind=d["kind"], size=int(d["size"]), align=int(d["align"]),
                   scalar=d.get("scalar", ""), count=int(d.get("count", 1)),
                   fields=tuple(Field(f["name"], int(f["offset"]), cls.from_json(f["type"]))
                                for f in d.get("fields", ())),
                   element=cls.from_json(d["element"]) if d.get("element") else None)


@dataclass(frozen=True)
class ArgInfo:
    """One kernel parameter from the compiler. ``type`` is the element type of a pointer."""

    name: str
    address_space: AddressSpace
    pointer: bool
    const: bool
    type: CType

    def param(self) -> Param:
        """The parameter as the rest of clperf describes one, with its type's canonical name."""
        return Param(self.name, self.type.canonical, self.address_space, self.pointer, self.const)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "address_space": self.address_space, "pointer": self.pointer,
                "const": self.const, "type": self.type.to_json()}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ArgInfo:
        return cls(d["name"], d["address_space"], bool(d["pointer"]), bool(d["const"]),
                   CType.from_json(d["type"]))


# --- reading the IR ---------------------------------------------------------------------------------------

_NODE = re.compile(r"^!(\d+) = (?:distinct )?!(DI\w+)\((.*)\)\s*$")
_TUPLE = re.compile(r"^!(\d+) = (?:distinct )?!\{(.*)\}\s*$")
_FIELD = re.compile(r'(\w+): ("(?:[^"\\]|\\.)*"|[^,]+)')
_DEFINE = re.compile(r"^define\b[^@]*\bspir_kernel\b[^@]*@(\"[^\"]+\"|[\w.$]+)\((.*)\)(.*)\{\s*$")
_ATTACHED = re.compile(r"!(kernel_arg_addr_space|kernel_arg_type|kernel_arg_type_qual|dbg) !(\d+)")
_ALIGN = re.compile(r"\balign (\d+)\b")


class _Metadata:
    """The numbered metadata of a module: DI nodes as field dicts, tuples as lists of items."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.nodes: dict[str, tuple[str, dict[str, str]]] = {}
        self.tuples: dict[str, list[str]] = {}
        for line in lines:
            if not line.startswith("!"):
                continue
            if m := _NODE.match(line):
                fields = {k: v.strip() for k, v in _FIELD.findall(m.group(3))}
                self.nodes[m.group(1)] = (m.group(2), fields)
            elif m := _TUPLE.match(line):
                self.tuples[m.group(1)] = [t.strip() for t in _split_top(m.group(2))]

    def strings(self, ref: str) -> list[str]:
        return [_unquote(s[1:]) if s.startswith('!"') else s for s in self.tuples.get(ref, [])]

    def ints(self, ref: str) -> list[int]:
        return [int(s.split()[-1]) for s in self.tuples.get(ref, [])]


def _split_top(text: str) -> Iterator[str]:
    """Items of a comma-separated list, commas inside parentheses, brackets or quotes kept."""
    depth, quoted, start = 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            yield text[start:i]
            start = i + 1
    if text[start:].strip():
        yield text[start:]


def _unquote(s: str) -> str:
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s


def _ref(value: str | None) -> str | None:
    return value[1:] if value and value.startswith("!") and value[1:].isdigit() else None


class _Types:
    """Debug-info type nodes -> CTypes (memoised: a struct used by ten kernels is read once)."""

    def __init__(self, md: _Metadata) -> None:
        self.md = md
        self.memo: dict[str, CType] = {}

    def get(self, ref: str | None, name: str = "") -> CType:
        if ref is None:  # ``void`` (a ``void*`` parameter)
            return CType(name or "void", "opaque", 0, 1)
        key = f"{ref}|{name}"
        if key not in self.memo:
            self.memo[key] = self._read(ref, name)
        return self.memo[key]

    def _read(self, ref: str, name: str) -> CType:
        tag, f = self.md.nodes.get(ref, ("", {}))
        size = int(f.get("size", "0")) // 8
        explicit_align = int(f.get("align", "0")) // 8
        own = _unquote(f.get("name", ""))
        if tag == "DIBasicType":
            scalar = _SCALAR_NAMES.get(own, own)
            return CType(name or scalar, "scalar", size, explicit_align or max(size, 1), scalar=scalar)
        t = f.get("tag", "")
        if tag == "DIDerivedType":
            if t == "DW_TAG_typedef":
                base = self.get(_ref(f.get("baseType")), name or own)
                return base if explicit_align == 0 else _aligned(base, explicit_align)
            if t in ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type",
                     "DW_TAG_atomic_type"):
                return self.get(_ref(f.get("baseType")), name)
            return CType(name or "pointer", "opaque", size or 8, size or 8)  # a pointer inside a struct
        if tag == "DICompositeType":
            return self._composite(t, f, name or (f"struct {own}" if own else ""), size, explicit_align)
        return CType(name or "unknown", "opaque", size, max(size, 1))

    def _composite(self, t: str, f: dict[str, str], name: str, size: int, explicit_align: int) -> CType:
        if "DIFlagFwdDecl" in f.get("flags", ""):  # image, sampler, event: no layout to fill
            return CType(name or _unquote(f.get("name", "")), "opaque", 0, 1)
        if t == "DW_TAG_array_type":
            elem = self.get(_ref(f.get("baseType")))
            count = 1
            for sub in self.md.tuples.get(_ref(f.get("elements")) or "", []):
                _, sf = self.md.nodes.get(_ref(sub) or "", ("", {}))
                count *= max(int(sf.get("count", "1")), 0)
            if "DIFlagVector" in f.get("flags", ""):
                return CType(name or f"{elem.scalar}{count}", "vector", size, explicit_align or size,
                             scalar=elem.scalar, count=count)
            return CType(name or f"{elem.name}[{count}]", "array", size, explicit_align or elem.align,
                         count=count, element=elem)
        if t == "DW_TAG_enumeration_type":
            base = self.get(_ref(f.get("baseType"))) if f.get("baseType") else CType("uint", "scalar", 4, 4,
                                                                                   scalar="uint")
            return CType(name or base.name, "scalar", base.size, base.align, scalar=base.scalar)
        fields: list[Field] = []
        for member in self.md.tuples.get(_ref(f.get("elements")) or "", []):
            mtag, mf = self.md.nodes.get(_ref(member) or "", ("", {}))
            if mtag != "DIDerivedType" or mf.get("tag") != "DW_TAG_member" or "DIFlagBitField" in \
                    mf.get("flags", ""):
                continue  # bit-fields stay zero: no byte of their own to fill
            fields.append(Field(_unquote(mf.get("name", "")), int(mf.get("offset", "0")) // 8,
                                self.get(_ref(mf.get("baseType")))))
        if t == "DW_TAG_union_type":  # filled as its first member, as C initialises a union
            fields = fields[:1]
        align = explicit_align or max((fl.type.align for fl in fields), default=1)
        kind_name = "union" if t == "DW_TAG_union_type" else "struct"
        return CType(name or kind_name, "struct", size, align, fields=tuple(fields))


def _aligned(t: CType, align: int) -> CType:
    return CType(t.name, t.kind, t.size, align, t.scalar, t.count, t.fields, t.element)


def _with_name(t: CType, name: str) -> CType:
    if not name or name == t.name:
        return t
    return CType(name, t.kind, t.size, t.align, t.scalar, t.count, t.fields, t.element)


_QUALIFIERS = ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type", "DW_TAG_atomic_type",
               "DW_TAG_typedef")


def _pointee(md: _Metadata, ref: str | None) -> str | None:
    """The type a pointer parameter's debug type points to: a parameter declared ``int * const p`` (or
    ``restrict``, or of a pointer typedef) has the qualifier's node, the pointer's under it."""
    for _ in range(16):
        tag, f = md.nodes.get(ref or "", ("", {}))
        if tag != "DIDerivedType" or f.get("tag") not in _QUALIFIERS:
            return _ref(f.get("baseType"))
        ref = _ref(f.get("baseType"))
    return None


def _kernel_args(md: _Metadata, types: _Types, arg_text: str,
                 attached: dict[str, str]) -> tuple[ArgInfo, ...]:
    spaces = md.ints(attached.get("kernel_arg_addr_space", ""))
    written = md.strings(attached.get("kernel_arg_type", ""))
    quals = md.strings(attached.get("kernel_arg_type_qual", ""))
    ir_args = [a.strip() for a in _split_top(arg_text)]
    sub = md.nodes.get(attached.get("dbg", ""), ("", {}))[1]
    sig = md.nodes.get(_ref(sub.get("type")) or "", ("", {}))[1]
    di_types = md.tuples.get(_ref(sig.get("types")) or "", [])[1:]  # the first is the return type
    out = []
    for i, text in enumerate(ir_args):
        name = text.rsplit("%", 1)[-1] if "%" in text else f"arg{i}"
        w = written[i] if i < len(written) else ""
        pointer = w.endswith("*")
        space = _SPACES.get(spaces[i] if i < len(spaces) else 0, "private")
        ref = _ref(di_types[i]) if i < len(di_types) else None
        if pointer:
            t = types.get(_pointee(md, ref))
            if (m := _ALIGN.search(text)) and t.kind != "opaque":  # the pointee's alignment, as declared
                t = _aligned(t, int(m.group(1)))
        else:
            t = types.get(ref)
        out.append(ArgInfo(_unquote(name), space, pointer, "const" in (quals[i] if i < len(quals) else ""),
                           _with_name(t, w.rstrip("*").strip())))
    return tuple(out)


def read_kernel_args(ir: str) -> dict[str, tuple[ArgInfo, ...]]:
    """Every kernel of a module compiled with ``-g``: its parameters, in order."""
    lines = ir.split("\n")
    md = _Metadata(lines)
    types = _Types(md)
    out: dict[str, tuple[ArgInfo, ...]] = {}
    for line in lines:
        if not line.startswith("define") or "spir_kernel" not in line:
            continue
        m = _DEFINE.match(line)
        if m is None:
            continue
        attached = dict(_ATTACHED.findall(m.group(3)))
        out[_unquote(m.group(1))] = _kernel_args(md, types, m.group(2), attached)
    return out


# --- compiling --------------------------------------------------------------------------------------------

CACHE_SIZE = 64
_cache: OrderedDict[str, dict[str, tuple[ArgInfo, ...]]] = OrderedDict()
_cache_lock = Lock()


def kernel_args(source: str, path: Path | None,
                options: str | Sequence[str] = ()) -> dict[str, tuple[ArgInfo, ...]]:
    """Parameters of every kernel in ``source`` (the text of ``path``), compiled with ``options``.

    CompileError when clang cannot be run or rejects the source (its first error in the message).
    """
    opts = shlex.split(options) if isinstance(options, str) else list(options)
    result = compile_source(source, path, [*opts, "-O0", "-g"])  # full debug info: the types
    if result.ir is None:
        first = next((d for d in result.diagnostics if d.severity == "error"), None)
        where = f"line {first.line}: {first.message}" if first else "clang failed"
        raise CompileError(f"cannot read the kernel's parameter types ({where})")
    key = hashlib.sha256(result.ir.encode()).hexdigest()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    found = read_kernel_args(result.ir)
    with _cache_lock:
        _cache[key] = found
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return found
