"""Oclgrind on this machine: its OpenCL library, and the counting plugin built against it.

Oclgrind (Debian's ``oclgrind``, ``liboclgrind-dev``: version 21.10 on LLVM 14) interprets a kernel's
LLVM IR; a plugin it loads sees every instruction and memory access. The plugin's source ships with
clperf (``clperf_count.cpp``); it is compiled with g++ on first use into clperf's state folder, under a
name made of the hash of everything the build depends on (the source, the compiler command, the
Oclgrind library's identity), so an upgrade of either builds a new one and a stale one is never loaded.

A library found there is loaded into the counting run's child only when it and its folder belong to
this user and nobody else may write them: anyone who can replace it could run code as the user.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clperf.core import children, paths

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("clperf_count.cpp")
LLVM_MAJOR = 14  # the LLVM that Debian's Oclgrind 21.10 is built on; its headers must match
BUILD_TIMEOUT_S = 120
_ICD_CANDIDATES = ("/usr/lib/oclgrind/liboclgrind-rt-icd.so",
                   "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so",
                   "/usr/local/lib/liboclgrind-rt-icd.so")
_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")
_INCLUDE_DIRS = ("/usr/include", "/usr/local/include")


class Unavailable(RuntimeError):
    """Oclgrind, its headers or a C++ compiler is missing, or the plugin did not build."""


@dataclass(frozen=True)
class Toolchain:
    """What the plugin is built from and loaded into."""

    icd: Path  # Oclgrind's OpenCL ICD library, named in the child's private OCL_ICD_VENDORS folder
    library: Path  # liboclgrind, which the plugin links against
    include: Path  # the folder holding oclgrind/Plugin.h
    llvm_config: str
    compiler: str

    @property
    def llvm_bin(self) -> Path:
        """The folder of the LLVM tools (``llvm-dis``, ``llvm-as``) of Oclgrind's LLVM."""
        return Path(self.llvm_config).resolve().parent

    def command(self, output: Path) -> list[str]:
        """The g++ command line that builds the plugin into ``output``."""
        llvm = children.run([self.llvm_config, "--includedir", "--libdir"], timeout_s=30)
        if llvm.returncode != 0:
            raise Unavailable(f"{self.llvm_config} failed: {llvm.stderr.decode(errors='replace')[-300:]}")
        include, libdir = llvm.stdout.decode().split()
        return [self.compiler, "-std=c++17", "-O2", "-fPIC", "-shared", "-fno-rtti", "-w",
                f"-I{self.include}", f"-I{include}", "-D_GNU_SOURCE", "-D__STDC_CONSTANT_MACROS",
                "-D__STDC_FORMAT_MACROS", "-D__STDC_LIMIT_MACROS", str(SOURCE), "-o", str(output),
                str(self.library), f"-L{libdir}", f"-lLLVM-{LLVM_MAJOR}", f"-Wl,-rpath,{libdir}"]


def _first(candidates: list[Path]) -> Path | None:
    return next((p for p in candidates if p.is_file()), None)


def toolchain() -> Toolchain:
    """Oclgrind's files and the compilers on this machine; Unavailable names what is missing."""
    env_icd = os.environ.get("CLPERF_OCLGRIND_ICD")
    icd = _first([Path(p) for p in ([env_icd] if env_icd else []) + list(_ICD_CANDIDATES)])
    if icd is None:
        raise Unavailable("Oclgrind is not installed (apt-get install oclgrind)")
    library = _first([Path(d) / "liboclgrind.so" for d in _LIB_DIRS])
    include = next((Path(d) for d in _INCLUDE_DIRS if (Path(d) / "oclgrind" / "Plugin.h").is_file()), None)
    if library is None or include is None:
        raise Unavailable("Oclgrind's plugin headers are not installed (apt-get install liboclgrind-dev)")
    if not any((Path(d) / "CL" / "cl.h").is_file() for d in _INCLUDE_DIRS):
        raise Unavailable("the OpenCL headers are not installed (apt-get install opencl-c-headers)")
    llvm_config = shutil.which(f"llvm-config-{LLVM_MAJOR}") or f"/usr/lib/llvm-{LLVM_MAJOR}/bin/llvm-config"
    if not Path(llvm_config).is_file():
        raise Unavailable(f"LLVM {LLVM_MAJOR}'s headers are not installed "
                          f"(apt-get install llvm-{LLVM_MAJOR}-dev)")
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise Unavailable("no C++ compiler to build the counting plugin (apt-get install g++)")
    return Toolchain(icd, library.resolve(), include, llvm_config, compiler)


def plugin_version() -> str:
    """The plugin source's hash: what the counts depend on (a counting cache key part)."""
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]


def _build_key(tc: Toolchain) -> str:
    lib = tc.library.stat()
    ident = f"{plugin_version()}|{tc.compiler}|{tc.llvm_config}|{tc.library}|{lib.st_size}|{lib.st_mtime_ns}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def _private(path: Path) -> bool:
    """Owned by this user and writable by nobody else (the file and the folder holding it)."""
    for p in (path, path.parent):
        st = p.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return False
    return True


def plugin(tc: Toolchain) -> Path:
    """The built plugin for ``tc``: from the state folder, else compiled there now (a few seconds)."""
    folder = paths.ensure(paths.state_dir() / "oclgrind")
    os.chmod(folder, 0o700)
    target = folder / f"libclperf_count-{_build_key(tc)}.so"
    if target.is_file():
        if not _private(target):
            raise Unavailable(f"{target} is writable by other users or not yours; not loading it "
                              "(delete it and clperf builds it again)")
        return target
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        out = Path(tmp) / target.name
        cmd = tc.command(out)
        log.info("building the counting plugin for Oclgrind: %s", " ".join(cmd))
        try:
            proc = children.run(cmd, timeout_s=BUILD_TIMEOUT_S, memory_bytes=children.clang_memory_bytes())
        except subprocess.TimeoutExpired as e:
            raise Unavailable(f"building the counting plugin took over {BUILD_TIMEOUT_S} s") from e
        if proc.returncode != 0 or not out.is_file():
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise Unavailable("the counting plugin did not build: " + " | ".join(err[-5:]))
        os.chmod(out, 0o755)
        os.replace(out, target)  # atomic: a concurrent run sees the old state or the whole library
    return target


def main() -> None:
    """Build the plugin now and print where it is; exit status 1 with the reason when it cannot be."""
    try:
        print(plugin(toolchain()))
    except Unavailable as e:
        raise SystemExit(f"counting run unavailable: {e}") from e
