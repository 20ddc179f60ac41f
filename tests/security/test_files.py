"""Source files are read safely and ``clperf fix --apply`` never loses one.

Special files (a FIFO, ``/dev/zero``) and huge files get one clear line instead of a hang or an unbounded
read; a fix keeps the file's bytes as they were (Latin-1, CRLF, a BOM) outside the change, refuses when the
file changed since it was read, and leaves the original untouched when the disk is full. Offsets are
characters, so a non-ASCII character (or an emoji) above a kernel does not hide its rewrites.
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.workspace import PositionCodec
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from clperf.cli import build_parser
from clperf.cli import fix as fix_cli
from clperf.core.errors import InputError
from clperf.core.sourcefile import read_source, write_atomic
from clperf.predictor.analysis.pipeline import analyze_file

ROOT = Path(__file__).resolve().parents[2]
STENCIL = (ROOT / "examples" / "stencil.cl").read_text()
PRAGMA = "#pragma unroll 8"


def clperf(*args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess[str]:  # noqa: ANN003
    return subprocess.run([sys.executable, "-m", "clperf", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def fix(path: Path, *extra: str, **kw) -> subprocess.CompletedProcess[str]:  # noqa: ANN003
    return clperf("fix", str(path), "--kernel", "fir8", "--rule", "unroll", "--no-predict", *extra, **kw)


def one_clear_line(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# --- reading ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["predict"], ["fix", "--rule", "unroll"], ["bench"]])
def test_fifo_is_refused_at_once(tmp_path: Path, command: list[str]):
    fifo = tmp_path / "k.cl"
    os.mkfifo(fifo)
    r = clperf(command[0], str(fifo), *command[1:], timeout=20)  # with no writer, reading blocks forever
    one_clear_line(r, "FIFO", "regular file")


def test_analyze_names_the_fifo(tmp_path: Path):
    fifo = tmp_path / "k.cl"
    os.mkfifo(fifo)
    r = clperf("analyze", str(fifo), timeout=20)
    assert r.returncode == 1 and "is a FIFO, not a regular file" in r.stdout, (r.stdout, r.stderr)


def test_fifo_in_analyze_file_is_a_diagnostic(tmp_path: Path):
    fifo = tmp_path / "k.cl"
    os.mkfifo(fifo)
    rep = analyze_file(fifo)  # what `clperf check` and the server's file reads go through
    assert [d.code for d in rep.diagnostics] == ["io"] and "FIFO" in rep.diagnostics[0].message


def test_dev_zero_is_refused():
    r = clperf("fix", "/dev/zero", "--rule", "unroll", timeout=20)
    one_clear_line(r, "/dev/zero", "character device")


def test_folder_is_refused(tmp_path: Path):
    with pytest.raises(InputError, match="a folder"):
        read_source(tmp_path)


def test_twenty_mebibyte_file_is_refused_by_its_size(tmp_path: Path):
    big = tmp_path / "big.cl"
    big.write_text(STENCIL + ("// " + "x" * 96 + "\n") * (20 * 2**20 // 100))
    r = fix(big)
    one_clear_line(r, "20.0 MiB", "up to 8.0 MiB")


def test_sparse_huge_file_is_not_read(tmp_path: Path):
    huge = tmp_path / "huge.cl"
    with huge.open("wb") as f:
        f.truncate(64 * 2**30)  # 64 GiB of holes: reading it would take minutes and all the memory
    r = clperf("predict", str(huge), timeout=20)
    one_clear_line(r, "64.0 GiB", "up to 8.0 MiB")


# --- fix --apply keeps the file's bytes ---------------------------------------------------------------------

def applied(path: Path, data: bytes) -> bytes:
    path.write_bytes(data)
    r = fix(path, "--apply")
    assert r.returncode == 0, r.stderr
    return path.read_bytes()


def test_latin1_bytes_survive(tmp_path: Path):
    original = b"// caf\xe9 au lait\n" + STENCIL.encode()
    out = applied(tmp_path / "k.cl", original)
    assert out.startswith(b"// caf\xe9 au lait\n") and b"\xef\xbf\xbd" not in out
    assert PRAGMA.encode() in out
    assert out.replace(b"    " + PRAGMA.encode() + b"\n", b"", 1) == original


def test_crlf_stays_crlf_everywhere(tmp_path: Path):
    original = STENCIL.replace("\n", "\r\n").encode()
    out = applied(tmp_path / "k.cl", original)
    assert PRAGMA.encode() + b"\r\n" in out
    assert out.count(b"\n") == out.count(b"\r\n")  # no bare LF anywhere
    assert out.replace(b"    " + PRAGMA.encode() + b"\r\n", b"", 1) == original


def test_utf8_bom_is_kept(tmp_path: Path):
    original = b"\xef\xbb\xbf" + STENCIL.encode()
    out = applied(tmp_path / "k.cl", original)
    assert out.startswith(b"\xef\xbb\xbf") and out.count(b"\xef\xbb\xbf") == 1
    assert out.replace(b"    " + PRAGMA.encode() + b"\n", b"", 1) == original


@pytest.mark.parametrize(("data", "newline", "encoding"), [
    (b"a\rb\rc\r\n", "\r", "utf-8"), (b"a\r\nb\nc\r\n", "\r\n", "utf-8"), (b"x\xff\n", "\n", "latin-1"),
    (b"\xef\xbb\xbf\xc3\xa9\r\n", "\r\n", "utf-8")])
def test_source_round_trips(tmp_path: Path, data: bytes, newline: str, encoding: str):
    path = tmp_path / "k.cl"
    path.write_bytes(data)
    src = read_source(path)
    assert (src.newline, src.encoding) == (newline, encoding)
    assert src.encode(src.text) == data.replace(b"b\n", b"b\r\n")  # a lone LF takes the file's style
    assert src.encode(src.text + "new\n").endswith(newline.encode())


def test_file_changed_while_fixing_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "k.cl"
    path.write_text(STENCIL)
    from clperf import api
    real = api.analyze_text
    edited = STENCIL.replace("float acc = 0.0f;", "float acc = 1.0f; // the user's edit")

    def analyze_while_the_user_types(*a, **kw):  # noqa: ANN002, ANN003, ANN202
        rep = real(*a, **kw)
        path.write_text(edited)  # saved in the editor while clperf was working on the fix
        return rep

    monkeypatch.setattr(api, "analyze_text", analyze_while_the_user_types)
    ns = build_parser().parse_args(["fix", str(path), "-k", "fir8", "-r", "unroll", "--no-predict",
                                    "--apply"])
    with pytest.raises(InputError, match="changed since clperf read it; nothing written"):
        fix_cli.run_fix(ns)
    assert path.read_text() == edited


def test_write_atomic_refuses_a_changed_file(tmp_path: Path):
    path = tmp_path / "k.cl"
    path.write_text(STENCIL)
    src = read_source(path)
    path.write_text(STENCIL + "// later\n")
    with pytest.raises(InputError, match="changed since"):
        write_atomic(path, src.encode(src.text + "// fix\n"), src.sha256)
    assert path.read_text() == STENCIL + "// later\n"
    assert os.listdir(tmp_path) == ["k.cl"]


def test_write_atomic_keeps_the_mode_and_a_symlink(tmp_path: Path):
    real = tmp_path / "real.cl"
    real.write_text(STENCIL)
    real.chmod(0o640)
    link = tmp_path / "link.cl"
    link.symlink_to(real)
    src = read_source(link)
    write_atomic(link, src.encode(src.text + "// fix\n"), src.sha256)
    assert link.is_symlink() and real.read_text() == STENCIL + "// fix\n"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.cl", "real.cl"]


def test_full_disk_leaves_the_original(tmp_path: Path):
    path = tmp_path / "k.cl"
    path.write_text(STENCIL)
    original = path.read_bytes()
    limit = len(original) + 4  # the fixed file is 21 bytes longer: its write fails with EFBIG
    home = tmp_path / "home"  # caches of the run stay small and out of the way
    home.mkdir()

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    r = fix(path, "--apply", preexec_fn=small_files, env={**os.environ, "CLPERF_HOME": str(home)})
    one_clear_line(r, "cannot write", "unchanged")
    assert path.read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == ["home", "k.cl"]  # no temp file left


# --- character offsets --------------------------------------------------------------------------------------

@pytest.mark.parametrize("comment", ["// café", "/* 😀 */ // 😀 é"], ids=["latin", "emoji"])
@pytest.mark.parametrize("variant", ["1", "2"], ids=["pragma", "by-hand"])
def test_rewrite_after_non_ascii(tmp_path: Path, comment: str, variant: str):
    path = tmp_path / "k.cl"
    path.write_text(comment + "\n" + STENCIL, encoding="utf-8")
    r = fix(path, "--variant", variant)
    assert r.returncode == 0 and "disabled" not in r.stdout, r.stdout + r.stderr
    r = fix(path, "--variant", variant, "--apply")
    assert r.returncode == 0, r.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith(comment + "\n")
    assert (PRAGMA if variant == "1" else "unrolled by 8 by hand") in text, text
    rep = analyze_file(path)
    assert rep.compiled and not [d for d in rep.diagnostics if d.severity == "error"], rep.diagnostics


def test_front_end_columns_count_characters():
    from clperf.core import frontend
    text = ("kernel void k(global float *a) {\n"
            "  /*é😀*/ for (int i = 0; i < 4; i++) a[i] = 0;\n"
            "}\n/* ü */ kernel void k2(global float *b) { b[0] = 1; }\n")
    k, k2 = frontend.parse(text)
    assert k.complete and k2.complete and k2.column == 21 and k2.params[0].name == "b"
    assert [(lp.line, lp.column) for lp in k.loops] == [(2, 10)]  # "  /*é😀*/ " is 9 characters


# --- the editor: character columns become the client's code units ------------------------------------------

EMOJI_LOOP = STENCIL.replace("    for (int k = 0; k < 8; k++)", "    /* 😀 é */ for (int k = 0; k < 8; k++)")
_HOME = tempfile.mkdtemp(prefix="clperf-files-")  # the server's own state folder, away from the user's


def _refresh(client: LanguageClient, params: None) -> None:
    """The refresh requests the server sends after an analysis: nothing to redraw here."""


def _make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.WORKSPACE_CODE_LENS_REFRESH] = _refresh
    features[types.WORKSPACE_INLAY_HINT_REFRESH] = _refresh
    register_lsp_features(client, features)
    return client


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "clperf.server", "--stdio"],
    server_env={**os.environ, "CLPERF_HOME": _HOME, "CLPERF_CACHE_DIR": _HOME + "/cache"},
    client_factory=_make_client)


def _client_apply(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """What an editor does with the edits: positions in its own code units."""
    lines = text.split("\n")
    codec = PositionCodec(encoding)

    def offset(p: types.Position) -> int:
        char = codec.position_from_client_units(lines, types.Position(p.line, p.character)).character
        return sum(len(x) + 1 for x in lines[:p.line]) + char

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


@pytest_lsp.fixture(config=SERVER, params=["visual-studio-code", "neovim"])  # UTF-16 and UTF-8 positions
async def editor(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    lsp_client.set_configuration({"clperf": {}})
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(request.param)))
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.mark.e2e
@pytest.mark.slow
async def test_editor_edit_after_an_emoji_lands_on_the_loop(editor: LanguageClient, tmp_path: Path):
    path = tmp_path / "k.cl"
    path.write_text(EMOJI_LOOP, encoding="utf-8")
    uri = path.as_uri()
    editor.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="opencl", version=1, text=EMOJI_LOOP)))
    loop_line = EMOJI_LOOP.split("\n").index("    /* 😀 é */ for (int k = 0; k < 8; k++)")
    for _ in range(600):
        diags = [d for d in editor.diagnostics.get(uri, []) if d.code == "unroll-candidate"
                 and d.range.start.line == loop_line]
        if diags:
            break
        await asyncio.sleep(0.1)
    assert diags, editor.diagnostics.get(uri)
    found = await editor.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), diags[0].range, types.CodeActionContext(diagnostics=diags)))
    by_hand = next(a for a in found or [] if "by hand" in a.title)
    edits = by_hand.edit.changes[uri]
    encoding = editor.encoding  # type: ignore[attr-defined]
    prefix = "    /* 😀 é */ "  # 14 characters; 15 UTF-16 units; 18 UTF-8 bytes
    start = {"utf-16": 15, "utf-8": 18, "utf-32": 14}[encoding]
    assert (edits[0].range.start.line, edits[0].range.start.character) == (loop_line, start), encoding
    fixed = _client_apply(EMOJI_LOOP, edits, encoding)
    assert prefix + "{ /* clperf: unrolled by 8 by hand" in fixed, fixed
    path.write_text(fixed, encoding="utf-8")
    rep = analyze_file(path)
    assert rep.compiled and not [d for d in rep.diagnostics if d.severity == "error"], rep.diagnostics


@pytest.mark.parametrize(("encoding", "units"), [("utf-16", [0, 3, 4, 6, 7]), ("utf-8", [0, 3, 5, 9, 10]),
                                                ("utf-32", [0, 3, 4, 5, 6])])
def test_columns_convert_both_ways(encoding: str, units: list[int]):
    from clperf.server import convert

    u = convert.Units(["a\fb", "ab é😀x\r", "plain"], PositionCodec(encoding))
    assert [u.to_client(1, c) for c in (0, 3, 4, 5, 6)] == units
    assert [u.from_client(1, n) for n in units] == [0, 3, 4, 5, 6]
    assert u.to_client(2, 4) == 4 and u.to_client(7, 3) == 3  # ASCII lines and lines past the end


def test_clang_and_ir_columns_count_characters(tmp_path: Path):
    from clperf.predictor.analysis.pipeline import analyze_text

    # clang's columns count UTF-8 bytes: "éé" is 2 characters, 4 bytes
    rep = analyze_text("kernel void k(global float *a) {\n    /* éé */ a[get_global_id(0)] = BLOCK;\n}\n")
    (d,) = [d for d in rep.diagnostics if d.severity == "error"]
    assert (d.line, d.column, d.end_column) == (2, 36, 41), d
    rep = analyze_text("kernel void k(global float *a, global float *b, int n) {\n"
                       "    int i = get_global_id(0);\n    /* éé */ b[i] = a[i * n];\n}\n")
    assert [(a.param, a.column) for a in rep.kernels[0].accesses] == [("b", 14), ("a", 21)]
    assert [(f.rule, f.column) for f in rep.findings] == [("uncoalesced-access", 21)]
