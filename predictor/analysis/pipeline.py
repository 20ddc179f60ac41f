"""One call from OpenCL source to everything static analysis knows: ``analyze_text`` / ``analyze_file``.

This is the boundary the CLI and the language server call, so it never raises on bad input: an empty
file, undecodable bytes, a huge file, a missing macro or header, a file without kernels, or a kernel clang
rejects all give a FileReport whose diagnostics say what happened. Time is bounded by the clang timeout and
a size limit.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clperf.core import frontend, sourcefile
from clperf.core.buildopts import OptionProblem, gather_build_options
from clperf.core.compile import Diagnostic, char_column, compile_source, without_unroll_pragmas
from clperf.core.errors import ClperfError, InputError
from clperf.predictor.analysis.findings import Finding, find
from clperf.predictor.analysis.module import analyze_ir, unanalyzed
from clperf.predictor.analysis.records import Access, KernelReport, LoopInfo, Ops, ParamUse

__all__ = [
    "Access",
    "FileReport",
    "Finding",
    "KernelReport",
    "LoopInfo",
    "Ops",
    "ParamUse",
    "analyze_file",
    "analyze_text",
    "read_source",
]

MAX_BYTES = 1_000_000  # clang and the walk stay well under a second below this; kernels files are small
COMPILE_TIMEOUT_S = 20.0
_CACHE_SIZE = 32
_cache: OrderedDict[tuple[str, tuple[object, ...], str], FileReport] = OrderedDict()  # options, problems


@dataclass(frozen=True)
class FileReport:
    file: str
    diagnostics: tuple[Diagnostic, ...]
    kernels: tuple[KernelReport, ...]
    findings: tuple[Finding, ...]
    build_options: tuple[str, ...] = ()
    compiled: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def kernel(self, name: str) -> KernelReport | None:
        return next((k for k in self.kernels if k.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "build_options": list(self.build_options),
            "compiled": self.compiled,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "kernels": [k.to_json() for k in self.kernels],
            "findings": [f.to_json() for f in self.findings],
        }


def _diag(line: int, message: str, code: str, severity: str = "error", source: str = "clperf") -> Diagnostic:
    return Diagnostic(line, 1, line, 1, severity, code, message, source)  # type: ignore[arg-type]


def _option_diag(p: OptionProblem) -> Diagnostic:
    """A refused or ignored build-option source, at the option (a directive line) or at line 1."""
    end = p.end_column if p.end_column > p.column else p.column
    return Diagnostic(p.line, p.column, p.line, end, p.severity, "build-options", p.message, "clperf")


def read_source(path: Path) -> tuple[str, list[Diagnostic]]:
    """A file's text, read safely (``clperf.core.sourcefile``: regular files only, size-limited);
    bytes that are
    not UTF-8 are read as Latin-1 and reported at the first bad line. Raises ``InputError``."""
    source = sourcefile.read_source(path)
    if source.encoding == "utf-8":
        return source.text, []
    data = source.text.encode("latin-1")
    try:
        data.decode("utf-8")
        return source.text, []
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return source.text, [
            _diag(
                line,
                f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x} at offset "
                f"{e.start}); it was read as Latin-1",
                "encoding",
                "warning",
            )
        ]


def analyze_file(path: Path | str, build_options: str = "") -> FileReport:
    path = Path(path)
    try:
        text, diags = read_source(path)
    except InputError as e:
        return FileReport(str(path), (_diag(1, str(e), "io"),), (), ())
    report = analyze_text(text, path, build_options)
    if diags:
        report = FileReport(
            report.file,
            (*diags, *report.diagnostics),
            report.kernels,
            report.findings,
            report.build_options,
            report.compiled,
        )
    return report


def _in_characters(k: KernelReport, lines: list[str]) -> KernelReport:
    """The IR's debug locations count bytes; every column a report hands out counts characters. (Loops
    already carry the front end's columns, which count characters.)"""
    return replace(
        k,
        accesses=tuple(replace(a, column=char_column(lines, a.line, a.column)) for a in k.accesses),
        divergent_barriers=tuple((ln, char_column(lines, ln, col), cond)
                                 for ln, col, cond in k.divergent_barriers),
    )


def compiler_unroll_options(threshold: int) -> list[str]:
    """clang options that build like an LLVM-based device compiler that unrolls on its own: ``-O3`` (what
    such drivers build at) with LLVM's full unrolling of constant-trip loops up to a size ``threshold``
    (``-unroll-threshold``); none for 0. Run-time unrolling is off: it leaves a remainder copy of a loop,
    which the analysis would count as a second loop."""
    if threshold <= 0:
        return []
    return ["-O3", "-funroll-loops", "-mllvm", f"-unroll-threshold={int(threshold)}",
            "-mllvm", "-unroll-runtime=false"]


def analyze_text(text: str, path: Path | None = None, build_options: str = "", *,
                 unroll_threshold: int = 0, root: Path | None = None,
                 options_from: str = "--build-options") -> FileReport:
    """Compile and analyse ``text`` (the content of ``path``, saved or not). Never raises.

    ``unroll_threshold`` > 0 analyses the kernel as a device compiler that fully unrolls small
    constant-trip loops itself would build it (``compiler_unroll_options``): such loops are gone from the
    report, ``#pragma unroll`` is honoured rather than blanked. The rewrite speedup model uses that view;
    findings and features use the default (loops kept, so trip counts can be read).

    ``root`` is the workspace root, the top of the ``clperf.toml`` lookup; ``options_from`` names
    ``build_options`` in messages (the setting it came from). A refused build-option source is left out
    and reported at its line (``gather_build_options``); the file is analysed with the rest.
    """
    name = str(path) if path is not None else "<text>"
    diags: list[Diagnostic] = []
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_BYTES:
        diags.append(
            _diag(
                1,
                f"the file is {size / 1e6:.1f} MB; clperf analyses files up to "
                f"{MAX_BYTES / 1e6:.0f} MB (split it, or put the kernels in their own file)",
                "too-large",
            )
        )
        return FileReport(name, tuple(diags), (), ())
    if not text.strip():
        return FileReport(
            name, (_diag(1, "the file is empty: no kernels to analyse", "no-kernels", "information"),), (), ()
        )
    try:
        fe_kernels = frontend.parse(text)
    except Exception as e:  # noqa: BLE001 - the parse is best effort; clang still gets its say
        diags.append(_diag(1, f"the tolerant parser failed: {type(e).__name__}: {e}", "parse", "warning"))
        fe_kernels = []
    gathered = gather_build_options(path, text, build_options, root=root, extra_source=options_from)
    diags += [_option_diag(p) for p in gathered.problems]
    options = [*gathered.options, *compiler_unroll_options(unroll_threshold)]
    key = (hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(), (*options, *gathered.problems), name)
    hit = _cache.get(key)
    if hit is not None:  # the server asks again for the same text (save after save, hover, code lens)
        _cache.move_to_end(key)
        return hit
    report = _analyze(text, name, path, options, fe_kernels, diags, keep_pragmas=unroll_threshold > 0)
    if "#include" not in text and not any(d.code == "timeout" for d in report.diagnostics):
        _cache[key] = report  # (a header can change without the text changing: those are not cached)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return report


def _analyze(text: str, name: str, path: Path | None, options: list[str], fe_kernels: list[frontend.Kernel],
             diags: list[Diagnostic], *, keep_pragmas: bool = False) -> FileReport:
    source = text if keep_pragmas else without_unroll_pragmas(text)  # the device compiler honours them
    try:
        result = compile_source(source, path, options, COMPILE_TIMEOUT_S)
    except ClperfError as e:
        diags.append(_diag(1, str(e), "clang"))
        return FileReport(name, tuple(diags), tuple(unanalyzed(k) for k in fe_kernels), (), tuple(options))
    diags += result.diagnostics
    kernels: list[KernelReport] = []
    if result.ir is not None:
        try:
            kernels = analyze_ir(result.ir, fe_kernels)
        except Exception as e:  # noqa: BLE001 - the boundary: one kernel file must not break the editor
            diags.append(_diag(1, f"analysis failed: {type(e).__name__}: {e}", "analysis"))
            kernels = []
    if not source.isascii():
        kernels = [_in_characters(k, source.split("\n")) for k in kernels]
    if not kernels:
        kernels = [unanalyzed(k) for k in fe_kernels]
    if not kernels:
        diags.append(_diag(1, "no __kernel functions in this file", "no-kernels", "information"))
    findings = find(kernels)
    return FileReport(
        name, tuple(diags), tuple(kernels), tuple(findings), tuple(options), result.ir is not None
    )
