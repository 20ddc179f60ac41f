"""Build options for a kernel file: where they come from, which are allowed, and how they are merged.

Real OpenCL programs are built by a host program that passes ``-D`` macros (block sizes, precision) and
``-I`` folders. clperf cannot see that host code, so the user states the options in up to three places,
applied in this order (later ones win for the same macro, as on a compiler command line):

1. ``clperf.toml`` in the kernel's folder or a folder above it, up to the workspace root (or the
   repository root, the nearest folder holding ``.git``; else the kernel's folder only), and only when the
   file is the user's own: ``[build] options = "-DBLOCK=16"``;
2. ``// clperf-build: -DBLOCK=16 -I inc`` lines anywhere in the file;
3. ``extra``: the ``--build-options`` flag of a command, or the editor setting.

A kernel file or a config comes from whoever wrote the repository, and clang runs on it when the file is
merely opened, so every source is held to one allow-list (``ALLOWED``): options that define macros, find
headers, pick the OpenCL standard or change warnings. Anything else (``-fplugin=``, ``-Xclang``,
``--config=``, ``-Wl,``, ``-MD``, ``-save-temps`` ...) could load code or write files; a source that holds
one is not used at all and the refusal is reported at the option.

Relative ``-I`` paths and ``-include`` files are resolved against the kernel file's folder for 2 and 3,
and against the ``clperf.toml``'s folder for 1, so the same options work whatever the current directory is.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from clperf.core.errors import InputError

log = logging.getLogger("clperf")

BUILD_DIRECTIVE = re.compile(r"^\s*//\s*clperf-build:\s?(.*)$", re.M)
CONFIG_NAME = "clperf.toml"
MAX_CONFIG_BYTES = 1 << 20  # a build config is a few lines; a bigger file is not one
ALLOWED = "-D, -U, -I, -include, -cl-*, -W*, -w, -x cl, -cl-std"
# -W options, but not -Wl, -Wa, -Wp, (a comma passes what follows to the linker, assembler, preprocessor)
_WARNING = re.compile(r"-W[A-Za-z][A-Za-z0-9_+#=.-]*")
_STD = re.compile(r"-std=(?i:cl|cl1\.[012]|cl2\.0|cl3\.0|clc\+\+|clc\+\+1\.0|clc\+\+2021)")
_WORD = re.compile(r"""(?:[^\s'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+""", re.S)


@dataclass(frozen=True)
class OptionProblem:
    """Why options of one source were not used, at a place in the kernel file (1-based, end exclusive)."""

    message: str
    line: int = 1
    column: int = 1
    end_column: int = 1
    severity: Literal["error", "warning"] = "error"


@dataclass(frozen=True)
class BuildOptions:
    options: tuple[str, ...]  # what clang gets, paths made absolute
    problems: tuple[OptionProblem, ...]  # the sources that were refused or ignored, and why


class BuildOptionError(InputError):
    """An option string that cannot be used; ``start``/``end`` locate the offending word in it."""

    def __init__(self, message: str, start: int | None = None, end: int | None = None) -> None:
        super().__init__(message)
        self.start = start
        self.end = end


@dataclass(frozen=True)
class _Word:
    value: str
    start: int
    end: int


def _words(text: str, where: str) -> list[_Word]:
    """Split like a shell would, keeping where each word is in ``text``."""
    try:
        shlex.split(text, comments=False, posix=True)
    except ValueError as e:
        raise BuildOptionError(f"bad build options in {where}: {e}: {text!r}") from e
    return [_Word("".join(shlex.split(m.group(), posix=True)), m.start(), m.end())
            for m in _WORD.finditer(text)]


def _refused(word: _Word, where: str) -> BuildOptionError:
    return BuildOptionError(
        f"build option {word.value!r} is not allowed (allowed: {ALLOWED}): clperf never passes options "
        f"that load code or write files (the options of {where} were not used)", word.start, word.end)


def _folder(value: str, base: Path | None) -> str:
    p = Path(value).expanduser()
    return str(p if p.is_absolute() or base is None else (base / p).resolve())


def _allowed(value: str) -> bool:
    return (value == "-w" or (value.startswith("-cl-") and len(value) > 4)
            or _WARNING.fullmatch(value) is not None or _STD.fullmatch(value) is not None)


def check_options(text: str, where: str, base: Path | None) -> list[str]:
    """The options in ``text`` if every one is allowed, one word per option (``-I`` joined to its folder,
    ``-include`` followed by the absolute file); else a BuildOptionError naming the first refused one.

    ``where`` names the source in messages; relative paths are resolved against ``base`` (an ``-include``
    file against the current directory when ``base`` is None, so the file name is never read as an option).
    """
    words = _words(text, where)
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.value in ("-D", "-U", "-I", "-include", "-x"):
            if i + 1 >= len(words):
                raise BuildOptionError(f"build option {w.value} in {where} needs a value", w.start, w.end)
            arg = words[i + 1].value
            if w.value == "-x":
                if arg != "cl":
                    raise _refused(_Word(f"-x {arg}", w.start, words[i + 1].end), where)
                out += ["-x", "cl"]
            elif w.value == "-include":
                out += ["-include", str(Path(_folder(arg, base)).absolute())]
            elif w.value == "-I":
                out.append(f"-I{_folder(arg, base)}")
            else:
                out.append(w.value + arg)
            i += 2
            continue
        if w.value.startswith(("-D", "-U")):
            out.append(w.value)
        elif w.value.startswith("-I"):
            out.append(f"-I{_folder(w.value[2:], base)}")
        elif _allowed(w.value):
            out.append(w.value)
        else:
            raise _refused(w, where)
        i += 1
    return out


# --- clperf.toml --------------------------------------------------------------------------------------

def config_root(folder: Path, root: Path | None = None) -> Path:
    """The highest folder whose ``clperf.toml`` applies to a file in ``folder``: ``root`` (the workspace)
    when it holds ``folder``, else the nearest folder holding ``.git``, else ``folder`` itself."""
    if root is not None:
        try:
            top = root.resolve()
        except OSError:
            top = None
        if top is not None and folder.is_relative_to(top):
            return top
    for d in (folder, *folder.parents):
        if (d / ".git").exists():
            return d
    return folder


def workspace_root(path: str, folders: Sequence[str]) -> str:
    """The innermost of the editor's workspace ``folders`` that holds ``path`` ("" when none does)."""
    if not path:
        return ""
    file = Path(path)
    holding = [Path(f) for f in folders if f and file.is_relative_to(f)]
    return str(max(holding, key=lambda f: len(f.parts))) if holding else ""


def _owned(path: Path) -> bool:
    """The file, and the link to it if it is one, belong to the user running clperf."""
    try:
        return path.lstat().st_uid == os.geteuid() and path.stat().st_uid == os.geteuid()
    except OSError:
        return False


def lookup_config(start: Path, root: Path | None = None) -> tuple[Path | None, tuple[Path, ...]]:
    """The nearest ``clperf.toml`` of the user's in ``start`` or above it, up to ``config_root``; and the
    ones passed over because another user owns them."""
    try:
        folder = start.resolve()
    except OSError:
        return None, ()
    top = config_root(folder, root)
    ignored: list[Path] = []
    for d in (folder, *folder.parents):
        candidate = d / CONFIG_NAME
        if candidate.is_file():
            if _owned(candidate):
                return candidate, tuple(ignored)
            ignored.append(candidate)
        if d == top:
            break
    return None, tuple(ignored)


def find_config(start: Path, root: Path | None = None) -> Path | None:
    """The ``clperf.toml`` that applies to files in ``start`` (see ``lookup_config``), or None."""
    return lookup_config(start, root)[0]


def ignored_message(config: Path) -> str:
    return (f"{config} belongs to another user: it was ignored (clperf reads only a clperf.toml "
            f"of your own; take it over with chown, or copy it, if you trust it)")


def read_config(config: Path) -> dict[str, Any]:
    """A ``clperf.toml``'s tables. An unreadable, oversized or broken file is an InputError."""
    try:
        with config.open("rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise InputError(f"{config} is over {MAX_CONFIG_BYTES >> 20} MiB: not a clperf config")
        return tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"cannot read {config}: {e}") from e


def config_options(config: Path) -> str:
    """``[build] options`` of a ``clperf.toml`` (empty when absent). A broken file is an InputError."""
    build = read_config(config).get("build", {})
    opts = build.get("options", "") if isinstance(build, dict) else ""
    if isinstance(opts, list):
        opts = " ".join(shlex.quote(str(o)) for o in opts)
    if not isinstance(opts, str):
        raise InputError(f"{config}: [build] options must be a string")
    return opts


# --- all sources ----------------------------------------------------------------------------------------

def gather_build_options(path: Path | None, text: str, extra: str = "", *, root: Path | None = None,
                         extra_source: str = "--build-options") -> BuildOptions:
    """All allowed build options for a file: clperf.toml, then the file's directives, then ``extra``.

    Never raises: a source with a refused or malformed option is left out whole (each directive line is
    its own source) and an OptionProblem says why, at the option's columns for a directive line, at line
    1 for the config (named) and for ``extra`` (named by ``extra_source``, e.g. a setting). ``path`` may be
    None for an unsaved buffer: no config is read, relative paths stay relative to the current directory.
    ``root`` is the workspace root when the caller knows one (see ``config_root``).
    """
    folder = path.parent if path is not None else None
    options: list[str] = []
    problems: list[OptionProblem] = []
    if folder is not None:
        config, ignored = lookup_config(folder, root)
        problems += [OptionProblem(ignored_message(c), severity="warning") for c in ignored]
        if config is not None:
            try:
                options += check_options(config_options(config), str(config), config.parent)
            except InputError as e:
                problems.append(OptionProblem(str(e)))
    for m in BUILD_DIRECTIVE.finditer(text):
        body = m.group(1)
        line = text.count("\n", 0, m.start(1)) + 1
        column = m.start(1) - (text.rfind("\n", 0, m.start(1)) + 1) + 1
        try:
            options += check_options(body, "this // clperf-build: line", folder)
        except BuildOptionError as e:
            start, end = (e.start, e.end) if e.start is not None and e.end is not None \
                else (0, len(body.rstrip()))
            problems.append(OptionProblem(str(e), line, column + start, column + end))
    if extra.strip():
        try:
            options += check_options(extra, extra_source, folder)
        except InputError as e:
            problems.append(OptionProblem(str(e)))
    return BuildOptions(tuple(options), tuple(problems))


def resolve_build_options(path: Path | None, text: str, extra: str = "", *,
                          root: Path | None = None) -> list[str]:
    """``gather_build_options`` for commands that stop on a bad option (benchmarks run the kernel): the
    first refusal is an InputError; an ignored config is logged as a warning."""
    found = gather_build_options(path, text, extra, root=root)
    for p in found.problems:
        if p.severity == "error":
            raise InputError(p.message)
        log.warning("%s", p.message)
    return list(found.options)
