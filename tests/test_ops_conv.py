"""conv2d and convTranspose2d (spec §conv2d, §convTranspose2d) in the browser against the float64
NumPy reference.

The systematic cases (every input and filter layout, padding, strides, dilations, groups and
depthwise, bias, the pointwise/depthwise/general kernels, NaN/Inf, float16, the validation
errors) are the conformance cases of tests/conformance/cases/conv.py, run here on one context
per test; the bound is tolerances.md's 2 * kh * kw * Cin / groups ULP.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conformance.cases import conv as conv_cases
from tests.conformance.encode import tensor
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_batch import run_graphs
from tests.graph_runner import open_harness
from tests.reference.ops import clamp, conv2d
from tests.tolerance import assert_ulp

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


@pytest.mark.parametrize("op", ["conv2d", "convTranspose2d"])
def test_graph_cases(webnn_page, server_url, op):
    """Every graph case of the op (float32 and float16) within its ULP bound."""
    cases = [c for c in conv_cases.graph_cases() if c["op"] == op]
    assert_all_pass(run_cases(webnn_page, server_url, cases))


def test_validation_cases(webnn_page, server_url):
    """Invalid operands, types, ranks and options throw a TypeError naming the label; a built
    builder throws InvalidStateError."""
    assert_all_pass(run_cases(webnn_page, server_url, conv_cases.validation_cases()))


_BOTH_POINTWISE_KERNELS_JS = """
async (casesJson) => {
  const {runGraphCase} = await import('/conformance/runner.js');
  const results = [];
  for (const kernel of ['tiled', 'blocked']) {
    const context = await navigator.ml.createContext({polyfill: {tuning: {pointwise: kernel}}});
    try {
      for (const c of JSON.parse(casesJson)) results.push({...await runGraphCase(context, c), name: `${kernel}: ${c.name}`});
    } finally {
      context.destroy();
    }
  }
  return results;
}
"""


def test_pointwise_kernels(webnn_page, server_url):
    """Both pointwise kernels (tiled in workgroup memory, chosen on hardware GPUs for 32+ output
    channels; blocked, chosen on SwiftShader) on every 1x1 case: layouts, partial tiles, K > 16,
    batches, float16."""
    cases = [c for c in conv_cases.graph_cases() if c["op"] == "conv2d" and "pointwise" in c["name"]]
    assert len(cases) >= 12
    open_harness(webnn_page, server_url)
    assert_all_pass(webnn_page.evaluate(_BOTH_POINTWISE_KERNELS_JS, json.dumps(cases)))


def _layer(name, x, w, b, options):
    return [
        {"op": "conv2d", "args": [{"operand": x}, {"operand": w}],
         "options": {**options, "bias": {"operand": b}}, "outputs": f"{name}_c"},
        {"op": "clamp", "args": [{"operand": f"{name}_c"}], "options": {"minValue": 0, "maxValue": 6}, "outputs": name},
    ]


def test_efficientnet_block(webnn_page, server_url):
    """A MobileNet/EfficientNet block chained in one graph: stem 3x3 stride 2 (end-heavy padding),
    depthwise 3x3, pointwise projection, each with bias and ReLU6; intermediates in pooled
    buffers. Bound: the sum of the three conv bounds plus the clamps' 0."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, (1, 3, 33, 31)).astype(np.float32)
    ws = {
        "w0": rng.uniform(0, 0.5, (16, 3, 3, 3)), "w1": rng.uniform(0, 0.5, (16, 1, 3, 3)),
        "w2": rng.uniform(0, 0.2, (24, 16, 1, 1)),
        "b0": rng.uniform(0, 0.1, 16), "b1": rng.uniform(0, 0.1, 16), "b2": rng.uniform(0, 0.1, 24),
    }
    ws = {k: v.astype(np.float32) for k, v in ws.items()}
    desc = {
        "inputs": {"x": {"dataType": "float32", "shape": list(x.shape)}},
        "constants": {k: tensor(v, "float32") for k, v in ws.items()},
        "operators": _layer("y0", "x", "w0", "b0", {"strides": [2, 2], "padding": [0, 1, 0, 1]})
        + _layer("y1", "y0", "w1", "b1", {"groups": 16, "padding": [1, 1, 1, 1]})
        + _layer("y", "y1", "w2", "b2", {}),
        "outputs": ["y"],
    }
    [out] = run_graphs(webnn_page, server_url, [(desc, {"x": x})])
    relu6 = {"minValue": 0, "maxValue": 6}
    y = clamp(conv2d(x, ws["w0"], {"strides": [2, 2], "padding": [0, 1, 0, 1], "bias": ws["b0"]}), relu6)
    y = clamp(conv2d(y.astype(np.float32), ws["w1"], {"groups": 16, "padding": [1, 1, 1, 1], "bias": ws["b1"]}), relu6)
    y = clamp(conv2d(y.astype(np.float32), ws["w2"], {"bias": ws["b2"]}), relu6)
    assert_ulp(out["y"], y, 2 * 27 + 2 * 9 + 2 * 16, np.float32)


def test_op_support_limits(webnn_page, server_url):
    """opSupportLimits() lists conv2d and convTranspose2d for float32/float16, rank 4 (bias 1)."""
    open_harness(webnn_page, server_url)
    limits = webnn_page.evaluate("async () => (await navigator.ml.createContext()).opSupportLimits()")
    for op in ("conv2d", "convTranspose2d"):
        for member, rank in (("input", 4), ("filter", 4), ("bias", 1), ("output", 4)):
            assert limits[op][member]["dataTypes"] == ["float32", "float16"], (op, member)
            assert limits[op][member]["rankRange"] == {"min": rank, "max": rank}, (op, member)
