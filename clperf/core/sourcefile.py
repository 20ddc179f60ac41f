"""Reading a source file safely and writing a fixed one back without ever losing it.

``read_source`` opens only regular files (a FIFO would block clperf forever, ``/dev/zero`` never ends), reads
at most ``MAX_SOURCE_BYTES``, and remembers how the bytes were written: UTF-8 (with or without a BOM) or,
when they are not UTF-8, Latin-1, where every byte is one character so the text round-trips exactly; the
newline style; and the bytes' hash. ``Source.encode`` turns a changed text back into bytes the same way, and
``write_atomic`` replaces the file only if it still holds the bytes that were read, through a temp file in
the same folder and a rename, so a failure at any point leaves the original as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clperf.core.errors import InputError

MAX_SOURCE_BYTES = 8 * 2**20  # kernel files are kilobytes; the analysis itself stops at 1 MB
_BOM = b"\xef\xbb\xbf"
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_LONE_LF = re.compile(r"(?<!\r)\n")


@dataclass(frozen=True)
class Source:
    """A file's text and how to write a changed text back in the same form."""

    path: Path
    text: str  # decoded; without the BOM; newlines as they are in the file
    encoding: str  # "utf-8" or "latin-1" (bytes that are not UTF-8)
    bom: bool  # the file starts with a UTF-8 byte-order mark
    newline: str  # the file's most common line ending: "\n", "\r\n" or "\r"
    sha256: str  # of the bytes read

    def encode(self, text: str) -> bytes:
        """``text`` as bytes in this file's encoding, BOM and line endings (new lines get the file's)."""
        if self.newline != "\n":
            text = _LONE_LF.sub(self.newline, text)
        try:
            data = text.encode(self.encoding)
        except UnicodeEncodeError as e:
            raise InputError(f"{self.path} is {self.encoding}, which cannot hold {text[e.start]!r} of the "
                             "new text; nothing written") from e
        return _BOM + data if self.bom else data


def _kind(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO"), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size_text(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.1f} GiB"
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"


def read_bytes(path: Path | str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is an ``InputError``."""
    path = Path(path)
    try:
        st = os.stat(path)
        kind = _kind(st.st_mode)
        if kind is None and st.st_size > limit:
            raise InputError(f"{path} is {_size_text(st.st_size)}; clperf reads source files up to "
                             f"{_size_text(limit)}")
        if kind is not None:
            raise InputError(f"{path} is {kind}, not a regular file; clperf reads only regular files")
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, opening it must not block
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
        try:
            kind = _kind(os.fstat(fd).st_mode)
            if kind is not None:
                raise InputError(f"{path} is {kind}, not a regular file; clperf reads only regular files")
            chunks, total = [], 0
            while total <= limit:
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from e
    if total > limit:
        raise InputError(f"{path} is over {_size_text(limit)}; clperf reads source files up to "
                         f"{_size_text(limit)}")
    return b"".join(chunks)


def _newline(data: bytes) -> str:
    crlf = data.count(b"\r\n")
    lf, cr = data.count(b"\n") - crlf, data.count(b"\r") - crlf
    if crlf > lf and crlf >= cr:
        return "\r\n"
    return "\r" if cr > lf and cr > crlf else "\n"


def decode(path: Path | str, data: bytes) -> Source:
    """``data`` (the bytes of ``path``) as a ``Source``: UTF-8 when they are, Latin-1 otherwise."""
    bom = data.startswith(_BOM)
    body = data[len(_BOM):] if bom else data
    try:
        text, encoding = body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, encoding, bom = data.decode("latin-1"), "latin-1", False
    return Source(Path(path), text, encoding, bom, _newline(data), hashlib.sha256(data).hexdigest())


def read_source(path: Path | str, limit: int = MAX_SOURCE_BYTES) -> Source:
    """Read a source file safely (regular files only, at most ``limit`` bytes); see the module docstring."""
    return decode(path, read_bytes(path, limit))


def write_atomic(path: Path | str, data: bytes, expected_hash: str) -> None:
    """Replace ``path``'s content with ``data`` if the file still hashes to ``expected_hash``.

    The new bytes go to a temp file in the same folder (fsynced, with the file's mode and, where allowed,
    owner), which is then renamed over the file; a symbolic link is followed, so the link stays a link.
    On any failure the temp file is removed, the original is untouched and an ``InputError`` says so.
    """
    path = Path(path)
    target = Path(os.path.realpath(path))
    current = read_bytes(target, max(MAX_SOURCE_BYTES, len(data)))
    if hashlib.sha256(current).hexdigest() != expected_hash:
        raise InputError(f"{path} changed since clperf read it; nothing written")
    tmp: str | None = None
    try:
        st = os.stat(target)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".clperf-tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
            with contextlib.suppress(OSError):  # only root may give a file to another owner
                os.fchown(f.fileno(), st.st_uid, st.st_gid)
        os.replace(tmp, target)
        tmp = None
        with contextlib.suppress(OSError):  # make the rename itself durable where the folder allows it
            dfd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}; the file is unchanged") from e
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
