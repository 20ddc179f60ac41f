"""Project exception types. Raised with ``from e`` and caught only at boundaries (a CLI command, an LSP
handler, one kernel of a sweep), where they become one line a person can act on."""

from __future__ import annotations


class ClperfError(Exception):
    """Base class: the message is meant for the user as it is."""


class InputError(ClperfError, ValueError):
    """A file, option or setting the user gave cannot be used."""


class ScenarioError(InputError):
    """A scenario (launch sizes, argument values, fills) is invalid."""


class CompileError(ClperfError, RuntimeError):
    """clang could not be run or timed out (a kernel clang rejects is a diagnostic, not this)."""


class DeviceError(ClperfError, RuntimeError):
    """No OpenCL device matches, or a device could not be used."""


class ModelError(ClperfError, RuntimeError):
    """The shipped model or its cache could not be loaded."""
