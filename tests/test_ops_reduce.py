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
from tests.graph_batch import run_graphs, run_on_context
from tests.reference.reduce import argMax, cumulativeSum, reduce
from tests.tolerance import assert_exact, assert_ulp

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

GROUPS = {
    "reduce-float": lambda c: c["op"].startswith("reduce") and c["dataType"] == "float32",
    "reduce-int": lambda c: c["op"].startswith("reduce") and c["dataType"] != "float32",
    "argminmax-cumulativeSum": lambda c: not c["op"].startswith("reduce"),
}


@pytest.mark.parametrize("kernel", ["invocation", "workgroup"])
@pytest.mark.parametrize("group", list(GROUPS))
def test_graph_cases(webnn_page, server_url, group, kernel):
    """Every graph case of the group within its bound, with one invocation and with one
    workgroup per output row."""
    cases = [c for c in reduce_cases.graph_cases() if GROUPS[group](c)]
    assert cases
    assert_all_pass(run_cases(webnn_page, server_url, cases, {"rows": kernel}))


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


FOLDED_JS = """
async (context, [rows, n]) => {
  // One workgroup per row (tuning {rows: 'workgroup'}): more rows than the device's
  // workgroups per grid dimension fold the grid. Returns the rows that differ and the steps' grids.
  const {describeGraph} = await import('/polyfill/inspect.js');
  const builder = new MLGraphBuilder(context);
  const x = builder.input('x', {dataType: 'float32', shape: [rows, n]});
  const graph = await builder.build({s: builder.reduceSum(x, {axes: [1]}), m: builder.argMax(x, 1)});
  const grids = describeGraph(graph).steps.map((st) => st.workgroups);
  const data = new Float32Array(rows * n);
  for (let i = 0; i < rows * n; i++) data[i] = ((i * 2654435761) >>> 0) % 1000 / 8;
  const tx = await context.createTensor({dataType: 'float32', shape: [rows, n], writable: true});
  const ts = await context.createTensor({dataType: 'float32', shape: [rows], readable: true});
  const tm = await context.createTensor({dataType: 'int32', shape: [rows], readable: true});
  context.writeTensor(tx, data);
  context.dispatch(graph, {x: tx}, {s: ts, m: tm});
  const s = new Float32Array(await context.readTensor(ts));
  const m = new Int32Array(await context.readTensor(tm));
  let bad = 0;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    let best = 0;
    for (let j = 0; j < n; j++) {
      sum += data[r * n + j];
      if (data[r * n + j] > data[r * n + best]) best = j;
    }
    if (s[r] !== sum || m[r] !== best) bad++;  // multiples of 1/8 below 125: sums are exact
  }
  return {bad, grids};
}
"""


def test_folded_grid(webnn_page, server_url):
    """1,000 rows with one workgroup per row on a device reporting 64 workgroups a grid dimension
    (tests/graph_batch.py TUNE_CONTEXT_JS; 70,000 rows folded the real 65,535 the same way, in
    9 s of SwiftShader): both steps' grids folded in 2-D, [63, 16, 1], 8 workgroups past the last
    row; reduceSum (exact on dyadic data) and argMax, every row."""
    r = run_on_context(webnn_page, server_url, FOLDED_JS, [1000, 12], {"rows": "workgroup"}, workgroup_limit=64)
    assert r["grids"] == [[63, 16, 1]] * 2, r["grids"]
    assert r["bad"] == 0


def test_long_rows_of_few_rows(webnn_page, server_url):
    """Few long rows, one workgroup per row: 5 rows of 900 and 2 of 3,000 take 256 invocations a
    row (ops/rows.js rowWorkgroupSize), reduceSum (exact on dyadic data) and argMax, every row."""
    for shape in ([5, 900], [2, 3000]):
        assert run_on_context(webnn_page, server_url, FOLDED_JS, shape, {"rows": "workgroup"})["bad"] == 0, shape
