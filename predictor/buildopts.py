"""Build options for a kernel file: where they come from and how they are merged.

Real OpenCL programs are built by a host program that passes ``-D`` macros (block sizes, precision) and
``-I`` folders. clperf cannot see that host code, so the user states the options in up to three places,
applied in this order (later ones win for the same macro, as on a compiler command line):

1. ``clperf.toml`` in the kernel's folder or any folder above it: ``[build] options = "-DBLOCK=16"``;
2. ``// clperf-build: -DBLOCK=16 -I inc`` lines anywhere in the file;
3. ``extra``: the ``--build-options`` flag of a command, or the editor setting.

Relative ``-I`` paths (and ``-include`` files) are resolved against the kernel file's folder for 2 and 3,
and against the ``clperf.toml``'s folder for 1, so the same options work whatever the current directory is.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from clperf.errors import InputError

BUILD_DIRECTIVE = re.compile(r"^\s*//\s*clperf-build:\s?(.*)$", re.M)
CONFIG_NAME = "clperf.toml"

# Options that take a path as the next word or glued to the flag.
_PATH_FLAGS = ("-I", "-include", "-isystem", "-iquote")
# Options clperf itself controls: letting them through would break the analysis (wrong target, no IR).
_REFUSED = ("-o", "-target", "--target", "-emit-llvm", "-S", "-c", "-E", "-x")


def split_options(text: str, where: str) -> list[str]:
    """Split an option string like a shell would; a bad one (an unclosed quote) is an InputError."""
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError as e:
        raise InputError(f"bad build options in {where}: {e}: {text!r}") from e
    words = _join_path_args(words, where)
    for w in words:
        if w in _REFUSED or w.startswith("--target="):
            raise InputError(f"build option {w!r} in {where} is set by clperf itself; remove it")
        if not w.startswith("-"):
            raise InputError(
                f"bad build option {w!r} in {where}: options start with '-' "
                f"(e.g. -DBLOCK=16, -I inc, -cl-std=CL2.0)"
            )
    return words


def _join_path_args(words: list[str], where: str) -> list[str]:
    """``['-I', 'inc']`` -> ``['-Iinc']``, ``['-D', 'X=1']`` -> ``['-DX=1']``: one word per option."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-I", "-D", "-U", "-include", "-isystem", "-iquote"):
            if i + 1 >= len(words):
                raise InputError(f"build option {w} in {where} needs a value")
            nxt = words[i + 1]
            out.append(f"{w}{nxt}" if w in ("-I", "-D", "-U") else f"{w}={nxt}")
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def _absolute_paths(options: list[str], base: Path | None) -> list[str]:
    if base is None:
        return options
    out: list[str] = []
    for opt in options:
        for flag in _PATH_FLAGS:
            if flag == "-I" and opt.startswith("-I") or flag != "-I" and opt.startswith(flag + "="):
                value = opt[2:] if flag == "-I" else opt[len(flag) + 1 :]
                p = Path(value).expanduser()
                if not p.is_absolute():
                    p = (base / p).resolve()
                opt = f"-I{p}" if flag == "-I" else f"{flag}={p}"
                break
        out.append(opt)
    return out


def find_config(start: Path) -> Path | None:
    """The nearest ``clperf.toml`` in ``start`` or a folder above it."""
    try:
        folder = start.resolve()
    except OSError:
        return None
    for d in (folder, *folder.parents):
        candidate = d / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def config_options(config: Path) -> str:
    """``[build] options`` of a ``clperf.toml`` (empty when absent). A broken file is an InputError."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"cannot read {config}: {e}") from e
    build = data.get("build", {})
    opts = build.get("options", "") if isinstance(build, dict) else ""
    if isinstance(opts, list):
        opts = " ".join(shlex.quote(str(o)) for o in opts)
    if not isinstance(opts, str):
        raise InputError(f"{config}: [build] options must be a string")
    return opts


def directive_options(text: str) -> str:
    """The ``// clperf-build:`` lines of a file, joined."""
    return " ".join(m.group(1).strip() for m in BUILD_DIRECTIVE.finditer(text))


def resolve_build_options(path: Path | None, text: str, extra: str = "") -> list[str]:
    """All build options for a file: clperf.toml, then the file's directives, then ``extra``.

    ``-I`` paths become absolute (relative to the file's folder, or to the config's folder for options
    from the config). ``path`` may be None for an unsaved buffer: relative paths then stay relative to
    the current directory.
    """
    folder = path.parent if path is not None else None
    options: list[str] = []
    if folder is not None:
        config = find_config(folder)
        if config is not None:
            options += _absolute_paths(split_options(config_options(config), str(config)), config.parent)
    directive = directive_options(text)
    if directive:
        options += _absolute_paths(split_options(directive, "the // clperf-build: directive"), folder)
    if extra.strip():
        options += _absolute_paths(split_options(extra, "--build-options"), folder)
    return options
