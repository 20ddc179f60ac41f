"""The counting run's child process: build one kernel on Oclgrind's OpenCL and launch it once.

Started as ``python -P child.py FOLDER`` by ``clperf.benchmark.counting.launch`` with an environment
whose ``OCL_ICD_VENDORS`` names Oclgrind's ICD alone and whose ``OCLGRIND_PLUGINS`` loads the counting
plugin. It imports numpy and pyopencl only, never clperf, so that nothing of the caller's process is
needed here. ``FOLDER/spec.json`` holds::

    {"source": text, "kernel": name, "options": build options, "global": [..], "local": [..] | null,
     "args": [{"buffer": path of a .npy file} | {"local": bytes} | {"scalar": hex bytes}, ...],
     "llvm_bin": folder of llvm-dis and llvm-as of Oclgrind's LLVM | null}

one entry per kernel argument in order. Oclgrind cannot run a few intrinsics that its clang makes of
plain code (``llvm.abs`` of a sign flip, ``llvm.fshl``/``fshr`` of a rotate): where the kernel will not be
made for one of them, its module is taken back (the program's binary, LLVM bitcode), written out in the
instructions they stand for (``lower_intrinsics``) and built again from that, with ``llvm_bin``'s tools.
The answer is ``FOLDER/result.json``: ``{"status": "ok"}``, or ``"build-error"``/``"crash"`` with
``"error"`` (the build log, the OpenCL error). The counts are the plugin's files, not this process's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyopencl as cl


def _answer(folder: Path, status: str, error: str = "") -> None:
    (folder / "result.json").write_text(json.dumps({"status": status, "error": error[-4000:]}))


def _arguments(folder: Path, ctx: cl.Context, spec: dict[str, Any]) -> list[Any]:
    values: list[Any] = []
    # Oclgrind runs the kernel on the host array itself: a private (copy-on-write) mapping of the file,
    # so only the pages the sampled groups touch are read, and the kernel's writes never reach the file.
    # (Copied into Oclgrind's own memory instead, a 1 GB input takes about 2 s of the budget.)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
    for a in spec["args"]:
        if "buffer" in a:
            host = np.load(folder / a["buffer"], mmap_mode="c", allow_pickle=False)
            values.append(cl.Buffer(ctx, flags, hostbuf=host))
        elif "local" in a:
            values.append(cl.LocalMemory(int(a["local"])))
        else:  # a scalar, vector or struct by value: its bytes as the kernel sees them
            values.append(np.frombuffer(bytes.fromhex(a["scalar"]), np.uint8))
    return values


_CALL = re.compile(r"^(\s*)(%\S+) = (?:\w+ )*?call (?:[a-z]+ )*?(<(\d+) x i(\d+)>|i(\d+)) "
                   r"@llvm\.(abs|fshl|fshr)\.[\w.]+\((.*)\)(?: #\d+)?((?:, ![\w.]+ !\d+)*)\s*$")
_PARAM_ATTRIBUTES = ("noundef", "signext", "zeroext", "immarg")


def _operands(text: str) -> list[str]:
    """A call's operands (``type value``), split at the commas outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "<([{") - (ch in ">)]}")
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    return [*out, text[start:].strip()]


def _value(operand: str) -> str:
    """An operand's value: its type and parameter attributes left out."""
    rest = operand[operand.index(">") + 1:] if operand.startswith("<") else operand.split(None, 1)[1]
    words = rest.split(None, 1)
    while len(words) == 2 and words[0] in _PARAM_ATTRIBUTES:
        words = words[1].split(None, 1)
    return " ".join(words)


def lower_intrinsics(ir: str) -> str:
    """``ir`` (LLVM assembly) with each call of ``llvm.abs``, ``llvm.fshl`` and ``llvm.fshr`` on integers
    or integer vectors replaced by the compare, shifts and select it stands for, under the call's name
    and debug location."""
    out: list[str] = []
    for n, line in enumerate(ir.split("\n")):
        m = _CALL.match(line)
        if not m:
            out.append(line)
            continue
        indent, name, ty, lanes, vector_bits, bits, op, operands, meta = m.groups()
        width = int(vector_bits or bits)
        cond = f"<{lanes} x i1>" if lanes else "i1"
        zero = "zeroinitializer" if lanes else "0"
        w = f"<{', '.join([f'i{width} {width}'] * int(lanes))}>" if lanes else str(width)
        v = [_value(o) for o in _operands(operands)]
        t = f"%clperf.lower{n}."
        if op == "abs":
            body = [f"{t}neg = icmp slt {ty} {v[0]}, {zero}", f"{t}sub = sub {ty} {zero}, {v[0]}",
                    f"{name} = select {cond} {t}neg, {ty} {t}sub, {ty} {v[0]}"]
        else:  # a funnel shift: fshl(a, b, s) = a << s | b >> (w - s), fshr(a, b, s) = b >> s | a << (w - s)
            kept, other, first, second = (v[0], v[1], "shl", "lshr") if op == "fshl" else \
                (v[1], v[0], "lshr", "shl")
            body = [f"{t}s = urem {ty} {v[2]}, {w}", f"{t}hi = {first} {ty} {kept}, {t}s",
                    f"{t}rest = sub {ty} {w}, {t}s", f"{t}lo = {second} {ty} {other}, {t}rest",
                    f"{t}or = or {ty} {t}hi, {t}lo", f"{t}zero = icmp eq {ty} {t}s, {zero}",
                    f"{name} = select {cond} {t}zero, {ty} {kept}, {ty} {t}or"]
        out.extend(f"{indent}{b}{meta}" for b in body)
    return "\n".join(out)


def _lowered(ctx: cl.Context, program: cl.Program, spec: dict[str, Any]) -> cl.Program | None:
    """``program`` built again from its module with the intrinsics Oclgrind lacks written out; None where
    it has none of them, or the tools are missing or fail."""
    tools = spec.get("llvm_bin")
    if not tools:
        return None
    binaries = cast("list[bytes]", program.get_info(cl.program_info.BINARIES))
    binary = bytes(binaries[0])
    try:
        dis = subprocess.run([str(Path(tools) / "llvm-dis"), "-o", "-"], input=binary, capture_output=True,
                             timeout=60, check=True)
        ir = dis.stdout.decode()
        if not re.search(r"@llvm\.(abs|fshl|fshr)\.", ir):
            return None
        asm = subprocess.run([str(Path(tools) / "llvm-as"), "-o", "-"], input=lower_intrinsics(ir).encode(),
                             capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return cl.Program(ctx, ctx.devices, [asm.stdout]).build(options=spec["options"])


def _kernel(ctx: cl.Context, program: cl.Program, spec: dict[str, Any]) -> cl.Kernel:
    try:
        return cl.Kernel(program, spec["kernel"])
    except cl.Error:
        lowered = _lowered(ctx, program, spec)
        if lowered is None:
            raise
    return cl.Kernel(lowered, spec["kernel"])


def run(folder: Path) -> None:
    spec = json.loads((folder / "spec.json").read_text())
    platforms = [p for p in cl.get_platforms() if "oclgrind" in p.name.lower()]
    if not platforms:
        _answer(folder, "crash", "Oclgrind's OpenCL platform did not load")
        return
    ctx = cl.Context(platforms[0].get_devices())
    queue = cl.CommandQueue(ctx)
    try:
        program = cl.Program(ctx, spec["source"]).build(options=spec["options"])
        kernel = _kernel(ctx, program, spec)
    except cl.Error as e:
        _answer(folder, "build-error", str(e))
        return
    try:
        # held until the launch ends: OpenCL's kernel does not keep its buffers alive
        args = _arguments(folder, ctx, spec)
        kernel.set_args(*args)
        cl.enqueue_nd_range_kernel(queue, kernel, spec["global"], spec["local"])
        queue.finish()
    except cl.Error as e:
        _answer(folder, "crash", f"OpenCL error: {e}")
        return
    _answer(folder, "ok")


def main() -> None:
    # a kernel's printf writes to stdout: nobody reads it, and it must not fill a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    run(Path(sys.argv[1]))


if __name__ == "__main__":
    main()
