"""Build options from clperf.toml, the in-file directive and the command line; the clang command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clperf.core.buildopts import (
    gather_build_options,
    lookup_config,
    lookup_database,
    resolve_build_options,
    workspace_root,
)
from clperf.core.compile import clang_command, compile_source
from clperf.core.errors import InputError
from clperf.predictor.analysis.pipeline import analyze_text


def test_order_and_relative_paths(tmp_path: Path):
    (tmp_path / ".git").mkdir()  # the repository root: clperf.toml is looked up no higher
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


@pytest.mark.parametrize(("given", "passed"), [
    ("-DA -D B=2 -UC", ["-DA", "-DB=2", "-UC"]),
    ("-Wall -Wno-unused-variable -Werror=format -w",
     ["-Wall", "-Wno-unused-variable", "-Werror=format", "-w"]),
    ("-cl-std=CL2.0 -cl-fast-relaxed-math -cl-mad-enable", ["-cl-std=CL2.0", "-cl-fast-relaxed-math",
                                                             "-cl-mad-enable"]),
    ("-x cl -std=CL1.2 -std=clc++2021", ["-x", "cl", "-std=CL1.2", "-std=clc++2021"]),
    ("-I /abs/inc -I/abs/two", ["-I/abs/inc", "-I/abs/two"]),
    ("-include /abs/h.h", ["-include", "/abs/h.h"]),
    ("'-DMSG=\"a b\"'", ['-DMSG="a b"']),
])
def test_allowed_options(given: str, passed: list[str]):
    assert resolve_build_options(None, "", given) == passed


@pytest.mark.parametrize("bad", ["-fplugin=x.so", "-fpass-plugin=x.so", "-Xclang -load", "--config=x.cfg",
                                 "--config x.cfg", "-Wl,-rpath,x", "-Wa,-x", "-Wp,-MD,x.d", "-MD", "-MF x.d",
                                 "-save-temps", "-ftime-trace=t.json", "-O2", "-x c", "-std=c99",
                                 "-isystem x", "-include=x.h", "--", "-cl-", "-o out.ll", "-target x86_64"])
def test_refused_options_name_the_option(bad: str):
    with pytest.raises(InputError, match=f"build option '{bad.split()[0] if bad != '-x c' else bad}' "
                                         "is not allowed"):
        resolve_build_options(None, "", bad)


def test_refusal_is_at_the_option_and_keeps_other_sources(tmp_path: Path):
    text = "kernel void k() {}\n  //  clperf-build: -DA=1 '-fplugin=x y.so'\n// clperf-build: -DB=2\n"
    found = gather_build_options(tmp_path / "k.cl", text, "-fplugin=z.so", extra_source="the setting")
    assert found.options == ("-DB=2",)
    line, extra = found.problems
    start = text.split("\n")[1].index("'-fplugin") + 1
    assert (line.line, line.column, line.end_column) == (2, start, start + len("'-fplugin=x y.so'"))
    assert "'-fplugin=x y.so'" in line.message and "this // clperf-build: line" in line.message
    assert extra.line == 1 and "the setting" in extra.message


def test_include_is_two_words_resolved_from_the_file(tmp_path: Path):
    opts = resolve_build_options(tmp_path / "k.cl", "// clperf-build: -include inc/h.h\n")
    assert opts == ["-include", str(tmp_path / "inc" / "h.h")]


def test_include_without_a_file_is_absolute_from_the_current_folder(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_build_options(None, "", "-include -h.h") == ["-include", str(tmp_path / "-h.h")]


def test_config_lookup_stops_at_the_workspace_root(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "clperf.toml").write_text('[build]\noptions = "-DA=1"\n')
    (tmp_path / "ws" / "src").mkdir(parents=True)
    k = tmp_path / "ws" / "src" / "k.cl"
    assert resolve_build_options(k, "") == ["-DA=1"]  # the repository root
    assert resolve_build_options(k, "", root=tmp_path / "ws") == []  # the workspace root
    assert resolve_build_options(k, "", root=tmp_path / "elsewhere") == ["-DA=1"]  # not the file's workspace
    assert lookup_config(tmp_path / "ws" / "src", tmp_path / "ws") == (None, ())


def test_workspace_root_is_the_innermost_folder_holding_the_file():
    assert workspace_root("/w/a/b/k.cl", ["/w", "/w/a", "/x"]) == "/w/a"
    assert workspace_root("/y/k.cl", ["/w"]) == ""
    assert workspace_root("", ["/w"]) == ""


def test_clang_reads_no_config_file():
    assert clang_command([], None)[1] == "--no-default-config"


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


# --- compile databases: compile_flags.txt, compile_commands.json --------------------------------------

def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a kernel folder; the kernel's path."""
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "kernels").mkdir()
    return tmp_path, tmp_path / "kernels" / "k.cl"


def _commands(folder: Path, *entries: dict) -> None:
    (folder / "compile_commands.json").write_text(json.dumps(list(entries)))


def test_compile_flags_txt_one_argument_a_line(tmp_path: Path):
    root, k = _repo(tmp_path)
    (root / "compile_flags.txt").write_text("-DA=1\n-I\ninclude\n\n-DMSG=a b\n-Wall\n")
    (root / "clperf.toml").write_text('[build]\noptions = "-DA=2"\n')
    found = gather_build_options(k, "// clperf-build: -DA=3\n")
    # relative paths from the flags file's folder; the database comes first, so clperf's own sources win
    assert found.options == ("-DA=1", f"-I{root / 'include'}", "-DMSG=a b", "-Wall", "-DA=2", "-DA=3")
    assert found.problems == ()


def test_compile_commands_entry_of_the_file(tmp_path: Path):
    root, k = _repo(tmp_path)
    (root / "build").mkdir()
    _commands(root / "build",
              {"directory": str(root / "kernels"), "file": "other.cl", "arguments": ["clang", "-DOTHER"]},
              {"directory": str(root / "build"), "file": str(k),
               "arguments": ["clang-19", "-x", "cl", "-cl-std=CL2.0", "-DBLOCK=16", "-I", "inc", "-c", str(k),
                             "-o", "k.bc", "-O2", "-g", "-emit-llvm", "--target=spir64", "-MD", "-MF", "k.d",
                             "-Xclang", "-finclude-default-header"]})
    found = gather_build_options(k, "")
    # build/compile_commands.json is where CMake puts it; -I is relative to the entry's directory; how
    # the build runs (-c, -o, -O2, -MD ...) is left out without a word
    assert found.options == ("-x", "cl", "-cl-std=CL2.0", "-DBLOCK=16", f"-I{root / 'build' / 'inc'}")
    assert found.problems == ()


def test_compile_commands_entry_of_a_kernel_in_the_same_folder(tmp_path: Path):
    root, k = _repo(tmp_path)
    (root / "host").mkdir()
    host = "c++ -std=c++17 -DHOST -c kernels/main.cpp"
    kernel = "clang -D 'N=4' -c kernels/other.cl"
    _commands(root, {"directory": str(root), "file": "kernels/main.cpp", "command": host},
              {"directory": str(root), "file": "kernels/other.cl", "command": kernel})
    assert gather_build_options(k, "").options == ("-DN=4",)  # the .cl entry, never the host's
    assert gather_build_options(root / "host" / "h.cl", "").options == ()  # no kernel entry in that folder


def test_refused_database_options_are_left_out_alone(tmp_path: Path):
    root, k = _repo(tmp_path)
    _commands(root, {"directory": str(root), "file": str(k),
                     "arguments": ["clang", "-fplugin=evil.so", "-DOK=1", "-Xclang", "-load", "-Xclang",
                                   "evil.so", "-isystem", "/x", "-save-temps", str(k)]})
    found = gather_build_options(k, "")
    assert found.options == ("-DOK=1",)
    (problem,) = found.problems
    assert problem.severity == "warning" and str(root / "compile_commands.json") in problem.message
    for refused in ("'-fplugin=evil.so'", "'-Xclang -load'", "'-Xclang evil.so'", "'-isystem /x'",
                    "'-save-temps'"):
        assert refused in problem.message
    assert resolve_build_options(k, "") == ["-DOK=1"]  # a warning: a benchmark goes on without them
    cmd = clang_command(list(found.options), k.parent)
    assert not any("plugin" in w or w in ("-load", "-save-temps") for w in cmd)


def test_database_options_reach_clang(tmp_path: Path):
    root, k = _repo(tmp_path)
    (root / "compile_flags.txt").write_text("-DN=4\n-cl-std=CL2.0\n")
    text = "#if N != 4 || __OPENCL_VERSION__ != 200\n#error not the database's options\n#endif\n" \
           "kernel void k(global int *a) { a[0] = N; }\n"
    k.write_text(text)
    report = analyze_text(text, k)
    assert report.compiled and report.build_options[:2] == ("-DN=4", "-cl-std=CL2.0")
    assert not [d for d in report.diagnostics if d.severity == "error"]


def test_nearest_database_wins_and_the_lookup_stops_at_the_repository(tmp_path: Path):
    (tmp_path / "compile_flags.txt").write_text("-DOUTSIDE\n")  # above the repository: never read
    root, k = _repo(tmp_path / "repo")
    assert gather_build_options(k, "").options == ()
    _commands(root, {"directory": str(root), "file": str(k), "arguments": ["clang", "-DROOT"]})
    assert gather_build_options(k, "").options == ("-DROOT",)
    (root / "kernels" / "compile_flags.txt").write_text("-DNEAR\n")
    assert gather_build_options(k, "").options == ("-DNEAR",)
    assert lookup_database(root / "kernels")[0] == root / "kernels" / "compile_flags.txt"


def test_broken_database_is_a_warning_and_the_rest_is_used(tmp_path: Path):
    root, k = _repo(tmp_path)
    (root / "compile_commands.json").write_text('[{"directory": "/", "file": ')
    found = gather_build_options(k, "// clperf-build: -DB=2\n")
    assert found.options == ("-DB=2",)
    (problem,) = found.problems
    assert problem.severity == "warning" and "not valid JSON" in problem.message
    _commands(root, {"file": "k.cl"})
    assert "without a \"directory\"" in gather_build_options(k, "").problems[0].message


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_another_users_database_is_ignored(tmp_path: Path):
    root, k = _repo(tmp_path)
    (root / "compile_flags.txt").write_text("-DTHEIRS\n")
    os.chown(root / "compile_flags.txt", 65534, 65534)  # nobody
    found = gather_build_options(k, "")
    assert found.options == ()
    (problem,) = found.problems
    assert problem.severity == "warning" and "belongs to another user" in problem.message
