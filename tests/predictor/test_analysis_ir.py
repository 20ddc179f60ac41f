"""The IR analysis on hand-written LLVM IR, one feature per test, with the expected answer beside it.

Each module is the shape clang-19 emits for OpenCL C on ``spir64`` at ``-O1`` (what ``clperf.core.compile``
runs), cut down to the instructions that matter; the OpenCL source it stands for is in the docstring.
No clang runs: ``analyze_ir`` reads the string directly.
"""

from __future__ import annotations

from clperf.predictor.analysis.module import analyze_ir
from clperf.predictor.analysis.poly import freeze, sym
from clperf.predictor.analysis.records import Access, KernelReport

_PRELUDE = """\
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-G1"
target triple = "spir64"

declare spir_func i64 @_Z13get_global_idj(i32)
declare spir_func i64 @_Z12get_local_idj(i32)
declare spir_func i64 @_Z15get_global_sizej(i32)
declare spir_func void @_Z7barrierj(i32)

"""

# Parameter metadata of two global float buffers, the first const: `(global const float *a, global float *b)`
_TWO_BUFFERS = """
!0 = !{i32 1, i32 1}
!1 = !{!"float*", !"float*"}
!2 = !{!"const", !""}
"""

# ... and an int after them: `(global const float *a, global float *b, int n)`
_BUFFERS_AND_N = """
!0 = !{i32 1, i32 1, i32 0}
!1 = !{!"float*", !"float*", !"int"}
!2 = !{!"const", !"", !""}
"""

_ARG_MD = "!kernel_arg_addr_space !0 !kernel_arg_type !1 !kernel_arg_type_qual !2"


def analyse(ir: str) -> KernelReport:
    (k,) = analyze_ir(_PRELUDE + ir)
    return k


def one(k: KernelReport, param: str, kind: str = "load") -> Access:
    (a,) = [a for a in k.accesses if a.param == param and a.kind == kind]
    return a


def test_neighbouring_work_items_load_neighbouring_floats() -> None:
    """``b[i] = a[i]`` with ``i = get_global_id(0)``."""
    k = analyse(f"""
define spir_kernel void @copy(ptr addrspace(1) %a, ptr addrspace(1) %b) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %gid
  %x = load float, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %x, ptr addrspace(1) %dst, align 4
  ret void
}}
{_TWO_BUFFERS}""")
    a, b = one(k, "a"), one(k, "b", "store")
    assert (a.address_space, a.pattern, a.stride, a.element_size) == ("global", "contiguous", 1, 4)
    assert not a.in_loop
    assert (b.pattern, b.stride) == ("contiguous", 1)
    params = {p.name: p for p in k.params}
    assert (params["a"].read, params["a"].written, params["a"].const) == (True, False, True)
    assert (params["b"].read, params["b"].written) == (False, True)
    assert (k.ops.global_load_bytes, k.ops.global_store_bytes, k.dims, k.loops) == (4, 4, 1, ())


def test_a_load_four_floats_apart_is_strided_by_four_elements() -> None:
    """``b[i] = a[i * 4]``: clang writes the multiply as ``shl 2``; the stride counts floats, not bytes."""
    k = analyse(f"""
define spir_kernel void @every_fourth(ptr addrspace(1) %a, ptr addrspace(1) %b) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %i = trunc i64 %gid to i32
  %mul = shl nsw i32 %i, 2
  %idx = sext i32 %mul to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %x = load float, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %x, ptr addrspace(1) %dst, align 4
  ret void
}}
{_TWO_BUFFERS}""")
    a = one(k, "a")
    assert (a.pattern, a.stride, a.stride_expr) == ("strided", 4, None)
    assert one(k, "b", "store").pattern == "contiguous"


def test_a_stride_of_a_kernel_argument_stays_symbolic() -> None:
    """``b[i] = a[i * n]``."""
    k = analyse(f"""
define spir_kernel void @column(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %i = trunc i64 %gid to i32
  %mul = mul nsw i32 %i, %n
  %idx = sext i32 %mul to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %x = load float, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %x, ptr addrspace(1) %dst, align 4
  ret void
}}
{_BUFFERS_AND_N}""")
    a = one(k, "a")
    assert (a.pattern, a.stride, a.stride_expr) == ("strided", None, "n")


def test_an_address_loaded_from_an_index_buffer_is_indirect() -> None:
    """``b[i] = a[idx[i]]``: neighbours' addresses depend on the data."""
    k = analyse(f"""
define spir_kernel void @gather(ptr addrspace(1) %a, ptr addrspace(1) %idx, ptr addrspace(1) %b) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %ip = getelementptr inbounds i32, ptr addrspace(1) %idx, i64 %gid
  %j = load i32, ptr addrspace(1) %ip, align 4
  %jj = sext i32 %j to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %jj
  %x = load float, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %x, ptr addrspace(1) %dst, align 4
  ret void
}}
!0 = !{{i32 1, i32 1, i32 1}}
!1 = !{{!"float*", !"int*", !"float*"}}
!2 = !{{!"const", !"const", !""}}
""")
    assert (one(k, "idx").pattern, one(k, "idx").stride) == ("contiguous", 1)
    assert (one(k, "a").pattern, one(k, "a").stride) == ("indirect", None)


def test_a_loop_to_a_constant_runs_that_many_times_and_its_ops_count_as_often() -> None:
    """``for (k = 0; k < 16; k++) acc += a[i * 16 + k]; b[i] = acc;`` (rotated: the test at the latch)."""
    k = analyse(f"""
define spir_kernel void @row_sum(ptr addrspace(1) %a, ptr addrspace(1) %b) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %row = mul nsw i64 %gid, 16
  br label %loop

loop:
  %k = phi i64 [ 0, %entry ], [ %k.next, %loop ]
  %acc = phi float [ 0.000000e+00, %entry ], [ %acc.next, %loop ]
  %idx = add nsw i64 %row, %k
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %x = load float, ptr addrspace(1) %src, align 4
  %acc.next = fadd float %acc, %x
  %k.next = add nuw nsw i64 %k, 1
  %more = icmp ult i64 %k.next, 16
  br i1 %more, label %loop, label %done

done:
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %acc.next, ptr addrspace(1) %dst, align 4
  ret void
}}
{_TWO_BUFFERS}""")
    (lp,) = k.loops
    assert (lp.trip_count, lp.trip_expr, lp.depth, lp.varies) == (16, None, 1, False)
    a = one(k, "a")
    assert (a.in_loop, a.loops, a.pattern, a.stride) == (True, (0,), "strided", 16)
    # per work-item: 16 fadds, 16 loads of 4 bytes, one store; the mul once and add, add, icmp 16 times
    assert (k.ops.flops, k.ops.global_load_bytes, k.ops.global_store_bytes) == (16, 64, 4)
    assert (k.ops.int_ops, k.ops.trip_unknown) == (1 + 3 * 16, False)


def test_a_loop_to_an_argument_keeps_the_argument_as_its_trip_count() -> None:
    """``for (k = 0; k < n; k++) acc += a[k];``: clang guards the rotated loop with ``n > 0``."""
    k = analyse(f"""
define spir_kernel void @total(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %guard = icmp sgt i32 %n, 0
  br i1 %guard, label %loop, label %done

loop:
  %k = phi i32 [ 0, %entry ], [ %k.next, %loop ]
  %acc = phi float [ 0.000000e+00, %entry ], [ %acc.next, %loop ]
  %kk = zext nneg i32 %k to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %kk
  %x = load float, ptr addrspace(1) %src, align 4
  %acc.next = fadd float %acc, %x
  %k.next = add nuw nsw i32 %k, 1
  %more = icmp slt i32 %k.next, %n
  br i1 %more, label %loop, label %done

done:
  %sum = phi float [ 0.000000e+00, %entry ], [ %acc.next, %loop ]
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %sum, ptr addrspace(1) %dst, align 4
  ret void
}}
{_BUFFERS_AND_N}""")
    (lp,) = k.loops
    assert (lp.trip_count, lp.trip_expr, lp.varies) == (None, "n", False)
    assert lp.trip is not None and lp.trip.num == freeze(sym("arg:n")) and lp.trip.den == 1
    assert (lp.trips_for({"n": 10}), lp.trips_for({"n": 0}), lp.trips_for({"n": -3})) == (10, 0, 0)
    # every work-item reads the same a[k]: uniform
    assert (one(k, "a").pattern, one(k, "a").stride) == ("uniform", 0)
    ops = k.ops_for({"n": 10})
    assert (ops.flops, ops.global_load_bytes, ops.global_store_bytes, ops.trip_unknown) == (10, 40, 4, False)
    assert k.ops.trip_unknown  # without a value for n the loop counts once


def test_a_grid_stride_loop_runs_the_argument_over_the_global_size() -> None:
    """``for (k = get_global_id(0); k < n; k += get_global_size(0)) b[k] = 2 * a[k];``: work-item 0 runs
    the most iterations, ``ceil(n / gsz0)``."""
    k = analyse(f"""
define spir_kernel void @grid(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) {_ARG_MD} {{
entry:
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %gsz = tail call spir_func i64 @_Z15get_global_sizej(i32 0)
  %n64 = sext i32 %n to i64
  %guard = icmp slt i64 %gid, %n64
  br i1 %guard, label %loop, label %done

loop:
  %k = phi i64 [ %gid, %entry ], [ %k.next, %loop ]
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %k
  %x = load float, ptr addrspace(1) %src, align 4
  %y = fmul float %x, 2.000000e+00
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %k
  store float %y, ptr addrspace(1) %dst, align 4
  %k.next = add i64 %k, %gsz
  %more = icmp slt i64 %k.next, %n64
  br i1 %more, label %loop, label %done

done:
  ret void
}}
{_BUFFERS_AND_N}""")
    (lp,) = k.loops
    assert (lp.trip_count, lp.trip_expr, lp.varies) == (None, "ceil(n / gsz0)", True)
    assert lp.trips_for({"n": 1000, "@gsz0": 256}) == 4
    assert (one(k, "a").pattern, one(k, "b", "store").pattern) == ("contiguous", "contiguous")


def test_a_barrier_under_a_branch_on_the_local_id_is_divergent_at_its_line() -> None:
    """Line 4 ``if (get_local_id(0) < 16)``, line 5 ``barrier(CLK_LOCAL_MEM_FENCE);``: some work-items
    of the group skip the barrier. Positions come from the debug locations."""
    k = analyse(f"""
define spir_kernel void @half_barrier(ptr addrspace(1) %a, ptr addrspace(1) %b) !dbg !5 {_ARG_MD} {{
entry:
  %lid = tail call spir_func i64 @_Z12get_local_idj(i32 0), !dbg !20
  %few = icmp ult i64 %lid, 16, !dbg !21
  br i1 %few, label %then, label %end, !dbg !22

then:
  tail call spir_func void @_Z7barrierj(i32 1), !dbg !23
  br label %end, !dbg !23

end:
  ret void, !dbg !24
}}
{_TWO_BUFFERS}
!llvm.dbg.cu = !{{!3}}
!llvm.module.flags = !{{!6}}
!3 = distinct !DICompileUnit(language: DW_LANG_OpenCL, file: !4, emissionKind: LineTablesOnly)
!4 = !DIFile(filename: "<stdin>", directory: "/")
!5 = distinct !DISubprogram(name: "half_barrier", file: !4, line: 1, spFlags: DISPFlagDefinition, unit: !3)
!6 = !{{i32 2, !"Debug Info Version", i32 3}}
!20 = !DILocation(line: 3, column: 13, scope: !5)
!21 = !DILocation(line: 4, column: 25, scope: !5)
!22 = !DILocation(line: 4, column: 9, scope: !5)
!23 = !DILocation(line: 5, column: 9, scope: !5)
!24 = !DILocation(line: 6, column: 1, scope: !5)
""")
    assert (k.name, k.line, k.barriers) == ("half_barrier", 1, 1)
    assert k.divergent_barriers == ((5, 9, 4),)  # (barrier line, column, line of the condition)


def test_a_barrier_under_a_branch_on_an_argument_is_not_divergent() -> None:
    """``if (n > 16) barrier(CLK_LOCAL_MEM_FENCE);``: every work-item takes the same way."""
    k = analyse(f"""
define spir_kernel void @maybe_barrier(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) {_ARG_MD} {{
entry:
  %many = icmp sgt i32 %n, 16
  br i1 %many, label %then, label %end

then:
  tail call spir_func void @_Z7barrierj(i32 1)
  br label %end

end:
  ret void
}}
{_BUFFERS_AND_N}""")
    assert (k.barriers, k.divergent_barriers) == (1, ())


def test_a_local_array_is_an_access_of_its_own_and_marks_what_is_staged_in_it() -> None:
    """``local float tile[64]; tile[l] = a[get_global_id(0)]; barrier(...); b[...] = tile[63 - l];``
    with ``l = get_local_id(0)``: the array is named after the variable; reading it backwards is
    contiguous with stride -1."""
    k = analyse(f"""
@stage.tile = internal unnamed_addr addrspace(3) global [64 x float] undef, align 4

define spir_kernel void @stage(ptr addrspace(1) %a, ptr addrspace(1) %b) {_ARG_MD} {{
entry:
  %lid = tail call spir_func i64 @_Z12get_local_idj(i32 0)
  %l = trunc i64 %lid to i32
  %gid = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %gid
  %x = load float, ptr addrspace(1) %src, align 4
  %li = sext i32 %l to i64
  %slot = getelementptr inbounds [64 x float], ptr addrspace(3) @stage.tile, i64 0, i64 %li
  store float %x, ptr addrspace(3) %slot, align 4
  tail call spir_func void @_Z7barrierj(i32 1)
  %back = sub nsw i32 63, %l
  %bi = sext i32 %back to i64
  %mirror = getelementptr inbounds [64 x float], ptr addrspace(3) @stage.tile, i64 0, i64 %bi
  %y = load float, ptr addrspace(3) %mirror, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %gid
  store float %y, ptr addrspace(1) %dst, align 4
  ret void
}}
{_TWO_BUFFERS}""")
    put, get = one(k, "tile", "store"), one(k, "tile")
    assert (put.address_space, put.pattern, put.stride, put.element_size) == ("local", "contiguous", 1, 4)
    assert (get.address_space, get.pattern, get.stride) == ("local", "contiguous", -1)
    assert k.staged == ("a",)
    assert (k.ops.local_load_bytes, k.ops.local_store_bytes, k.ops.global_load_bytes) == (4, 4, 4)
    assert (k.barriers, k.divergent_barriers) == (1, ())


def test_a_row_major_2d_access_is_contiguous_along_x_and_strided_by_the_width_along_y() -> None:
    """``b[y * w + x] = a[y * w + x]`` with ``x, y = get_global_id(0), get_global_id(1)``."""
    k = analyse(f"""
define spir_kernel void @image(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %w) {_ARG_MD} {{
entry:
  %gx = tail call spir_func i64 @_Z13get_global_idj(i32 0)
  %x = trunc i64 %gx to i32
  %gy = tail call spir_func i64 @_Z13get_global_idj(i32 1)
  %y = trunc i64 %gy to i32
  %rowstart = mul nsw i32 %y, %w
  %i = add nsw i32 %rowstart, %x
  %idx = sext i32 %i to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %v = load float, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %b, i64 %idx
  store float %v, ptr addrspace(1) %dst, align 4
  ret void
}}
!0 = !{{i32 1, i32 1, i32 0}}
!1 = !{{!"float*", !"float*", !"int"}}
!2 = !{{!"const", !"", !""}}
""")
    a = one(k, "a")
    assert k.dims == 2
    assert (a.pattern, a.stride) == ("contiguous", 1)
    assert (a.dim1_pattern, a.dim1_stride, a.dim1_stride_expr) == ("strided", None, "w")
