"""What can go wrong when a kernel is built or launched, as the Measurement status it becomes."""

from __future__ import annotations

import pyopencl as cl

_INVALID_LAUNCH = {"INVALID_WORK_GROUP_SIZE", "INVALID_WORK_ITEM_SIZE", "INVALID_GLOBAL_WORK_SIZE",
                   "INVALID_GLOBAL_OFFSET", "INVALID_KERNEL_ARGS", "INVALID_ARG_SIZE", "INVALID_ARG_VALUE",
                   "INVALID_WORK_DIMENSION"}
_NO_MEMORY = {"MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_HOST_MEMORY", "INVALID_BUFFER_SIZE"}


class KernelFault(Exception):
    """A kernel or launch failed; ``status`` is the Measurement status it becomes. ``group_too_big``:
    the launch was refused for this work-group size only (registers or local memory), so larger groups
    of the same kernel need not be tried."""

    def __init__(self, status: str, message: str, fatal: bool = False, group_too_big: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.fatal = fatal
        self.group_too_big = group_too_big


def _code_name(e: cl.Error) -> str:
    code = getattr(e, "code", None)
    if isinstance(code, int):
        for name in dir(cl.status_code):
            if not name.startswith("_") and getattr(cl.status_code, name) == code:
                return name
        return str(code)
    return str(e).split(" - ")[0]


def classify(e: cl.Error, stage: str) -> KernelFault:
    """Map an OpenCL error raised while launching (``enqueue``) or finishing (``run``) a kernel."""
    name = _code_name(e)
    msg = str(e).split("\n")[0]
    if name in _NO_MEMORY:
        return KernelFault("out-of-memory", f"the device could not allocate memory ({name})")
    if stage == "enqueue" and name in _INVALID_LAUNCH:
        return KernelFault("invalid-scenario", f"the device rejected the launch ({name}): {msg}")
    if stage == "enqueue" and name == "OUT_OF_RESOURCES":
        return KernelFault("invalid-scenario", "the device cannot launch this kernel with this work-group "
                           "size (OUT_OF_RESOURCES: too many registers or too much local memory per group)",
                           group_too_big=True)
    return KernelFault("crash", f"the kernel failed while running ({name}): {msg}", True)


def build_message(err: str, log: str) -> str:
    text = (log or "").strip() or err
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "build failed: " + "\n".join(lines[:40])


def build_program(ctx: cl.Context, device: cl.Device, source: str, options: str) -> cl.Program:
    prg = cl.Program(ctx, source)
    try:
        prg.build(options=options)
    except cl.Error as e:
        try:
            log = prg.get_build_info(device, cl.program_build_info.LOG)
        except cl.Error:
            log = ""
        raise KernelFault("build-error", build_message(str(e), log)) from e
    return prg
