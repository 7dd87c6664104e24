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
from tests.tolerance import assert_ulp
from tests.test_ort_webnn_ep import VENDOR

_BODY = """
const {countWebNNCalls} = await import('/demos/bench-ort/runtimes.js');
const counts = countWebNNCalls();
const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
ort.env.wasm.numThreads = 1;
const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const session = await ort.InferenceSession.create(bytes('%(model)s'), {
  executionProviders: [{name: 'webnn', deviceType: 'gpu'}], extra: {session: {disable_cpu_ep_fallback: '1'}}});
// a float16 tensor made from binary16 bits (Uint16Array)
const a = %(float16)s ? new ort.Tensor('float16', new Uint16Array(bytes('%(a)s').buffer), %(shape)s)
  : new ort.Tensor('float32', new Float32Array(bytes('%(a)s').buffer), %(shape)s);
const {y} = await session.run({a});
const data = await y.getData();
// float16 data may come as binary16 bits (Uint16Array) or as a Float16Array: values either way
const out = Array.from(y.type === 'float16' && data instanceof Uint16Array ? new Float16Array(data.buffer, data.byteOffset, data.length) : data);
await session.release();
return {builds: counts.builds, dispatches: counts.dispatches, y: out};
"""


def matmul_nbits_model(rng, m, k, n, block, zero_points, bias, dtype=np.float32):
    """y = a @ dequantized(B)^T (+ bias), B 4-bit in blocks of `block` along K (K padded); a,
    scales, bias and y of `dtype` (float16: transformers.js' q4f16 files). Returns the model
    and float64 NumPy's y for an a, rounded to `dtype` where the EP's graph rounds."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    blocks = -(-k // block)
    q = rng.integers(0, 16, (n, blocks * block))
    q[:, k:] = 0  # the padding past K
    flat = q.reshape(n, blocks, block)
    packed = (flat[..., 0::2] | (flat[..., 1::2] << 4)).astype(np.uint8)  # low nibble first
    scales = rng.uniform(0.01, 0.1, (n * blocks,)).astype(dtype)
    zp = np.full((n, blocks), 8)
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
        inits.append(numpy_helper.from_array(bias_values := rng.uniform(-1, 1, n).astype(dtype), "bias"))
    node = helper.make_node("MatMulNBits", inputs, ["y"], domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("a", elem, [m, k])],
                              [helper.make_tensor_value_info("y", elem, [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    # the EP's graph: dequantizeLinear's values of the scales' type, matmul, add (each rounded to it)
    weights = ((q[:, :k] - np.repeat(zp, block, axis=1)[:, :k]) * np.repeat(scales.astype(np.float64).reshape(n, blocks), block, axis=1)[:, :k])
    weights = weights.astype(dtype).astype(np.float64)

    def reference(a):
        y = (a.astype(np.float64) @ weights.T).astype(dtype).astype(np.float64)
        return (y + bias_values.astype(np.float64)).astype(dtype).astype(np.float64) if bias else y
    return model.SerializeToString(), reference


@pytest.mark.parametrize("zero_points, bias, k, block, dtype", [
    (False, False, 40, 16, np.float32),   # K = 40: three blocks of 16, the last padded by 8; default zero point 8
    (True, False, 40, 32, np.float32),    # K = 40: two blocks of 32; every zero point 0..15
    (True, True, 64, 32, np.float32),     # K a multiple of the block, with a bias
    (False, True, 200, 128, np.float32),  # K = 200: two blocks of 128
    # q4f16 (transformers.js' 4-bit files for WebGPU): a, scales, bias and y float16
    # (the EP writes the zero points of an odd count of blocks a row with the rows' padding
    # nibbles, a buffer longer than their descriptor: constant() throws, docs/clients.md)
    (False, True, 40, 16, np.float16),
    (True, False, 120, 32, np.float16),
], ids=["k40-b16", "k40-b32-zp", "k64-b32-zp-bias", "k200-b128-bias", "f16-k40-b16-bias", "f16-k120-b32-zp"])
def test_ort_webnn_ep_matmul_nbits_4bit(webnn_page, server_url, zero_points, bias, k, block, dtype):
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    import onnxruntime

    rng = np.random.default_rng(k + block + zero_points)
    m, n = 3, 10
    model, reference = matmul_nbits_model(rng, m, k, n, block, zero_points, bias, dtype)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    expected = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]
    b64 = lambda data: base64.b64encode(data).decode("ascii")  # noqa: E731
    result = run_js(webnn_page, server_url, _BODY % {"model": b64(model), "a": b64(a.tobytes()), "shape": [m, k],
                                                     "float16": "true" if dtype == np.float16 else "false"})
    assert "ok" in result, result
    got = result["ok"]
    assert got["builds"] == 1 and got["dispatches"] == 1, got  # one WebNN graph: nothing fell back
    y = np.array(got["y"], dtype).reshape(m, n)
    exact = reference(a)
    assert np.abs(exact).max() > 0.1
    if dtype == np.float32:
        err = np.abs(y.astype(np.float64) - expected).max()
        assert err <= 1e-4, f"max |webnn - onnxruntime cpu| = {err}"
    else:
        # float16: the web-platform-tests' bound of the EP's graph (dequantizeLinear exact, matmul
        # 2K ULP, add 1) from float64 rounded op by op; the polyfill's fused product dequantizes in
        # f32 without rounding each weight to binary16 (docs/quantization.md). onnxruntime's CPU
        # EP meets the same bound.
        bound = 2 * k + (1 if bias else 0)
        assert_ulp(y, exact, bound, np.float16)
        assert_ulp(expected, exact, bound, np.float16)
