"""The MLContext / MLTensor / MLGraphBuilder / MLGraph surface (spec §MLContext, §MLTensor,
§MLGraphBuilder, §MLGraph): each method's results and the errors the spec gives."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.graph_runner import open_harness, run_js

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

#: Chromium 156's own property names per interface prototype, read with Object.getOwnPropertyNames.
#: A copy lives in the repository so a clone runs on its own; the project's reference copy
#: (shared/reference/ beside the repository, where it exists) must equal it.
IDL_PATH = Path(__file__).resolve().parent / "data" / "chromium-156-idl.json"
SHARED_IDL_PATH = Path(__file__).resolve().parents[2] / "shared" / "reference" / "chromium-156-idl.json"
IDL = json.loads(IDL_PATH.read_text())


@pytest.mark.skipif(not SHARED_IDL_PATH.exists(), reason="no shared/reference beside this clone")
def test_idl_copy_matches_the_shared_reference():
    """tests/data's copy of the Chromium 156 lists is the project's reference, unchanged."""
    assert json.loads(SHARED_IDL_PATH.read_text()) == IDL

#: Members the spec defines that Chromium 156 lacks: the only names our prototypes add.
SPEC_ONLY = {"MLContext": ["accelerated"]}

SETUP = """
const ctx = await navigator.ml.createContext();
const f32 = {dataType: 'float32', shape: [2, 3]};
"""


def run(page, server_url, body):
    """Run ``body`` after SETUP (a context ``ctx`` and a descriptor ``f32``); {ok} or {error, message}."""
    return run_js(page, server_url, SETUP + body)


def error_of(page, server_url, body):
    result = run(page, server_url, body)
    assert "error" in result, f"expected an error, got {result}"
    return result["error"], result["message"]


def test_surface_matches_chromium_156(webnn_page, server_url):
    """Each interface's prototype has exactly Chromium 156's own property names (plus SPEC_ONLY):
    no internals (helpers, slots) beside the methods and attributes."""
    open_harness(webnn_page, server_url)
    names = webnn_page.evaluate("""(idl) => Object.fromEntries(Object.keys(idl).map(
        (k) => [k, Object.getOwnPropertyNames(globalThis[k].prototype)]))""", IDL["interfaces"])
    assert set(names) == {"ML", "MLContext", "MLGraphBuilder", "MLGraph", "MLOperand", "MLTensor"}
    for interface, members in IDL["interfaces"].items():
        expected = sorted(members + SPEC_ONLY.get(interface, []))
        assert sorted(names[interface]) == expected, (
            f"{interface}: extra {sorted(set(names[interface]) - set(expected))}, "
            f"missing {sorted(set(expected) - set(names[interface]))}")


def test_instances_have_no_own_properties(webnn_page, server_url):
    """navigator.ml, a context, builder, operand, graph and tensor carry no own properties (string
    or symbol keys): their state lives off the object, as in a native implementation."""
    r = run(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', f32);
      const constant = b.constant(f32, new Float32Array(6));
      const graph = await b.build({y: b.add(x, constant)});
      const tensor = await ctx.createTensor(f32);
      const objects = {ml: navigator.ml, ctx, b, x, constant, graph, tensor};
      return Object.fromEntries(Object.entries(objects).map(([k, o]) => [k, Reflect.ownKeys(o).map(String)]));
    """)["ok"]
    assert r == {k: [] for k in ("ml", "ctx", "b", "x", "graph", "tensor", "constant")}


def test_tensor_roundtrip_and_attributes(webnn_page, server_url):
    r = run(webnn_page, server_url, """
      const t = await ctx.createTensor({...f32, readable: true, writable: true});
      const zeros = Array.from(new Float32Array(await ctx.readTensor(t)));
      ctx.writeTensor(t, new Float32Array([1, -2, 3.5, NaN, -Infinity, -0]));
      const back = new Float32Array(await ctx.readTensor(t));
      const into = new Float32Array(6);
      const res = await ctx.readTensor(t, into);
      const u8 = new Uint8Array(24);
      await ctx.readTensor(t, u8);
      return {zeros, back: Array.from(back).map(String), into: Array.from(into).map(String), res: res === undefined,
              u8same: new Float32Array(u8.buffer)[2], attrs: [t.dataType, t.shape, t.readable, t.writable, t.constant],
              frozen: Object.isFrozen(t.shape)};
    """)["ok"]
    assert r["zeros"] == [0] * 6
    assert r["back"] == ["1", "-2", "3.5", "NaN", "-Infinity", "0"]
    assert r["into"] == r["back"] and r["res"] is True and r["u8same"] == 3.5
    assert r["attrs"] == ["float32", [2, 3], True, True, False] and r["frozen"]


def test_large_reads_return_fresh_exact_buffers(webnn_page, server_url):
    """readTensor(tensor) of tensors past host_memory.js's FAULT_IN_BYTES (their result is
    allocated at the call and its pages written while the GPU works): every byte comes back,
    those at page starts included (nonzero there), in a new ArrayBuffer of exactly the tensor's
    byte length per read (an odd length: no padding), also with the early page writes off."""
    r = run(webnn_page, server_url, """
      const {configureContext} = await import('/polyfill/options.js');
      const {FAULT_IN_BYTES} = await import('/polyfill/host_memory.js');
      const n = 65541;
      const u8 = await ctx.createTensor({dataType: 'uint8', shape: [n], readable: true, writable: true});
      const pattern = Uint8Array.from({length: n}, (_, i) => 1 + (i * 7) % 255);
      ctx.writeTensor(u8, pattern);
      const a = await ctx.readTensor(u8);
      const b = await ctx.readTensor(u8);
      new Uint8Array(a).fill(0);
      configureContext(ctx, {tuning: {faultInReads: false}});
      const c = await ctx.readTensor(u8);
      configureContext(ctx, {tuning: {faultInReads: undefined}});
      const f = await ctx.createTensor({dataType: 'float32', shape: [300, 257], readable: true, writable: true});
      const values = Float32Array.from({length: 300 * 257}, (_, i) => (i % 1024 === 0 ? -1.2345678 : Math.sin(i) * 1e3 - 7));
      values[5] = NaN; values[1027] = Infinity; values[77099] = -Infinity;
      ctx.writeTensor(f, values);
      const [g, h] = await Promise.all([ctx.readTensor(f), ctx.readTensor(f)]);
      const same = (x, y) => x.byteLength === y.byteLength && new Uint8Array(x).every((v, i) => v === new Uint8Array(y)[i]);
      return {above: n >= FAULT_IN_BYTES, lengths: [a.byteLength, b.byteLength, c.byteLength, g.byteLength, h.byteLength],
              fresh: a !== b && g !== h, b: same(b, pattern.buffer), c: same(c, pattern.buffer),
              g: same(g, values.buffer), h: same(h, values.buffer), zeroedOnlyA: new Uint8Array(b)[4096]};
    """)["ok"]
    assert r["above"] and r["lengths"] == [65541, 65541, 65541, 308400, 308400]
    assert r["fresh"] and r["b"] and r["c"] and r["g"] and r["h"]
    assert r["zeroedOnlyA"] == 1 + (4096 * 7) % 255


@pytest.mark.parametrize("body, error", [
    ("const t = await ctx.createTensor(f32); await ctx.readTensor(t);", "TypeError"),  # not readable
    ("const t = await ctx.createTensor(f32); ctx.writeTensor(t, new Float32Array(6));", "TypeError"),  # not writable
    ("const t = await ctx.createTensor({...f32, writable: true}); ctx.writeTensor(t, new Float32Array(5));", "TypeError"),
    ("const t = await ctx.createTensor({...f32, writable: true}); ctx.writeTensor(t, new Int32Array(7));", "TypeError"),
    ("const t = await ctx.createTensor({...f32, writable: true}); ctx.writeTensor(t, [1, 2, 3, 4, 5, 6]);", "TypeError"),
    ("const t = await ctx.createTensor({...f32, readable: true}); await ctx.readTensor(t, new Float32Array(5));", "TypeError"),
    ("const t = await ctx.createTensor({...f32, readable: true}); await ctx.readTensor(t, new DataView(new ArrayBuffer(23)));", "TypeError"),
    ("const t = await ctx.createTensor({...f32, readable: true}); await ctx.readTensor(t, [0, 0, 0, 0, 0, 0]);", "TypeError"),
    ("const t = await ctx.createTensor({...f32, readable: true}); t.destroy(); await ctx.readTensor(t);", "TypeError"),
    ("const t = await ctx.createTensor({...f32, writable: true}); t.destroy(); ctx.writeTensor(t, new Float32Array(6));", "TypeError"),
    ("const other = await navigator.ml.createContext(); const t = await other.createTensor({...f32, readable: true}); await ctx.readTensor(t);", "TypeError"),
    ("await ctx.createTensor({dataType: 'float64', shape: [2]});", "TypeError"),
    ("await ctx.createTensor({dataType: 'float32', shape: [2, 0]});", "TypeError"),
    ("await ctx.createTensor({dataType: 'float32', shape: [65536, 65536]});", "TypeError"),
    ("await ctx.createConstantTensor(f32, new Float32Array(5));", "TypeError"),
    ("await ctx.createConstantTensor(f32, new Float32Array(7));", "TypeError"),
    ("ctx.destroy(); await ctx.createTensor(f32);", "InvalidStateError"),
    ("const t = await ctx.createTensor({...f32, readable: true}); const p = ctx.readTensor(t); t.destroy(); await p;", "InvalidStateError"),
    ("const t = await ctx.createTensor({...f32, readable: true}); const p = ctx.readTensor(t); ctx.destroy(); await p;", "InvalidStateError"),
])
def test_tensor_errors(webnn_page, server_url, body, error):
    assert error_of(webnn_page, server_url, body)[0] == error


def test_buffer_sources_follow_chromium(webnn_page, server_url):
    """Chromium 156 (MLTensor::ReadTensorImpl, MLContext::writeTensor/createConstantTensor)
    compares byte lengths only: readTensor fills the prefix of any buffer source at least as
    large as the tensor (views of other element types, DataView, ArrayBuffer), leaving the rest
    alone; writeTensor and createConstantTensor take any source of exactly the byte length."""
    r = run(webnn_page, server_url, """
      const t = await ctx.createTensor({...f32, readable: true, writable: true});
      const values = new Float32Array([1.5, -2, 3.25, NaN, -Infinity, 7]);
      ctx.writeTensor(t, new DataView(values.buffer.slice(0)));
      const f = (buf, off = 0) => Array.from(new Float32Array(buf, off, 6)).map(String);
      const big = new Float32Array(9).fill(-1);
      await ctx.readTensor(t, big);
      const u8 = new Uint8Array(30).fill(0xff);
      await ctx.readTensor(t, u8);
      const dv = new DataView(new ArrayBuffer(40), 8, 28);
      await ctx.readTensor(t, dv);
      const ab = new ArrayBuffer(24);
      await ctx.readTensor(t, ab);
      const i32 = new Int32Array(6);
      await ctx.readTensor(t, i32);
      ctx.writeTensor(t, new Int32Array(new Float32Array([9, 8, 7, 6, 5, -4]).buffer));
      const afterInt = f(await ctx.readTensor(t));
      ctx.writeTensor(t, new Uint8Array(new Float32Array([0.5, 1, 2, 3, 4, 5]).buffer));
      const afterU8 = f(await ctx.readTensor(t));
      const c = await ctx.createConstantTensor(f32, new DataView(new Float32Array([6, 5, 4, 3, 2, -1]).buffer));
      const b = new MLGraphBuilder(ctx);
      const g = await b.build({y: b.identity(b.constant(c))});
      const ty = await ctx.createTensor({...f32, readable: true});
      ctx.dispatch(g, {}, {y: ty});
      return {big: Array.from(big).map(String), u8: f(u8.buffer), u8tail: Array.from(u8.subarray(24)),
              dv: f(dv.buffer, 8), dvTail: Array.from(new Uint8Array(dv.buffer, 32)), ab: f(ab), i32: f(i32.buffer),
              afterInt, afterU8, constant: f(await ctx.readTensor(ty))};
    """)
    assert "ok" in r, r
    r = r["ok"]
    want = ["1.5", "-2", "3.25", "NaN", "-Infinity", "7"]
    assert r["big"] == want + ["-1"] * 3
    assert r["u8"] == want and r["u8tail"] == [255] * 6
    assert r["dv"] == want and r["dvTail"] == [0] * 8
    assert r["ab"] == want and r["i32"] == want
    assert r["afterInt"] == ["9", "8", "7", "6", "5", "-4"]
    assert r["afterU8"] == ["0.5", "1", "2", "3", "4", "5"]
    assert r["constant"] == ["6", "5", "4", "3", "2", "-1"]


def test_tensors_beyond_max_tensor_byte_length_reject(webnn_page, server_url):
    """createTensor, createConstantTensor and createExportableTensor reject with TypeError for a
    descriptor of a byte length the context does not support: elements times their size in the
    compute layout (float16, int8 and uint8 widened to 4 bytes) over maxTensorByteLength; and work
    at an 8-bit type's own limit, a quarter of maxTensorByteLength. A float32 tensor of the limit
    passes the check; SwiftShader's Vulkan cannot allocate a buffer of its full advertised
    maxBufferSize (1 GiB less 4 bytes fails in vkAllocateMemory), so there it may reject with
    UnknownError, the GPU's failure to allocate, not the size check's TypeError."""
    r = run(webnn_page, server_url, """
      const adapter = await navigator.gpu.requestAdapter();
      const device = await adapter.requestDevice();
      const dctx = await navigator.ml.createContext(device);
      const lim = dctx.opSupportLimits().maxTensorByteLength;
      const outcome = async (f) => { try { const t = await f(); t.destroy(); return 'ok'; } catch (e) { return e.name; } };
      const r = {};
      for (const [dt, size, compute] of [['float32', 4, 4], ['float16', 2, 4], ['int64', 8, 8], ['uint8', 1, 4]]) {
        const n = Math.floor(lim / compute) + 1;
        const over = {dataType: dt, shape: [n]};
        r[`createTensor ${dt}`] = await outcome(() => dctx.createTensor(over));
        r[`createExportableTensor ${dt}`] = await outcome(() => dctx.createExportableTensor(over, device));
        r[`createConstantTensor ${dt}`] = await outcome(() => dctx.createConstantTensor(over, new Uint8Array(n * size)));
        // The web-platform-tests' form: (lim + 1) / size elements, the fraction truncated by
        // [EnforceRange]; over the limit because the limit is 8k - 1 (as Chromium's INT32_MAX).
        r[`createTensor ${dt} (lim + 1) / size`] = await outcome(() => dctx.createTensor({dataType: dt, shape: [(lim + 1) / size], writable: true}));
      }
      let message = '';
      try { await dctx.createTensor({dataType: 'int8', shape: [Math.floor(lim / 4) + 1]}); } catch (e) { message = e.message; }
      r.atLimit = await outcome(() => dctx.createTensor({dataType: 'float32', shape: [Math.floor(lim / 4)]}));
      r.int8AtLimit = await outcome(() => dctx.createTensor({dataType: 'int8', shape: [Math.floor(lim / 4)]}));
      r.binding = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
      r.lim = lim;
      dctx.destroy();
      device.destroy();
      return {r, message};
    """)
    assert "ok" in r, r
    message = r["ok"]["message"]
    r = r["ok"]["r"]
    lim = r.pop("lim")
    assert lim == r.pop("binding") // 8 * 8 - 1
    assert r.pop("atLimit") in ("ok", "UnknownError")
    assert r.pop("int8AtLimit") == "ok"
    assert message.startswith(f"[createTensor] an int8 tensor of shape [{lim // 4 + 1}] has {lim // 4 + 1} elements "
                              f"({lim // 4 + 1} bytes); an int8 tensor may have at most {lim // 4} ({lim // 4} bytes)"), message
    assert f"maxTensorByteLength ({lim})" in message, message
    assert r == {k: "TypeError" for k in r}, r


def test_scalar_graph_input_takes_a_0d_tensor_only(webnn_page, server_url):
    """dispatch() compares each tensor's shape with the graph's exactly, as Chromium 156 does
    (MLContext::dispatch -> ValidateNamedMLTensors, ml_context.cc: tensor->Shape() !=
    info->shape()): a [1] tensor for a 0-D input is a TypeError, a [] tensor computes."""
    r = run(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', f32);
      const lo = b.input('lo', {dataType: 'float32', shape: []});
      const g = await b.build({y: b.max(x, lo)});
      const tx = await ctx.createTensor({...f32, writable: true});
      const ty = await ctx.createTensor({...f32, readable: true});
      ctx.writeTensor(tx, new Float32Array([-3, -1, 0, 1, 2, NaN]));
      const one = await ctx.createTensor({dataType: 'float32', shape: [1], writable: true});
      let error = 'none';
      try { ctx.dispatch(g, {x: tx, lo: one}, {y: ty}); } catch (e) { error = e.name; }
      const scalar = await ctx.createTensor({dataType: 'float32', shape: [], writable: true});
      ctx.writeTensor(scalar, new Float32Array([-0.5]));
      ctx.dispatch(g, {x: tx, lo: scalar}, {y: ty});
      return {error, y: Array.from(new Float32Array(await ctx.readTensor(ty))).map(String)};
    """)
    assert r == {"ok": {"error": "TypeError", "y": ["-0.5", "-0.5", "0", "1", "2", "NaN"]}}, r


GRAPH = """
const b = new MLGraphBuilder(ctx);
const x = b.input('x', f32);
const y = b.relu(x, {label: 'act'});
const graph = await b.build({y});
const tx = await ctx.createTensor({...f32, writable: true});
const ty = await ctx.createTensor({...f32, readable: true});
"""


@pytest.mark.parametrize("body, error", [
    ("ctx.dispatch(graph, {}, {y: ty});", "TypeError"),  # missing input
    ("const tz = await ctx.createTensor(f32); ctx.dispatch(graph, {x: tx, z: tz}, {y: ty});", "TypeError"),  # extra name
    ("ctx.dispatch(graph, {x: tx}, {y: tx});", "TypeError"),  # same tensor twice
    ("const w = await ctx.createTensor({dataType: 'float32', shape: [3, 2]}); ctx.dispatch(graph, {x: w}, {y: ty});", "TypeError"),
    ("const w = await ctx.createTensor({dataType: 'int32', shape: [2, 3]}); ctx.dispatch(graph, {x: w}, {y: ty});", "TypeError"),
    ("const w = await ctx.createTensor({dataType: 'float32', shape: [6]}); ctx.dispatch(graph, {x: w}, {y: ty});", "TypeError"),
    ("tx.destroy(); ctx.dispatch(graph, {x: tx}, {y: ty});", "TypeError"),
    ("const c = await ctx.createConstantTensor(f32, new Float32Array(6)); ctx.dispatch(graph, {x: c}, {y: ty});", "TypeError"),
    ("const other = await navigator.ml.createContext(); const o = await other.createTensor(f32); ctx.dispatch(graph, {x: o}, {y: ty});", "TypeError"),
    ("const other = await navigator.ml.createContext(); other.dispatch(graph, {x: tx}, {y: ty});", "TypeError"),
    ("graph.destroy(); ctx.dispatch(graph, {x: tx}, {y: ty});", "InvalidStateError"),
    ("ctx.destroy(); ctx.dispatch(graph, {x: tx}, {y: ty});", "InvalidStateError"),
    ("await b.build({y});", "InvalidStateError"),
    ("b.relu(x);", "InvalidStateError"),
    ("b.input('q', f32);", "InvalidStateError"),
])
def test_dispatch_and_build_errors(webnn_page, server_url, body, error):
    assert error_of(webnn_page, server_url, GRAPH + body)[0] == error


@pytest.mark.parametrize("body, words", [
    # a typed array where an MLTensor belongs (MLContext.compute()'s habit): named as such
    ("ctx.dispatch(graph, {x: new Float32Array(6)}, {y: ty});", ['input "x" is not an MLTensor']),
    ("const other = await navigator.ml.createContext(); const o = await other.createTensor({...f32, readable: true}); "
     "ctx.dispatch(graph, {x: tx}, {y: o});", ['output "y"', "another context"]),
    ("tx.destroy(); ctx.dispatch(graph, {x: tx}, {y: ty});", ['input "x"', "destroyed"]),
])
def test_dispatch_errors_name_the_binding(webnn_page, server_url, body, words):
    name, message = error_of(webnn_page, server_url, GRAPH + body)
    assert name == "TypeError" and all(w in message for w in words), message


@pytest.mark.parametrize("body, error", [
    ("const b = new MLGraphBuilder(ctx); b.input('', f32);", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); b.input('x', f32); b.input('x', f32);", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); b.constant(f32, new Float32Array(5));", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); b.constant(f32, new Int32Array(6));", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); await b.build({});", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); const x = b.input('x', f32); await b.build({x});", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); const c = b.constant('float32', 2); await b.build({c});", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); const b2 = new MLGraphBuilder(ctx); b.relu(b2.input('x', f32), {label: 'r1'});", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); const t = await ctx.createTensor(f32); b.constant(t);", "TypeError"),
    ("const b = new MLGraphBuilder(ctx); const t = await ctx.createConstantTensor(f32, new Float32Array(6)); t.destroy(); b.constant(t);", "TypeError"),
    ("ctx.destroy(); new MLGraphBuilder(ctx);", "InvalidStateError"),
    ("new MLGraphBuilder({});", "TypeError"),
    ("new MLOperand();", "TypeError"),
])
def test_builder_errors(webnn_page, server_url, body, error):
    assert error_of(webnn_page, server_url, body)[0] == error


def test_error_names_the_label(webnn_page, server_url):
    name, message = error_of(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      b.add(b.input('a', f32), b.input('b', {dataType: 'float32', shape: [4]}), {label: 'my-add'});""")
    assert name == "TypeError" and "[my-add]" in message


def test_constants_scalars_and_reuse(webnn_page, server_url):
    """constant(tensor) survives the tensor's destruction; constant(type, value) casts; a graph
    runs many times with different tensors; outputs that alias inputs are copies."""
    r = run(webnn_page, server_url, """
      const ct = await ctx.createConstantTensor(f32, new Float32Array([1, 2, 3, 4, 5, 6]));
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', f32);
      const c = b.constant(ct);
      const s = b.constant('float32', 0.1);
      const y = b.mul(b.add(x, c), s);
      const graph = await b.build({y, z: b.relu(x)});
      ct.destroy();
      const out = [];
      for (const v of [1, -1]) {
        const tx = await ctx.createTensor({...f32, writable: true});
        const ty = await ctx.createTensor({...f32, readable: true});
        const tz = await ctx.createTensor({...f32, readable: true});
        ctx.writeTensor(tx, new Float32Array(6).fill(v));
        ctx.dispatch(graph, {x: tx}, {y: ty, z: tz});
        out.push([Array.from(new Float32Array(await ctx.readTensor(ty))), Array.from(new Float32Array(await ctx.readTensor(tz)))]);
      }
      return {out, shape: y.shape, type: y.dataType, scalarShape: s.shape};
    """)["ok"]
    f = lambda v: [float(__import__("numpy").float32((v + k) * __import__("numpy").float32(0.1))) for k in range(1, 7)]
    assert r["out"][0][0] == pytest.approx(f(1), rel=1e-6) and r["out"][0][1] == [1] * 6
    assert r["out"][1][0] == pytest.approx(f(-1), rel=1e-6, abs=1e-7) and r["out"][1][1] == [0] * 6
    assert r["shape"] == [2, 3] and r["type"] == "float32" and r["scalarShape"] == []


def test_context_lost_and_destroy(webnn_page, server_url):
    r = run(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      const graph = await b.build({y: b.relu(b.input('x', f32))});
      const t = await ctx.createTensor({...f32, readable: true});
      let lost = null;
      ctx.lost.then((info) => { lost = info.message; });
      ctx.destroy();
      ctx.destroy();  // idempotent
      await new Promise((r) => setTimeout(r, 0));
      let readErr = null;
      try { await ctx.readTensor(t); } catch (e) { readErr = e.name; }
      return {lost, readErr, accelerated: ctx.accelerated};
    """)["ok"]
    assert r["lost"] and "destroy" in r["lost"]
    assert r["readErr"] == "TypeError"  # the tensor was destroyed with its context
    assert r["accelerated"] is True


def test_workgroup_folding_large_elementwise(webnn_page, server_url):
    """More than 65,535 workgroups in one dimension are folded: 16,777,217 elements, all correct."""
    r = run(webnn_page, server_url, """
      const n = 16777217;
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', {dataType: 'float32', shape: [n]});
      const graph = await b.build({y: b.add(x, b.constant('float32', 1))});
      const tx = await ctx.createTensor({dataType: 'float32', shape: [n], writable: true});
      const ty = await ctx.createTensor({dataType: 'float32', shape: [n], readable: true});
      const data = new Float32Array(n);
      for (let i = 0; i < n; i++) data[i] = i % 1000 - 500;
      ctx.writeTensor(tx, data);
      ctx.dispatch(graph, {x: tx}, {y: ty});
      const out = new Float32Array(await ctx.readTensor(ty));
      let bad = 0;
      for (let i = 0; i < n; i++) if (out[i] !== data[i] + 1) bad++;
      return {bad, last: out[n - 1]};
    """)["ok"]
    assert r == {"bad": 0, "last": float((16777216 % 1000) - 500 + 1)}


def test_unsigned_arguments_convert_as_webidl(webnn_page, server_url):
    """[EnforceRange] unsigned long: fractions truncate (1.9 -> 1); NaN, Infinity, negatives throw."""
    r = run(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', {dataType: 'float32', shape: [2, 3, 4]});
      const c = b.concat([x, x], 1.9);
      const s = b.split(x, 2.5, {axis: 2.2});
      const outcomes = [];
      for (const axis of [NaN, Infinity, -1, 3]) {
        try { b.concat([x, x], axis, {label: 'cat'}); outcomes.push('ok'); } catch (e) { outcomes.push(e.name + (e.message.includes('[cat]') ? ' labelled' : '')); }
      }
      return {concat: c.shape, split: s.map((o) => o.shape), outcomes};
    """)
    assert "ok" in r, r
    r = r["ok"]
    assert r["concat"] == [2, 6, 4]
    assert r["split"] == [[2, 3, 2], [2, 3, 2]]
    assert r["outcomes"] == ["TypeError labelled"] * 4


#: (data type, bytes an element in the tensor layout, in the WebGPU context's compute layout)
COMPUTE_SIZES = [("float32", 4, 4), ("int32", 4, 4), ("uint32", 4, 4), ("int64", 8, 8), ("uint64", 8, 8),
                 ("float16", 2, 4), ("int8", 1, 4), ("uint8", 1, 4), ("int4", 0.5, 4), ("uint4", 0.5, 4)]


def test_tensors_beyond_device_limits_fail_clearly(webnn_page, server_url):
    """maxTensorByteLength on WebGPU is the device's binding limit (min(maxStorageBufferBindingSize,
    maxBufferSize)) rounded down to 8 bytes, less one byte (8k - 1, as Chromium's INT32_MAX); an
    operand is supported when its elements in the compute layout take at most that many bytes.
    float32 and the other types stored at their own size may fill it; float16 half of it in its own
    bytes, int8/uint8 a quarter, int4/uint4 an eighth. input() at a type's own limit works, one
    element past it (and the web-platform-tests' forms past maxTensorByteLength) throws TypeError
    (spec "check dimensions": byte length not supported), naming that type's limit when the type
    is widened. Builder calls only: nothing of that size is allocated."""
    r = run(webnn_page, server_url, """
      const gpu = await navigator.ml.createContext({deviceType: 'gpu'});
      const lim = gpu.opSupportLimits().maxTensorByteLength;
      const adapter = await navigator.gpu.requestAdapter();
      const outcome = (f) => { try { f(); return 'ok'; } catch (e) { return `${e.name}: ${e.message}`; } };
      const b = new MLGraphBuilder(gpu);
      const r = {lim, binding: Math.min(adapter.limits.maxStorageBufferBindingSize, adapter.limits.maxBufferSize), outcomes: {}};
      for (const [dt, size, compute] of %s) {
        const most = Math.floor(lim / compute);
        r.outcomes[`${dt} at the limit`] = outcome(() => b.input(`${dt}ok`, {dataType: dt, shape: [most]}));
        r.outcomes[`${dt} past the limit`] = outcome(() => b.input(`${dt}big`, {dataType: dt, shape: [most + 1]}));
        // The web-platform-tests' forms ([input] cases): lim / size + 1 and (lim + 1) / size.
        r.outcomes[`${dt} past the limit, WPT form`] = outcome(() => b.input(`${dt}wpt`, {dataType: dt, shape: [lim / size + 1]}));
        r.outcomes[`${dt} past the limit, (lim + 1) / size`] = outcome(() => b.input(`${dt}wpt1`, {dataType: dt, shape: [(lim + 1) / size]}));
      }
      gpu.destroy();
      return r;
    """ % json.dumps([list(t) for t in COMPUTE_SIZES]))
    assert "ok" in r, r
    r = r["ok"]
    binding, lim = r["binding"], r["lim"]
    assert lim == binding - binding % 8 - 1 and lim % 8 == 7
    # more than the quarter it was while every type had the 8-bit types' limit
    assert lim > binding // 4
    sizes = {dt: (size, compute) for dt, size, compute in COMPUTE_SIZES}
    for key, outcome in r["outcomes"].items():
        dt = key.split()[0]
        size, compute = sizes[dt]
        if key.endswith("at the limit"):
            assert outcome == "ok", (key, outcome)
            continue
        assert outcome.startswith("TypeError: [input "), (key, outcome)
        if key.endswith("past the limit") and compute != size:
            most = lim // compute
            assert f"may have at most {most} ({math.ceil(most * size)} bytes)" in outcome, (key, outcome)
            assert f"each {dt} element in {compute} bytes" in outcome and f"maxTensorByteLength ({lim})" in outcome, (key, outcome)
        elif key.endswith("past the limit"):
            assert outcome.endswith(f"more than maxTensorByteLength ({lim})"), (key, outcome)


#: Builder calls whose output passes maxTensorByteLength (`lim`) while every input stays
#: within it: `side` is the smallest power of two with side * side float32 > 2 * lim bytes.
OVERSIZED_OUTPUTS = {
    **{op: f"b.{op}(col, row, {{label: 'L'}})" for op in ("add", "sub", "mul", "div", "max", "min", "pow")},
    "expand": "b.expand(col, [side, side], {label: 'L'})",
    "tile": "b.tile(col, [1, side], {label: 'L'})",
    "pad": "b.pad(col, [0, 0], [0, side], {label: 'L'})",
    "where": "b.where(b.input('c', {dataType: 'uint8', shape: [side, 1]}), col, row, {label: 'L'})",
    "matmul": "b.matmul(b.input('m', {dataType: 'float32', shape: [side, 4]}), b.input('n', {dataType: 'float32', shape: [4, side]}), {label: 'L'})",
    "gemm": "b.gemm(b.input('m', {dataType: 'float32', shape: [side, 4]}), b.input('n', {dataType: 'float32', shape: [4, side]}), {label: 'L'})",
    "gather": "b.gather(b.input('g', {dataType: 'float32', shape: [4, 8]}), b.input('i', {dataType: 'int32', shape: [side, side / 8]}), {label: 'L'})",
    "resample2d": "b.resample2d(b.input('img', {dataType: 'float32', shape: [1, 1, 4, 4]}), {sizes: [side, side], label: 'L'})",
    "cast": "b.cast(b.input('w', {dataType: 'int32', shape: [Math.floor(lim / 4)]}), 'int64', {label: 'L'})",
    "element count overflow": "b.add(b.input('p', {dataType: 'uint8', shape: [65536, 1]}), b.input('q', {dataType: 'uint8', shape: [1, 65536]}), {label: 'L'})",
}


@pytest.mark.parametrize("op", OVERSIZED_OUTPUTS)
def test_operator_output_beyond_max_tensor_byte_length_is_a_type_error(webnn_page, server_url, op):
    """Every operator's output passes the one descriptor check (spec "check dimensions", byte
    length supported) when the method is called: a TypeError naming the label, and the builder
    stays usable."""
    r = run(webnn_page, server_url, f"""
      const lim = ctx.opSupportLimits().maxTensorByteLength;
      let side = 1;
      while (side * side * 4 <= 2 * lim) side *= 2;
      const b = new MLGraphBuilder(ctx);
      const col = b.input('col', {{dataType: 'float32', shape: [side, 1]}});
      const row = b.input('row', {{dataType: 'float32', shape: [1, side]}});
      let outcome;
      try {{ {OVERSIZED_OUTPUTS[op]}; outcome = 'no error'; }} catch (e) {{ outcome = `${{e.name}}: ${{e.message}}`; }}
      const y = b.relu(b.input('small', f32));
      const g = await b.build({{y}});
      return {{outcome, built: g instanceof MLGraph}};
    """)
    assert "ok" in r, r
    assert r["ok"]["outcome"].startswith("TypeError: [L] "), r["ok"]["outcome"]
    assert r["ok"]["built"]


def test_read_into_buffer_detached_while_pending(webnn_page, server_url):
    """Spec readTensor(tensor, outputData): a buffer detached while the read is pending rejects
    the promise with a TypeError (it must not hang)."""
    r = run(webnn_page, server_url, """
      const t = await ctx.createTensor({dataType: 'float32', shape: [2], readable: true});
      const results = [];
      for (const make of [() => new ArrayBuffer(8), () => new Float32Array(2)]) {
        const out = make();
        const p = ctx.readTensor(t, out);
        (out.buffer ?? out).transfer();
        try { await p; results.push('resolved'); } catch (e) { results.push(e.name); }
      }
      return results;
    """)
    assert r == {"ok": ["TypeError", "TypeError"]}


def test_allocation_failure_is_an_error_not_wrong_data(webnn_page, server_url):
    """A graph whose maxTensorByteLength-sized intermediates the GPU cannot allocate rejects
    build() with OperationError, and a tensor it cannot allocate rejects createTensor() with
    UnknownError; where the GPU can allocate them, the results are right. Never silently wrong
    data. (SwiftShader advertises a 1 GiB maxBufferSize but its Vulkan cannot allocate a buffer of
    1 GiB less 4 bytes: both fail there. Element-wise, not reduced to one value: one workgroup
    reducing 2^26 elements takes 20 s on SwiftShader.)"""
    r = run(webnn_page, server_url, """
      const n = Math.floor(ctx.opSupportLimits().maxTensorByteLength / 4);
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', {dataType: 'float32', shape: [1]});
      const big = b.expand(x, [n]);
      let graph = null, build = 'ok';
      try { graph = await b.build({y: b.relu(b.add(big, big))}); } catch (e) { build = e.name; }
      let value = null;
      if (graph) {
        const tx = await ctx.createTensor({dataType: 'float32', shape: [1], writable: true});
        let ty = null;
        try { ty = await ctx.createTensor({dataType: 'float32', shape: [n], readable: true}); } catch (e) { value = e.name; }
        if (ty) {
          ctx.writeTensor(tx, new Float32Array([1.5]));
          ctx.dispatch(graph, {x: tx}, {y: ty});
          const y = new Float32Array(await ctx.readTensor(ty));
          value = [y[0], y[n >> 1], y[n - 1]];
          ty.destroy();
        }
        graph.destroy();
      }
      let create = 'ok', first = null;
      try {
        const t = await ctx.createTensor({dataType: 'float32', shape: [n], readable: true, writable: true});
        ctx.writeTensor(t, new Float32Array(n).fill(2));
        first = new Float32Array(await ctx.readTensor(t))[n - 1];
        t.destroy();
      } catch (e) { create = e.name; }
      return {build, value, create, first};
    """)
    assert "ok" in r, r
    r = r["ok"]
    assert r["build"] == "OperationError" or (r["build"] == "ok" and r["value"] in ([3.0] * 3, "UnknownError")), r
    assert r["create"] == "UnknownError" or (r["create"] == "ok" and r["first"] == 2.0), r


def test_intermediate_past_the_binding_limit_fails_build(webnn_page, server_url):
    """Every operand fits maxTensorByteLength, but a kernel's scratch may not: lstmCell projects the
    input onto its four gates at once, a [B, 4H] float32 temporary four times its [B, H] outputs.
    Past the device's binding limit, build() rejects with OperationError (spec build(): converting
    the graph failed) naming the step, before anything is allocated. Nothing is dispatched."""
    r = run(webnn_page, server_url, """
      const gpu = await navigator.ml.createContext({deviceType: 'gpu'});
      const adapter = await navigator.gpu.requestAdapter();
      const binding = Math.min(adapter.limits.maxStorageBufferBindingSize, adapter.limits.maxBufferSize);
      const H = 1024, I = 4, B = Math.floor(binding / (16 * H)) + 8;
      const f = (shape) => ({dataType: 'float32', shape});
      const b = new MLGraphBuilder(gpu);
      const [h, c] = b.lstmCell(b.input('x', f([B, I])), b.input('w', f([4 * H, I])), b.input('r', f([4 * H, H])),
        b.input('h', f([B, H])), b.input('c', f([B, H])), H);
      let outcome = 'built';
      try { await b.build({h, c}); } catch (e) { outcome = `${e.name}: ${e.message}`; }
      gpu.destroy();
      return {outcome, scratch: B * 4 * H * 4, binding};
    """)
    assert "ok" in r, r
    r = r["ok"]
    assert r["scratch"] > r["binding"]
    assert r["outcome"].startswith("OperationError: [lstmCell:input-projection] "), r["outcome"]
    assert f"{r['scratch']} bytes" in r["outcome"], r["outcome"]


def test_pooled_buffers_never_round_past_the_binding_limit(webnn_page, server_url):
    """The buffer pool rounds large sizes up to 16 MiB steps; near a binding limit that is not such
    a multiple (2^31 - 1 bytes, say), a temporary or staging buffer of the largest float32 tensor
    that fits it (2^31 - 12 bytes under a maxTensorByteLength of 2^31 - 9) would round past it,
    into a buffer WebGPU refuses to create or bind whole. The pool caps the rounding at the limit
    (less, to a multiple of 4). A stub device records the sizes."""
    r = run(webnn_page, server_url, """
      const {BufferPool} = await import('/polyfill/gpu/buffer_pool.js');
      const limits = {maxBufferSize: 2 ** 31 - 1, maxStorageBufferBindingSize: 2 ** 31 - 1};
      const pool = new BufferPool({limits, createBuffer: ({size}) => ({size})});
      return [2 ** 31 - 12, 2 ** 30 + 4, 1000].map((b) => pool.acquire(b, 0, 't').size);
    """)
    assert r == {"ok": [2 ** 31 - 4, 2 ** 30 + 16 * 2 ** 20, 1024]}, r


def test_webidl_argument_conversion(webnn_page, server_url):
    """Arguments convert as WebIDL does: USVString names, sequence<[EnforceRange] unsigned long>
    shapes (no strings or bigints, fractions truncate), MLNumber values, dictionary options."""
    r = run(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      const outcome = (f) => { try { const v = f(); return v && v.shape ? ['ok', v.shape] : ['ok']; } catch (e) { return [e.name]; } };
      const x = b.input('x', f32);
      return {
        numberName: outcome(() => b.input(5, f32)),
        symbolName: outcome(() => b.input(Symbol('s'), f32)),
        stringShape: outcome(() => b.input('s', {dataType: 'float32', shape: '234'})),
        bigintShape: outcome(() => b.input('g', {dataType: 'float32', shape: [1n]})),
        fractionShape: outcome(() => b.input('f', {dataType: 'float32', shape: [2.9, 3]})),
        stringValue: outcome(() => b.constant('float32', '1.5')),
        numberOptions: outcome(() => b.add(x, x, 5)),
        symbolLabel: outcome(() => b.relu(x, {label: Symbol('l')})),
      };
    """)
    assert r["ok"] == {
        "numberName": ["ok", [2, 3]], "symbolName": ["TypeError"], "stringShape": ["TypeError"],
        "bigintShape": ["TypeError"], "fractionShape": ["ok", [2, 3]], "stringValue": ["ok", []],
        "numberOptions": ["TypeError"], "symbolLabel": ["TypeError"],
    }


def test_builder_state_cannot_be_reset_from_the_page(webnn_page, server_url):
    """The builder's state is private: assigning look-alike fields changes nothing."""
    name, _ = error_of(webnn_page, server_url, """
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', f32);
      await b.build({y: b.relu(x)});
      b._built = false; b._inputNames = new Set(); b._nodes = [];
      b.relu(x);""")
    assert name == "InvalidStateError"


def test_a_descriptor_with_the_former_member_names_says_so(webnn_page, server_url):
    """{type, dimensions} (the descriptor's members before dataType and shape): a TypeError that
    names the current members, not only "dataType undefined"."""
    name, message = error_of(webnn_page, server_url,
                             "const b = new MLGraphBuilder(ctx); b.input('x', {type: 'float32', dimensions: [2]});")
    assert name == "TypeError" and "{dataType, shape}" in message and "[input x]" in message, message
