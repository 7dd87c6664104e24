"""Builder call patterns of a real WebNN client, ONNX Runtime Web's WebNN EP, against float64 NumPy.

ORT-web decomposes ONNX operators that WebNN lacks into several builder calls, and treats what
the builder returns as its own: e.g. for RotaryEmbedding it reverses split()'s result array *in
place* to swap the two halves before concat (rotaryEmbedding_op_builder.cc). These tests make
the same calls on our MLGraphBuilder with non-square shapes and negative values, and compare the
outputs with float64 NumPy formulas written from the ONNX operator definitions, not from the
decomposition.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.graph_runner import run_js
from tests.reference import recurrent as recurrent_ref
from tests.tolerance import assert_abs, assert_exact

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

#: float32 unit roundoff
EPS32 = 2.0 ** -24

_RUN = """
const ctx = await navigator.ml.createContext();
const b = new MLGraphBuilder(ctx);
const inputs = %(inputs)s;
const ops = {};
for (const [name, t] of Object.entries(inputs)) ops[name] = b.input(name, {dataType: t.dataType, shape: t.shape});
const outs = (%(graph)s)(b, ops);
const graph = await b.build(outs);
const feeds = {}, fetches = {};
for (const [name, t] of Object.entries(inputs)) {
  feeds[name] = await ctx.createTensor({dataType: t.dataType, shape: t.shape, writable: true});
  const A = {float32: Float32Array, int64: BigInt64Array}[t.dataType];
  ctx.writeTensor(feeds[name], t.dataType === 'int64' ? A.from(t.values, BigInt) : A.from(t.values));
}
for (const [name, o] of Object.entries(outs)) fetches[name] = await ctx.createTensor({dataType: o.dataType, shape: o.shape, readable: true});
ctx.dispatch(graph, feeds, fetches);
const result = {};
for (const [name, t] of Object.entries(fetches)) {
  const A = {float32: Float32Array, uint8: Uint8Array}[outs[name].dataType];
  result[name] = {dataType: outs[name].dataType, shape: outs[name].shape, values: Array.from(new A(await ctx.readTensor(t)))};
}
ctx.destroy();
return result;
"""


def run(page, server_url, graph_js: str, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Build ``graph_js`` (``(builder, inputs) => {name: operand}``) over float32/int64 ``inputs``,
    compute it once, and return the (float32 or uint8) outputs."""
    described = {name: {"dataType": "int64" if a.dtype == np.int64 else "float32", "shape": list(a.shape),
                        "values": a.ravel().tolist()} for name, a in inputs.items()}
    result = run_js(page, server_url, _RUN % {"inputs": json.dumps(described), "graph": graph_js})
    assert "ok" in result, result
    return {name: np.array(o["values"], {"float32": np.float32, "uint8": np.uint8}[o["dataType"]]).reshape(o["shape"])
            for name, o in result["ok"].items()}


#: ORT-web's RotaryEmbedding decomposition for a 4-D input [batch, heads, seq, head] without
#: interleaving, as its WebNN EP builds it (split's array reversed in place before concat).
_ROTARY_GRAPH = """(b, {x, cos, sin, pos}) => {
  const [B, N, S, H] = x.shape;
  const t = b.transpose(x, {permutation: [0, 2, 1, 3]});
  const halves = b.reshape(t, [B, S, N, 2, H / 2]);
  const parts = b.split(halves, 2, {axis: 3});
  const rotated = b.concat(parts.reverse(), 3);
  const c = b.reshape(b.gather(cos, pos, {axis: 0}), [B, S, 1, 1, H / 2]);
  const s = b.reshape(b.gather(sin, pos, {axis: 0}), [B, S, 1, 1, H / 2]);
  const sign = b.constant({dataType: 'float32', shape: [1, 1, 2, 1]}, new Float32Array([-1, 1]));
  const sum = b.add(b.reshape(b.mul(halves, c), [B, S, N, H]),
                    b.reshape(b.mul(b.mul(rotated, s), sign), [B, S, N, H]));
  return {y: b.transpose(sum, {permutation: [0, 2, 1, 3]})};
}"""


def test_rotary_embedding_decomposition_with_split_reversed_in_place(webnn_page, server_url):
    """split() hands out a fresh array: reversing it must not reorder the node's outputs (it did:
    the array was the node's own, so the first half got the second half's data). Reference: ONNX
    RotaryEmbedding (opset 23), y = [x1 cos - x2 sin, x2 cos + x1 sin] per head, float64."""
    rng = np.random.default_rng(7)
    batch, heads, seq, head, cache = 2, 3, 5, 8, 11
    x = rng.uniform(-2, 2, (batch, heads, seq, head)).astype(np.float32)
    angles = rng.uniform(-np.pi, np.pi, (cache, head // 2))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    pos = rng.integers(0, cache, (batch, seq)).astype(np.int64)
    got = run(webnn_page, server_url, _ROTARY_GRAPH, {"x": x, "cos": cos, "sin": sin, "pos": pos})["y"]

    x64 = x.astype(np.float64)
    c = cos.astype(np.float64)[pos][:, None]  # [batch, 1, seq, head/2]
    s = sin.astype(np.float64)[pos][:, None]
    x1, x2 = x64[..., :head // 2], x64[..., head // 2:]
    expected = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
    # mul, mul, mul by +-1 (exact), add: each product and the sum round once in float32
    magnitude = np.concatenate([np.abs(x1 * c) + np.abs(x2 * s)] * 2, axis=-1)
    assert_abs(got, expected, 3 * EPS32 * float(magnitude.max()), np.float32)


_LSTM_GRAPH = """(b, {x, w, r}) => {
  const outputs = b.lstm(x, w, r, %(steps)d, %(hidden)d, {returnSequence: true});
  const [h, c, seq] = outputs;
  outputs.reverse();  // the caller's array: must not touch the operator's outputs
  outputs.length = 1;
  return {h, c, seq};
}"""


def test_lstm_outputs_array_is_the_callers(webnn_page, server_url):
    """lstm()'s result array reordered and truncated by the caller: h, c and the sequence are still
    the spec's (float64 reference from tests/reference/recurrent.py; a loose 1e-5 bound for two
    steps of sigmoid/tanh gates on values below 1, far under the O(0.1) a swapped output gives)."""
    rng = np.random.default_rng(3)
    steps, batch, size, hidden = 2, 3, 4, 5
    x = rng.uniform(-1, 1, (steps, batch, size)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (1, 4 * hidden, size)).astype(np.float32)
    r = rng.uniform(-0.5, 0.5, (1, 4 * hidden, hidden)).astype(np.float32)
    got = run(webnn_page, server_url, _LSTM_GRAPH % {"steps": steps, "hidden": hidden}, {"x": x, "w": w, "r": r})
    h, c, seq = recurrent_ref.lstm(x, w, r, steps, hidden, {"returnSequence": True})
    assert np.abs(h - c).max() > 0.05 and np.abs(h).max() > 0.05  # a swap would be visible
    for name, expected in (("h", h), ("c", c), ("seq", seq)):
        assert_abs(got[name], expected, 1e-5, np.float32)


#: ORT-web's DynamicQuantizeLinear decomposition (dynamicQuantizeLinear_op_builder.cc), as it calls
#: our builder: scale = (max(x, 0) - min(x, 0)) / 255, zeroPoint = roundEven(clamp(-min / scale)),
#: then quantizeLinear with the [1]-shaped scale and zeroPoint.
_DYNAMIC_QUANTIZE_GRAPH = """(b, {x}) => {
  const zero = b.constant({dataType: 'float32', shape: []}, new Float32Array([0]));
  const qmax = b.constant({dataType: 'float32', shape: []}, new Float32Array([255]));
  const lo = b.min(b.reduceMin(x), zero);
  const scale = b.div(b.sub(b.max(b.reduceMax(x), zero), lo), qmax);
  const zp = b.cast(b.roundEven(b.clamp(b.sub(zero, b.div(lo, scale)), {minValue: 0, maxValue: 255})), 'uint8');
  const y = b.quantizeLinear(x, b.reshape(scale, [1]), b.reshape(zp, [1]));
  return {y, scale, zp};
}"""


def test_dynamic_quantize_linear_decomposition(webnn_page, server_url):
    """The ONNX DynamicQuantizeLinear case's input (whose x / scale rounds onto 25.5 in float32)
    plus negative data, 1-D as in ORT's mapping of that case: y, scale and zero point are exactly ONNX's definition, which
    divides and rounds in float32 as the spec's quantizeLinear emulation does (roundEven(div()))."""
    rng = np.random.default_rng(11)
    sample = np.array([0, 2, -3, -2.5, 1.34, 0.5], np.float32)
    x = np.concatenate([sample, rng.uniform(-3, 2, 31).astype(np.float32)])
    got = run(webnn_page, server_url, _DYNAMIC_QUANTIZE_GRAPH, {"x": x})

    lo, hi = np.float32(min(x.min(), 0)), np.float32(max(x.max(), 0))
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.clip(np.rint(np.float32(0) - lo / scale), 0, 255)
    y = np.clip(np.rint(x / scale).astype(np.float64) + zp, 0, 255).astype(np.uint8)
    assert y.ravel()[5] == 179  # 0.5 / scale = 25.5 in float32 -> 26, + 153
    assert_exact(got["scale"], scale.reshape(()))
    assert_exact(got["zp"], np.uint8(zp).reshape(()))
    assert_exact(got["y"], y)
