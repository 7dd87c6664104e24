"""The 4-bit data types int4 and uint4 (issue 29), as Chromium 156 has them beyond the spec:
graph inputs, constants and outputs, MLTensors (byte length ceil(n / 2), two elements a byte,
low nibble first), dequantizeLinear's input and zeroPoint, quantizeLinear's zeroPoint (and so
its output); every other operator refuses them with a TypeError at the builder call.

Every case runs on the WebGPU context and on the CPU context (ONNX Runtime wasm), against float64
NumPy: odd element counts, negative int4, every zero point, block sizes 16 to 128, ranks 1 to 4,
NaN/±Inf scales, quantizeLinear's ties (to even) and saturation.
"""
from __future__ import annotations

import base64
import math

import numpy as np
import pytest

from tests.graph_runner import open_harness, run_js
from tests.reference.elementwise import blockwise_expand

pytestmark = pytest.mark.shared_page

RANGE = {"int4": (-8, 7), "uint4": (0, 15)}
DEVICES = ("gpu", "cpu")


def pack(values) -> bytes:
    """4-bit elements two a byte, the first in the low nibble; an odd count's last high nibble 0."""
    flat = (np.asarray(values, np.int64).reshape(-1) & 0xF).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    return (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()


def unpack(raw: bytes, count: int, data_type: str) -> np.ndarray:
    b = np.frombuffer(raw, np.uint8)
    nibbles = np.stack([b & 0xF, b >> 4], axis=1).reshape(-1)[:count].astype(np.int64)
    return np.where(nibbles >= 8, nibbles - 16, nibbles) if data_type == "int4" else nibbles


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def operand(data_type, array, constant=False, shape=None):
    array = np.asarray(array)
    shape = list(array.shape if shape is None else shape)
    raw = pack(array) if data_type in RANGE else np.ascontiguousarray(array.astype(data_type)).tobytes()
    return {"dataType": data_type, "shape": shape, "bytes": b64(raw), "constant": constant}


# Builds and runs each case {op, args: {name: operand}, out: dataType}; returns the output bytes
# (base64) and the output operand's dataType/shape, or the error's name and message.
RUN_JS = """async ({deviceType, cases}) => {
  const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const tob64 = (u) => btoa(String.fromCharCode(...new Uint8Array(u)));
  const ctx = await navigator.ml.createContext({deviceType});
  const results = [];
  for (const c of cases) {
    try {
      const b = new MLGraphBuilder(ctx);
      const ops = [];
      const feeds = {};
      for (const [name, o] of Object.entries(c.args)) {
        const desc = {dataType: o.dataType, shape: o.shape};
        if (o.constant) ops.push(b.constant(desc, unb64(o.bytes)));
        else {
          ops.push(b.input(name, desc));
          const t = await ctx.createTensor({...desc, writable: true});
          ctx.writeTensor(t, unb64(o.bytes));
          feeds[name] = t;
        }
      }
      const y = b[c.op](...ops);
      const graph = await b.build({y});
      const out = await ctx.createTensor({dataType: y.dataType, shape: y.shape, readable: true});
      ctx.dispatch(graph, feeds, {y: out});
      const bytes = await ctx.readTensor(out);
      results.push({dataType: y.dataType, shape: y.shape, bytes: tob64(bytes), viewType: bytes.constructor.name});
    } catch (e) {
      results.push({error: e.name, message: e.message});
    }
  }
  ctx.destroy();
  return results;
}"""


def run_cases(page, url, device_type, cases):
    open_harness(page, url)
    js_cases = [{"op": c["op"], "args": c["args"]} for c in cases]
    results = page.evaluate(RUN_JS, {"deviceType": device_type, "cases": js_cases})
    for c, r in zip(cases, results):
        assert "error" not in r, f"{c['name']} on {device_type}: {r}"
    return results


def float_out(result, data_type):
    raw = base64.b64decode(result["bytes"])
    return np.frombuffer(raw, {"float32": np.float32, "float16": np.float16}[data_type]).reshape(result["shape"])


def assert_same_floats(actual, expected, name):
    expected = expected.astype(actual.dtype)
    both_nan = np.isnan(actual) & np.isnan(expected)
    bad = ~both_nan & (actual != expected)
    assert not bad.any(), (f"{name}: {bad.sum()} of {bad.size} differ, first at {np.argwhere(bad)[:3].tolist()}: "
                           f"got {actual[bad][:5]}, expected {expected[bad][:5]}")


def dequantize_ref(q, scale, zp):
    s = blockwise_expand(np.asarray(scale, np.float64), q.shape)
    z = blockwise_expand(np.asarray(zp, np.int64), q.shape)
    with np.errstate(invalid="ignore"):
        return (q.astype(np.int64) - z).astype(np.float64) * s


def quantize_ref(x, scale, zp, data_type):
    lo, hi = RANGE[data_type]
    s = blockwise_expand(np.asarray(scale, x.dtype), x.shape)
    z = blockwise_expand(np.asarray(zp, np.int64), x.shape).astype(np.float64)
    with np.errstate(all="ignore"):
        q = np.rint((x / s).astype(np.float64))  # the quotient rounded to the input's type first
    q = np.where(np.isnan(q), 0, q) + z
    return np.clip(q, lo, hi).astype(np.int64)


def dequantize_cases(rng):
    """(name, q, scale, zp, q is constant, scale type): every zero point, blocks 16..128, ranks 1..4,
    odd counts, NaN/±Inf scales."""
    cases = []
    for data_type in RANGE:
        lo, hi = RANGE[data_type]
        every_zp = np.arange(lo, hi + 1)
        shapes = [
            # (tag, input shape, scale shape)
            ("rank1-odd-per-tensor", (7,), (1,)),
            ("rank1-block16-every-zp", (16 * 16,), (16,)),
            ("rank2-block32", (3, 96), (3, 3)),
            ("rank3-block64-odd-rows", (3, 5, 128), (3, 5, 2)),
            ("rank4-block128", (2, 1, 3, 256), (2, 1, 3, 2)),
            ("rank2-odd-per-axis", (5, 7), (5, 1)),
        ]
        for tag, shape, sshape in shapes:
            q = rng.integers(lo, hi, shape, endpoint=True)
            zp = rng.integers(lo, hi, sshape, endpoint=True)
            if "every-zp" in tag:
                zp = every_zp.reshape(sshape)
            q.reshape(-1)[: hi - lo + 1] = every_zp[: q.size]
            scale = rng.uniform(0.01, 2.0, sshape)
            if scale.size > 4:
                scale.reshape(-1)[:3] = [math.nan, math.inf, -math.inf]
            for scale_type in ("float32", "float16"):
                scale_t = scale.astype(scale_type)
                for constant in (True, False):
                    cases.append((f"{data_type}/{tag}/{scale_type}/{'constant' if constant else 'input'}",
                                  data_type, q, scale_t, zp, constant))
    return cases


@pytest.mark.parametrize("device_type", DEVICES)
def test_dequantize_linear_4bit_against_numpy(webnn_page, server_url, device_type):
    cases = []
    refs = []
    for name, data_type, q, scale, zp, constant in dequantize_cases(np.random.default_rng(29)):
        cases.append({"name": name, "op": "dequantizeLinear", "args": {
            "x": operand(data_type, q, constant), "scale": operand(str(scale.dtype), scale, True),
            "zeroPoint": operand(data_type, zp, True)}})
        refs.append((name, str(scale.dtype), dequantize_ref(q, scale, zp)))
    for (name, scale_type, expected), result in zip(refs, run_cases(webnn_page, server_url, device_type, cases)):
        assert result["dataType"] == scale_type and result["shape"] == list(expected.shape), name
        # (q - zp) is exact and at most 15 in magnitude: the product rounds once, so exactly
        assert_same_floats(float_out(result, scale_type), expected, f"{name} on {device_type}")


@pytest.mark.parametrize("device_type", DEVICES)
def test_quantize_linear_4bit_ties_saturation_and_odd_counts(webnn_page, server_url, device_type):
    rng = np.random.default_rng(4)
    cases, refs = [], []
    for data_type in RANGE:
        lo, hi = RANGE[data_type]
        for tag, shape, sshape in (("rank1-odd", (13,), (1,)), ("rank2-block16", (3, 32), (3, 2)),
                                   ("rank3-odd", (3, 5, 7), (1, 5, 1)), ("rank4-block32", (1, 2, 3, 64), (1, 2, 3, 2))):
            for float_type in ("float32", "float16"):
                # dyadic scales: k / 2 * scale is exact, so the ties are real ties
                scale = (rng.integers(1, 16, sshape) / 8).astype(float_type)
                zp = rng.integers(lo, hi, sshape, endpoint=True)
                x = (rng.integers(-48, 48, shape) * 0.5 * blockwise_expand(scale.astype(np.float64), shape)).astype(float_type)
                x.reshape(-1)[:4] = [1e4, -1e4, math.nan, -0.0]
                name = f"{data_type}/{tag}/{float_type}"
                cases.append({"name": name, "op": "quantizeLinear", "args": {
                    "x": operand(float_type, x), "scale": operand(float_type, scale, True),
                    "zeroPoint": operand(data_type, zp, True)}})
                refs.append((name, data_type, quantize_ref(x, scale, zp, data_type)))
    for (name, data_type, expected), result in zip(refs, run_cases(webnn_page, server_url, device_type, cases)):
        raw = base64.b64decode(result["bytes"])
        assert result["viewType"] == "ArrayBuffer" and result["dataType"] == data_type, name
        assert len(raw) == (expected.size + 1) // 2, name
        if expected.size % 2:
            assert raw[-1] >> 4 == 0, f"{name}: the padding nibble is {raw[-1] >> 4}"
        got = unpack(raw, expected.size, data_type).reshape(expected.shape)
        bad = got != expected
        assert not bad.any(), f"{name} on {device_type}: got {got[bad][:6]}, expected {expected[bad][:6]}"


@pytest.mark.parametrize("device_type", DEVICES)
def test_tensors_round_trip_with_odd_counts(webnn_page, server_url, device_type):
    """createTensor/writeTensor/readTensor of int4/uint4: ceil(n / 2) bytes, the bytes back as
    written; a wrong byte length is a TypeError; createConstantTensor feeds dequantizeLinear."""
    open_harness(webnn_page, server_url)
    r = webnn_page.evaluate("""async (deviceType) => {
      const ctx = await navigator.ml.createContext({deviceType});
      const out = {};
      for (const dataType of ['int4', 'uint4']) {
        for (const n of [1, 7, 8, 33]) {
          const t = await ctx.createTensor({dataType, shape: [n], readable: true, writable: true});
          const bytes = Uint8Array.from({length: Math.ceil(n / 2)}, (_, i) => (i * 37 + 11) & (n % 2 && i === Math.ceil(n / 2) - 1 ? 0x0f : 0xff));
          ctx.writeTensor(t, bytes);
          const back = await ctx.readTensor(t);
          out[`${dataType}/${n}`] = {view: back.constructor.name, length: back.byteLength, same: bytes.every((v, i) => new Uint8Array(back)[i] === v)};
          try { ctx.writeTensor(t, new Uint8Array(n)); out[`${dataType}/${n}/wrong`] = n === 1 ? 'same length' : 'accepted'; }
          catch (e) { out[`${dataType}/${n}/wrong`] = e.name; }
          t.destroy();
        }
      }
      // a constant tensor of packed uint4 [3] (values 1, 15, 8) dequantized with zero point 8
      const c = await ctx.createConstantTensor({dataType: 'uint4', shape: [3]}, Uint8Array.of(0xf1, 0x08));
      const b = new MLGraphBuilder(ctx);
      const y = b.dequantizeLinear(b.constant(c), b.constant({dataType: 'float32', shape: [1]}, Float32Array.of(0.5)),
                                   b.constant({dataType: 'uint4', shape: [1]}, Uint8Array.of(8)));
      const g = await b.build({y});
      const t = await ctx.createTensor({dataType: 'float32', shape: [3], readable: true});
      ctx.dispatch(g, {}, {y: t});
      out.constantTensor = [...new Float32Array(await ctx.readTensor(t))];
      ctx.destroy();
      return out;
    }""", device_type)
    for dt in RANGE:
        for n in (1, 7, 8, 33):
            assert r[f"{dt}/{n}"] == {"view": "ArrayBuffer", "length": (n + 1) // 2, "same": True} or \
                r[f"{dt}/{n}"] == {"view": "Uint8Array", "length": (n + 1) // 2, "same": True}, (dt, n, r[f"{dt}/{n}"])
            assert r[f"{dt}/{n}/wrong"] in ("TypeError", "same length"), (dt, n, r[f"{dt}/{n}/wrong"])
    assert r["constantTensor"] == [-3.5, 3.5, 0.0]


@pytest.mark.parametrize("device_type", DEVICES)
def test_op_support_limits_list_4bit_where_chromium_does(webnn_page, server_url, device_type):
    open_harness(webnn_page, server_url)
    limits = webnn_page.evaluate("""async (deviceType) => {
      const ctx = await navigator.ml.createContext({deviceType});
      const l = ctx.opSupportLimits();
      ctx.destroy();
      const out = {};
      for (const [op, v] of Object.entries(l)) {
        if (v === null || typeof v !== 'object') continue;
        if (Array.isArray(v.dataTypes)) { out[op] = v.dataTypes; continue; }
        for (const [k, t] of Object.entries(v)) if (t && Array.isArray(t.dataTypes)) out[`${op}.${k}`] = t.dataTypes;
      }
      return out;
    }""", device_type)
    with_4bit = {k for k, types in limits.items() if "int4" in types or "uint4" in types}
    assert with_4bit == {"input", "constant", "output", "dequantizeLinear.input", "dequantizeLinear.zeroPoint",
                         "quantizeLinear.zeroPoint", "quantizeLinear.output"}, sorted(with_4bit)
    for k in with_4bit:
        assert {"int4", "uint4"} <= set(limits[k]), k


@pytest.mark.parametrize("device_type", DEVICES)
def test_builder_refuses_4bit_elsewhere_with_type_error(webnn_page, server_url, device_type):
    open_harness(webnn_page, server_url)
    r = webnn_page.evaluate("""async (deviceType) => {
      const ctx = await navigator.ml.createContext({deviceType});
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', {dataType: 'int4', shape: [4, 2]});
      const u = b.input('u', {dataType: 'uint4', shape: [4, 2]});
      const idx = b.constant({dataType: 'int32', shape: [1]}, Int32Array.of(1));
      const f = b.input('f', {dataType: 'float32', shape: [4, 2]});
      const s = b.constant({dataType: 'float32', shape: [1, 1]}, Float32Array.of(1));
      const z8 = b.constant({dataType: 'int8', shape: [1, 1]}, Int8Array.of(0));
      const attempts = {
        add: () => b.add(x, x), relu: () => b.relu(x), reshape: () => b.reshape(u, [8]),
        transpose: () => b.transpose(u), slice: () => b.slice(u, [0, 0], [2, 2]), gather: () => b.gather(u, idx),
        concat: () => b.concat([u, u], 0), split: () => b.split(u, 2), expand: () => b.expand(u, [2, 4, 2]),
        identity: () => b.identity(x), where: () => b.where(b.input('c', {dataType: 'uint8', shape: [4, 2]}), x, x),
        castFrom: () => b.cast(x, 'float32'), castTo: () => b.cast(f, 'int4'), pad: () => b.pad(u, [0, 0], [1, 1]),
        tile: () => b.tile(u, [1, 2]), reverse: () => b.reverse(u), equal: () => b.equal(u, u),
        matmul: () => b.matmul(x, x), scalarConstant: () => b.constant('int4', 1),
        int8View: () => b.constant({dataType: 'int4', shape: [2]}, Int8Array.of(0x21)),
        wrongLength: () => b.constant({dataType: 'uint4', shape: [3]}, Uint8Array.of(1, 2, 3)),
        zeroPointMismatch: () => b.dequantizeLinear(x, s, z8),
        quantizeInput: () => b.quantizeLinear(x, s, z8),
      };
      const out = {};
      for (const [k, f] of Object.entries(attempts)) {
        try { f(); out[k] = 'no error'; } catch (e) { out[k] = e.name; }
      }
      // what is allowed: packed constants from a Uint8Array or an ArrayBuffer, 4-bit zero points
      out.ok = [
        b.constant({dataType: 'int4', shape: [3]}, Uint8Array.of(0x21, 0x03)).dataType,
        b.constant({dataType: 'uint4', shape: [3]}, Uint8Array.of(0x21, 0x03).buffer).dataType,
        b.dequantizeLinear(x, s, b.constant({dataType: 'int4', shape: [1, 1]}, Uint8Array.of(0))).dataType,
        b.quantizeLinear(f, s, b.constant({dataType: 'uint4', shape: [1, 1]}, Uint8Array.of(8))).dataType,
      ];
      ctx.destroy();
      return out;
    }""", device_type)
    ok = r.pop("ok")
    assert ok == ["int4", "uint4", "float32", "uint4"]
    assert all(v == "TypeError" for v in r.values()), {k: v for k, v in r.items() if v != "TypeError"}


_LIMIT_JS = """async ({deviceType, sizes}) => {
  const context = await navigator.ml.createContext({deviceType});
  const limit = context.opSupportLimits().maxTensorByteLength;
  const b = new MLGraphBuilder(context);
  const outcome = (f) => { try { f(); return 'ok'; } catch (e) { return `${e.name}: ${e.message}`; } };
  const result = {limit};
  for (const [dataType, size] of Object.entries(sizes)) {
    const most = Math.floor(limit / size);
    result[`${dataType} at`] = outcome(() => b.input(`${dataType}-at`, {dataType, shape: [most]}));
    result[`${dataType} over`] = outcome(() => b.input(`${dataType}-over`, {dataType, shape: [2, Math.ceil((most + 1) / 2)]}));
  }
  context.destroy();
  return result;
}"""

#: Bytes one element takes while each context computes (shape/common.js TensorLimit): the WebGPU
#: compute layout's 32-bit word; the CPU context holds a 4-bit element in a byte, the others at
#: their own size (its maxTensorByteLength allows for ORT's wider carriers).
ELEMENT_BYTES = {"gpu": {"int4": 4, "uint4": 4, "uint8": 4, "float16": 4},
                 "cpu": {"int4": 1, "uint4": 1, "uint8": 1, "float16": 2}}
TENSOR_BYTES = {"int4": 0.5, "uint4": 0.5, "uint8": 1, "float16": 2}


@pytest.mark.parametrize("device_type", DEVICES)
def test_4bit_operands_are_limited_by_their_compute_size(webnn_page, server_url, device_type):
    """A tensor is supported when its elements, at the size the context computes on them, take at
    most maxTensorByteLength: on WebGPU a 4-bit element is a 32-bit word (eight times its half
    byte), as an 8-bit one is (four times) and a float16 one (twice), so an int4 / uint4 operand may
    have a quarter as many elements as maxTensorByteLength has bytes; on the CPU context a 4-bit
    element counts as one byte. More elements throw a TypeError naming the type's own limit."""
    open_harness(webnn_page, server_url)
    sizes = ELEMENT_BYTES[device_type]
    result = webnn_page.evaluate(_LIMIT_JS, {"deviceType": device_type, "sizes": sizes})
    limit = result.pop("limit")
    for data_type, size in sizes.items():
        assert result[f"{data_type} at"] == "ok", (data_type, result[f"{data_type} at"])
        over = result[f"{data_type} over"]
        assert over.startswith(f"TypeError: [input {data_type}-over] "), over
        if size != TENSOR_BYTES[data_type]:
            most = limit // size
            assert f"may have at most {most} ({math.ceil(most * TENSOR_BYTES[data_type])} bytes)" in over, over
            assert f"maxTensorByteLength ({limit})" in over, over
