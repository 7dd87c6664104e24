"""Reductions, argMin/argMax and cumulativeSum in the browser against float64 NumPy references.

The systematic cases (every reduction over several axes/keepDimensions configurations, empty
axes, scalars, long and strided rows, NaN/±Inf, int32/uint32, argMin/argMax ties and NaN with
int32/int64 outputs, cumulativeSum exclusive/reversed, validation errors) are the conformance
cases of tests/conformance/cases/reduce.py (bounds documented there). Here also: 70,000 rows.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.cases import reduce as reduce_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_batch import run_graphs
from tests.reference.reduce import argMax, cumulativeSum, reduce
from tests.tolerance import assert_exact, assert_ulp

GROUPS = {
    "reduce-float": lambda c: c["op"].startswith("reduce") and c["dataType"] == "float32",
    "reduce-int": lambda c: c["op"].startswith("reduce") and c["dataType"] != "float32",
    "argminmax-cumulativeSum": lambda c: not c["op"].startswith("reduce"),
}


@pytest.mark.parametrize("group", list(GROUPS))
def test_graph_cases(webnn_page, server_url, group):
    """Every graph case of the group within its bound."""
    cases = [c for c in reduce_cases.graph_cases() if GROUPS[group](c)]
    assert cases
    assert_all_pass(run_cases(webnn_page, server_url, cases))


def test_validation_cases(webnn_page, server_url):
    """Bad axes, data types and output types: a TypeError naming the label."""
    assert_all_pass(run_cases(webnn_page, server_url, reduce_cases.validation_cases()))


def _graph(op, shape, args=(), options=None):
    entry = {"op": op, "args": [{"operand": "x"}, *args], "outputs": "y"}
    if options:
        entry["options"] = options
    return {"inputs": {"x": {"dataType": "float32", "shape": list(shape)}}, "operators": [entry], "outputs": ["y"]}


def test_70000_rows(webnn_page, server_url):
    """70,000 output rows: reduceSum over the last axis, argMax and cumulativeSum over a strided
    axis; every row checked."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 2.0, (70000, 12)).astype(np.float32)
    xt = np.ascontiguousarray(x.T)
    out = run_graphs(webnn_page, server_url, [
        (_graph("reduceSum", x.shape, options={"axes": [1]}), {"x": x}),
        (_graph("argMax", xt.shape, [0]), {"x": xt}),
        (_graph("cumulativeSum", xt.shape, [0], {"reversed": True}), {"x": xt}),
    ])
    assert_ulp(out[0]["y"], reduce("reduceSum", x, {"axes": [1]}), 12, np.float32)
    assert_exact(out[1]["y"], argMax(xt, 0), np.int32)
    assert_ulp(out[2]["y"], cumulativeSum(xt, 0, {"reversed": True}), 12, np.float32)
