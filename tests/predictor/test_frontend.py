"""The tolerant front end (tree-sitter and a kernel-head pattern) finds kernels however their head is
written, so directives, loops and lenses attach to them before clang has compiled anything."""

from __future__ import annotations

from clperf.core.frontend import parse

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
