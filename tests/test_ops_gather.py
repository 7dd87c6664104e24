"""gather, gatherElements, gatherND, scatterElements, scatterND (spec §gather ... §scatterND):
bit-exact against tests/reference/movement.py for every data type, int32/uint32/int64 indices
including negative and out-of-range values (clamped, see the reference's header), duplicate
scatter targets (last update wins), and the spec's validation errors.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.graph_batch import check_all, check_errors, data, inp, op_graph, typed_rows
from tests.reference import movement as ref

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

INDEX_TYPES = ["int32", "uint32", "int64"]
INDEX_NP = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64}


def indices(shape, n, index_type, seed=0, wild=True):
    """Indices for a dimension of size n: in range, negative, and (wild) out of range both ways."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape, dtype=np.int64))
    if index_type == "uint32":
        values = rng.integers(0, n, size=count)
        extra = [n, n + 5, 2 ** 32 - 1, 2 ** 31]
    else:
        values = rng.integers(-n, n, size=count)
        extra = [n, -n - 1, 2 ** 31 - 1, -(2 ** 31)] + ([2 ** 40, -(2 ** 40), 2 ** 63 - 1, -(2 ** 63)] if index_type == "int64" else [])
    if wild and count >= 4:
        picks = rng.choice(count, size=min(len(extra), count // 2), replace=False)
        values = values.astype(object)
        for p, v in zip(picks, extra):
            values[p] = v
    return np.array([int(v) for v in values], dtype=INDEX_NP[index_type]).reshape(shape)


def nd_indices(ishape, shape, index_type, seed):
    """gatherND/scatterND indices of shape ``ishape`` into ``shape``: column t indexes dimension t
    (seed ``seed + t``), only the first column with out-of-range values."""
    return np.stack([indices(ishape[:-1], shape[t], index_type, seed=seed + t, wild=t == 0)
                     for t in range(ishape[-1])], axis=-1).astype(INDEX_NP[index_type])


def typed_rows_with_indices(table):
    """:func:`typed_rows` of ``table`` over every third data type, each with an index type in
    turn: yields (k, j, row, data_type, index_type)."""
    for k, j, row, data_type in typed_rows(table, 3):
        yield k, j, row, data_type, INDEX_TYPES[(k + j) % 3]


# ----------------------------------------------------------------------------- gather


GATHERS = [([5], [], 0), ([5], [3], 0), ([5], [2, 4], 0), ([4, 3], [2], 0), ([4, 3], [3], 1), ([4, 3], [2, 2], 1),
           ([2, 3, 4], [5], 1), ([2, 3, 4], [2, 3], 2), ([3, 2, 2, 3], [4], 0), ([2, 3, 2, 2, 3], [2, 2], 3),
           ([2, 1, 2, 1, 2, 3], [3], 5), ([2, 2, 1, 2, 1, 2, 2, 3], [], 6)]


def test_gather(webnn_page, server_url):
    cases = []
    for k, j, (shape, ishape, axis), data_type, index_type in typed_rows_with_indices(GATHERS):
        x = data(shape, data_type, seed=k)
        idx = indices(ishape, shape[axis], index_type, seed=k + j)
        d, i = op_graph("gather", {"x": x, "i": idx}, options={"axis": axis} if axis else None,
                        constants={"i"} if j % 2 else ())
        cases.append((d, i, {"y": ref.gather(x, idx, {"axis": axis})}))
    # the spec's examples
    x = np.array([[0, 1, 2], [10, 11, 12], [20, 21, 22], [30, 31, 32]], dtype=np.float32)
    for idx, axis, want in [([3, 1], 0, [[30, 31, 32], [10, 11, 12]]), ([2, 1, 1], 1, [[2, 1, 1], [12, 11, 11], [22, 21, 21], [32, 31, 31]])]:
        d, i = op_graph("gather", {"x": x, "i": np.array(idx, dtype=np.uint32)}, options={"axis": axis})
        cases.append((d, i, {"y": np.array(want, dtype=np.float32)}))
    check_all(webnn_page, server_url, cases)


GATHER_ELEMENTS = [([5], [3], 0), ([4, 3], [2, 3], 0), ([4, 3], [4, 1], 1), ([4, 2, 2], [1, 2, 2], 0),
                   ([2, 3, 4], [2, 5, 4], 1), ([2, 3, 4, 2], [2, 3, 4, 3], 3), ([2, 1, 3, 2, 2], [2, 1, 3, 2, 2], 2),
                   ([2, 1, 2, 1, 2, 1, 2, 3], [2, 1, 2, 1, 2, 1, 2, 4], 7)]


def test_gather_elements(webnn_page, server_url):
    cases = []
    for k, j, (shape, ishape, axis), data_type, index_type in typed_rows_with_indices(GATHER_ELEMENTS):
        x = data(shape, data_type, seed=k)
        idx = indices(ishape, shape[axis], index_type, seed=k + j)
        d, i = op_graph("gatherElements", {"x": x, "i": idx}, options={"axis": axis} if axis else None)
        cases.append((d, i, {"y": ref.gatherElements(x, idx, {"axis": axis})}))
    x = np.array([[0, 1, 2], [10, 11, 12], [20, 21, 22], [30, 31, 32]], dtype=np.float32)
    d, i = op_graph("gatherElements", {"x": x, "i": np.array([[3, 1, 1], [2, 0, 3]], dtype=np.uint32)})
    cases.append((d, i, {"y": np.array([[30, 11, 12], [20, 1, 32]], dtype=np.float32)}))
    check_all(webnn_page, server_url, cases)


GATHER_ND = [([5], [3, 1]), ([2, 2], [3, 2]), ([2, 2], [2, 1]), ([2, 2, 2], [2, 2]), ([2, 2, 2], [3, 1]),
             ([2, 2, 2], [5, 3]), ([2, 2], [2]), ([3, 4, 2], [2, 2, 2]), ([2, 3, 2, 2, 3], [4, 3]),
             ([2, 1, 2, 1, 2, 1, 2, 3], [2, 8]), ([3, 2, 2, 2, 2, 2], [2, 2, 1])]


def test_gather_nd(webnn_page, server_url):
    cases = []
    for k, j, (shape, ishape), data_type, index_type in typed_rows_with_indices(GATHER_ND):
        x = data(shape, data_type, seed=k)
        idx = nd_indices(ishape, shape, index_type, seed=10 * k + j)
        d, i = op_graph("gatherND", {"x": x, "i": idx}, constants={"i"} if j % 2 else ())
        cases.append((d, i, {"y": ref.gatherND(x, idx)}))
    x = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    d, i = op_graph("gatherND", {"x": x, "i": np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=np.uint32)})
    cases.append((d, i, {"y": np.array([1, 2, 4, 6, 7], dtype=np.float32)}))
    check_all(webnn_page, server_url, cases)


# ---------------------------------------------------------------------------- scatter


SCATTER_ELEMENTS = [([5], [3], 0), ([5], [8], 0), ([4, 3], [2, 3], 0), ([4, 3], [4, 2], 1), ([3, 3], [3, 3], 1),
                    ([2, 3, 4], [2, 2, 4], 1), ([2, 3, 4, 2], [2, 3, 4, 1], 3), ([2, 1, 3, 2, 2], [2, 1, 5, 2, 2], 2),
                    ([2, 1, 2, 1, 2, 1, 2, 3], [2, 1, 2, 1, 2, 1, 2, 6], 7)]


def test_scatter_elements(webnn_page, server_url):
    """Includes duplicate targets (more updates than the axis holds): the last update wins."""
    cases = []
    for k, j, (shape, ishape, axis), data_type, index_type in typed_rows_with_indices(SCATTER_ELEMENTS):
        x = data(shape, data_type, seed=k)
        idx = indices(ishape, shape[axis], index_type, seed=k + j)
        upd = data(ishape, data_type, seed=100 + k)
        d, i = op_graph("scatterElements", {"x": x, "i": idx, "u": upd}, options={"axis": axis} if axis else None,
                        constants={"u"} if j % 2 else ())
        cases.append((d, i, {"y": ref.scatterElements(x, idx, upd, {"axis": axis})}))
    check_all(webnn_page, server_url, cases)


SCATTER_ND = [([5], [3, 1]), ([5], [9, 1]), ([4, 3], [2, 1]), ([4, 3], [3, 2]), ([2, 2, 2], [2, 2]),
              ([2, 2, 2], [2]), ([3, 4, 2], [2, 2, 2]), ([2, 3, 2, 2, 3], [4, 3]), ([4, 4], [6, 2]),
              ([2, 1, 2, 1, 2, 1, 2, 3], [3, 8]), ([3, 2, 2, 2, 2, 2], [2, 2, 1]), ([4, 3], [2]),
              ([80, 2], [70, 1])]


@pytest.mark.parametrize("search_max", [None, 0, 1000])
def test_scatter_nd(webnn_page, server_url, search_max):
    """Both lowerings (ops/gather.js): the one step searching the updates from each output element
    (the default for at most 64 update slices, every case with 1000), and copy, claim and write
    (0; the default beyond 64 slices, the last case)."""
    cases = []
    for k, j, (shape, ishape), data_type, index_type in typed_rows_with_indices(SCATTER_ND):
        x = data(shape, data_type, seed=k)
        idx = nd_indices(ishape, shape, index_type, seed=10 * k + j)
        upd = data(ishape[:-1] + shape[ishape[-1]:], data_type, seed=100 + k)
        d, i = op_graph("scatterND", {"x": x, "i": idx, "u": upd}, constants={"i"} if j % 2 else ())
        cases.append((d, i, {"y": ref.scatterND(x, idx, upd)}))
    check_all(webnn_page, server_url, cases, None if search_max is None else {"scatterSearchMax": search_max})


def test_gather_scatter_validation(webnn_page, server_url):
    f = "float32"
    x = inp(f, [4, 3])
    i32 = lambda shape, t="int32": inp(t, shape, "i")  # noqa: E731
    u = lambda shape, t=f: inp(t, shape, "u")  # noqa: E731
    check_errors(webnn_page, server_url, [
        (f"builder => builder.gather({x}, {i32([2], 'float32')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gather({x}, {i32([2], 'uint64')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gather({x}, {i32([2], 'int8')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gather({x}, {i32([2])}, {{axis: 2, label: 'L'}})", "TypeError"),
        (f"builder => builder.gather({inp(f, [])}, {i32([2])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gather({inp(f, [2, 2, 2, 2, 2])}, {i32([2, 2, 2, 2, 2])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gather({x}, 3, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherElements({x}, {i32([4, 3], 'float32')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherElements({x}, {i32([4, 2])}, {{axis: 0, label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherElements({x}, {i32([4])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherElements({x}, {i32([4, 3])}, {{axis: 2, label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherND({x}, {i32([2, 3])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherND({x}, {i32([2, 2], 'uint8')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherND({x}, {i32([])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.gatherND({inp(f, [])}, {i32([1])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterElements({x}, {i32([2, 3])}, {u([2, 3], 'int32')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterElements({x}, {i32([2, 3])}, {u([2, 2])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterElements({x}, {i32([2, 2])}, {u([2, 2])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterElements({x}, {i32([2, 3], 'float32')}, {u([2, 3])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterElements({x}, {i32([4, 3])}, {u([4, 3])}, {{axis: 2, label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterND({x}, {i32([2, 3])}, {u([2])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterND({x}, {i32([2, 1])}, {u([2, 4])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterND({x}, {i32([2, 2])}, {u([2], 'int32')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.scatterND({x}, {i32([2, 2], 'uint64')}, {u([2])}, {{label: 'L'}})", "TypeError"),
    ])


def test_op_support_limits(webnn_page, server_url):
    """opSupportLimits() lists the spec's member names for these ops, with the index types."""
    from tests.graph_runner import open_harness
    open_harness(webnn_page, server_url)
    limits = webnn_page.evaluate("""async () => {
      const context = await navigator.ml.createContext();
      const l = context.opSupportLimits();
      context.destroy();
      return l;
    }""")
    members = {
        "gather": ["input", "indices", "output"], "gatherElements": ["input", "indices", "output"],
        "gatherND": ["input", "indices", "output"], "scatterElements": ["input", "indices", "updates", "output"],
        "scatterND": ["input", "indices", "updates", "output"], "where": ["condition", "trueValue", "falseValue", "output"],
        "triangular": ["input", "output"], "concat": ["inputs", "output"], "split": ["input", "outputs"],
        **{op: ["input", "output"] for op in ["reshape", "identity", "transpose", "slice", "expand", "tile", "reverse", "pad"]},
    }
    for op, names in members.items():
        assert sorted(limits[op]) == sorted(names), op
        for name in names:
            assert limits[op][name]["rankRange"]["max"] == 8
    assert sorted(limits["gather"]["indices"]["dataTypes"]) == ["int32", "int64", "uint32"]
    assert limits["where"]["condition"]["dataTypes"] == ["uint8"]
    assert len(limits["transpose"]["input"]["dataTypes"]) == 8
    assert limits["triangular"]["input"]["rankRange"]["min"] == 2
