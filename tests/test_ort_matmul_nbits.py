"""ORT-web's WebNN EP on a 4-bit ``com.microsoft.MatMulNBits`` (issue 29): the EP accepts the node
only when opSupportLimits().dequantizeLinear lists uint4 for input and zeroPoint, and writes it as
a uint4 constant [N, blocks, blockSize], its zero points (uint4, 8 when absent), reshape of the
scales, dequantizeLinear, reshape, slice (K padded to whole blocks), transpose, matmul, add (bias).

A small model made with the onnx package runs with the CPU fallback disabled, so the whole model
is one WebNN graph (an unsupported node fails the session instead of moving to ORT's CPU EP),
from the git-ignored static/demos/bench-ort/vendor/ (``make setup``); its output must match
onnxruntime's CPU EP in Python within 1e-4.
"""
from __future__ import annotations

import base64

import numpy as np
import pytest

from tests.graph_runner import run_js
from tests.test_ort_webnn_ep import VENDOR

_BODY = """
const {countWebNNCalls} = await import('/demos/bench-ort/runtimes.js');
const counts = countWebNNCalls();
const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
ort.env.wasm.numThreads = 1;
const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const session = await ort.InferenceSession.create(bytes('%(model)s'), {
  executionProviders: [{name: 'webnn', deviceType: 'gpu'}], extra: {session: {disable_cpu_ep_fallback: '1'}}});
const a = new ort.Tensor('float32', new Float32Array(bytes('%(a)s').buffer), %(shape)s);
const {y} = await session.run({a});
const out = Array.from(await y.getData());
await session.release();
return {builds: counts.builds, dispatches: counts.dispatches, y: out};
"""


def matmul_nbits_model(rng, m, k, n, block, zero_points, bias):
    """y = a @ dequantized(B)^T (+ bias), B 4-bit in blocks of `block` along K (K padded)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    blocks = -(-k // block)
    q = rng.integers(0, 16, (n, blocks * block))
    q[:, k:] = 0  # the padding past K
    flat = q.reshape(n, blocks, block)
    packed = (flat[..., 0::2] | (flat[..., 1::2] << 4)).astype(np.uint8)  # low nibble first
    scales = rng.uniform(0.01, 0.1, (n * blocks,)).astype(np.float32)
    inits = [numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "scales")]
    inputs = ["a", "B", "scales"]
    if zero_points:
        zp = rng.integers(0, 16, (n, blocks))
        zp.reshape(-1)[:16] = np.arange(16)[: zp.size]
        per_row = -(-blocks // 2)
        zp_padded = np.zeros((n, per_row * 2), np.int64)
        zp_padded[:, :blocks] = zp
        inits.append(numpy_helper.from_array((zp_padded[:, 0::2] | (zp_padded[:, 1::2] << 4)).astype(np.uint8).reshape(-1), "zp"))
        inputs.append("zp")
    if bias:
        inputs += [""] * (5 - len(inputs)) + ["bias"]
        inits.append(numpy_helper.from_array(rng.uniform(-1, 1, n).astype(np.float32), "bias"))
    node = helper.make_node("MatMulNBits", inputs, ["y"], domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize("zero_points, bias, k, block", [
    (False, False, 40, 16),   # K = 40: three blocks of 16, the last padded by 8; default zero point 8
    (True, False, 40, 32),    # K = 40: two blocks of 32; every zero point 0..15
    (True, True, 64, 32),     # K a multiple of the block, with a bias
    (False, True, 200, 128),  # K = 200: two blocks of 128
])
def test_ort_webnn_ep_matmul_nbits_4bit(webnn_page, server_url, zero_points, bias, k, block):
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    import onnxruntime

    rng = np.random.default_rng(k + block + zero_points)
    m, n = 3, 10
    model = matmul_nbits_model(rng, m, k, n, block, zero_points, bias)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    expected = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]
    b64 = lambda data: base64.b64encode(data).decode("ascii")  # noqa: E731
    result = run_js(webnn_page, server_url, _BODY % {"model": b64(model), "a": b64(a.tobytes()), "shape": [m, k]})
    assert "ok" in result, result
    got = result["ok"]
    assert got["builds"] == 1 and got["dispatches"] == 1, got  # one WebNN graph: nothing fell back
    y = np.array(got["y"], np.float32).reshape(m, n)
    assert np.abs(expected).max() > 0.1
    err = np.abs(y.astype(np.float64) - expected).max()
    assert err <= 1e-4, f"max |webnn - onnxruntime cpu| = {err}"
