"""Bad input gives a diagnostic (or one clear line from the CLI), never a traceback, in bounded time."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from clperf.predictor.analysis.pipeline import analyze_file, analyze_text

GOOD = "kernel void k(global float *a) { a[get_global_id(0)] = 1.0f; }\n"


def codes(rep) -> list[str]:  # noqa: ANN001
    return [d.code for d in rep.diagnostics]


def test_empty_file():
    rep = analyze_text("")
    assert codes(rep) == ["no-kernels"] and rep.kernels == ()


def test_non_utf8_bytes(tmp_path: Path):
    p = tmp_path / "k.cl"
    p.write_bytes(b"// caf\xe9\n" + GOOD.encode())
    rep = analyze_file(p)
    enc = [d for d in rep.diagnostics if d.code == "encoding"]
    assert enc and enc[0].line == 1 and enc[0].severity == "warning"
    assert [k.name for k in rep.kernels] == ["k"] and rep.compiled


def test_five_megabyte_file_is_refused_quickly():
    text = GOOD + ("// padding " + "x" * 90 + "\n") * 50_000
    assert len(text) > 5_000_000
    t0 = time.perf_counter()
    rep = analyze_text(text)
    assert time.perf_counter() - t0 < 2
    assert codes(rep) == ["too-large"] and "MB" in rep.diagnostics[0].message


def test_unbalanced_braces():
    rep = analyze_text("kernel void k(global float *a) {\n    if (1) {\n        a[0] = 1.0f;\n")
    errors = [d for d in rep.diagnostics if d.severity == "error"]
    assert errors and errors[0].source == "clang"
    assert [k.name for k in rep.kernels] == ["k"] and not rep.kernels[0].analyzed


def test_missing_macro_points_at_its_use():
    rep = analyze_text("kernel void k(global float *a) {\n    a[get_global_id(0)] = BLOCK;\n}\n")
    (d,) = [d for d in rep.diagnostics if d.severity == "error"]
    assert (d.line, d.column, d.end_column) == (2, 27, 32) and "BLOCK" in d.message


def test_missing_macro_given_by_build_options():
    rep = analyze_text("kernel void k(global float *a) {\n    a[get_global_id(0)] = BLOCK;\n}\n",
                       build_options="-DBLOCK=16")
    assert rep.compiled and not [d for d in rep.diagnostics if d.severity == "error"]


def test_missing_include(tmp_path: Path):
    p = tmp_path / "k.cl"
    p.write_text('#include "nothere.h"\n' + GOOD)
    rep = analyze_file(p)
    (d,) = [d for d in rep.diagnostics if d.severity == "error"]
    assert d.line == 1 and "nothere.h" in d.message


def test_error_in_included_file_is_reported_at_the_include(tmp_path: Path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "h.h").write_text("int f(void) { return UNDEFINED_X; }\n")
    p = tmp_path / "k.cl"
    p.write_text('// clperf-build: -I inc\n#include "h.h"\n' + GOOD)
    rep = analyze_file(p)
    (d,) = [d for d in rep.diagnostics if d.severity == "error"]
    assert d.line == 2 and "UNDEFINED_X" in d.message and "h.h" in d.message


def test_file_without_kernels():
    rep = analyze_text("float helper(float x) { return x * 2.0f; }\n")
    assert rep.kernels == () and codes(rep) == ["no-kernels"]


def test_kernel_clang_rejects():
    rep = analyze_text("kernel void k(global float *a) {\n    a[0] = undeclared_fn(1);\n}\n")
    assert any(d.severity == "error" and d.line == 2 for d in rep.diagnostics)
    assert rep.kernels[0].name == "k" and not rep.kernels[0].analyzed


def test_bad_build_option_is_a_diagnostic():
    rep = analyze_text('// clperf-build: -DX="unterminated\n' + GOOD)
    (d,) = rep.diagnostics
    assert d.code == "build-options" and d.line == 1


def test_timeout_is_a_diagnostic():
    from clperf.core.compile import compile_source

    # a preprocessor bomb: 2^26 expansions, far longer than the 0.2 s allowed
    bomb = "#define A0 x\n" + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 27))
    res = compile_source(bomb + "int y = sizeof(#A26);\n" + "void f() { A26; }\n", None, [], timeout_s=0.2)
    assert res.ir is None and [d.code for d in res.diagnostics] == ["timeout"]


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00garbage{{{", b"kernel void (", GOOD.encode() * 2])
def test_cli_never_prints_a_traceback(tmp_path: Path, content: bytes):
    p = tmp_path / "k.cl"
    p.write_bytes(content)
    for cmd in (["analyze", str(p)], ["analyze", str(p), "--json"], ["check", str(p)]):
        r = subprocess.run([sys.executable, "-m", "clperf", *cmd], capture_output=True, text=True, timeout=60)
        assert "Traceback" not in r.stderr and r.returncode in (0, 1), (cmd, r.stderr)


def test_cli_missing_file_is_one_line(tmp_path: Path):
    r = subprocess.run([sys.executable, "-m", "clperf", "analyze", str(tmp_path / "nope.cl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no such file" in r.stderr


def test_edited_header_is_seen_without_changing_the_kernel_file(tmp_path: Path):
    (tmp_path / "h.h").write_text("#define SCALE 2.0f\n")
    p = tmp_path / "k.cl"
    p.write_text('#include "h.h"\nkernel void k(global float *a) { a[get_global_id(0)] *= SCALE; }\n')
    assert analyze_file(p).compiled
    (tmp_path / "h.h").write_text("#define SCALE oops\n")
    assert not analyze_file(p).compiled
