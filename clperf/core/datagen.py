"""Host data of a buffer from its resolved fill: the same numbers for the same seed, wherever asked.

``buffer_data`` makes what the benchmark worker uploads (and what a test or the predictor can make
again): a flat array of scalars for scalar and vector buffers (``n`` ``float4`` are ``4n`` floats), a
structured array for struct buffers. Random fills:

* ``random``: floats uniform in ``[0, 1)``; integers in ``[0, 64)``, so that a value used as a trip count
  or an offset stays small. A struct's ``random`` (its default) is zeros with random floats in its float
  fields: an integer field of a struct is often a count or an index, so it stays 0 unless a fill says so.
* ``range:LO:HI``, ``sorted:LO:HI``: integers in ``[LO, HI)`` (floats for ``sorted`` in a float buffer).
* ``hist:BINS:SKEW``: ``P(bin k)`` proportional to ``1 / (k + 1)**SKEW``: bin 0 is the most frequent.

Each buffer (and each struct field) has a seed of its own from its name; a matrix or graph one from its
name, shared by the buffers that view it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from clperf.core import datafiles, sparse
from clperf.core.argtypes import CType
from clperf.core.errors import ScenarioError
from clperf.core.fills import RANDOM, Fill
from clperf.core.sparse import name_seed

RANDOM_INT_HIGH = 64
# fills whose first n values do not depend on how many are drawn (a cache may serve a prefix)
PREFIX_STABLE = {"random", "zeros", "ones", "range", "arange"}

_SCALARS: dict[str, type[np.generic]] = {
    "char": np.int8, "uchar": np.uint8, "bool": np.uint8, "short": np.int16, "ushort": np.uint16,
    "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16,
    "float": np.float32, "double": np.float64,
}


def numpy_dtype(t: CType) -> tuple[np.dtype, int]:
    """(dtype, lanes) of one element: a scalar dtype and its lane count for scalars and vectors
    (3-vectors take 4), a structured dtype (with the compiler's offsets and size) and 1 for structs."""
    if t.kind == "scalar" and t.scalar in _SCALARS:
        return np.dtype(_SCALARS[t.scalar]), 1
    if t.kind == "vector" and t.scalar in _SCALARS:
        dt = np.dtype(_SCALARS[t.scalar])
        return dt, t.size // dt.itemsize
    if t.kind == "array" and t.element is not None:
        dt, lanes = numpy_dtype(t.element)
        return (dt, lanes * t.count) if dt.names is None else (np.dtype((dt, (t.count,))), 1)
    if t.kind == "struct" and t.fields:
        names, formats, offsets = [], [], []
        for f in t.fields:
            try:
                dt, lanes = numpy_dtype(f.type)
            except ScenarioError:
                continue  # a pointer or an opaque member stays zero
            names.append(f.name or f"_{f.offset}")
            formats.append(dt if lanes == 1 else np.dtype((dt, (lanes,))))
            offsets.append(f.offset)
        return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": t.size}), 1
    raise ScenarioError(f"cannot generate inputs of type {t.name!r} ({t.kind}: images, samplers and "
                        "pointers have no data clperf can make)")


def _random(dtype: np.dtype, count: int, rng: np.random.Generator) -> np.ndarray:
    if dtype.kind == "f":
        if dtype == np.float16:
            return rng.random(count, dtype=np.float32).astype(np.float16)
        return rng.random(count, dtype=dtype.type)  # type: ignore[call-overload]
    return rng.integers(0, RANDOM_INT_HIGH, count, dtype=dtype)


def _cast(values: np.ndarray, dtype: np.dtype, what: str) -> np.ndarray:
    """Values into a buffer's scalar type, refused when an integer would not fit."""
    if dtype.kind in "iu" and values.size:
        info = np.iinfo(dtype)
        lo, hi = values.min(), values.max()
        if lo < info.min or hi > info.max:
            raise ScenarioError(f"{what}: values {lo}..{hi} do not fit in {dtype.name}")
    return values.astype(dtype)


def _integers(lo: float, hi: float, dtype: np.dtype, count: int, rng: np.random.Generator,
              what: str) -> np.ndarray:
    lo_i, hi_i = int(lo), int(hi)
    if dtype.kind == "f":
        return rng.integers(lo_i, hi_i, count).astype(dtype)
    info = np.iinfo(dtype)
    if lo_i < info.min or hi_i - 1 > info.max:
        raise ScenarioError(f"{what}: range {lo_i}..{hi_i} does not fit in {dtype.name}")
    return rng.integers(lo_i, hi_i, count, dtype=dtype)


def _arange(fill: Fill, dtype: np.dtype, count: int, what: str) -> np.ndarray:
    start, step = fill.args[0], fill.args[1]
    i = np.arange(count, dtype=np.int64)
    if len(fill.args) > 2:
        i %= int(fill.args[2])
    if dtype.kind == "f" or isinstance(start, float) or isinstance(step, float):
        return (start + step * i.astype(np.float64)).astype(dtype)
    return _cast(int(start) + int(step) * i, dtype, what)


def _sorted(fill: Fill, dtype: np.dtype, count: int, rng: np.random.Generator, what: str) -> np.ndarray:
    lo, hi = fill.args
    if dtype.kind == "f":
        return np.sort(lo + (hi - lo) * rng.random(count)).astype(dtype)
    return np.sort(_integers(lo, hi, dtype, count, rng, what))


def _perm(fill: Fill, dtype: np.dtype, count: int, rng: np.random.Generator, what: str) -> np.ndarray:
    n = int(fill.args[0]) if fill.args else count
    if count <= n:
        values = rng.permutation(n)[:count] if n <= 4 * count else rng.choice(n, count, replace=False)
    else:
        values = np.resize(rng.permutation(n), count)
    return _cast(values, dtype, what)


def _hist(fill: Fill, dtype: np.dtype, count: int, rng: np.random.Generator, what: str) -> np.ndarray:
    bins, skew = int(fill.args[0]), float(fill.args[1])
    if skew == 0:
        return _integers(0, bins, dtype, count, rng, what)
    weights = 1.0 / np.arange(1, bins + 1, dtype=np.float64) ** skew
    cdf = np.cumsum(weights)
    values = np.searchsorted(cdf, rng.random(count) * cdf[-1], side="right")
    return _cast(np.minimum(values, bins - 1), dtype, what)


def _view(fill: Fill, dtype: np.dtype, count: int, seed: int, what: str) -> np.ndarray:
    s = fill.structure
    assert s is not None
    length = s.view_length(fill.view)
    if length > count:
        raise ScenarioError(f"{what}: {s.name}.{fill.view} has {length} values; the buffer holds {count}")
    mseed = name_seed(s.name, seed)
    m = sparse.matrix(s.shape, mseed)
    if fill.view in sparse.VALUE_VIEWS and dtype.kind != "f":  # integer values, small as ``random`` makes
        values = np.random.default_rng(mseed).integers(0, RANDOM_INT_HIGH, s.shape.nnz)
        m = sparse.Matrix(s.shape, m.rowptr, m.colidx, values)
    data = _cast(sparse.view(m, fill.view, s.frontier, mseed), dtype, what)
    if length == count:
        return data
    out = np.zeros(count, dtype)
    out[:length] = data
    return out


Loader = Callable[[str], np.ndarray]


def scalars(fill: Fill, dtype: np.dtype, count: int, seed: int, what: str) -> np.ndarray:
    """``count`` scalars of ``dtype`` for a buffer (or field) named ``what``, seeded by ``seed``."""
    if fill.kind == "zeros":
        return np.zeros(count, dtype)
    if fill.kind == "ones":
        return np.ones(count, dtype)
    if fill.kind == "view":
        return _view(fill, dtype, count, seed, what)
    rng = np.random.default_rng(name_seed(what, seed))
    if fill.kind == "random":
        return _random(dtype, count, rng)
    if fill.kind == "range":
        return _integers(fill.args[0], fill.args[1], dtype, count, rng, what)
    if fill.kind == "arange":
        return _arange(fill, dtype, count, what)
    if fill.kind == "sorted":
        return _sorted(fill, dtype, count, rng, what)
    if fill.kind == "perm":
        return _perm(fill, dtype, count, rng, what)
    if fill.kind == "hist":
        return _hist(fill, dtype, count, rng, what)
    raise ScenarioError(f"{what}: a {fill.kind} fill cannot fill values of {dtype.name}")


def _leaves(dtype: np.dtype, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], np.dtype]]:
    """(field path, scalar dtype) of every scalar member of a structured dtype, nested ones included."""
    out = []
    for n in dtype.names or ():
        sub = datafiles.field_dtype(dtype, n)
        base = sub.base if sub.subdtype is not None else sub
        if base.names:
            out += _leaves(base, (*prefix, n))
        else:
            out.append(((*prefix, n), base))
    return out


def _field(arr: np.ndarray, path: tuple[str, ...]) -> np.ndarray:
    for p in path:
        if arr.dtype.names is None or p not in arr.dtype.names:
            have = ", ".join(arr.dtype.names or ()) or "none (not a struct)"
            raise ScenarioError(f"no field {p!r} (fields: {have})")
        arr = arr[p]
    return arr


def struct_data(dtype: np.dtype, length: int, fill: Fill, fields: Mapping[str, Fill], seed: int,
                what: str) -> np.ndarray:
    """A struct buffer: ``zeros``/``ones`` everywhere, or ``random`` (zeros, random floats in float
    fields), then each field fill (``"pos.x"``) over its field."""
    if fill.kind not in ("random", "zeros", "ones"):
        raise ScenarioError(f"--fill {what}={fill.text}: a struct buffer takes random, zeros, ones or "
                            f"file:; fill its fields instead (--fill {what}.FIELD=...)")
    arr = np.zeros(length, dtype)
    for path, base in _leaves(dtype):
        if fill.kind == "ones" or (fill.kind == "random" and base.kind == "f"):
            target = _field(arr, path)
            target[...] = scalars(fill, base, target.size, seed,
                                  ".".join((what, *path))).reshape(target.shape)
    for dotted, f in fields.items():
        try:
            target = _field(arr, tuple(dotted.split(".")))
        except ScenarioError as e:
            raise ScenarioError(f"--fill {what}.{dotted}: {e}") from e
        if target.dtype.names:
            raise ScenarioError(f"--fill {what}.{dotted}: {dotted} is a struct; fill its fields")
        base = target.dtype.base if target.dtype.subdtype is not None else target.dtype
        target[...] = scalars(f, base, target.size, seed, f"{what}.{dotted}").reshape(target.shape)
    return arr


def buffer_data(dtype: np.dtype, lanes: int, length: int, fill: Fill | None, seed: int, what: str,
                fields: Mapping[str, Fill] | None = None, load: Loader | None = None,
                declared_lanes: int | None = None) -> np.ndarray:
    """Host data of buffer ``what``: ``length`` elements of ``dtype`` x ``lanes`` (see the module
    docstring). ``load(path)`` reads a ``file:`` fill's array (already checked to be a data file)."""
    fill = fill or RANDOM
    if fill.kind == "file":
        if load is None:
            raise ScenarioError(f"--fill {what}=file:{fill.path}: no data folder to read it from")
        array = load(fill.path)
        datafiles.check_array(f"--fill {what}=file:{fill.path}", array.dtype, array.shape, dtype, lanes,
                              length, declared_lanes or lanes)
        return _from_file(array, dtype, lanes, length)
    if dtype.names:
        return struct_data(dtype, length, fill, fields or {}, seed, what)
    if fields:
        raise ScenarioError(f"--fill {what}.{next(iter(fields))}: {what} is not a struct buffer")
    return scalars(fill, dtype, length * lanes, seed, what)


def _from_file(array: np.ndarray, dtype: np.dtype, lanes: int, length: int) -> np.ndarray:
    if dtype.names:
        out = np.zeros(length, dtype)
        for n in dtype.names:
            out[n] = array[n]
        return out
    if array.ndim == 2 and array.shape[1] != lanes:  # (n, 3) for a float3 buffer: 4 lanes in memory
        padded = np.zeros((length, lanes), dtype)
        padded[:, : array.shape[1]] = array
        array = padded
    return np.ascontiguousarray(array, dtype).reshape(-1)
