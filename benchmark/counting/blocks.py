"""Naming Oclgrind's blocks as clperf's analysis names them.

Oclgrind compiles the kernel with its own clang (LLVM 14), clperf's analysis with clang-19. Given the
analysis's ``-O1 -fno-unroll-loops`` both keep clang's value names and give a kernel the same blocks
under the same names (``entry``, ``for.body``, ``for.body.lr.ph``): the front end names them and -O1's
loop passes shape both alike. So a block is matched by name, confirmed by its terminator's source
position (line, column of its ``!dbg``); a block whose name is missing or whose position disagrees is
matched by position alone when exactly one block on each side ends there, or by its order among the
blocks ending there when each side has as many (a helper inlined at several calls). What has no partner is
left out (and logged at debug level), so a count never lands on the wrong block.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)

_DEFINE = re.compile(r'^define\b[^@]*@("(?:[^"\\]|\\.)*"|[\w.$-]+)\(')
_LABEL = re.compile(r'^("(?:[^"\\]|\\.)*"|[\w.$-]+):')
_DBG = re.compile(r"!dbg !(\d+)")
_LOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)(?:, column: (\d+))?")

_INLINED = re.compile(r"\.i\d*(?:\.|$)|\.exit\d*$")  # a block the inliner cloned: ``for.body.i``, ``f.exit3``

Position = tuple[int, int]


@dataclass(frozen=True)
class Block:
    """A block as one compiler left it: its name ("" when unnamed) and where its terminator is."""

    name: str
    terminator: Position | None


def _unquote(name: str) -> str:
    return name[1:-1].replace('\\"', '"') if name.startswith('"') else name


def ir_blocks(ir: str, function: str) -> list[Block]:
    """The blocks of ``function`` in LLVM IR text, in order. An unlabelled first block is ``entry``
    only when clang named it so; numbered (unnamed) blocks get the name ""."""
    lines = ir.splitlines()
    locations = {int(m.group(1)): (int(m.group(2)), int(m.group(3) or 0))
                 for m in map(_LOCATION.match, lines) if m}
    out: list[Block] = []
    inside, name, last = False, "", None
    for line in lines:
        if not inside:
            m = _DEFINE.match(line)
            inside = bool(m and _unquote(m.group(1)) == function and line.rstrip().endswith("{"))
            name, last, started = "", None, False
            continue
        if line.startswith("}"):
            out.append(Block(name, last))
            break
        label = _LABEL.match(line)
        if label:
            if started:
                out.append(Block(name, last))
            text = _unquote(label.group(1))
            name, last, started = ("" if text.isdigit() else text), None, True
            continue
        body = line.strip()
        if body and not body.startswith(";"):
            started = True
            d = _DBG.search(body)
            last = locations.get(int(d.group(1))) if d else None
    return out


def match(counted: Sequence[Block], clperf: Sequence[Block]) -> dict[int, str]:
    """Index into ``counted`` -> the name of its block in ``clperf``'s IR, for the blocks that match."""
    names = {b.name: b for b in clperf if b.name}
    out: dict[int, str] = {}
    # an inlined copy's name (``if.then.i12``) says which copy only in its own compiler's numbering
    copied = Counter(b.terminator for b in counted) + Counter(b.terminator for b in clperf)
    for i, b in enumerate(counted):
        partner = names.get(b.name) if b.name else None
        if partner is not None and (b.terminator is None or partner.terminator is None
                                    or b.terminator == partner.terminator):
            if not (_INLINED.search(b.name) and copied[b.terminator] > 2):
                out[i] = partner.name
    taken = set(out.values())
    left = [(i, b) for i, b in enumerate(counted) if i not in out and b.terminator]
    free = [b for b in clperf if b.name and b.name not in taken and b.terminator]
    ours = Counter(b.terminator for _, b in left)
    theirs = Counter(b.terminator for b in free)
    by_position = {b.terminator: b.name for b in free if theirs[b.terminator] == 1}
    for i, b in left:
        if ours[b.terminator] == 1 and b.terminator in by_position:
            out[i] = by_position[b.terminator]
    # a helper inlined at several calls leaves as many blocks ending at each of its positions, named by
    # each compiler's own numbering: the k-th of them on one side is the k-th on the other (both lay the
    # calls out in source order), where both sides have as many
    taken = set(out.values())
    ours = Counter(b.terminator for i, b in left if i not in out)
    theirs = Counter(b.terminator for b in free if b.name not in taken)
    copies = {pos: [b.name for b in free if b.terminator == pos and b.name not in taken]
              for pos, n in ours.items() if n > 1 and theirs[pos] == n}
    for i, b in left:
        if i not in out and b.terminator in copies:
            out[i] = copies[b.terminator].pop(0)
    missing = [b.name or "(unnamed)" for i, b in enumerate(counted) if i not in out]
    if missing:
        log.debug("counting run: %d blocks without a partner in clperf's IR: %s", len(missing),
                  ", ".join(missing[:20]))
    return out
