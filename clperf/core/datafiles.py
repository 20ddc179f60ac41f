"""Data files of ``file:PATH`` fills: NumPy ``.npy`` arrays beside the kernel.

A path is relative to the kernel file's folder (as ``-I`` is), wherever the fill is written: a flag, a
directive or ``clperf.toml``. It must stay inside that folder's tree once ``..`` and symbolic links are
followed, since a kernel file (and its directives) may come from anyone. Files are read with
``numpy.load(allow_pickle=False)``: a ``.npy`` of objects is refused, never unpickled.

An array's first dimension counts a buffer's elements: ``(n,)`` for a scalar or struct buffer (a
structured dtype, fields matched by name), ``(n, 4)`` (or ``(n, 3)``) for a ``float4`` (``float3``) one.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

from clperf.core.errors import ScenarioError

MAX_HEADER_BYTES = 1 << 16


def data_path(root: Path | None, text: str) -> Path:
    """The file a ``file:`` fill names, checked to lie inside ``root`` (the kernel file's folder)."""
    if root is None:
        raise ScenarioError(f"file:{text}: a data file is found from the kernel file's folder; this "
                            "kernel has no file")
    base = root.resolve()
    candidate = Path(text).expanduser() if text.startswith("~") else Path(text)
    full = (candidate if candidate.is_absolute() else base / candidate).resolve()
    if not full.is_relative_to(base):
        raise ScenarioError(f"file:{text} is outside the kernel's folder {base}: data files must lie in "
                            "it or below it")
    if not full.is_file():
        raise ScenarioError(f"file:{text}: no such file ({full})")
    return full


def relative_text(root: Path, path: Path) -> str:
    """How a resolved scenario names a data file: relative to the kernel's folder, with ``/``."""
    return path.relative_to(root.resolve()).as_posix()


def header(path: Path) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape of a ``.npy`` file, read from its header only."""
    try:
        with path.open("rb") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_HEADER_BYTES)
            else:
                shape, _, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_HEADER_BYTES)
    except (OSError, ValueError) as e:
        raise ScenarioError(f"{path.name} is not a NumPy .npy file ({e})") from e
    if dtype.hasobject:
        raise ScenarioError(f"{path.name} holds Python objects; clperf reads numbers only (a numeric or "
                            "structured dtype)")
    return dtype, tuple(shape)


def elements(path: Path) -> int:
    """How many buffer elements a file holds (its first dimension)."""
    _, shape = header(path)
    if not shape:
        raise ScenarioError(f"{path.name} holds a single value (shape ()); a buffer's file is an array")
    return int(shape[0])


def load(path: Path) -> tuple[np.ndarray, str]:
    """The array of a ``.npy`` file and the sha256 of the file's bytes."""
    try:
        data = path.read_bytes()
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ScenarioError(f"cannot read {path.name}: {e}") from e
    return array, hashlib.sha256(data).hexdigest()


def field_dtype(dtype: np.dtype, name: str) -> np.dtype:
    """The dtype of field ``name`` of a structured dtype."""
    fields = dtype.fields
    assert fields is not None
    return fields[name][0]


def _describe(dtype: np.dtype) -> str:
    if dtype.names:
        return "{" + ", ".join(f"{n}: {_describe(field_dtype(dtype, n))}" for n in dtype.names) + "}"
    if dtype.subdtype is not None:
        return f"{dtype.subdtype[0].name}{dtype.subdtype[1]}"
    return dtype.name


def check_array(label: str, dtype: np.dtype, shape: tuple[int, ...], want: np.dtype, lanes: int,
                count: int, declared_lanes: int) -> None:
    """ScenarioError unless a file of ``dtype``/``shape`` fits a buffer of ``count`` elements of ``want``
    (``lanes`` scalars each; ``declared_lanes`` as written: 3 for ``float3``)."""
    if want.names:
        if dtype.names is None or set(dtype.names) != set(want.names):
            raise ScenarioError(f"{label}: the parameter is a struct {_describe(want)}; the file holds "
                                f"{_describe(dtype)} (give it a structured dtype with the same field names)")
        for n in want.names:
            have, need = field_dtype(dtype, n), field_dtype(want, n)
            if have.base != need.base or have.shape != need.shape:
                raise ScenarioError(f"{label}: field {n!r} is {_describe(need)} in the parameter, "
                                    f"{_describe(have)} in the file")
    elif dtype != want:
        raise ScenarioError(f"{label}: the parameter's elements are {want.name}; the file holds "
                            f"{_describe(dtype)} (convert it: array.astype(numpy.{want.name}))")
    widths = sorted({lanes, declared_lanes})
    if lanes == 1 and len(shape) != 1 or lanes > 1 and (len(shape) != 2 or shape[1] not in widths):
        want_shape = "(N,)" if lanes == 1 else " or ".join(f"(N, {w})" for w in widths)
        raise ScenarioError(f"{label}: the file's shape must be {want_shape} for N elements of the "
                            f"parameter's type; it is {shape}")
    if shape[0] != count:
        raise ScenarioError(f"{label}: the file holds {shape[0]} elements; the buffer has {count}")
