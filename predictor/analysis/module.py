"""LLVM IR of a whole file -> one KernelReport per kernel, joined with the tolerant parse.

Parameters come from clang's ``kernel_arg_*`` metadata (so macros and typedefs are already resolved)
with names from the IR arguments; the kernel's column and each loop's ``#pragma unroll`` come from the
front end, which sees the source as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clperf.core import frontend
from clperf.core.errors import CompileError
from clperf.core.records import Param, type_size
from clperf.predictor.analysis import irtext
from clperf.predictor.analysis.accesses import SPACES
from clperf.predictor.analysis.records import KernelReport, LoopInfo, Ops, ParamUse
from clperf.predictor.analysis.walk import KernelWalk


def analyze_ir(ir: str, kernels: Sequence[frontend.Kernel] = ()) -> list[KernelReport]:
    """Analyse every kernel in ``ir``. Raises CompileError when llvmlite cannot read the IR."""
    import llvmlite.binding as llvm  # loads LLVM (~0.5 s): not before the first analysis

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
                SPACES.get(spaces[i] if i < len(spaces) else 0, "private") if pointer else "private"
            )
            const = "const" in (quals[i] if i < len(quals) else "")
            out.append(ParamUse(name=name, type=base, address_space=space, pointer=pointer, const=const,
                                read=False, written=False))
        elif name in fe_params:
            out.append(_unused(fe_params[name]))
        else:
            out.append(ParamUse(name=name, type="?", address_space="private", pointer=False, const=False,
                                read=False, written=False))
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
            loops.append(_parsed_loop(f))
    params = [replace(p, read=p.name in res.read, written=p.name in res.written) for p in params]
    line = fe.line if fe else txt.subprogram_line.get(ftext.subprogram or -1, 0)
    column = fe.column if fe else 1
    report = KernelReport(
        name=fn.name,
        line=line,
        column=column,
        params=tuple(params),
        accesses=tuple(res.accesses),
        loops=tuple(loops),
        barriers=res.barriers,
        ops=Ops(),  # the totals below need the report's loops
        dims=max(res.dims, fe.dims_used if fe else 1),
        analyzed=True,
        divergent_barriers=tuple(res.divergent_barriers),
        staged=tuple(sorted(res.staged)),
        op_groups=tuple(res.op_groups),
        op_blocks=tuple(res.op_blocks),
        block_loops=tuple(res.block_loops),
        required_local=_required_local(ftext, txt),
    )
    total = Ops()
    for chain, ops in report.op_groups:
        w, unknown = report._weight(chain, None)
        total = total + ops.scaled(w)
        if unknown:
            total = total + Ops(trip_unknown=True)
    return replace(report, ops=total)


def _required_local(ftext: irtext.FunctionText, txt: irtext.IRText) -> tuple[int, ...] | None:
    md = ftext.metadata.get("reqd_work_group_size")
    sizes = txt.ints(md) if md is not None else []
    return tuple(sizes) if len(sizes) == 3 and all(s > 0 for s in sizes) else None


def _with_unroll(lp: LoopInfo, f: frontend.Loop | None) -> LoopInfo:
    if f is None:
        return lp
    return replace(lp, unroll=f.unroll, column=f.column)


def unanalyzed(fe: frontend.Kernel) -> KernelReport:
    """What the parse alone knows about a kernel clang could not compile."""
    return KernelReport(name=fe.name, line=fe.line, column=fe.column,
                        params=tuple(_unused(p) for p in fe.params), accesses=(),
                        loops=tuple(_parsed_loop(lp) for lp in fe.loops), barriers=0, ops=Ops(),
                        dims=fe.dims_used, analyzed=False)


def _unused(p: Param) -> ParamUse:
    """A parameter as the parse gives it, before the walk says whether it is read or written."""
    return ParamUse(name=p.name, type=p.type, address_space=p.address_space, pointer=p.pointer, const=p.const,
                    read=False, written=False)


def _parsed_loop(lp: frontend.Loop) -> LoopInfo:
    """A loop only the parse knows (clang failed, or the optimiser removed it): no trip count."""
    return LoopInfo(line=lp.line, column=lp.column, depth=lp.depth, trip_count=None, trip_expr=None,
                    unroll=lp.unroll)
