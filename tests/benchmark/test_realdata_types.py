"""Parameter types from clang (``clperf.core.argtypes``): tiny kernels, the expected layout beside each."""

from __future__ import annotations

import numpy as np
import pytest

from clperf.benchmark.inputs import arg_element_type
from clperf.core.argtypes import ArgInfo, CType, kernel_args
from clperf.core.errors import CompileError

SOURCE = """
typedef float real;
typedef real real_t;                                  // a typedef of a typedef
typedef unsigned int index_t;
typedef float4 vec_t;
typedef enum { RED, GREEN } colour_t;
struct edge { int src; int dst; float w; };           // 12 bytes, align 4
typedef struct { char c; float4 v; short s; } padded_t;   // 1 + 15 pad + 16 + 2 + 14 tail pad = 48
typedef struct { struct edge e[2]; double d; union { int i; float f; } u; } nested_t;   // 24 + 8 + 4 + 4 pad
typedef struct __attribute__((packed)) { char c; int i; } packed_t;            // 5 bytes, align 1
typedef struct __attribute__((aligned(32))) { float x; } wide_t;               // 32 bytes, align 32

__kernel void k(__global const real_t* a, __global index_t* idx, __local vec_t* tile,
                __constant float3* c3, __global struct edge* edges, __global padded_t* p,
                __global nested_t* n, __global packed_t* pk, __global wide_t* w, colour_t colour,
                padded_t byval, DTYPE scale, image2d_t img) { }
"""


@pytest.fixture(scope="module")
def args() -> dict[str, ArgInfo]:
    return {a.name: a for a in kernel_args(SOURCE, None, "-DDTYPE=double")["k"]}


def test_typedefs_resolve_to_opencl_types(args):
    assert (args["a"].type.canonical, args["a"].type.name, args["a"].const) == ("float", "real_t", True)
    assert args["idx"].param().type == "uint" and args["colour"].type.canonical == "uint"
    assert args["scale"].param().type == "double"  # a -D macro is a type like any other
    assert (args["tile"].address_space, args["tile"].type.canonical) == ("local", "float4")
    c3 = args["c3"].type
    assert (args["c3"].address_space, c3.canonical, c3.size, c3.align) == ("constant", "float3", 16, 16)


def test_struct_layouts(args):
    def layout(t: CType) -> list[tuple[str, int, str]]:
        return [(f.name, f.offset, f.type.canonical) for f in t.fields]

    e = args["edges"].type
    assert (e.name, e.size, e.align, layout(e)) == (
        "struct edge", 12, 4, [("src", 0, "int"), ("dst", 4, "int"), ("w", 8, "float")])
    p = args["p"].type
    assert (p.size, p.align) == (48, 16)
    assert layout(p) == [("c", 0, "char"), ("v", 16, "float4"), ("s", 32, "short")]
    n = args["n"].type
    assert (n.size, n.align, [f.name for f in n.fields]) == (40, 8, ["e", "d", "u"])
    assert n.fields[0].type.kind == "array" and n.fields[0].type.count == 2 and n.fields[1].offset == 24
    assert [f.name for f in n.fields[2].type.fields] == ["i"]  # a union is filled as its first member
    packed = args["pk"].type
    assert (packed.size, packed.align, layout(packed)[1]) == (5, 1, ("i", 1, "int"))
    assert (args["w"].type.size, args["w"].type.align) == (32, 32)
    assert not args["byval"].pointer and args["byval"].type.size == 48
    assert args["img"].type.kind == "opaque"


def test_numpy_dtypes_follow_the_layout(args):
    p = arg_element_type(args["p"]).dtype
    assert p.itemsize == 48 and p.fields["v"][1] == 16 and p.fields["v"][0].shape == (4,)
    n = arg_element_type(args["n"]).dtype
    assert n.fields["e"][0].shape == (2,) and n.fields["e"][0].base.names == ("src", "dst", "w")
    assert arg_element_type(args["c3"]).lanes == 4 and arg_element_type(args["idx"]).dtype == np.uint32
    packed = arg_element_type(args["pk"]).dtype
    assert packed.itemsize == 5 and packed.fields["i"][1] == 1


def test_a_pointer_that_is_itself_const_or_restrict_points_to_its_element_type():
    # ``T * const p``: the debug type of the parameter is the qualifier, the pointer under it
    src = """typedef __global float* fptr;
    __kernel void k(__global const int * const in, __global float * restrict out,
                    __global volatile uint * const volatile flags, fptr typed) { }"""
    got = {a.name: a for a in kernel_args(src, None)["k"]}
    assert [(got[n].pointer, got[n].type.kind, got[n].type.canonical, got[n].type.size)
            for n in ("in", "out", "flags", "typed")] == [
        (True, "scalar", "int", 4), (True, "scalar", "float", 4), (True, "scalar", "uint", 4),
        (True, "scalar", "float", 4)]
    assert got["in"].const and not got["out"].const


def test_types_are_read_once_per_source_and_options():
    first = kernel_args(SOURCE, None, "-DDTYPE=float")
    assert kernel_args(SOURCE, None, "-DDTYPE=float") is first
    assert kernel_args(SOURCE, None, "-DDTYPE=double")["k"] != first["k"]


def test_a_source_clang_rejects_says_where():
    with pytest.raises(CompileError, match="line 1: "):
        kernel_args("__kernel void k(__global undefined_t* x) {}", None)
