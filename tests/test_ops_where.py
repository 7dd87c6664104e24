"""where and triangular (spec §where, §triangular): bit-exact against
tests/reference/movement.py for every data type, broadcasting ranks 0-8, every option, and the
spec's validation errors."""
from __future__ import annotations

import numpy as np
import pytest

from tests.graph_batch import check_all, check_errors, data, dtype_name, inp, op_graph, typed_rows
from tests.reference import movement as ref

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


def condition(shape, seed=0):
    """uint8 condition with zeros, ones and other non-zero values (all non-zero mean true)."""
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([0, 1, 0, 255, 7], dtype=np.uint8), size=shape)


WHERES = [([], [], []), ([5], [5], [5]), ([2, 3], [2, 3], [2, 3]), ([2, 3], [], [3]), ([], [2, 3], [2, 1]),
          ([3, 1], [1, 4], [3, 4]), ([2, 1, 4], [3, 1], [1]), ([1, 2, 1, 3, 1], [2, 1, 2, 1, 2], [3, 1]),
          ([2, 1, 2, 1, 2, 1, 2, 1], [1, 2, 1, 2, 1, 2, 1, 2], [2])]


def test_where(webnn_page, server_url):
    cases = []
    for k, j, (cshape, tshape, fshape), data_type in typed_rows(WHERES, 2):
        c = condition(cshape, seed=k)
        t = data(tshape, data_type, seed=k)
        f = data(fshape, data_type, seed=k + 50)
        d, i = op_graph("where", {"c": c, "t": t, "f": f}, constants={"f"} if j % 2 else ())
        cases.append((d, i, {"y": ref.where(c, t, f)}))
    check_all(webnn_page, server_url, cases)


TRIANGULARS = [([3, 3], {}), ([3, 3], {"diagonal": 1}), ([3, 3], {"diagonal": -1}), ([3, 3], {"upper": False}),
               ([3, 3], {"upper": False, "diagonal": 1}), ([3, 3], {"upper": False, "diagonal": -1}),
               ([4, 6], {"diagonal": 2}), ([6, 4], {"upper": False, "diagonal": -2}), ([2, 3, 5], {"upper": False}),
               ([3, 4], {"diagonal": 10}), ([3, 4], {"diagonal": -10}), ([3, 4], {"upper": False, "diagonal": -2147483648}),
               ([3, 4], {"diagonal": 2147483647}), ([2, 1, 3, 4, 3], {"diagonal": -1}),
               ([2, 1, 2, 1, 2, 1, 3, 3], {"upper": False, "diagonal": 1}), ([1, 1], {})]


def test_triangular(webnn_page, server_url):
    cases = []
    for k, _, (shape, options), data_type in typed_rows(TRIANGULARS, 3):
        x = data(shape, data_type, seed=k)
        d, i = op_graph("triangular", {"x": x}, options=options or None)
        cases.append((d, i, {"y": ref.triangular(x, options)}))
    # the spec's example
    x = np.array([[7, 1, 2], [9, 4, 8], [2, 6, 3]], dtype=np.float32)
    d, i = op_graph("triangular", {"x": x}, options={"upper": False, "diagonal": -1})
    cases.append((d, i, {"y": np.array([[0, 0, 0], [9, 0, 0], [2, 6, 0]], dtype=np.float32)}))
    check_all(webnn_page, server_url, cases)


def test_where_triangular_validation(webnn_page, server_url):
    f = "float32"
    check_errors(webnn_page, server_url, [
        (f"builder => builder.where({inp('float32', [2], 'c')}, {inp(f, [2], 't')}, {inp(f, [2], 'f')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.where({inp('int32', [2], 'c')}, {inp(f, [2], 't')}, {inp(f, [2], 'f')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.where({inp('uint8', [2], 'c')}, {inp(f, [2], 't')}, {inp('float16', [2], 'f')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.where({inp('uint8', [3], 'c')}, {inp(f, [2], 't')}, {inp(f, [2], 'f')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.where({inp('uint8', [2], 'c')}, {inp(f, [2, 3], 't')}, {inp(f, [3, 3], 'f')}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.triangular({inp(f, [3])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.triangular({inp(f, [])}, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.triangular({inp(f, [2, 2])}, {{diagonal: 0.5, label: 'L'}})", "TypeError"),
        (f"builder => builder.triangular({inp(f, [2, 2])}, {{diagonal: 2147483648, label: 'L'}})", "TypeError"),
    ])


#: ONNX's Clip function body (onnx/defs/math: Clip-13's context-dependent expansion), the graph
#: ORT's WebNN EP builds for the *_expanded Clip node tests: min and max are 0-D graph inputs.
#:   tmp = where(lesser(x, min), min, x);  y = where(lesser(max, tmp), max, tmp)
CLIP_EXPANDED = [((3,), -1.0, 1.0), ((3, 4, 5), -1.0, 1.0), ((3,), -5.0, 5.0), ((2, 3, 4), 0.5, 0.25),
                 ((7,), -np.inf, np.inf), ((6,), np.nan, 2.0)]


def clip_expanded_graph(x, lo, hi, with_max=True):
    """The expanded Clip as a graph description (inputs x, min[, max]; output y)."""
    scalar = {"dataType": dtype_name(x), "shape": []}
    ops = [{"op": "lesser", "args": [{"operand": "x"}, {"operand": "min"}], "outputs": "below"},
           {"op": "where", "args": [{"operand": "below"}, {"operand": "min"}, {"operand": "x"}],
            "outputs": "tmp" if with_max else "y"}]
    inputs = {"x": {"dataType": dtype_name(x), "shape": list(x.shape)}, "min": scalar}
    if with_max:
        inputs["max"] = scalar
        ops += [{"op": "lesser", "args": [{"operand": "max"}, {"operand": "tmp"}], "outputs": "above"},
                {"op": "where", "args": [{"operand": "above"}, {"operand": "max"}, {"operand": "tmp"}], "outputs": "y"}]
    feeds = {"x": x, "min": np.array(lo, x.dtype), **({"max": np.array(hi, x.dtype)} if with_max else {})}
    return {"inputs": inputs, "operators": ops, "outputs": ["y"]}, feeds


def test_onnx_expanded_clip_pattern(webnn_page, server_url):
    """lesser + where on 0-D graph inputs, as ONNX's expanded Clip cases run through ORT's WebNN EP
    (test_clip_example_expanded, test_clip_expanded, test_clip_inbounds_expanded,
    test_clip_default_min_expanded and test_clip_default_max_expanded among them): bit-exact
    against NumPy with NaN, ±Inf and -0 in x, min > max, NaN bounds, float32 / float16 / int8."""
    cases = []
    for k, (shape, lo, hi) in enumerate(CLIP_EXPANDED):
        for data_type in ("float32", "float16", "int8"):
            if data_type == "int8" and not (np.isfinite(lo) and np.isfinite(hi)):
                continue
            x = data(shape, data_type, seed=k)
            if data_type != "int8":
                x = x / x.dtype.type(50)
            for with_max in (True, False):
                d, feeds = clip_expanded_graph(x, lo, hi, with_max)
                mn = feeds["min"]
                tmp = np.where(x < mn, mn, x).astype(x.dtype)
                want = np.where(feeds["max"] < tmp, feeds["max"], tmp).astype(x.dtype) if with_max else tmp
                cases.append((d, feeds, {"y": want}))
    check_all(webnn_page, server_url, cases)
