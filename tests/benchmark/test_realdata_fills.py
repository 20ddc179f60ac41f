"""The structured fills' data, made on the host: every index in bounds at the smallest and the largest
size, the layouts consistent with each other, the same numbers for the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from clperf.core import sparse
from clperf.core.datagen import buffer_data
from clperf.core.fills import read_fills


def views(definition: str, seed: int = 1234) -> dict[str, np.ndarray]:
    fills, structures = read_fills({"m": definition, **{v: f"m.{v}" for v in sparse.VIEWS
                                                        if definition.startswith("graph") or
                                                        v not in sparse.GRAPH_VIEWS}})
    m = structures["m"]
    out = {}
    for name, fill in fills.items():
        n = sparse.view_length(m.shape, fill.view, m.frontier)
        if name.startswith("ell_") and n > 1 << 24:  # a skewed matrix's ELLPACK: rows x longest row
            continue
        dtype = np.float32 if name in sparse.VALUE_VIEWS else np.int32
        out[name] = buffer_data(np.dtype(dtype), 1, n, fill, seed, name)
    return out


@pytest.mark.parametrize("definition", [
    "csr:1:1:1:0", "csr:64:64:8:0", "csr:64:64:64:0",  # one entry; dense rows: NNZ_PER_ROW = COLS
    "csr:65536:4096:16:1", "csr:65536:65536:16:4", "csr:100:100000:50:2",
    "graph:64:3:1:8", "graph:131072:8:0.5:5000",
])
def test_views_are_in_bounds_and_agree(definition):
    kind, *nums = definition.split(":")
    rows, cols = int(nums[0]), int(nums[1]) if kind == "csr" else int(nums[0])
    per_row = int(nums[2]) if kind == "csr" else int(nums[1])
    v = views(definition)
    rowptr, colidx, lengths = v["rowptr"], v["colidx"], np.diff(v["rowptr"])
    nnz = rows * per_row
    assert rowptr[0] == 0 and rowptr[-1] == nnz and (lengths >= 0).all() and lengths.max() <= cols
    assert colidx.min() >= 0 and colidx.max() < cols
    row = np.repeat(np.arange(rows), lengths)
    assert (np.diff(colidx)[row[1:] == row[:-1]] > 0).all()  # distinct and sorted within each row
    np.testing.assert_array_equal(v["rowidx"], row)
    np.testing.assert_array_equal(v["rowlen"], lengths)
    width = lengths.max()
    if "ell_colidx" in v:
        ell_cols, ell_vals = v["ell_colidx"].reshape(width, rows), v["ell_values"].reshape(width, rows)
        assert ell_cols.min() >= 0 and ell_cols.max() < cols
        # each row's ELLPACK entries are its CSR entries, then padding of value 0
        for r in (0, rows // 2, rows - 1):
            np.testing.assert_array_equal(ell_cols[: lengths[r], r], colidx[rowptr[r]:rowptr[r + 1]])
            np.testing.assert_array_equal(ell_vals[: lengths[r], r], v["values"][rowptr[r]:rowptr[r + 1]])
            assert not ell_vals[lengths[r]:, r].any()
    perm, ptr, jlen = v["jds_perm"], v["jds_ptr"], v["jds_rowlen"]
    np.testing.assert_array_equal(np.sort(perm), np.arange(rows))
    np.testing.assert_array_equal(jlen, lengths[perm])
    assert (np.diff(jlen) <= 0).all() and ptr[0] == 0 and ptr[-1] == nnz and len(ptr) == width + 1
    for i in (0, rows - 1):  # entry d of sorted row i sits at jds_ptr[d] + i
        r = perm[i]
        np.testing.assert_array_equal(v["jds_colidx"][ptr[: jlen[i]] + i], colidx[rowptr[r]:rowptr[r + 1]])
    if kind == "graph":
        front = v["frontier"]
        assert len(np.unique(front)) == len(front) and front.max() < rows
        assert v["mask"].sum() == len(front) and (v["levels"][front] == 0).all()
        assert (v["levels"] == -1).sum() == rows - len(front)


def test_row_lengths_follow_the_spread_and_not_the_seed():
    flat, skewed = sparse.Shape("m", 10000, 10000, 16, 0.0), sparse.Shape("m", 10000, 10000, 16, 1.5)
    assert set(sparse.row_lengths(flat)) == {16}
    lengths = sparse.row_lengths(skewed)
    assert lengths.sum() == 160000 and lengths.max() > 10 * 16 and (lengths == 0).sum() > 100
    a, b = views("csr:1000:1000:8:1", seed=1), views("csr:1000:1000:8:1", seed=2)
    np.testing.assert_array_equal(a["rowptr"], b["rowptr"])  # the shape: from the definition only
    assert not np.array_equal(a["colidx"], b["colidx"])  # the columns: from the seed
    np.testing.assert_array_equal(a["colidx"], views("csr:1000:1000:8:1", seed=1)["colidx"])


@pytest.mark.parametrize("fill,check", [
    ("perm:100", lambda a: sorted(a[:100]) == list(range(100)) and (a[100:200] == a[:100]).all()),
    ("perm", lambda a: sorted(a) == list(range(len(a)))),
    ("hist:7:0", lambda a: a.min() == 0 and a.max() == 6),
    ("hist:1000:2", lambda a: a.max() < 1000 and (a == 0).mean() > 0.5),
    ("sorted:-5:5", lambda a: (np.diff(a) >= 0).all() and a.min() >= -5 and a.max() < 5),
    ("arange:3:-2:4", lambda a: a[:8].tolist() == [3, 1, -1, -3, 3, 1, -1, -3]),
    ("range:-3:3", lambda a: a.min() == -3 and a.max() == 2),
])
def test_index_fills_stay_in_their_bounds(fill, check):
    fills, _ = read_fills({"x": fill})
    assert check(buffer_data(np.dtype(np.int32), 1, 5000, fills["x"], 7, "x"))


def test_an_index_that_does_not_fit_the_buffer_type_is_refused():
    fills, _ = read_fills({"m": "csr:300:300:1", "x": "m.colidx"})
    with pytest.raises(ValueError, match="do not fit in int8"):
        buffer_data(np.dtype(np.int8), 1, 300, fills["x"], 1, "x")
