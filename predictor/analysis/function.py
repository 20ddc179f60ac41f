"""One kernel function's instructions as the analysis reads them: blocks, text lines, opcodes, operands,
types, constants and source positions.

Values are ints (the address of LLVM's value) inside the analysis: a llvmlite ValueRef hashes through
ctypes, which dominated the run time. ``ref`` maps back for the few questions only llvmlite answers.
Opcodes come from clang's text line (``irtext`` zips the lines with llvmlite's instructions); operands
and types are read from llvmlite the first time they are asked for.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any

from clperf.predictor.analysis.irtext import FunctionText, IRText, dbg_id

_CALLEE = re.compile(r" @([\w.$\"-]+)\(")
_ICMP = re.compile(r"= icmp (?:samesign )?(\w+) ")
_OPCODE = re.compile(r"^(?:%[\w.$\"-]+ = )?(?:tail |musttail |notail )?([a-z]+)\b")
_VECTOR_RESULT = re.compile(
    r"^%[\w.$\"-]+ = (?:tail )?[a-z]+"
    r"(?: (?:nsw|nuw|exact|disjoint|fast|nnan|ninf|nsz|arcp|contract|afn|reassoc))*"
    r"(?: spir_func)? <(\d+) x ")


class FunctionIR:
    """The instructions of one llvmlite function, keyed by int, with their clang text lines."""

    def __init__(self, fn: Any, ftext: FunctionText, txt: IRText):
        self.name: str = fn.name
        self.txt = txt
        self.ref: dict[int, Any] = {}
        self.blocks = list(fn.blocks)
        self.block_index = {self.key(b): i for i, b in enumerate(self.blocks)}
        self.insts: list[list[int]] = [[self.key(i) for i in b.instructions] for b in self.blocks]
        flat = [i for bl in self.insts for i in bl]
        # the text lines carry the !dbg ids; when they do not line up with llvmlite's instructions (a
        # construct irtext does not split like clang prints it) llvmlite's own printing stands in
        self.dbg_ok = len(ftext.lines) == len(flat)
        lines = ftext.lines if self.dbg_ok else [str(self.ref[i]).strip() for i in flat]
        self.text: dict[int, str] = {}
        self.inst_block: dict[int, int] = {}
        k = 0
        for bi, bl in enumerate(self.insts):
            for inst in bl:
                self.text[inst] = lines[k]
                self.inst_block[inst] = bi
                k += 1
        self._opcode: dict[int, str] = {}
        self._operands: dict[int, list[int]] = {}
        self._tstr: dict[int, str] = {}
        for inst in flat:
            m = _OPCODE.match(self.text[inst])
            self._opcode[inst] = m.group(1) if m else self.ref[inst].opcode
        self.args = {self.key(a): a.name for a in fn.arguments}
        self.arg_pointer: dict[str, bool] = {a.name: str(a.type).startswith("ptr") for a in fn.arguments}

    def key(self, v: Any) -> int:
        k: int = ctypes.cast(v._ptr, ctypes.c_void_p).value or 0
        if k not in self.ref:
            self.ref[k] = v
        return k

    def opc(self, v: int) -> str:
        return self._opcode.get(v, "")

    def opers(self, v: int) -> list[int]:
        ops = self._operands.get(v)
        if ops is None:
            ops = self._operands[v] = [self.key(o) for o in self.ref[v].operands]
        return ops

    def tstr(self, v: int) -> str:
        """The value's LLVM type as text (``i32``, ``ptr addrspace(1)``, ``<4 x float>``)."""
        t = self._tstr.get(v)
        if t is None:
            t = self._tstr[v] = str(self.ref[v].type)
        return t

    def callee(self, inst: int) -> str:
        m = _CALLEE.search(self.text[inst])
        return m.group(1).strip('"') if m else self.ref[self.opers(inst)[-1]].name

    def lanes(self, inst: int) -> int:
        """Vector width of the instruction's result, 1 for a scalar."""
        m = _VECTOR_RESULT.match(self.text[inst])
        return int(m.group(1)) if m else 1

    def predicate(self, v: int) -> str | None:
        """An ``icmp``'s predicate (``slt``, ``ne``, ...), None for anything else."""
        m = _ICMP.search(self.text.get(v, "")) if self.opc(v) == "icmp" else None
        return m.group(1) if m else None

    def incoming(self, phi: int) -> list[int | None]:
        """The blocks a phi's operands come from, as block indices."""
        return [self.block_index.get(self.key(b)) for b in self.ref[phi].incoming_blocks]

    def const(self, v: int) -> int | None:
        """The value as a plain integer constant, or None."""
        try:
            r = self.ref[v]
            t = self.tstr(v)
            if r.is_constant and t.startswith("i") and t[1:].isdigit():
                c = r.get_constant_value()
                if not isinstance(c, int):
                    return None
                bits = int(t[1:])  # llvmlite reads whole 64-bit words: sign-extend from the type's width
                c &= (1 << bits) - 1
                return c - (1 << bits) if bits > 1 and c >> (bits - 1) else c
        except Exception:  # noqa: BLE001 - poison/undef/constant expressions: not a plain integer
            return None
        return None

    def pos(self, inst: int) -> tuple[int, int] | None:
        """(line, column) of an instruction in the main file, from its debug location."""
        if not self.dbg_ok:
            return None
        return self.txt.location(dbg_id(self.text.get(inst, "")))

    def block_pos(self, bi: int) -> tuple[int, int] | None:
        """The position of the first instruction of block ``bi`` that has one."""
        for inst in self.insts[bi]:
            p = self.pos(inst)
            if p is not None:
                return p
        return None
