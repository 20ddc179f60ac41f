"""OpenCL C -> LLVM IR with clang-19, and clang's messages as diagnostics at file positions.

The command line is the one TOOLCHAIN.md verified: a ``spir64`` target (keeps address spaces),
``-finclude-default-header`` (the OpenCL builtins), ``-fno-discard-value-names`` (keeps argument names) and
``-D__OPENCL_VERSION__`` (clang does not predefine it; real headers test it). For the analysis we add
``-O1`` (SSA values and clean address arithmetic), ``-fno-unroll-loops`` (loops stay loops so trip counts
can be read), every helper function inlined (``INLINE_THRESHOLD``) and ``-gline-tables-only`` (every
instruction carries its source line and column).

The source goes through stdin so unsaved editor buffers compile; clang runs in the file's folder with that
folder on the include path, as if it compiled the file itself. Results are cached in process by (text,
options): the language server calls this on every save.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from threading import Lock
from typing import Literal

from clperf.core import children
from clperf.core.errors import CompileError

Severity = Literal["error", "warning", "information", "hint"]

STDIN_NAME = "<stdin>"
CACHE_SIZE = 64
_CL_VERSIONS = {
    "CL1.0": 100,
    "CL1.1": 110,
    "CL1.2": 120,
    "CL2.0": 200,
    "CL3.0": 300,
    "cl1.0": 100,
    "cl1.1": 110,
    "cl1.2": 120,
    "cl2.0": 200,
    "cl3.0": 300,
}
_DIAG = re.compile(
    r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning|note|remark): "
    r"(?P<msg>.*?)(?: \[(?P<flag>[^\]]+)\])?$"
)
_INCLUDED_FROM = re.compile(r"^In file included from (?P<file>.*?):(?P<line>\d+):")
# what clang (LLVM's allocator, the C++ runtime, the loader mapping its libraries) says when an
# allocation fails under RLIMIT_AS
_OUT_OF_MEMORY = re.compile(r"LLVM ERROR: out of memory|Allocation failed|std::bad_alloc|"
                            r"failed to map segment from shared object|cannot allocate memory", re.IGNORECASE)
_TOKEN = re.compile(r'"[^"]*"|<[^>]*>|[A-Za-z_]\w*|\d[\w.]*|\S')


@dataclass(frozen=True)
class Diagnostic:
    """A message about the file, 1-based, end exclusive-ish (the end of the token it points at)."""

    line: int
    column: int
    end_line: int
    end_column: int
    severity: Severity
    code: str
    message: str
    source: str = "clang"

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "source": self.source,
        }


@dataclass(frozen=True)
class CompileResult:
    ir: str | None  # LLVM IR text, None when clang failed
    diagnostics: tuple[Diagnostic, ...]
    command: tuple[str, ...] = ()
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.ir is not None


def find_clang() -> str:
    """``$CLPERF_CLANG``, ``clang-19`` on PATH, or Debian's LLVM 19 folder."""
    for candidate in (os.environ.get("CLPERF_CLANG"), shutil.which("clang-19"), "/usr/lib/llvm-19/bin/clang"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise CompileError("clang-19 not found: install it (apt-get install clang-19) or set CLPERF_CLANG")


def cl_version(options: list[str]) -> tuple[str, int]:
    """The ``-cl-std`` in ``options`` (CL1.2 when absent) and its ``__OPENCL_VERSION__`` value."""
    std = "CL1.2"
    for opt in options:
        if opt.startswith("-cl-std="):
            std = opt.split("=", 1)[1]
    return std, _CL_VERSIONS.get(std, 120)


# -O1 leaves a large helper called from several places a call, which the analysis cannot see into (its loops
# and accesses would count for nothing); OpenCL has no recursion, so inlining everything always ends
INLINE_THRESHOLD = 1_000_000


def clang_command(options: list[str], folder: Path | None) -> list[str]:
    std, version = cl_version(options)
    cmd = [
        find_clang(),
        "--no-default-config",  # no clang.cfg beside the binary or in a config folder adds options
        "-fno-crash-diagnostics",  # a crashing clang writes no reproducer files
        "-x",
        "cl",
        "-Xclang",
        "-finclude-default-header",
        "-fno-discard-value-names",
        "-target",
        "spir64",
        "-emit-llvm",
        "-S",
        "-O1",
        "-fno-unroll-loops",
        "-mllvm",  # every helper function inlined into its kernels, as GPU compilers do
        f"-inline-threshold={INLINE_THRESHOLD}",
        "-gline-tables-only",
        "-fno-color-diagnostics",
        "-fno-caret-diagnostics",
        "-fdiagnostics-show-option",
        "-ferror-limit=50",
    ]
    if not any(o.startswith("-cl-std=") for o in options):
        cmd.append(f"-cl-std={std}")
    if not any(o.startswith(("-D__OPENCL_VERSION__", "-U__OPENCL_VERSION__")) for o in options):
        cmd.append(f"-D__OPENCL_VERSION__={version}")
    if folder is not None:
        cmd.append(f"-I{folder}")
    cmd += options
    cmd += ["-", "-o", "-"]
    return cmd


_cache: OrderedDict[tuple[str, tuple[str, ...], str], CompileResult] = OrderedDict()
_cache_lock = Lock()


_UNROLL_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+unroll\b.*$", re.M)


def without_unroll_pragmas(text: str) -> str:
    """The source with ``#pragma unroll`` lines blanked, as clperf's analysis and the counting run both
    compile it: clang would unroll those loops and their trip counts would be lost (and a counting run's
    blocks would not be the analysis's). Line numbers do not change."""
    return _UNROLL_PRAGMA.sub("", text)


def compile_source(text: str, path: Path | None, options: list[str], timeout_s: float = 20) -> CompileResult:
    """Compile ``text`` (the content of ``path``, saved or not) to LLVM IR.

    clang's errors and warnings become diagnostics in this file: those in the file at their position,
    those in an included file at the ``#include`` line. A timeout is a diagnostic too. Raises
    CompileError only when clang itself cannot be found or started.
    """
    folder = path.parent if path is not None else None
    key = (hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(), tuple(options), str(folder))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return CompileResult(hit.ir, hit.diagnostics, hit.command, cached=True)
    result = _run_clang(text, folder, options, timeout_s)
    if "#include" not in text and not any(d.code == "timeout" for d in result.diagnostics):
        # a file with #include is compiled every time: the header may have changed, the text not
        with _cache_lock:
            _cache[key] = result
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return result


def _run_clang(text: str, folder: Path | None, options: list[str], timeout_s: float) -> CompileResult:
    cmd = clang_command(options, folder)
    cwd = str(folder) if folder is not None and folder.is_dir() else None
    memory = children.clang_memory_bytes()
    try:
        # its own process group, killed with clperf; a file can make clang grow without end (a macro
        # expansion that doubles at every level), hence the address-space limit
        proc = children.run(cmd, input=text.encode("utf-8", "replace"), timeout_s=timeout_s, cwd=cwd,
                            memory_bytes=memory)
    except subprocess.TimeoutExpired:
        d = Diagnostic(
            1,
            1,
            1,
            1,
            "error",
            "timeout",
            f"clang did not finish within {timeout_s:g} s; the file was not analysed",
        )
        return CompileResult(None, (d,), tuple(cmd))
    except OSError as e:
        raise CompileError(f"cannot run {cmd[0]}: {e}") from e
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0 and memory is not None and _OUT_OF_MEMORY.search(stderr):
        d = Diagnostic(1, 1, 1, 1, "error", "memory-limit",
                       f"clang ran out of its memory limit ({memory >> 20} MiB; CLPERF_CLANG_MEMORY_MB "
                       "sets it, 0 for none); the file was not analysed")
        return CompileResult(None, (d,), tuple(cmd))
    diags = parse_diagnostics(stderr, text)
    if proc.returncode != 0:
        if not any(d.severity == "error" for d in diags):
            tail = stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            diags = (*diags, Diagnostic(1, 1, 1, 1, "error", "compile-error", f"clang failed: {tail[0]}"))
        return CompileResult(None, diags, tuple(cmd))
    return CompileResult(proc.stdout.decode("utf-8", "replace"), diags, tuple(cmd))


def char_column(lines: list[str], line: int, column: int) -> int:
    """clang's 1-based column (diagnostics, debug locations) counts bytes of the UTF-8 it was given;
    records count characters."""
    if 1 <= line <= len(lines) and not lines[line - 1].isascii():
        head = lines[line - 1].encode("utf-8", "replace")[:column - 1]
        return len(head.decode("utf-8", "ignore")) + 1
    return column


def _token_end(lines: list[str], line: int, column: int) -> tuple[int, int]:
    if 1 <= line <= len(lines):
        text = lines[line - 1]
        m = _TOKEN.match(text, column - 1) if column - 1 < len(text) else None
        if m:
            return line, m.end() + 1
    return line, column + 1


def parse_diagnostics(stderr: str, text: str) -> tuple[Diagnostic, ...]:
    """clang's stderr -> diagnostics in the main file. Notes are folded into the message before them."""
    lines = text.split("\n")
    out: list[Diagnostic] = []
    include_line: int | None = None  # line of the #include in the main file, for messages from headers
    seen: set[tuple[int, int, str]] = set()
    for raw in stderr.splitlines():
        inc = _INCLUDED_FROM.match(raw)
        if inc:
            if inc.group("file") == STDIN_NAME:
                include_line = int(inc.group("line"))
            continue
        m = _DIAG.match(raw)
        if not m:
            continue
        sev = m.group("sev")
        in_main = m.group("file") == STDIN_NAME
        if sev == "note":
            continue
        if in_main:
            line = int(m.group("line"))
            col = char_column(lines, line, int(m.group("col")))
            message = m.group("msg")
        elif include_line is not None:
            line, col = include_line, 1
            message = f"in included file {m.group('file')}:{m.group('line')}: {m.group('msg')}"
        else:
            line, col = 1, 1
            message = f"{m.group('file')}:{m.group('line')}: {m.group('msg')}"
        if in_main:
            include_line = None
        severity: Severity = "error" if "error" in sev else "warning" if sev == "warning" else "information"
        flag = m.group("flag")
        code = flag.split(",")[-1].lstrip("-") if flag else ("compile-error" if severity == "error" else sev)
        key = (line, col, message)
        if key in seen:
            continue
        seen.add(key)
        if in_main:
            end_line, end_col = _token_end(lines, line, col)
        else:
            end_line, end_col = line, len(lines[line - 1]) + 1 if 1 <= line <= len(lines) else col + 1
        out.append(Diagnostic(line, col, end_line, end_col, severity, code, message))
    return tuple(out)
