"""Unrolling a loop with a known trip count: ``#pragma unroll N``, or by hand with a remainder loop.

The pragma is the light edit, but compilers may ignore it (PoCL honours it; some drivers only unroll fully).
The manual form works everywhere::

    { int k = A;
      for (; k + (N - 1) < B; ) { {BODY} k++; ... N times ... }
      for (; k < B; k++) {BODY} }

It is offered only when it is equivalent: the counter steps by one and is not changed in the body, the
bound is side-effect free and nothing it reads is changed in the body, and the body has no ``break``,
``continue``, ``goto`` or label (a ``continue`` would skip the counter increment between copies).
"""

from __future__ import annotations

import re

import tree_sitter as ts

from clperf.predictor.rewrites import csource as cs
from clperf.predictor.rewrites.edits import TextEdit


class Refused(Exception):
    pass


def loop_at(b: cs.Body, line: int) -> ts.Node | None:
    for n in cs.walk(b.body):
        if n.type in ("for_statement", "while_statement", "do_statement") and b.pos(n.start_byte)[0] == line:
            return n
    return None


def factor(trips: int | None) -> int:
    """Full unrolling up to 16 iterations; otherwise the largest divisor up to 8 (no remainder), else 4."""
    if trips is None:
        return 4
    if trips <= 16:
        return trips
    for f in (8, 4, 2):
        if trips % f == 0:
            return f
    return 4


def pragma_edit(b: cs.Body, loop: ts.Node, n: int) -> TextEdit:
    line, col = b.pos(loop.start_byte)
    line_text = b.text.split("\n")[line - 1]
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    if line_text.strip().startswith(("for", "while", "do")):
        return TextEdit(line, 1, line, 1, f"{indent}#pragma unroll {n}\n")
    return TextEdit(line, col, line, col, f"\n{indent}#pragma unroll {n}\n{indent}")


def _jumps_at_this_level(node: ts.Node) -> list[ts.Node]:
    out = []
    for c in node.children:
        if c.type in ("break_statement", "continue_statement"):
            out.append(c)
        elif c.type in ("for_statement", "while_statement", "do_statement", "switch_statement"):
            continue  # their own break/continue stay inside them
        else:
            out += _jumps_at_this_level(c)
    return out


def manual_edit(b: cs.Body, loop: ts.Node, n: int) -> TextEdit:
    if loop.type != "for_statement":
        raise Refused("only 'for' loops are unrolled by hand")
    fields = ("initializer", "condition", "update", "body")
    init, cond, upd, body = (loop.child_by_field_name(f) for f in fields)
    if init is None or cond is None or upd is None or body is None:
        raise Refused("the loop needs an initialiser, a condition and an update")
    if init.type == "declaration":
        decls = init.children_by_field_name("declarator")
        if len(decls) != 1 or decls[0].type != "init_declarator":
            raise Refused("the loop declares more than one variable")
        name = b.src(decls[0].child_by_field_name("declarator"))  # type: ignore[arg-type]
        start = b.src(init).rstrip().rstrip(";")
    else:
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(.+?)\s*", b.src(init))
        if not m:
            raise Refused("the loop's initialiser is not 'counter = start'")
        name = m.group(1)
        start = b.src(init)
    if cond.type != "binary_expression" or b.src(cond.child_by_field_name("left")).strip() != name:  # type: ignore[arg-type]
        raise Refused("the loop condition is not 'counter < bound'")
    op = b.src(cond.child_by_field_name("operator"))  # type: ignore[arg-type]
    if op not in ("<", "<="):
        raise Refused("the loop condition is not 'counter < bound' or 'counter <= bound'")
    bound_node = cond.child_by_field_name("right")
    bound = b.src(bound_node)  # type: ignore[arg-type]
    if re.sub(r"\s", "", b.src(upd)) not in (f"{name}++", f"++{name}", f"{name}+=1"):
        raise Refused("the loop counter does not step by 1")
    calls = [c for c in re.findall(r"\b([A-Za-z_]\w*)\s*\(", bound) if c not in cs.UNIFORM_CALLS]
    if "[" in bound or calls or re.search(r"(?<![=!<>])=(?!=)|\+\+|--", bound):
        raise Refused("the loop bound reads memory, calls a function or assigns")
    changed = set()
    for n_ in cs.walk(body):
        if n_.type in ("assignment_expression", "update_expression"):
            t = n_.child_by_field_name("left") or n_.child_by_field_name("argument")
            if t is not None and t.type == "identifier":
                changed.add(b.src(t))
        if n_.type in ("goto_statement", "labeled_statement"):
            raise Refused("the loop body has a goto or a label")
        if n_.type == "call_expression" and "barrier" in b.src(n_.child_by_field_name("function")):  # type: ignore[arg-type]
            pass  # a barrier in a uniform loop stays uniform: each copy runs for every work-item alike
    if name in changed:
        raise Refused(f"the loop counter '{name}' is changed inside the loop")
    bound_names = set(re.findall(r"\b[A-Za-z_]\w*\b", bound))
    if bound_names & changed:
        raise Refused(f"the loop bound changes inside the loop ({', '.join(sorted(bound_names & changed))})")
    if _jumps_at_this_level(body):
        raise Refused("the loop body has break or continue")
    line, col = b.pos(loop.start_byte)
    line_text = b.text.split("\n")[line - 1]
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    body_text = b.src(body)
    if body.type != "compound_statement":
        body_text = "{ " + body_text + " }"
    cmp = "<" if op == "<" else "<="
    lines = [f"{{ /* clperf: unrolled by {n} by hand, remainder loop below */",
             f"{indent}    {start};",
             f"{indent}    for (; {name} + {n - 1} {cmp} {bound}; ) {{"]
    for _ in range(n):
        lines.append(f"{indent}        {body_text} {name}++;")
    lines.append(f"{indent}    }}")
    lines.append(f"{indent}    for (; {name} {cmp} {bound}; {name}++) {body_text}")
    lines.append(f"{indent}}}")
    l1, c1 = b.pos(loop.end_byte)
    return TextEdit(line, col, l1, c1, "\n".join(lines))
