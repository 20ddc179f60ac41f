"""Build options and clperf.toml from a cloned file cannot make clang load code or write files.

A shared library built here writes a marker file from its constructor; every way of handing it to clang
(``-fplugin=``, ``-fpass-plugin=``, ``-Xclang -load``, ``--config=``) through a ``// clperf-build:`` line,
a ``clperf.toml`` or the ``clperf.buildOptions`` setting is refused with a diagnostic at the option, on
``clperf analyze``, ``clperf check --format sarif`` and in the language server on didOpen alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import pytest_lsp
import server_conftest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from clperf.cli import main
from clperf.predictor.analysis.pipeline import analyze_file, analyze_text

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "kernel void k(global int *a) { a[0] = 1; }\n"
PREFIX = "// clperf-build: -DN=4 "
DIRECTIVE_LINE = 3  # 1-based line of the directive in ``with_directive``
ATTACKS = {
    "fplugin": ("-fplugin={lib}", "-fplugin={lib}"),
    "fpass-plugin": ("-fpass-plugin={lib}", "-fpass-plugin={lib}"),
    # each word starts with '-' (the old filter): the library is -/evil.so beside the kernel, where clang runs
    "xclang-load": ("-Xclang -load -Xclang -/evil.so", "-Xclang"),
    "config": ("--config={cfg}", "--config={cfg}"),
}  # name -> (the options, the first word the diagnostic must name)
EVIL_C = """#include <stdio.h>
__attribute__((constructor)) static void ran(void) {
    FILE *f = fopen(MARKER, "a");
    if (f) { fputs("the library ran\\n", f); fclose(f); }
}
"""


lsp = server_conftest  # tests/server/conftest.py, loaded by tests/security/conftest.py


class Evil:
    def __init__(self, folder: Path) -> None:
        self.lib = folder / "evil.so"
        self.marker = folder / "MARKER"
        self.cfg = folder / "evil.cfg"  # a clang config file that loads the library
        src = folder / "evil.c"
        src.write_text(EVIL_C)
        cmd = [_cc(), "-shared", "-fPIC", f'-DMARKER="{self.marker}"', "-o", str(self.lib), str(src)]
        subprocess.run(cmd, check=True, capture_output=True)
        self.cfg.write_text(f"-fplugin={self.lib}\n")

    def options(self, attack: str, folder: Path) -> str:
        """The options of ``attack`` for a kernel in ``folder`` (where clang runs)."""
        (folder / "-").mkdir(exist_ok=True)
        shutil.copy(self.lib, folder / "-" / "evil.so")
        return ATTACKS[attack][0].format(lib=self.lib, cfg=self.cfg)

    def named(self, attack: str) -> str:
        return ATTACKS[attack][1].format(lib=self.lib, cfg=self.cfg)

    def ran(self) -> bool:
        return self.marker.exists()


def _cc() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the test's shared library")
    return cc


@pytest.fixture(scope="module")
def evil_lib(tmp_path_factory: pytest.TempPathFactory) -> Evil:
    return Evil(tmp_path_factory.mktemp("evil"))


@pytest.fixture
def evil(evil_lib: Evil) -> Evil:
    evil_lib.marker.unlink(missing_ok=True)
    yield evil_lib
    evil_lib.marker.unlink(missing_ok=True)


def test_the_library_runs_when_clang_is_given_it(evil: Evil, tmp_path: Path) -> None:
    """The probe itself: clang handed the library straight away runs it (so the tests below can fail)."""
    (tmp_path / "k.cl").write_text(KERNEL)
    subprocess.run(["clang-19", "-x", "cl", "-target", "spir64", "-emit-llvm", "-S", f"-fplugin={evil.lib}",
                    str(tmp_path / "k.cl"), "-o", os.devnull], capture_output=True, check=False)
    assert evil.ran()


def with_directive(options: str) -> str:
    return "// a kernel file cloned from somewhere\n\n" + PREFIX + options + "\n" + KERNEL


def repo(folder: Path) -> Path:
    (folder / ".git").mkdir(parents=True)
    return folder


def refusals(diagnostics: list[dict]) -> list[dict]:
    return [d for d in diagnostics if d["code"] == "build-options"]


# --- (a) clperf analyze, (b) clperf check --format sarif: a // clperf-build: line -----------------------

@pytest.mark.parametrize("attack", ATTACKS)
def test_analyze_refuses_directive(attack: str, evil: Evil, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    k = repo(tmp_path) / "k.cl"
    k.write_text(with_directive(evil.options(attack, k.parent)))
    main(["analyze", str(k), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert not evil.ran()
    (d,) = refusals(report["diagnostics"])
    assert (d["line"], d["column"]) == (DIRECTIVE_LINE, len(PREFIX) + 1)
    assert d["end_column"] == len(PREFIX) + 1 + len(evil.named(attack))
    assert f"build option '{evil.named(attack)}' is not allowed" in d["message"]
    assert report["compiled"]  # analysed without the refused line


@pytest.mark.parametrize("attack", ATTACKS)
def test_check_sarif_refuses_directive(attack: str, evil: Evil, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    src = repo(tmp_path) / "src"
    src.mkdir()
    (src / "k.cl").write_text(with_directive(evil.options(attack, src)))
    main(["check", str(tmp_path), "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    assert not evil.ran()
    results = [r for r in sarif["runs"][0]["results"] if r["properties"].get("code") == "build-options"]
    (r,) = results
    assert r["level"] == "error" and evil.named(attack) in r["message"]["text"]
    region = r["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (DIRECTIVE_LINE, len(PREFIX) + 1)


# --- (c) clperf.toml ---------------------------------------------------------------------------------

@pytest.mark.parametrize("attack", ATTACKS)
def test_toml_above_the_repository_is_not_read(attack: str, evil: Evil, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = repo(tmp_path / "project") / "src"
    src.mkdir()
    (tmp_path / "clperf.toml").write_text(f"[build]\noptions = {json.dumps(evil.options(attack, src))}\n")
    (src / "k.cl").write_text(KERNEL)
    main(["check", str(tmp_path / "project"), "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    assert not evil.ran()
    assert sarif["runs"][0]["results"] == []  # not read at all: nothing to report


@pytest.mark.parametrize("attack", ATTACKS)
def test_toml_in_the_repository_is_refused_at_line_1(attack: str, evil: Evil, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    toml = repo(tmp_path) / "clperf.toml"
    (tmp_path / "src").mkdir()
    toml.write_text(f"[build]\noptions = {json.dumps(evil.options(attack, tmp_path / 'src'))}\n")
    (tmp_path / "src" / "k.cl").write_text(KERNEL)
    main(["analyze", str(tmp_path / "src" / "k.cl"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert not evil.ran()
    (d,) = refusals(report["diagnostics"])
    assert d["line"] == 1 and str(toml) in d["message"] and evil.named(attack) in d["message"]
    assert report["compiled"]


GUARDED = "#ifdef FROM_TOML\n#error the clperf.toml was read\n#endif\n" + KERNEL


def test_toml_above_git_root_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "clperf.toml").write_text('[build]\noptions = "-DFROM_TOML=1"\n')
    k = repo(tmp_path / "project") / "k.cl"
    k.write_text(GUARDED)
    rep = analyze_file(k)
    assert rep.compiled and not rep.diagnostics, rep.diagnostics


def test_toml_inside_the_repository_is_read(tmp_path: Path) -> None:
    (repo(tmp_path) / "clperf.toml").write_text('[build]\noptions = "-DFROM_TOML=1"\n')
    (tmp_path / "a" / "b").mkdir(parents=True)
    k = tmp_path / "a" / "b" / "k.cl"
    k.write_text(GUARDED)
    assert "-DFROM_TOML=1" in analyze_file(k).build_options


def test_toml_outside_any_repository_is_read_from_the_file_folder_only(tmp_path: Path) -> None:
    (tmp_path / "clperf.toml").write_text('[build]\noptions = "-DFROM_TOML=1"\n')
    (tmp_path / "sub").mkdir()
    k = tmp_path / "sub" / "k.cl"
    k.write_text(GUARDED)
    rep = analyze_file(k)
    assert rep.compiled and not rep.diagnostics, rep.diagnostics


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_toml_owned_by_another_user_is_ignored_with_a_warning(tmp_path: Path) -> None:
    toml = repo(tmp_path) / "clperf.toml"
    toml.write_text('[build]\noptions = "-DFROM_TOML=1"\n')
    os.chown(toml, 65534, 65534)  # nobody
    k = tmp_path / "k.cl"
    k.write_text(GUARDED)
    rep = analyze_file(k)
    assert rep.compiled and "-DFROM_TOML=1" not in rep.build_options
    (d,) = rep.diagnostics
    assert d.severity == "warning" and d.line == 1 and str(toml) in d.message and "another user" in d.message


# --- files clang would write ---------------------------------------------------------------------------

@pytest.mark.parametrize("options", ["-MD -MF out.d", "-save-temps", "-ftime-trace=trace.json",
                                     "-Wp,-MD,dep.d", "-ftime-trace"])
def test_no_option_makes_clang_write_a_file(options: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo(tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    k = folder / "k.cl"
    k.write_text(with_directive(options))
    before = sorted(tmp_path.rglob("*"))
    rep = analyze_file(k)
    assert sorted(tmp_path.rglob("*")) == before
    (d,) = [d for d in rep.diagnostics if d.code == "build-options"]
    assert d.line == DIRECTIVE_LINE and options.split()[0] in d.message


def test_include_passes_the_header(tmp_path: Path) -> None:
    (repo(tmp_path) / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("#define FROM_HEADER 7\n")
    k = tmp_path / "k.cl"
    k.write_text("// clperf-build: -include inc/defs.h\n"
                 "#ifndef FROM_HEADER\n#error the header was not included\n#endif\n" + KERNEL)
    rep = analyze_file(k)
    assert rep.compiled and not rep.diagnostics, rep.diagnostics
    assert rep.build_options[:2] == ("-include", str(tmp_path / "inc" / "defs.h"))


def test_a_refused_line_leaves_the_other_lines(tmp_path: Path, evil: Evil) -> None:
    text = ("// clperf-build: -DWIDTH=4\n"
            f"// clperf-build: -fplugin={evil.lib}\n"
            "#if WIDTH != 4\n#error WIDTH missing\n#endif\n" + KERNEL)
    rep = analyze_text(text, repo(tmp_path) / "k.cl")
    assert not evil.ran() and rep.compiled
    (d,) = rep.diagnostics
    assert d.line == 2 and d.code == "build-options" and "-DWIDTH=4" in rep.build_options


def test_clang_reads_no_default_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``clang.cfg`` next to the clang binary is a default config file; clperf's clang ignores it."""
    real = Path(os.path.realpath(shutil.which("clang-19") or "/usr/lib/llvm-19/bin/clang"))
    (tmp_path / "bin").mkdir()
    shutil.copy(real, tmp_path / "bin" / "clang")
    (tmp_path / "lib").symlink_to(real.parent.parent / "lib")  # clang finds its headers from its folder
    (tmp_path / "bin" / "clang.cfg").write_text("-DFROM_CFG=1\n")
    monkeypatch.setenv("CLPERF_CLANG", str(tmp_path / "bin" / "clang"))
    text = "#ifdef FROM_CFG\n#error a clang config file was read\n#endif\n" + KERNEL.replace(" k(", " cfg(")
    rep = analyze_text(text)
    assert rep.compiled and not rep.diagnostics, rep.diagnostics


# --- (d) the language server, on didOpen -----------------------------------------------------------------

@pytest_lsp.fixture(config=lsp.CONFIG)
async def server(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, workspace: Path, settings: dict | None = None) -> None:
    client.set_configuration({"clperf": {**lsp.TEST_SETTINGS, **(settings or {})}})
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)]))


def refused(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics[uri] if d.code == "build-options"]


@pytest.mark.e2e
@pytest.mark.slow
async def test_server_refuses_directives_on_open(server: LanguageClient, evil: Evil, tmp_path: Path) -> None:
    workspace = repo(tmp_path / "ws")
    await start(server, workspace)
    for attack in ATTACKS:
        folder = workspace / attack
        folder.mkdir()
        uri = await lsp.open_doc(server, with_directive(evil.options(attack, folder)), folder=folder)
        assert not evil.ran(), attack
        (d,) = refused(server, uri)
        assert (d.range.start.line, d.range.start.character) == (DIRECTIVE_LINE - 1, len(PREFIX))
        assert d.severity == types.DiagnosticSeverity.Error and evil.named(attack) in d.message


@pytest.mark.e2e
@pytest.mark.slow
async def test_server_refuses_the_setting_and_stays_in_the_workspace(server: LanguageClient, evil: Evil,
                                                                     tmp_path: Path) -> None:
    # a clperf.toml above the workspace folder, in the same repository: not the workspace's
    (repo(tmp_path) / "clperf.toml").write_text('[build]\noptions = "-DFROM_TOML=1"\n')
    workspace = tmp_path / "ws"
    workspace.mkdir()
    await start(server, workspace, {"buildOptions": f"-fplugin={evil.lib}"})
    uri = await lsp.open_doc(server, GUARDED, folder=workspace)
    assert not evil.ran()
    (d,) = refused(server, uri)
    assert d.range.start.line == 0 and "clperf.buildOptions" in d.message
    assert [x for x in server.diagnostics[uri] if x.code != "build-options"] == []  # the toml was not read


@pytest.mark.parametrize("attack", ["fplugin", "fpass-plugin", "config"])
def test_a_benchmark_hands_the_runtime_no_refused_option(attack: str, evil: Evil, tmp_path: Path) -> None:
    """The OpenCL runtime's own compiler gets the same allow-list: a benchmark given the attack's options
    (from the server's setting, a sweep's file) ends as a build error naming the option, and runs nothing."""
    pytest.importorskip("pyopencl")
    from clperf.benchmark.devices import discover
    from clperf.benchmark.runner import benchmark
    from clperf.core.scenario import parse_flags

    device = next((d for d in discover(measure=False) if d.type == "cpu"), None)
    if device is None:
        pytest.skip("no CPU OpenCL device")
    m = benchmark(KERNEL, "k", parse_flags("--global 64 --arg a=64"), device,
                  build_options=evil.options(attack, tmp_path), timeout_s=60)
    assert m.status == "build-error"
    assert evil.named(attack) in (m.error or "")
    assert not evil.ran()
