"""softmax (spec §softmax) in the browser against the float64 NumPy reference.

The systematic cases (every axis of ranks 1-5, short and long rows, large values, -Inf, NaN,
+Inf, validation errors) are the conformance cases of tests/conformance/cases/softmax.py; the
bound is 3N + 3 ULP (tolerances.md). Here also: more rows than one grid dimension holds.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.cases import softmax as softmax_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_batch import run_graphs, run_on_context
from tests.reference.ops import softmax
from tests.tolerance import assert_ulp

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


@pytest.mark.parametrize("kernel", ["invocation", "workgroup"])
def test_graph_cases(webnn_page, server_url, kernel):
    """Every graph case within 3N + 3 ULP, with one invocation and with one workgroup per row."""
    assert_all_pass(run_cases(webnn_page, server_url, softmax_cases.graph_cases(), {"rows": kernel}))


def test_validation_cases(webnn_page, server_url):
    """Bad axis, rank or data type: a TypeError naming the label."""
    assert_all_pass(run_cases(webnn_page, server_url, softmax_cases.validation_cases()))


def _graph(shape, axis):
    return {"inputs": {"x": {"dataType": "float32", "shape": list(shape)}},
            "operators": [{"op": "softmax", "args": [{"operand": "x"}, axis], "outputs": "y"}],
            "outputs": ["y"]}


def test_70000_rows(webnn_page, server_url):
    """70,000 rows of 40 and 3 elements (one invocation per row), every row checked."""
    rng = np.random.default_rng(3)
    long_rows = rng.uniform(-6, 6, (70000, 40)).astype(np.float32)
    short_rows = rng.uniform(-6, 6, (5, 70000, 3)).astype(np.float32)
    out = run_graphs(webnn_page, server_url, [(_graph(long_rows.shape, 1), {"x": long_rows}),
                                              (_graph(short_rows.shape, 2), {"x": short_rows})])
    assert_ulp(out[0]["y"], softmax(long_rows, 1), 3 * 40 + 3, np.float32)
    assert_ulp(out[1]["y"], softmax(short_rows, 2), 3 * 3 + 3, np.float32)


FOLDED_JS = """
async (context, [rows, n]) => {
  // Input generated here, the float64 reference computed here too and compared in ULP of
  // float32. Returns the worst ULP distance and the steps' workgroup grids.
  const {describeGraph} = await import('/polyfill/inspect.js');
  const builder = new MLGraphBuilder(context);
  const x = builder.input('x', {dataType: 'float32', shape: [rows, n]});
  const graph = await builder.build({y: builder.softmax(x, 1)});
  const grids = describeGraph(graph).steps.map((st) => st.workgroups);
  const data = new Float32Array(rows * n);
  for (let i = 0; i < rows * n; i++) data[i] = (((i * 2654435761) >>> 0) % 1000) / 100 - 5;
  const tx = await context.createTensor({dataType: 'float32', shape: [rows, n], writable: true});
  const ty = await context.createTensor({dataType: 'float32', shape: [rows, n], readable: true});
  context.writeTensor(tx, data);
  context.dispatch(graph, {x: tx}, {y: ty});
  const y = new Float32Array(await context.readTensor(ty));
  const bits = new Int32Array(y.buffer);
  const ref = new Float32Array(1);
  const refBits = new Int32Array(ref.buffer);
  let worst = 0;
  for (let r = 0; r < rows; r++) {
    let m = -Infinity;
    for (let j = 0; j < n; j++) m = Math.max(m, data[r * n + j]);
    let s = 0;
    for (let j = 0; j < n; j++) s += Math.exp(data[r * n + j] - m);
    for (let j = 0; j < n; j++) {
      ref[0] = Math.exp(data[r * n + j] - m) / s;
      worst = Math.max(worst, Math.abs(bits[r * n + j] - refBits[0]));
    }
  }
  return {worst, grids};
}
"""


def test_folded_grid(webnn_page, server_url):
    """1,000 rows of 257 elements (4 for each of a row's 64 invocations and a tail of one), one
    workgroup per row, on a device reporting 16 workgroups a grid dimension (tests/graph_batch.py
    TUNE_CONTEXT_JS; 65,600 rows folded the real 65,535 in 2-D, in 16 s of SwiftShader): the
    grid folded in 3-D, [16, 16, 4], 24 workgroups past the last row; every row within 3N + 3 ULP
    of a float64 reference."""
    r = run_on_context(webnn_page, server_url, FOLDED_JS, [1000, 257], {"rows": "workgroup"}, workgroup_limit=16)
    assert r["grids"] == [[16, 16, 4]], r["grids"]
    assert r["worst"] <= 3 * 257 + 3
