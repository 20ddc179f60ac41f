"""The tolerant front end (tree-sitter and a kernel-head pattern) finds kernels however their head is
written, so directives, loops and lenses attach to them before clang has compiled anything."""

from __future__ import annotations

from clperf.core.frontend import ALWAYS_INLINE, inline_helpers, parse

HEADS = """
__kernel void a(__global float* x) { x[0] = 1.0f; }
kernel __attribute__((reqd_work_group_size(64, 1, 1))) void b(global int* y) { y[0] = 2; }
void __kernel c(const unsigned int n, __global unsigned int* ap) {
    for (unsigned int i = 0; i < n; i++) ap[i] = i;
}
void helper(int z) {}
"""


def test_every_way_of_writing_a_kernel_head_is_found() -> None:
    kernels = {k.name: k for k in parse(HEADS)}
    assert list(kernels) == ["a", "b", "c"]  # not the plain function
    c = kernels["c"]
    assert [p.name for p in c.params] == ["n", "ap"] and c.params[1].pointer
    assert c.header_line == 4 and len(c.loops) == 1 and c.complete


HELPERS = """
#define N 4
static float scale(float v) { return v * N; }
int __attribute__((noinline)) kept(int a) { return a + 1; }
#ifdef WIDE
__global float* pick(__global float* p, int i) { return p + i; }
#endif
__kernel void k(__global float* x) { x[0] = scale(x[1]) + kept(2); }
"""


def test_helpers_are_marked_to_inline_on_their_own_lines_and_kernels_are_left_alone() -> None:
    out = inline_helpers(HELPERS)
    lines, before = out.split("\n"), HELPERS.split("\n")
    assert len(lines) == len(before)
    assert lines[2] == ALWAYS_INLINE + before[2]  # a static helper
    assert lines[3] == before[3]  # already told never to inline
    assert lines[5] == ALWAYS_INLINE + before[5]  # inside a preprocessor branch
    assert lines[7] == before[7]  # the kernel
    assert [k.name for k in parse(out)] == ["k"]
    kernels_only = HEADS.replace("void helper(int z) {}", "")
    assert inline_helpers(kernels_only) == kernels_only
