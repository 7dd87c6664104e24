"""The CPU context (static/polyfill/cpu/): createContext({deviceType: 'cpu'}) or
{accelerated: false}, and the default on a software adapter. Its graphs run on ONNX Runtime
Web's wasm EP; the builder, validation and errors are the WebGPU context's.

Here: selection, MLContext/MLGraph properties, MLTensor read/write/dispatch semantics and errors,
opSupportLimits() truth, and a small model from the builder against float64 NumPy. The
conformance cases run on the CPU context in tests/test_conformance.py (test_family_cpu)."""
from __future__ import annotations

import base64

import numpy as np
import pytest

from tests.graph_runner import open_harness, run_js


def _eval(page, server_url, js, arg=None):
    open_harness(page, server_url)
    return page.evaluate(js, arg)


def test_selection_and_properties(webnn_page, server_url):
    """deviceType 'cpu' and accelerated false give the CPU context (accelerated false, graphs on
    ['cpu']); deviceType 'gpu' gives WebGPU even on SwiftShader; with no page default, a software
    adapter or no adapter gives the CPU context."""
    r = _eval(webnn_page, server_url, """async () => {
      const out = {};
      const kinds = {cpu: {deviceType: 'cpu'}, unaccelerated: {accelerated: false}, gpu: {deviceType: 'gpu'}};
      for (const [k, options] of Object.entries(kinds)) {
        const c = await navigator.ml.createContext(options);
        const b = new MLGraphBuilder(c);
        const g = await b.build({y: b.relu(b.input('x', {dataType: 'float32', shape: [2]}))});
        out[k] = {accelerated: c.accelerated, devices: [...g.devices]};
        c.destroy();
      }
      const suite = await navigator.ml.createContext();
      out.suiteDefault = suite.accelerated;  // tests/conftest.py's page default: WebGPU
      suite.destroy();
      const saved = globalThis.webnnPolyfillOptions;
      delete globalThis.webnnPolyfillOptions;
      try {
        const c = await navigator.ml.createContext();
        out.auto = c.accelerated;
        c.destroy();
      } finally {
        globalThis.webnnPolyfillOptions = saved;
      }
      // no adapter at all (--disable-gpu): the default is the CPU context, an explicit 'gpu' fails
      const request = navigator.gpu.requestAdapter;
      navigator.gpu.requestAdapter = async () => null;
      delete globalThis.webnnPolyfillOptions;
      try {
        const c = await navigator.ml.createContext({polyfill: {}});
        out.noAdapter = c.accelerated;
        c.destroy();
        out.noAdapterGpu = await navigator.ml.createContext({deviceType: 'gpu'}).then(() => 'none', (e) => e.name);
      } finally {
        navigator.gpu.requestAdapter = request;
        globalThis.webnnPolyfillOptions = saved;
      }
      const adapter = await navigator.gpu.requestAdapter();
      out.software = /swiftshader/i.test(adapter.info.architecture + adapter.info.description) || adapter.info.isFallbackAdapter;
      return out;
    }""")
    assert r["cpu"] == {"accelerated": False, "devices": ["cpu"]}
    assert r["unaccelerated"] == {"accelerated": False, "devices": ["cpu"]}
    assert r["gpu"] == {"accelerated": True, "devices": ["gpu"]}
    assert r["suiteDefault"] is True
    assert r["auto"] is (not r["software"])
    assert r["noAdapter"] is False
    assert r["noAdapterGpu"] == "NotSupportedError"


def test_tensors_ordering_and_errors(webnn_page, server_url):
    """writeTensor copies at call time and runs in queue order with dispatch; readTensor sees
    the work queued before it, fills outputData, rejects for a tensor destroyed while pending;
    dispatch and the tensor methods throw the WebGPU context's errors."""
    r = _eval(webnn_page, server_url, """async () => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const b = new MLGraphBuilder(c);
      const x = b.input('x', {dataType: 'float32', shape: [3]});
      const g = await b.build({y: b.mul(x, b.constant({dataType: 'float32', shape: [3]}, new Float32Array([2, -3, 0.5])))});
      const xt = await c.createTensor({dataType: 'float32', shape: [3], writable: true});
      const yt = await c.createTensor({dataType: 'float32', shape: [3], readable: true});
      const data = new Float32Array([1, 2, 3]);
      c.writeTensor(xt, data);
      data[0] = 100; // copied at call time
      c.dispatch(g, {x: xt}, {y: yt});
      c.writeTensor(xt, new Float32Array([10, 20, 30])); // after the dispatch: not seen by it
      const first = [...new Float32Array(await c.readTensor(yt))];
      c.dispatch(g, {x: xt}, {y: yt});
      const into = new Float32Array(4).fill(7);
      await c.readTensor(yt, into);
      const errors = {};
      const name = (f) => { try { f(); return 'none'; } catch (e) { return e.name; } };
      const wide = await c.createTensor({dataType: 'float32', shape: [4], writable: true});
      errors.wrongShape = name(() => c.dispatch(g, {x: wide}, {y: yt}));
      errors.sameTwice = name(() => c.dispatch(g, {x: xt}, {y: xt}));
      errors.unreadable = await c.readTensor(xt).then(() => 'none', (e) => e.name);
      errors.unwritable = name(() => c.writeTensor(yt, new Float32Array(3)));
      errors.badLength = name(() => c.writeTensor(xt, new Float32Array(2)));
      errors.exportable = await c.createExportableTensor({dataType: 'float32', shape: [1]}, {}).then(() => 'none', (e) => e.name);
      c.dispatch(g, {x: xt}, {y: yt});
      const pending = c.readTensor(yt);
      yt.destroy();
      errors.destroyedPending = await pending.then(() => 'none', (e) => e.name);
      errors.destroyedDispatch = name(() => c.dispatch(g, {x: xt}, {y: yt}));
      g.destroy();
      errors.destroyedGraph = name(() => c.dispatch(g, {x: xt}, {y: xt}));
      const lost = c.lost.then((info) => typeof info.message);
      c.destroy();
      errors.lostWrite = name(() => c.writeTensor(xt, new Float32Array(3)));
      errors.lostBuilder = name(() => new MLGraphBuilder(c));
      return {first, into: [...into], errors, lost: await lost};
    }""")
    assert r["first"] == [2, -6, 1.5]
    assert r["into"] == [20, -60, 15, 7]
    assert r["errors"] == {
        "wrongShape": "TypeError", "sameTwice": "TypeError", "unreadable": "TypeError", "unwritable": "TypeError", "badLength": "TypeError",
        "exportable": "TypeError", "destroyedPending": "InvalidStateError", "destroyedDispatch": "TypeError",
        "destroyedGraph": "InvalidStateError", "lostWrite": "TypeError", "lostBuilder": "InvalidStateError"}
    assert r["lost"] == "string"


def test_op_support_limits_tell_the_truth(webnn_page, server_url):
    """opSupportLimits() of the CPU context: every operator with the WebGPU context's data types
    and ranks (the conformance run on it checks them, tests/test_conformance.py), its own
    maxTensorByteLength; and it stays a fresh copy per call."""
    r = _eval(webnn_page, server_url, """async () => {
      const cpu = await navigator.ml.createContext({deviceType: 'cpu'});
      const gpu = await navigator.ml.createContext({deviceType: 'gpu'});
      const lc = cpu.opSupportLimits();
      const lg = gpu.opSupportLimits();
      const max = [lc.maxTensorByteLength, lg.maxTensorByteLength];
      delete lc.maxTensorByteLength;
      delete lg.maxTensorByteLength;
      lc.conv2d.input.dataTypes.push('mutated');
      const again = cpu.opSupportLimits().conv2d.input.dataTypes;
      lc.conv2d.input.dataTypes.pop();
      const ops = Object.keys(lc).filter((k) => lc[k] && typeof lc[k] === 'object' && !lc[k].dataTypes);
      const out = {same: JSON.stringify(lc) === JSON.stringify(lg), ops: ops.length, max, again,
        arg: lc.argMax.input.dataTypes, layout: lc.preferredInputLayout};
      cpu.destroy();
      gpu.destroy();
      return out;
    }""")
    assert r["same"] and r["ops"] >= 95
    assert r["max"][0] == 2 ** 28 - 1 and r["max"][1] > 0
    assert "mutated" not in r["again"]
    assert {"int64", "uint64", "float32"} <= set(r["arg"]) and r["layout"] == "nchw"


def test_model_from_the_builder_against_numpy(webnn_page, server_url):
    """conv2d (nhwc, ohwi filter, bias, padding, stride 2) -> clamp -> averagePool2d -> reshape ->
    gemm -> softmax, float32, non-square shapes with negative values, against float64 NumPy."""
    rng = np.random.default_rng(16)
    x = rng.standard_normal((2, 9, 7, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)  # ohwi
    bias = rng.standard_normal(5).astype(np.float32)
    fc = rng.standard_normal((5, 4)).astype(np.float32)
    r = _eval(webnn_page, server_url, """async ([x, w, bias, fc]) => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const b = new MLGraphBuilder(c);
      const f = (a) => new Float32Array(a);
      const input = b.input('x', {dataType: 'float32', shape: [2, 9, 7, 3]});
      const conv = b.conv2d(input, b.constant({dataType: 'float32', shape: [5, 3, 3, 3]}, f(w)), {
        inputLayout: 'nhwc', filterLayout: 'ohwi', padding: [1, 1, 1, 1], strides: [2, 2],
        bias: b.constant({dataType: 'float32', shape: [5]}, f(bias))});
      const act = b.clamp(conv, {minValue: -1, maxValue: 6});
      const pool = b.averagePool2d(act, {layout: 'nhwc'});
      const logits = b.gemm(b.reshape(pool, [2, 5]), b.constant({dataType: 'float32', shape: [5, 4]}, f(fc)));
      const g = await b.build({y: b.softmax(logits, 1), conv});
      const xt = await c.createTensor({dataType: 'float32', shape: [2, 9, 7, 3], writable: true});
      const yt = await c.createTensor({dataType: 'float32', shape: [2, 4], readable: true});
      const ct = await c.createTensor({dataType: 'float32', shape: [2, 5, 4, 5], readable: true});
      c.writeTensor(xt, f(x));
      c.dispatch(g, {x: xt}, {y: yt, conv: ct});
      const out = {y: [...new Float32Array(await c.readTensor(yt))], conv: [...new Float32Array(await c.readTensor(ct))]};
      c.destroy();
      return out;
    }""", [x.ravel().tolist(), w.ravel().tolist(), bias.ravel().tolist(), fc.ravel().tolist()])
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    padded = np.pad(xd, ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = np.zeros((2, 5, 4, 5))
    for i in range(5):
        for j in range(4):
            patch = padded[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3, :]
            conv[:, i, j, :] = np.einsum("nhwc,ohwc->no", patch, wd) + bias
    pooled = np.clip(conv, -1, 6).mean(axis=(1, 2))
    logits = pooled @ fc.astype(np.float64)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.array(r["conv"]).reshape(conv.shape), conv, rtol=0, atol=2e-5)
    np.testing.assert_allclose(np.array(r["y"]).reshape(2, 4), y, rtol=0, atol=1e-6)
    assert np.abs(y).max() > 0.1


@pytest.mark.parametrize("data_type", ["float16", "int8", "uint32", "int64"])
def test_data_types_through_carriers(webnn_page, server_url, data_type):
    """add and reduceMax of a type ORT's CPU kernels lack go through a wider type and back."""
    views = {"float16": np.float16, "int8": np.int8, "uint32": np.uint32, "int64": np.int64}
    a = (np.arange(12).reshape(3, 4) * (3 if data_type != "uint32" else 5) - (7 if data_type in ("int8", "int64", "float16") else 0)).astype(views[data_type])
    r = _eval(webnn_page, server_url, """async ([dt, a]) => {
      const V = {float16: Uint16Array, int8: Int8Array, uint32: Uint32Array, int64: BigInt64Array}[dt];
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const b = new MLGraphBuilder(c);
      const x = b.input('x', {dataType: dt, shape: [3, 4]});
      const g = await b.build({s: b.add(x, x), m: b.reduceMax(x, {axes: [1]})});
      const bytes = Uint8Array.from(atob(a), (ch) => ch.charCodeAt(0));
      const xt = await c.createTensor({dataType: dt, shape: [3, 4], writable: true});
      const st = await c.createTensor({dataType: dt, shape: [3, 4], readable: true});
      const mt = await c.createTensor({dataType: dt, shape: [3], readable: true});
      c.writeTensor(xt, bytes);
      c.dispatch(g, {x: xt}, {s: st, m: mt});
      const enc = async (t) => btoa(String.fromCharCode(...new Uint8Array(await c.readTensor(t))));
      const out = {s: await enc(st), m: await enc(mt)};
      c.destroy();
      return out;
    }""", [data_type, base64.b64encode(a.tobytes()).decode()])
    s = np.frombuffer(base64.b64decode(r["s"]), views[data_type]).reshape(3, 4)
    m = np.frombuffer(base64.b64decode(r["m"]), views[data_type])
    np.testing.assert_array_equal(s, (a.astype(np.float64) * 2).astype(views[data_type]))
    np.testing.assert_array_equal(m, a.max(axis=1))


def test_out_of_range_gather_indices_are_clamped_as_on_webgpu(webnn_page, server_url):
    """gather and gatherND clamp out-of-range indices as the WebGPU context does (ONNX Runtime
    would fail the run): below -n to the first element, n and above to the last."""
    r = _eval(webnn_page, server_url, """async () => {
      const out = {};
      for (const deviceType of ['cpu', 'gpu']) {
        const c = await navigator.ml.createContext({deviceType});
        const b = new MLGraphBuilder(c);
        const x = b.constant({dataType: 'float32', shape: [4, 2]}, new Float32Array([10, 11, 20, 21, 30, 31, 40, 41]));
        const i = b.input('i', {dataType: 'int32', shape: [5]});
        const j = b.input('j', {dataType: 'int64', shape: [3, 2]});
        const g = await b.build({y: b.gather(x, i), z: b.gatherND(x, j)});
        const it = await c.createTensor({dataType: 'int32', shape: [5], writable: true});
        const jt = await c.createTensor({dataType: 'int64', shape: [3, 2], writable: true});
        const yt = await c.createTensor({dataType: 'float32', shape: [5, 2], readable: true});
        const zt = await c.createTensor({dataType: 'float32', shape: [3], readable: true});
        c.writeTensor(it, new Int32Array([-9, -1, 0, 3, 99]));
        c.writeTensor(jt, new BigInt64Array([-7n, 1n, 2n, 5n, 100n, -2n]));
        c.dispatch(g, {i: it, j: jt}, {y: yt, z: zt});
        out[deviceType] = {y: [...new Float32Array(await c.readTensor(yt))], z: [...new Float32Array(await c.readTensor(zt))]};
        c.destroy();
      }
      return out;
    }""")
    assert r["cpu"]["y"] == [10, 11, 40, 41, 10, 11, 40, 41, 40, 41]
    assert r["cpu"] == r["gpu"]


@pytest.mark.allow_console_errors  # the browser logs the 404 of the missing module
def test_missing_engine_is_not_supported(webnn_page, server_url):
    """Without ONNX Runtime's files, createContext({deviceType: 'cpu'}) rejects with
    NotSupportedError naming where it looked."""
    r = _eval(webnn_page, server_url, """async () => navigator.ml.createContext(
        {deviceType: 'cpu', polyfill: {ortBaseUrl: new URL('/polyfill/no-such-folder/', location.href).href}})
      .then(() => 'none', (e) => `${e.name} ${e.message}`)""")
    assert r.startswith("NotSupportedError") and "no-such-folder" in r


def test_a_browser_without_webgpu_gets_the_cpu_context(webnn_page, server_url):
    """With no WebGPU at all (no navigator.gpu, no GPUBufferUsage: WebGPU disabled or absent)
    the polyfill still loads, createContext() gives the CPU context, and a graph runs."""
    webnn_page.add_init_script("""
      Object.defineProperty(Navigator.prototype, 'gpu', {get: () => undefined, configurable: true});
      for (const name of ['GPUBufferUsage', 'GPUMapMode', 'GPUShaderStage', 'GPUDevice', 'GPUAdapter']) delete globalThis[name];
      delete globalThis.webnnPolyfillOptions;
    """)
    r = _eval(webnn_page, server_url, """async () => {
      const c = await navigator.ml.createContext();
      const b = new MLGraphBuilder(c);
      const x = b.input('x', {dataType: 'float32', shape: [4]});
      const g = await b.build({y: b.relu(b.sub(x, b.constant('float32', 1)))});
      const xt = await c.createTensor({dataType: 'float32', shape: [4], writable: true});
      const yt = await c.createTensor({dataType: 'float32', shape: [4], readable: true});
      c.writeTensor(xt, new Float32Array([-3, 0.5, 1.5, 9]));
      c.dispatch(g, {x: xt}, {y: yt});
      const y = [...new Float32Array(await c.readTensor(yt))];
      const gpu = await navigator.ml.createContext({deviceType: 'gpu'}).then(() => 'none', (e) => e.name);
      return {gpuGlobal: typeof navigator.gpu, accelerated: c.accelerated, y, gpu};
    }""")
    assert r == {"gpuGlobal": "undefined", "accelerated": False, "y": [0, 0, 0.5, 8], "gpu": "NotSupportedError"}


_INT_VALUES = {
    "int8": [-128, 127, -1, 0, 1, 2, 7, -7, 100, 3],
    "uint8": [0, 1, 2, 7, 100, 255, 128, 3],
    "int32": [-2 ** 31, 2 ** 31 - 1, -1, 0, 1, 2, 7, -7, 65536, 3, 46341],
    "uint32": [0, 1, 2, 7, 2 ** 31, 2 ** 32 - 1, 65536, 3, 12345678],
    "int64": [-2 ** 63, 2 ** 63 - 1, -1, 0, 1, 2, 7, -7, 2 ** 53 + 1, 3, 2 ** 32, 39],
    "uint64": [0, 1, 2, 7, 2 ** 63, 2 ** 64 - 1, 2 ** 53 + 1, 3, 2 ** 32, 41],
}


@pytest.mark.parametrize("data_type", list(_INT_VALUES))
def test_integer_pow_is_exact_and_wraps(webnn_page, server_url, data_type):
    """pow of integers (spec §Element-wise binary operations; the polyfill's integer semantics,
    ops/elementwise.js and tests/reference/elementwise.py): exact and wrapping like mul, a
    negative exponent truncated toward zero (1, +-1 for bases 1, -1, else 0). ONNX Runtime's
    integer Pow goes through double and saturates (2^64 gave 2^63 - 1, 0^-1 INT_MAX, 3^39 lost
    its low bits). Every pair of edge values, broadcast [n, 1] x [1, n]."""
    from tests.reference.elementwise import binary
    dt = np.dtype({"int8": "i1", "uint8": "u1", "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8"}[data_type])
    v = np.array(_INT_VALUES[data_type], dtype=dt)
    n = len(v)
    r = _eval(webnn_page, server_url, """async ([dt, n, data]) => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const b = new MLGraphBuilder(c);
      const bytes = Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0));
      const a = b.input('a', {dataType: dt, shape: [n, 1]});
      const y = b.pow(a, b.input('e', {dataType: dt, shape: [1, n]}));
      // a constant exponent (its largest value decides the steps): 0..5 and the whole edge list
      const V = {int8: Int8Array, uint8: Uint8Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array}[dt];
      const small = V.from([0, 1, 2, 3, 5], (v) => (dt.endsWith('64') ? BigInt(v) : v));
      const s = b.pow(a, b.constant({dataType: dt, shape: [1, 5]}, small));
      const k = b.pow(a, b.constant({dataType: dt, shape: [1, n]}, bytes));
      const g = await b.build({y, s, k});
      const at = await c.createTensor({dataType: dt, shape: [n, 1], writable: true});
      const et = await c.createTensor({dataType: dt, shape: [1, n], writable: true});
      const yt = await c.createTensor({dataType: dt, shape: [n, n], readable: true});
      const st = await c.createTensor({dataType: dt, shape: [n, 5], readable: true});
      const kt = await c.createTensor({dataType: dt, shape: [n, n], readable: true});
      c.writeTensor(at, bytes);
      c.writeTensor(et, bytes);
      c.dispatch(g, {a: at, e: et}, {y: yt, s: st, k: kt});
      const enc = async (t) => btoa(String.fromCharCode(...new Uint8Array(await c.readTensor(t))));
      const out = {y: await enc(yt), s: await enc(st), k: await enc(kt)};
      c.destroy();
      return out;
    }""", [data_type, n, base64.b64encode(v.tobytes()).decode()])
    expected = binary("pow", v.reshape(n, 1), v.reshape(1, n), data_type)
    for key in ("y", "k"):
        np.testing.assert_array_equal(np.frombuffer(base64.b64decode(r[key]), dt).reshape(n, n), expected)
    small = np.array([0, 1, 2, 3, 5], dtype=dt).reshape(1, 5)
    np.testing.assert_array_equal(np.frombuffer(base64.b64decode(r["s"]), dt).reshape(n, 5),
                                  binary("pow", v.reshape(n, 1), small, data_type))


def test_reduce_log_sum_exp_keeps_nan_next_to_infinity(webnn_page, server_url):
    """reduceLogSumExp (spec §reduction: log(sum(exp(x)))) is NaN where a reduced element is NaN,
    also when another is +Infinity (ONNX Runtime's ReduceLogSumExp gave +Infinity); float32 and
    float16, against float64 NumPy."""
    x = np.array([[-np.inf, np.inf, np.nan, 0.0], [np.inf, 1.0, -3.0, 2.0], [np.inf, -np.inf, 5.0, 1.5],
                  [1.0, np.nan, 2.0, -1.0], [-np.inf, -np.inf, -np.inf, -np.inf], [-2.0, 0.5, 3.0, -7.25]])
    r = _eval(webnn_page, server_url, """async (x) => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const out = {};
      for (const dt of ['float32', 'float16']) {
        const b = new MLGraphBuilder(c);
        const input = b.input('x', {dataType: 'float32', shape: [6, 4]});
        const lse = (v, options) => b.cast(b.reduceLogSumExp(b.cast(v, dt), options), 'float32');
        // per row, and over every axis (ORT's whole-tensor path is the one that lost the NaN)
        const g = await b.build({y: lse(input, {axes: [1]}), all: lse(input), first: lse(b.slice(input, [0, 0], [1, 4]))});
        const xt = await c.createTensor({dataType: 'float32', shape: [6, 4], writable: true});
        const yt = await c.createTensor({dataType: 'float32', shape: [6], readable: true});
        const at = await c.createTensor({dataType: 'float32', shape: [], readable: true});
        const ft = await c.createTensor({dataType: 'float32', shape: [], readable: true});
        c.writeTensor(xt, new Float32Array(x.flat().map(Number)));
        c.dispatch(g, {x: xt}, {y: yt, all: at, first: ft});
        const read = async (t) => [...new Float32Array(await c.readTensor(t))].map(String);
        out[dt] = [...await read(yt), ...await read(at), ...await read(ft)];
      }
      c.destroy();
      return out;
    }""", [["NaN" if np.isnan(e) else "Infinity" if e == np.inf else "-Infinity" if e == -np.inf else float(e) for e in row] for row in x])
    with np.errstate(all="ignore"):
        rows = np.log(np.sum(np.exp(x), axis=1))  # no overflow for these values
    expected = np.concatenate([rows, [np.nan], rows[:1]])
    for dt, tol in (("float32", 1e-6), ("float16", 4e-3)):
        got = np.array([float(s) for s in r[dt]])
        np.testing.assert_allclose(got, expected, rtol=tol, atol=0, equal_nan=True)
    assert np.isnan(expected[0]) and np.isinf(expected[1])


def test_elu_near_zero_within_tolerance(webnn_page, server_url):
    """elu (spec §elu: x >= 0 ? x : alpha * (exp(x) - 1)) within tolerances.md's 18 ULP for small
    negative x too, where exp(x) - 1 cancels (ONNX Runtime's float32 Elu gave 0 for -2.7e-8 and
    was thousands of ULP off up to |x| = 0.015); alpha 1 and 0.25, with NaN and +-Infinity."""
    from tests.tolerance import assert_ulp
    m = np.logspace(-30, 1, 93)
    x = np.concatenate([-m, m, [0.0, -0.0, np.nan, np.inf, -np.inf, -0.015, -1e-5, -0.9999e-5, -1.00001e-5]]).astype(np.float32)
    r = _eval(webnn_page, server_url, """async (data) => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const b = new MLGraphBuilder(c);
      const bytes = Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0));
      const n = bytes.length / 4;
      const x = b.input('x', {dataType: 'float32', shape: [n]});
      const g = await b.build({one: b.elu(x), quarter: b.elu(x, {alpha: 0.25})});
      const xt = await c.createTensor({dataType: 'float32', shape: [n], writable: true});
      const ot = await c.createTensor({dataType: 'float32', shape: [n], readable: true});
      const qt = await c.createTensor({dataType: 'float32', shape: [n], readable: true});
      c.writeTensor(xt, bytes);
      c.dispatch(g, {x: xt}, {one: ot, quarter: qt});
      const enc = async (t) => btoa(String.fromCharCode(...new Uint8Array(await c.readTensor(t))));
      const out = {one: await enc(ot), quarter: await enc(qt)};
      c.destroy();
      return out;
    }""", base64.b64encode(x.tobytes()).decode())
    xd = x.astype(np.float64)
    for key, alpha in (("one", 1.0), ("quarter", 0.25)):
        got = np.frombuffer(base64.b64decode(r[key]), np.float32)
        with np.errstate(all="ignore"):
            expected = np.where(xd < 0, alpha * np.expm1(xd), xd)
        assert_ulp(got, expected, 18, np.float32)


def test_work_queued_before_destroy_still_runs(webnn_page, server_url):
    """MLGraph.destroy() (spec §MLGraph destroy(): resources freeable once all previously
    submitted workloads are complete) right after dispatch() does not drop that dispatch: the
    outputs read afterwards hold its results (the CPU context skipped the queued run and left
    zeros); nor does destroying its input tensor (spec §MLTensor destroy(), same note)."""
    r = _eval(webnn_page, server_url, """async () => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const b = new MLGraphBuilder(c);
      const x = b.input('x', {dataType: 'float32', shape: [2, 3]});
      const g = await b.build({y: b.sub(b.mul(x, x), b.constant({dataType: 'float32', shape: [3]}, new Float32Array([1, -2, 0.5])))});
      const xt = await c.createTensor({dataType: 'float32', shape: [2, 3], writable: true});
      const yt = await c.createTensor({dataType: 'float32', shape: [2, 3], readable: true});
      const zt = await c.createTensor({dataType: 'float32', shape: [2, 3], readable: true});
      c.writeTensor(xt, new Float32Array([-3, 0.5, 2, 1.5, -1, 4]));
      c.dispatch(g, {x: xt}, {y: zt});
      xt.destroy();
      const w = await c.createTensor({dataType: 'float32', shape: [2, 3], writable: true});
      c.writeTensor(w, new Float32Array([1, 2, 3, -4, -5, -6]));
      c.dispatch(g, {x: w}, {y: yt});
      g.destroy();
      const out = {y: [...new Float32Array(await c.readTensor(yt))], z: [...new Float32Array(await c.readTensor(zt))]};
      out.again = (() => { try { c.dispatch(g, {x: w}, {y: yt}); return 'none'; } catch (e) { return e.name; } })();
      c.destroy();
      return out;
    }""")
    bias = np.array([1, -2, 0.5])
    x = np.array([[-3, 0.5, 2], [1.5, -1, 4]], np.float64)
    w = np.array([[1, 2, 3], [-4, -5, -6]], np.float64)
    np.testing.assert_array_equal(np.array(r["z"]).reshape(2, 3), x * x - bias)
    np.testing.assert_array_equal(np.array(r["y"]).reshape(2, 3), w * w - bias)
    assert r["again"] == "InvalidStateError"


def test_context_options_convert_as_webidl_does(webnn_page, server_url):
    """MLContextOptions (spec §ML: `MLPowerPreference powerPreference`, `boolean accelerated`)
    convert by WebIDL rules: accelerated by ToBoolean (0, '' and null ask for the CPU context,
    which plain `=== false` missed), enums by ToString (String objects count; null is "null",
    not a member: TypeError; deviceType as Chromium's MLDeviceType). The suite's page default is
    WebGPU, so only the option can pick the CPU here. Unknown `polyfill` members are TypeErrors."""
    r = _eval(webnn_page, server_url, """async () => {
      const out = {};
      const kinds = {zero: {accelerated: 0}, empty: {accelerated: ''}, nul: {accelerated: null}, one: {accelerated: 1},
        cpuObject: {deviceType: new String('cpu')}, lowPower: {powerPreference: new String('low-power')},
        nullPower: {powerPreference: null}, badPower: {powerPreference: 'fast'},
        // Chromium's MLDeviceType: "GPU" is not "gpu" (it fell through to the automatic choice)
        badDevice: {deviceType: 'GPU'}, numberDevice: {deviceType: 5},
        // a misspelt polyfill option (fastReadback) fails instead of leaving the default in force
        typo: {polyfill: {fastreadback: false}}};
      for (const [k, options] of Object.entries(kinds)) {
        out[k] = await navigator.ml.createContext(options).then((c) => { const a = c.accelerated; c.destroy(); return a; }, (e) => e.name);
      }
      return out;
    }""")
    assert r == {"zero": False, "empty": False, "nul": False, "one": True, "cpuObject": False, "lowPower": True,
                 "nullPower": "TypeError", "badPower": "TypeError", "badDevice": "TypeError", "numberDevice": "TypeError",
                 "typo": "TypeError"}


def test_ort_base_url_is_a_folder_relative_to_the_page(webnn_page, server_url):
    """polyfill: {ortBaseUrl} names a folder: without its trailing slash it is the same folder
    (it failed with NotSupportedError although the files were there), and a relative URL resolves
    against the page, as the page's own URLs do (it resolved against static/polyfill/cpu/)."""
    r = _eval(webnn_page, server_url, """async () => {
      const out = {};
      for (const ortBaseUrl of ['/polyfill/vendor/ort', '../polyfill/vendor/ort/', new URL('/polyfill/vendor/ort', location.href).href]) {
        try {
          const c = await navigator.ml.createContext({deviceType: 'cpu', polyfill: {ortBaseUrl}});
          const b = new MLGraphBuilder(c);
          const x = b.input('x', {dataType: 'float32', shape: [3]});
          const g = await b.build({y: b.relu(x)});
          const xt = await c.createTensor({dataType: 'float32', shape: [3], writable: true});
          const yt = await c.createTensor({dataType: 'float32', shape: [3], readable: true});
          c.writeTensor(xt, new Float32Array([-2, 0.5, 3]));
          c.dispatch(g, {x: xt}, {y: yt});
          out[ortBaseUrl] = [...new Float32Array(await c.readTensor(yt))];
          c.destroy();
        } catch (e) {
          out[ortBaseUrl] = `${e.name}: ${e.message}`;
        }
      }
      return out;
    }""")
    assert list(r.values()) == [[0, 0.5, 3]] * 3, r


_CAST_VALUES = [np.nan, np.inf, -np.inf, 300.7, -300.7, 127.9, -128.9, 255.5, -0.75, 0.99, 2.0 ** 31,
                -(2.0 ** 31) - 4096, 3e9, 4294967296.0, 2.0 ** 62, 2.0 ** 63, -(2.0 ** 63), 2.0 ** 64, 1e30, -1e30]


@pytest.mark.parametrize("source", ["float32", "float16"])
def test_float_to_integer_cast_saturates_as_on_webgpu(webnn_page, server_url, source):
    """cast (spec §cast: out-of-range float -> integer is implementation-defined): NaN -> 0,
    truncation toward zero in range, saturation past it, on the CPU context as on WebGPU
    (ops/cast.js; the README's decision). ORT's Cast wraps instead (300.7 -> int8 44)."""
    with np.errstate(over="ignore"):  # 1e30 and 2^64 are past float16: +-Inf there
        x = np.array(_CAST_VALUES, dtype=source)
    targets = {"int8": "i1", "uint8": "u1", "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8"}
    r = _eval(webnn_page, server_url, """async ([src, n, data, targets]) => {
      const bytes = Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0));
      const out = {};
      for (const device of ['cpu', 'gpu']) {
        const c = await navigator.ml.createContext({deviceType: device});
        const b = new MLGraphBuilder(c);
        const x = b.input('x', {dataType: src, shape: [n]});
        const g = await b.build(Object.fromEntries(targets.map((t) => [t, b.cast(x, t)])));
        const xt = await c.createTensor({dataType: src, shape: [n], writable: true});
        const ys = Object.fromEntries(await Promise.all(targets.map(async (t) => [t, await c.createTensor({dataType: t, shape: [n], readable: true})])));
        c.writeTensor(xt, bytes);
        c.dispatch(g, {x: xt}, ys);
        out[device] = {};
        for (const t of targets) out[device][t] = btoa(String.fromCharCode(...new Uint8Array(await c.readTensor(ys[t]))));
        c.destroy();
      }
      return out;
    }""", [source, len(x), base64.b64encode(x.tobytes()).decode(), list(targets)])
    wide = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=np.inf, neginf=-np.inf)
    for name, code in targets.items():
        dt = np.dtype(code)
        info = np.iinfo(dt)
        want = np.array([info.max if v >= float(info.max) else info.min if v <= float(info.min) else int(v) for v in wide], dtype=dt)
        for device in ("cpu", "gpu"):
            got = np.frombuffer(base64.b64decode(r[device][name]), dtype=dt)
            assert np.array_equal(got, want), (device, name, list(zip(x.tolist(), got.tolist(), want.tolist())))


_LARGE_4BIT_JS = """
const context = await navigator.ml.createContext({deviceType: 'cpu'});
const b = new MLGraphBuilder(context);
const N = 1024, blocks = 32;
let h = b.input('x', {dataType: 'float32', shape: [1, N]});
// every weight (9 - 8) / 1024: each product averages its input
const w = new Uint8Array(N * N / 2).fill(0x99);
for (let i = 0; i < 160; i++) {
  const wq = b.constant({dataType: 'uint4', shape: [N, N]}, w);
  const s = b.constant({dataType: 'float32', shape: [N, blocks]}, new Float32Array(N * blocks).fill(1 / 1024));
  const z = b.constant({dataType: 'uint4', shape: [N, blocks]}, new Uint8Array(N * blocks / 2).fill(0x88));
  h = b.matmul(h, b.transpose(b.dequantizeLinear(wq, s, z)));
}
const g = await b.build({y: h});
const x = await context.createTensor({dataType: 'float32', shape: [1, N], writable: true});
const y = await context.createTensor({dataType: 'float32', shape: [1, N], readable: true});
context.writeTensor(x, Float32Array.from({length: N}, (_, i) => (i % 2 ? 3 : 1)));
context.dispatch(g, {x}, {y});
const out = new Float32Array(await context.readTensor(y));
context.destroy();
return [out[0], out[N - 1]];
"""


def test_large_4bit_graphs_build_with_their_weights_packed(webnn_page, server_url):
    """160 products of 1024 x 1024 uint4 weights (84 MB packed, 168M weights): the dequantizations
    go to ONNX's blocked DequantizeLinear, so ORT keeps the weights packed; cast to float and
    folded at session creation they exhausted the wasm heap (std::bad_alloc at build)."""
    result = run_js(webnn_page, server_url, _LARGE_4BIT_JS)
    assert result.get("ok") == [2.0, 2.0], result
