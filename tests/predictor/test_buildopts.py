"""Build options from clperf.toml, the in-file directive and the command line; the clang command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from clperf.predictor.buildopts import resolve_build_options
from clperf.predictor.compile import clang_command, compile_source

from clperf.errors import InputError


def test_order_and_relative_paths(tmp_path: Path):
    (tmp_path / "clperf.toml").write_text('[build]\noptions = "-DA=1 -I include"\n')
    sub = tmp_path / "kernels"
    sub.mkdir()
    k = sub / "k.cl"
    text = "// clperf-build: -DB=2 -I inc\nkernel void k() {}\n"
    opts = resolve_build_options(k, text, "-DA=3 -I ../shared -cl-std=CL2.0")
    assert opts == ["-DA=1", f"-I{tmp_path / 'include'}", "-DB=2", f"-I{sub / 'inc'}",
                    "-DA=3", f"-I{tmp_path / 'shared'}", "-cl-std=CL2.0"]


def test_no_path_keeps_options():
    assert resolve_build_options(None, "", "-D X=1 -I inc") == ["-DX=1", "-Iinc"]


@pytest.mark.parametrize("bad", ['-DX="open', "-o out.ll", "BLOCK=16", "-I"])
def test_bad_options_are_input_errors(bad: str):
    with pytest.raises(InputError):
        resolve_build_options(None, "", bad)


def test_broken_config_is_input_error(tmp_path: Path):
    (tmp_path / "clperf.toml").write_text("[build\n")
    with pytest.raises(InputError):
        resolve_build_options(tmp_path / "k.cl", "", "")


def test_opencl_version_follows_cl_std():
    assert "-D__OPENCL_VERSION__=120" in clang_command([], None)
    cmd = clang_command(["-cl-std=CL2.0"], None)
    assert "-D__OPENCL_VERSION__=200" in cmd and "-cl-std=CL1.2" not in cmd


def test_opencl_version_is_defined_for_headers():
    src = "#if __OPENCL_VERSION__ != 200\n#error wrong version\n#endif\nkernel void k() {}\n"
    assert compile_source(src, None, ["-cl-std=CL2.0"]).ir is not None
    assert compile_source(src, None, []).ir is None


def test_compile_cache_hits_on_same_text_and_options():
    src = "kernel void cached(global int *a) { a[0] = 7; }\n"
    first = compile_source(src, None, ["-DZ=1"])
    again = compile_source(src, None, ["-DZ=1"])
    other = compile_source(src, None, ["-DZ=2"])
    assert again.cached and again.ir == first.ir and not other.cached


def test_warning_keeps_its_flag_as_code():
    res = compile_source("kernel void k(global int *a) {\n  int unused_v = 1;\n  a[0] = 1;\n}\n", None,
                         ["-Wunused-variable"])
    (d,) = res.diagnostics
    assert (d.severity, d.code, d.line, d.column, d.end_column) == ("warning", "Wunused-variable", 2, 7, 15)
