"""Build options for a kernel file: where they come from, which are allowed, and how they are merged.

Real OpenCL programs are built by a host program that passes ``-D`` macros (block sizes, precision) and
``-I`` folders. clperf cannot see that host code, so the user states the options in up to four places,
applied in this order (later ones win for the same macro, as on a compiler command line):

1. a compile database, the nearest of ``compile_commands.json`` (the file's entry, else that of a ``.cl``
   file in its folder), ``build/compile_commands.json`` and ``compile_flags.txt`` (one argument a line)
   in the kernel's folder or above, looked up as for 2, so clangd users state their flags once;
2. ``clperf.toml`` in the kernel's folder or a folder above it, up to the workspace root (or the
   repository root, the nearest folder holding ``.git``; else the kernel's folder only), and only when the
   file is the user's own: ``[build] options = "-DBLOCK=16"``;
3. ``// clperf-build: -DBLOCK=16 -I inc`` lines anywhere in the file;
4. ``extra``: the ``--build-options`` flag of a command, or the editor setting.

A kernel file or a config comes from whoever wrote the repository, and clang runs on it when the file is
merely opened, so every source is held to one allow-list (``ALLOWED``): options that define macros, find
headers, pick the OpenCL standard or change warnings. Anything else (``-fplugin=``, ``-Xclang``,
``--config=``, ``-Wl,``, ``-MD``, ``-save-temps`` ...) could load code or write files; a source that holds
one is not used at all and the refusal is reported at the option. A compile database is the exception in
degree, not in kind: it describes a whole build (``-c``, ``-o``, ``-O2``, ``-MD`` are normal there), so its
how-to-build options are dropped silently, every other refused option is dropped alone and named in a
warning, and the allowed rest is used.

Relative ``-I`` paths and ``-include`` files are resolved against the kernel file's folder for 3 and 4,
against the ``clperf.toml``'s folder for 2, and against the entry's ``directory`` (the
``compile_flags.txt``'s folder) for 1, so the same options work whatever the current directory is.
"""

from __future__ import annotations

import json
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


def _nearest(start: Path, root: Path | None, names: tuple[str, ...]) -> tuple[Path | None, tuple[Path, ...]]:
    """The first of ``names`` (paths relative to a folder) that is a file of the user's, in ``start`` or
    the folders above it up to ``config_root``; and the ones passed over because another user owns them."""
    try:
        folder = start.resolve()
    except OSError:
        return None, ()
    top = config_root(folder, root)
    ignored: list[Path] = []
    for d in (folder, *folder.parents):
        for candidate in (d / name for name in names):
            if candidate.is_file():
                if _owned(candidate):
                    return candidate, tuple(ignored)
                ignored.append(candidate)
        if d == top:
            break
    return None, tuple(ignored)


def lookup_config(start: Path, root: Path | None = None) -> tuple[Path | None, tuple[Path, ...]]:
    """The nearest ``clperf.toml`` of the user's in ``start`` or above it, up to ``config_root``; and the
    ones passed over because another user owns them."""
    return _nearest(start, root, (CONFIG_NAME,))


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


# --- compile databases: compile_commands.json, compile_flags.txt ----------------------------------------

COMPILE_COMMANDS = "compile_commands.json"
COMPILE_FLAGS = "compile_flags.txt"
MAX_DATABASE_BYTES = 64 << 20  # a compile_commands.json of a large C++ project is tens of MiB
# how a build runs rather than what the language is: clperf builds its own command line, so these are left
# out without a word (never passed: -MD/-MF would write files)
_MECHANICS = frozenset({"-c", "-S", "-emit-llvm", "-pipe", "-MD", "-MMD", "-MP", "-fPIC", "-fpic",
                        "-finclude-default-header", "-fdeclare-opencl-builtins"})
_MECHANICS_WITH_VALUE = frozenset({"-o", "-MF", "-MT", "-MQ", "-target"})
_MECHANICS_PATTERN = re.compile(r"-O\w*|-g[\w-]*|--target=.+|-o.+")
_XCLANG_MECHANICS = frozenset({"-finclude-default-header", "-fdeclare-opencl-builtins"})
# options whose value is the next word, so that a refused one is named (and left out) with its value
_WITH_VALUE = frozenset({"-D", "-U", "-I", "-include", "-x", "-Xclang", "-isystem", "-iquote", "-idirafter",
                         "-imacros", "-isysroot", "-include-pch", "-Xlinker", "-Xassembler", "-Xpreprocessor",
                         "-mllvm", "-MJ", "-arch", "--config"}) | _MECHANICS_WITH_VALUE
_entries_cache: dict[tuple[str, int, int], list[Any]] = {}  # (path, mtime_ns, size) -> parsed entries


def lookup_database(start: Path, root: Path | None = None) -> tuple[Path | None, tuple[Path, ...]]:
    """The nearest compile database of the user's for files in ``start``, up to ``config_root``: in each
    folder ``compile_commands.json``, then ``build/compile_commands.json`` (where CMake writes it), then
    ``compile_flags.txt``, as clangd looks them up; and the ones passed over as another user's."""
    return _nearest(start, root, (COMPILE_COMMANDS, f"build/{COMPILE_COMMANDS}", COMPILE_FLAGS))


def _read_database(db: Path) -> str:
    try:
        with db.open("rb") as f:
            data = f.read(MAX_DATABASE_BYTES + 1)
        if len(data) > MAX_DATABASE_BYTES:
            raise InputError(f"{db} is over {MAX_DATABASE_BYTES >> 20} MiB: it was not read")
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {db}: {e}") from e


def _entries(db: Path) -> list[Any]:
    """The parsed entries of a compile_commands.json, parsed once per version of the file."""
    try:
        st = db.stat()
    except OSError as e:
        raise InputError(f"cannot read {db}: {e}") from e
    key = (str(db), st.st_mtime_ns, st.st_size)
    if key not in _entries_cache:
        try:
            entries = json.loads(_read_database(db))
        except json.JSONDecodeError as e:
            raise InputError(f"{db} is not valid JSON: {e}") from e
        if not isinstance(entries, list):
            raise InputError(f"{db} is not a list of compile commands")
        _entries_cache.clear()  # one database is in use at a time; keep only the newest
        _entries_cache[key] = entries
    return _entries_cache[key]


def _entry_file(entry: Any, db: Path) -> tuple[str, str]:
    """The entry's (folder, normalised absolute file); a malformed entry is an InputError."""
    if not (isinstance(entry, dict) and isinstance(entry.get("directory"), str)
            and isinstance(entry.get("file"), str)):
        raise InputError(f"{db}: an entry without a \"directory\" and a \"file\"")
    directory = os.path.normpath(os.path.join(os.path.dirname(db), entry["directory"]))
    return directory, os.path.normpath(os.path.join(directory, entry["file"]))


def _entry_arguments(entry: dict[str, Any], db: Path) -> list[str]:
    args = entry.get("arguments")
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        return list(args)
    if isinstance(entry.get("command"), str):
        try:
            return shlex.split(entry["command"])
        except ValueError as e:
            raise InputError(f"{db}: cannot split the command of {entry['file']}: {e}") from e
    raise InputError(f"{db}: the entry of {entry['file']} has neither \"arguments\" nor \"command\"")


def database_arguments(db: Path, path: Path) -> tuple[list[str], Path] | None:
    """The compiler arguments a compile database gives ``path`` (without the compiler and the file) and
    the folder relative paths in them start from; None when it has none for the file.

    ``compile_flags.txt``: every line one argument, for every file below it. ``compile_commands.json``:
    the entry of the file, else that of another ``.cl`` file in the same folder (kernels of one folder
    are built alike); entries of host code (``.c``, ``.cpp``) are never used for a kernel.
    """
    if db.name == COMPILE_FLAGS:
        return [w.strip() for w in _read_database(db).splitlines() if w.strip()], db.parent
    target = os.path.normpath(os.path.abspath(path))
    alternatives = {target, os.path.normpath(str(path.resolve()))}
    same_folder: tuple[dict[str, Any], str, str] | None = None
    for entry in _entries(db):
        directory, file = _entry_file(entry, db)
        if file in alternatives:
            return _without(_entry_arguments(entry, db)[1:], {entry["file"], file}), Path(directory)
        if same_folder is None and file.endswith(".cl") and os.path.dirname(file) == os.path.dirname(target):
            same_folder = (entry, directory, file)
    if same_folder is None:
        return None
    entry, directory, file = same_folder
    return _without(_entry_arguments(entry, db)[1:], {entry["file"], file}), Path(directory)


def _without(words: list[str], files: set[str]) -> list[str]:
    return [w for w in words if w not in files]


def filter_arguments(words: Sequence[str], where: str, base: Path | None) -> tuple[list[str], list[str]]:
    """The allowed options among compiler ``words`` (checked as ``check_options`` checks them) and the
    refused ones, each with its value; how-to-build options (``-c``, ``-o x``, ``-O2``, ``-MD`` ...) are
    in neither list."""
    options: list[str] = []
    refused: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        group = list(words[i:i + 2]) if w in _WITH_VALUE else [w]
        i += len(group)
        if (w in _MECHANICS or w in _MECHANICS_WITH_VALUE or _MECHANICS_PATTERN.fullmatch(w)
                or (w == "-Xclang" and group[1:] and group[1] in _XCLANG_MECHANICS)):
            continue
        try:
            options += check_options(shlex.join(group), where, base)
        except BuildOptionError:
            refused.append(" ".join(group))
    return options, refused


def database_options(path: Path, root: Path | None = None) -> tuple[list[str], list[OptionProblem]]:
    """The allowed options of the compile database that applies to ``path``, and what was left out.

    A compile database is written for a whole build, so a refused option is left out alone (and named,
    as a warning) rather than the whole entry; the rest is used. A broken database is a warning too:
    clperf goes on without it."""
    db, ignored = lookup_database(path.parent, root)
    problems = [OptionProblem(ignored_message(c), severity="warning") for c in ignored]
    if db is None:
        return [], problems
    try:
        found = database_arguments(db, path)
    except InputError as e:
        return [], [*problems, OptionProblem(str(e), severity="warning")]
    if found is None:
        return [], problems
    options, refused = filter_arguments(found[0], str(db), found[1])
    if refused:
        problems.append(OptionProblem(
            f"{db}: {', '.join(repr(r) for r in refused)} not used for this file (allowed: {ALLOWED}): "
            f"clperf never passes options that load code or write files; the others were used",
            severity="warning"))
    return options, problems


# --- all sources ----------------------------------------------------------------------------------------

def gather_build_options(path: Path | None, text: str, extra: str = "", *, root: Path | None = None,
                         extra_source: str = "--build-options") -> BuildOptions:
    """All allowed build options for a file: the compile database (compile_commands.json or
    compile_flags.txt), clperf.toml, then the file's directives, then ``extra``.

    Never raises: a source with a refused or malformed option is left out whole (each directive line is
    its own source) and an OptionProblem says why, at the option's columns for a directive line, at line
    1 for the config (named) and for ``extra`` (named by ``extra_source``, e.g. a setting). ``path`` may be
    None for an unsaved buffer: no config is read, relative paths stay relative to the current directory.
    ``root`` is the workspace root when the caller knows one (see ``config_root``).
    """
    folder = path.parent if path is not None else None
    options: list[str] = []
    problems: list[OptionProblem] = []
    if path is not None and folder is not None:
        options, problems = database_options(path, root)
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
