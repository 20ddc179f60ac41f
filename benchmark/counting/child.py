"""The counting run's child process: build one kernel on Oclgrind's OpenCL and launch it once.

Started as ``python -P child.py FOLDER`` by ``clperf.benchmark.counting.launch`` with an environment
whose ``OCL_ICD_VENDORS`` names Oclgrind's ICD alone and whose ``OCLGRIND_PLUGINS`` loads the counting
plugin. It imports numpy and pyopencl only, never clperf, so that nothing of the caller's process is
needed here. ``FOLDER/spec.json`` holds::

    {"source": text, "kernel": name, "options": build options, "global": [..], "local": [..] | null,
     "args": [{"buffer": path of a .npy file} | {"local": bytes} | {"scalar": hex bytes}, ...]}

one entry per kernel argument in order. The answer is ``FOLDER/result.json``: ``{"status": "ok"}``, or
``"build-error"``/``"crash"`` with ``"error"`` (the build log, the OpenCL error). The counts are the
plugin's files, not this process's.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

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
        kernel = cl.Kernel(program, spec["kernel"])
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
