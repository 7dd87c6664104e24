"""averagePool2d, l2Pool2d, maxPool2d and resample2d (spec §Pooling operations, §resample2d) in
the browser against the float64 NumPy reference.

The systematic cases (both layouts, windows, padding, strides, dilations, floor/ceil rounding,
outputSizes, NaN/Inf, int32 and float16, every resample2d mode with scales, sizes and axes, the
validation errors) are the conformance cases of tests/conformance/cases/pool.py, run here on one
context per test, within tolerances.md's bounds.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.cases import pool as pool_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_batch import expect_errors, run_graphs
from tests.graph_runner import open_harness
from tests.reference.ops import averagePool2d
from tests.tolerance import assert_ulp

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


@pytest.mark.parametrize("ops", [("averagePool2d", "l2Pool2d", "maxPool2d"), ("resample2d",)], ids=["pool2d", "resample2d"])
def test_graph_cases(webnn_page, server_url, ops):
    """Every graph case of the ops within its bound."""
    cases = [c for c in pool_cases.graph_cases() if c["op"] in ops]
    assert_all_pass(run_cases(webnn_page, server_url, cases))


def test_validation_cases(webnn_page, server_url):
    """Invalid inputs and options throw a TypeError naming the label."""
    assert_all_pass(run_cases(webnn_page, server_url, pool_cases.validation_cases()))


def test_output_shapes(webnn_page, server_url):
    """Output shapes of the spec's formulas without computing: floor/ceil rounding, outputSizes,
    the default window, resample2d scales (as float32) and sizes."""
    js = """(builder) => {
      const x = builder.input('x', {dataType: 'float32', shape: [1, 3, 7, 7]});
      const n = builder.input('n', {dataType: 'float16', shape: [2, 5, 5, 3]});
      return [
        builder.maxPool2d(x).shape,
        builder.averagePool2d(x, {windowDimensions: [4, 4], padding: [1, 1, 1, 1], strides: [2, 2]}).shape,
        builder.l2Pool2d(x, {windowDimensions: [4, 4], padding: [1, 1, 1, 1], strides: [2, 2], outputShapeRounding: 'ceil'}).shape,
        builder.maxPool2d(x, {windowDimensions: [4, 4], strides: [3, 3], outputSizes: [2, 2]}).shape,
        builder.averagePool2d(n, {windowDimensions: [3, 3], layout: 'nhwc'}).shape,
        builder.resample2d(x, {scales: [0.7, 1.3]}).shape,
        builder.resample2d(x, {sizes: [3, 9], axes: [1, 3]}).shape,
      ];
    }"""
    open_harness(webnn_page, server_url)
    shapes = webnn_page.evaluate(
        f"""async () => {{ const context = await navigator.ml.createContext();
          try {{ return ({js})(new MLGraphBuilder(context)); }} finally {{ context.destroy(); }} }}""")
    assert shapes == [[1, 3, 1, 1], [1, 3, 3, 3], [1, 3, 4, 4], [1, 3, 2, 2], [2, 3, 3, 3], [1, 3, 4, 9], [1, 3, 7, 9]]


def test_global_average_pool_of_a_feature_map(webnn_page, server_url):
    """EfficientNet's head: global averagePool2d of 1x1280x7x7 (49 values per window)."""
    x = np.random.default_rng(5).uniform(0, 6, (1, 1280, 7, 7)).astype(np.float32)
    desc = {"inputs": {"x": {"dataType": "float32", "shape": [1, 1280, 7, 7]}},
            "operators": [{"op": "averagePool2d", "args": [{"operand": "x"}], "outputs": "y"}], "outputs": ["y"]}
    [out] = run_graphs(webnn_page, server_url, [(desc, {"x": x})])
    assert_ulp(out["y"], averagePool2d(x), 49 + 2, np.float32)


def test_errors_name_the_label(webnn_page, server_url):
    """The TypeError message starts with the label, and without one names the method."""
    errors = expect_errors(webnn_page, server_url, [
        "(b) => b.maxPool2d(b.input('x', {dataType: 'float32', shape: [1, 2, 3]}), {label: 'pool_xyz'})",
        "(b) => b.resample2d(b.input('x', {dataType: 'float32', shape: [1, 2, 3, 3]}), {scales: [0, 1]})",
    ])
    assert [e["name"] for e in errors] == ["TypeError", "TypeError"]
    assert errors[0]["message"].startswith("[pool_xyz]")
    assert errors[1]["message"].startswith("[resample2d]")
