"""LLVM IR of a whole file -> one KernelReport per kernel, joined with the tolerant parse.

Parameters come from clang's ``kernel_arg_*`` metadata (so macros and typedefs are already resolved)
with names from the IR arguments; the kernel's column and each loop's ``#pragma unroll`` come from the
front end, which sees the source as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import llvmlite.binding as llvm
from clperf.predictor.analysis import irtext
from clperf.predictor.analysis.records import KernelReport, LoopInfo, Ops, ParamUse
from clperf.predictor.analysis.walk import KernelWalk

from clperf.core import frontend
from clperf.core.errors import CompileError
from clperf.core.records import type_size

_SPACE_NUMBERS = {0: "private", 1: "global", 2: "constant", 3: "local", 4: "global"}


def analyze_ir(ir: str, kernels: Sequence[frontend.Kernel] = ()) -> list[KernelReport]:
    """Analyse every kernel in ``ir``. Raises CompileError when llvmlite cannot read the IR."""
    try:
        mod = llvm.parse_assembly(ir)
        mod.verify()
    except RuntimeError as e:
        raise CompileError(f"LLVM could not read clang's output: {str(e).strip()[:200]}") from e
    txt = irtext.parse(ir)
    layout = irtext.TypeLayout(txt.structs)
    by_name = {k.name: k for k in kernels}
    reports: list[KernelReport] = []
    for fn in mod.functions:
        ftext = txt.functions.get(fn.name)
        if ftext is None or not ftext.is_kernel or fn.is_declaration:
            continue
        reports.append(_kernel(fn, ftext, txt, layout, by_name.get(fn.name)))
    reports.sort(key=lambda r: r.line)
    return reports


def _params(
    fn: Any, ftext: irtext.FunctionText, txt: irtext.IRText, fe: frontend.Kernel | None
) -> list[ParamUse]:
    names = [a.name for a in fn.arguments]
    types = txt.strings(ftext.metadata["kernel_arg_type"]) if "kernel_arg_type" in ftext.metadata else []
    spaces = (
        txt.ints(ftext.metadata["kernel_arg_addr_space"]) if "kernel_arg_addr_space" in ftext.metadata else []
    )
    quals = (
        txt.strings(ftext.metadata["kernel_arg_type_qual"])
        if "kernel_arg_type_qual" in ftext.metadata
        else []
    )
    fe_params = {p.name: p for p in fe.params} if fe else {}
    out = []
    for i, name in enumerate(names):
        if i < len(types):
            t = types[i].strip()
            pointer = t.endswith("*")
            base = t.rstrip("*").strip()
            space = (
                _SPACE_NUMBERS.get(spaces[i] if i < len(spaces) else 0, "private") if pointer else "private"
            )
            const = "const" in (quals[i] if i < len(quals) else "")
            out.append(ParamUse(name, base, space, pointer, const, False, False))  # type: ignore[arg-type]
        elif name in fe_params:
            p = fe_params[name]
            out.append(ParamUse(p.name, p.type, p.address_space, p.pointer, p.const, False, False))
        else:
            out.append(ParamUse(name, "?", "private", False, False, False, False))
    return out


def _kernel(
    fn: Any,
    ftext: irtext.FunctionText,
    txt: irtext.IRText,
    layout: irtext.TypeLayout,
    fe: frontend.Kernel | None,
) -> KernelReport:
    params = _params(fn, ftext, txt, fe)
    elem_sizes = {p.name: type_size(p.type) or 0 for p in params if p.pointer}
    res = KernelWalk(fn, ftext, txt, layout, elem_sizes).run()
    fe_loops = {lp.line: lp for lp in fe.loops} if fe else {}
    loops = []
    for lp in res.loops:
        f = fe_loops.get(lp.line)
        loops.append(_with_unroll(lp, f))
    ir_lines = {lp.line for lp in loops}
    # loops the optimiser removed (dead, or fully unrolled): listed so the editor still shows them
    for f in fe_loops.values():
        if f.line not in ir_lines:
            loops.append(LoopInfo(f.line, f.column, f.depth, None, None, f.unroll, None, None, False))
    params = [
        ParamUse(
            p.name, p.type, p.address_space, p.pointer, p.const, p.name in res.read, p.name in res.written
        )
        for p in params
    ]
    line = fe.line if fe else txt.subprogram_line.get(ftext.subprogram or -1, 0)
    column = fe.column if fe else 1
    static = Ops()
    report = KernelReport(
        fn.name,
        line,
        column,
        tuple(params),
        tuple(res.accesses),
        tuple(loops),
        res.barriers,
        static,
        max(res.dims, fe.dims_used if fe else 1),
        True,
        tuple(res.divergent_barriers),
        tuple(sorted(res.staged)),
        tuple(res.op_groups),
        _required_local(ftext, txt),
    )
    total = Ops()
    for chain, ops in report.op_groups:
        w, unknown = report._weight(chain, None)
        total = total + ops.scaled(w)
        if unknown:
            total = total + Ops(trip_unknown=True)
    from dataclasses import replace

    return replace(report, ops=total)


def _required_local(ftext: irtext.FunctionText, txt: irtext.IRText) -> tuple[int, ...] | None:
    md = ftext.metadata.get("reqd_work_group_size")
    sizes = txt.ints(md) if md is not None else []
    return tuple(sizes) if len(sizes) == 3 and all(s > 0 for s in sizes) else None


def _with_unroll(lp: LoopInfo, f: frontend.Loop | None) -> LoopInfo:
    from dataclasses import replace

    if f is None:
        return lp
    return replace(lp, unroll=f.unroll, column=f.column)


def unanalyzed(fe: frontend.Kernel) -> KernelReport:
    """What the parse alone knows about a kernel clang could not compile."""
    params = tuple(
        ParamUse(p.name, p.type, p.address_space, p.pointer, p.const, False, False) for p in fe.params
    )
    loops = tuple(LoopInfo(lp.line, lp.column, lp.depth, None, None, lp.unroll) for lp in fe.loops)
    return KernelReport(fe.name, fe.line, fe.column, params, (), loops, 0, Ops(), fe.dims_used, False)
