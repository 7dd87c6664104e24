"""ORT-web's WebNN EP on a graph it splits: WebNN partitions around a node it keeps on its CPU EP.

ONNX models shipped in npm packages (a PP-OCR text recogniser, openWakeWord's mel-spectrogram front
end) have nodes ORT's WebNN EP declines; with the CPU fallback allowed, ORT builds one WebNN graph
per partition and moves tensors between them and its CPU EP (readTensor / writeTensor) inside one
``session.run``. Such runs once hung at the first ``session.run`` (readTensor refused the buffer
ORT passed). This test makes a small model of that shape with the onnx package: MatMul -> Relu
(WebNN) -> Sinh (no WebNN mapping in ORT 1.30: CPU EP) -> Add -> Sigmoid (WebNN), runs it twice
with ``executionProviders: [{name: 'webnn', deviceType: 'gpu'}]`` (fallback allowed) from the
git-ignored static/demos/bench-ort/vendor/ (``make setup``), and compares with float64 NumPy.
"""
from __future__ import annotations

import base64

import numpy as np
import pytest

from tests.graph_runner import run_js
from tests.test_ort_webnn_ep import VENDOR
from tests.tolerance import assert_abs

RUNS = 2
SHAPE = (2, 3, 4, 5)  # x: [batch, rows, cols, K]

_BODY = """
const {countWebNNCalls} = await import('/demos/bench-ort/runtimes.js');
const counts = countWebNNCalls();
const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';  // ORT warns (console.error) that it placed Sinh on its CPU EP: expected here
const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const session = await ort.InferenceSession.create(bytes('%(model)s'),
    {executionProviders: [{name: 'webnn', deviceType: 'gpu'}], logSeverityLevel: 3});
const builds = counts.builds;
const x = new ort.Tensor('float32', new Float32Array(bytes('%(x)s').buffer), %(shape)s);
const outputs = [], dispatchesPerRun = [];
for (let i = 0; i < %(runs)d; i++) {
  const before = counts.dispatches;
  const {y} = await session.run({x});
  dispatchesPerRun.push(counts.dispatches - before);
  outputs.push(Array.from(await y.getData()));
}
await session.release();
return {builds, dispatchesPerRun, outputs};
"""


def split_model(w: np.ndarray, b: np.ndarray) -> bytes:
    """y = sigmoid(sinh(relu(x @ w)) + b), x float32 SHAPE (onnx opset 17, IR 8: ORT 1.30 reads it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Sinh", ["r"], ["s"]), helper.make_node("Add", ["s", "b"], ["a"]),
             helper.make_node("Sigmoid", ["a"], ["y"])]
    graph = helper.make_graph(
        nodes, "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [*SHAPE[:-1], w.shape[1]])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def test_ort_webnn_ep_runs_a_split_graph(webnn_page, server_url):
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    rng = np.random.default_rng(5)
    w = rng.uniform(-0.6, 0.6, (SHAPE[-1], 6)).astype(np.float32)
    b = rng.uniform(-1, 1, 6).astype(np.float32)
    x = rng.uniform(-2, 2, SHAPE).astype(np.float32)
    b64 = lambda data: base64.b64encode(data).decode("ascii")  # noqa: E731
    result = run_js(webnn_page, server_url, _BODY % {
        "model": b64(split_model(w, b)), "x": b64(x.tobytes()), "shape": list(SHAPE), "runs": RUNS})
    assert "ok" in result, result
    got = result["ok"]
    # one WebNN graph before Sinh, one after; each run dispatches both
    assert got["builds"] == 2 and got["dispatchesPerRun"] == [2] * RUNS, got

    h = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
    expected = 1 / (1 + np.exp(-(np.sinh(h) + b)))
    assert (h == 0).any() and h.max() > 1  # Relu clips, Sinh bends
    # matmul (K = 5), sinh, add and sigmoid in float32 on outputs in (0, 1): far below 1e-5;
    # a lost partition or a stale tensor is off by O(0.1)
    for out in got["outputs"]:
        assert_abs(np.array(out, np.float32).reshape(expected.shape), expected, 1e-5, np.float32)
