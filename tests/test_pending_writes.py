"""writeTensor uploads held until the context's next queue work (static/polyfill/gpu/pending_writes.js).

On hardware adapters writeTensor keeps a copy and writes it right before the next dispatch's
submit, so that a client awaiting between writeTensor and dispatch (ORT-web's WebNN EP) gets the
input's upload into the same GPU-process batch as the graph, as our builder code does. Here
(SwiftShader) it is off by default; the tests force it through the tuning switch ``deferWrites``
and check, by wrapping GPUQueue.prototype.writeBuffer / submit, where the upload goes, and that
every result still sees exactly the data written before it (float64 NumPy references).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.graph_runner import run_js

HELPERS = """
const {queueState} = await import('/polyfill/inspect.js');
const {configureContext} = await import('/polyfill/options.js');
// tunes `context` (static/polyfill/tuning.js switches)
const tune = (context, tuning) => configureContext(context, {tuning});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Logs the queue calls ('write <bytes>' for tensor-sized writes, 'submit' for non-empty submits)
// and the WebNN calls around them, in order, until stop().
const watchQueue = () => {
  const log = [];
  const submit = GPUQueue.prototype.submit, write = GPUQueue.prototype.writeBuffer;
  const wrapped = {};
  GPUQueue.prototype.submit = function (buffers) { if (buffers.length) log.push('submit'); return submit.apply(this, arguments); };
  GPUQueue.prototype.writeBuffer = function (buffer, offset, data, dataOffset, size) {
    if (String(buffer.label).startsWith('webnn:tensor')) log.push(`write ${size ?? data.byteLength}`);
    return write.apply(this, arguments);
  };
  for (const name of ['writeTensor', 'dispatch', 'readTensor']) {
    wrapped[name] = MLContext.prototype[name];
    MLContext.prototype[name] = function (...a) { log.push(name); return wrapped[name].apply(this, a); };
  }
  log.stop = () => {
    GPUQueue.prototype.submit = submit; GPUQueue.prototype.writeBuffer = write;
    for (const [name, f] of Object.entries(wrapped)) MLContext.prototype[name] = f;
  };
  return log;
};
// y = x * 3 - 1 on a [5, 7] float32 input (35 values, 140 bytes)
const makeGraph = async (context) => {
  const b = new MLGraphBuilder(context);
  const x = b.input('x', {dataType: 'float32', shape: [5, 7]});
  const y = b.sub(b.mul(x, b.constant('float32', 3)), b.constant('float32', 1));
  const graph = await b.build({y});
  const xt = await context.createTensor({dataType: 'float32', shape: [5, 7], writable: true, readable: true});
  const yt = await context.createTensor({dataType: 'float32', shape: [5, 7], readable: true});
  return {graph, xt, yt};
};
const values = (k) => Float32Array.from({length: 35}, (_, i) => Math.sin(i * 0.9 + k) * 4 - 0.5);
const read = async (context, t) => Array.from(new Float32Array(await context.readTensor(t)));
"""


def run(page, server_url, body):
    result = run_js(page, server_url, HELPERS + body)
    assert "ok" in result, f"JS failed: {result}"
    return result["ok"]


def values(k):
    return (np.sin(np.arange(35) * 0.9 + k) * 4 - 0.5).astype(np.float32).astype(np.float64)


def graph(x):
    return x * 3 - 1


def test_off_by_default_on_swiftshader(webnn_page, server_url):
    """SwiftShader: writeTensor writes at once, as before (the copy would only cost time)."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const {graph, xt, yt} = await makeGraph(context);
      const log = watchQueue();
      context.writeTensor(xt, values(0));
      context.dispatch(graph, {x: xt}, {y: yt});
      const y = await read(context, yt);
      log.stop();
      return {log: [...log], y};
    """)
    assert r["log"][:3] == ["writeTensor", "write 140", "dispatch"], r["log"]
    np.testing.assert_allclose(r["y"], graph(values(0)), rtol=1e-6, atol=1e-6)


def test_forced_write_goes_out_with_the_dispatch_after_awaits(webnn_page, server_url):
    """The ORT pattern: writeTensor, awaits, dispatch: the upload is issued inside dispatch, right
    before its submit, not in writeTensor (the old code wrote at once)."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      tune(context, {deferWrites: true});
      const {graph, xt, yt} = await makeGraph(context);
      const log = watchQueue();
      context.writeTensor(xt, values(1));
      const afterWrite = log.length;
      for (let i = 0; i < 5; i++) await Promise.resolve();
      context.dispatch(graph, {x: xt}, {y: yt});
      const y = await read(context, yt);
      log.stop();
      return {log: [...log], afterWrite, y};
    """)
    assert r["afterWrite"] == 1, r["log"]
    assert r["log"][:4] == ["writeTensor", "dispatch", "write 140", "submit"], r["log"]
    np.testing.assert_allclose(r["y"], graph(values(1)), rtol=1e-6, atol=1e-6)


def test_forced_each_dispatch_sees_the_write_before_it(webnn_page, server_url):
    """write a, dispatch, write b, write c, dispatch: the first result is from a, the second from c
    (b is replaced before anything read it); the data is copied at writeTensor time."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      tune(context, {deferWrites: true});
      const {graph, xt, yt} = await makeGraph(context);
      const y2t = await context.createTensor({dataType: 'float32', shape: [5, 7], readable: true});
      const log = watchQueue();
      const a = values(2);
      context.writeTensor(xt, a);
      a.fill(1e6);  // the caller may change its buffer once writeTensor returned
      context.dispatch(graph, {x: xt}, {y: yt});
      context.writeTensor(xt, values(3));
      context.writeTensor(xt, values(4));
      await Promise.resolve();
      context.dispatch(graph, {x: xt}, {y: y2t});
      const [first, second, x] = [await read(context, yt), await read(context, y2t), await read(context, xt)];
      log.stop();
      return {first, second, x, writes: log.filter((e) => e.startsWith('write ')).length};
    """)
    np.testing.assert_allclose(r["first"], graph(values(2)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r["second"], graph(values(4)), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.float32(r["x"]), np.float32(values(4)))
    assert r["writes"] == 2


@pytest.mark.parametrize("next_call", ["readTensor", "timer"])
def test_forced_write_without_dispatch_still_lands(webnn_page, server_url, next_call):
    """readTensor of a written tensor returns the written data (the read flushes first); with no
    later call at all, the write goes out in a task of its own."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      tune(context, {deferWrites: true});
      const t = await context.createTensor({dataType: 'float32', shape: [5, 7], writable: true, readable: true});
      const log = watchQueue();
      context.writeTensor(t, values(5));
      const pending = queueState(context).heldWrites;
      if ('%s' === 'timer') await sleep(30);
      const pendingBeforeRead = queueState(context).heldWrites;
      const x = await read(context, t);
      log.stop();
      return {x, pending, pendingBeforeRead, log: [...log]};
    """ % next_call)
    assert r["pending"] == 1
    assert r["pendingBeforeRead"] == (0 if next_call == "timer" else 1)
    np.testing.assert_array_equal(np.float32(r["x"]), np.float32(values(5)))
    assert r["log"].index("write 140") < r["log"].index("readTensor") if next_call == "timer" else \
        r["log"][:3] == ["writeTensor", "readTensor", "write 140"], r["log"]


def test_forced_destroyed_tensor_and_lost_context_drop_their_writes(webnn_page, server_url):
    """A write held for a tensor destroyed before the flush, or for a lost context, is dropped
    (writing a destroyed buffer would be a WebGPU validation error: a console error fails this)."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      tune(context, {deferWrites: true});
      const {graph, xt, yt} = await makeGraph(context);
      const other = await context.createTensor({dataType: 'float32', shape: [5, 7], writable: true});
      const log = watchQueue();
      context.writeTensor(other, values(6));
      other.destroy();
      context.writeTensor(xt, values(7));
      context.dispatch(graph, {x: xt}, {y: yt});
      const y = await read(context, yt);
      const lost = await navigator.ml.createContext();
      tune(lost, {deferWrites: true});
      const lt = await lost.createTensor({dataType: 'float32', shape: [5, 7], writable: true});
      lost.writeTensor(lt, values(8));
      lost.destroy();
      await sleep(30);
      log.stop();
      return {y, writes: log.filter((e) => e.startsWith('write ')).length};
    """)
    np.testing.assert_allclose(r["y"], graph(values(7)), rtol=1e-6, atol=1e-6)
    assert r["writes"] == 1


def test_forced_export_sees_the_written_data(webnn_page, server_url):
    """exportToGPU flushes held writes: the application's copy of the exported buffer reads them."""
    r = run(webnn_page, server_url, """
      const adapter = await navigator.gpu.requestAdapter({powerPreference: 'high-performance'});
      const device = await adapter.requestDevice();
      const context = await navigator.ml.createContext(device);
      tune(context, {deferWrites: true});
      const t = await context.createExportableTensor({dataType: 'float32', shape: [5, 7], writable: true, readable: true}, device);
      context.writeTensor(t, values(9));
      const buffer = await context.exportToGPU(t);
      const staging = device.createBuffer({size: 140, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buffer, 0, staging, 0, 140);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const x = Array.from(new Float32Array(staging.getMappedRange().slice(0)));
      staging.destroy();
      buffer.destroy();
      context.destroy();
      device.destroy();
      return {x};
    """)
    np.testing.assert_array_equal(np.float32(r["x"]), np.float32(values(9)))


def test_write_at_once_after_a_held_one_is_not_overwritten_by_it(webnn_page, server_url):
    """A hardware adapter's context holds writeTensor's copy; configureContext(context,
    {fastReadback: false}) then makes the next writeTensor of the same tensor write at once. The
    older held copy must not go out after it (at the dispatch's flush) and replace the newer data:
    the dispatch and the read see the last write. (SwiftShader emulates the hardware adapter's
    the tuning switch `nudgeQueue`.)"""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      tune(context, {nudgeQueue: true});
      const {graph, xt, yt} = await makeGraph(context);
      context.writeTensor(xt, values(10));
      const held = queueState(context).heldWrites;
      configureContext(context, {fastReadback: false});
      context.writeTensor(xt, values(11));
      context.dispatch(graph, {x: xt}, {y: yt});
      const [y, x] = [await read(context, yt), await read(context, xt)];
      context.destroy();
      return {held, y, x};
    """)
    assert r["held"] == 1
    np.testing.assert_allclose(r["y"], graph(values(11)), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.float32(r["x"]), np.float32(values(11)))


BIG = """
// y = x * 3 - 1 on a [300, 257] float32 input (308,400 bytes: past STAGE_BYTES)
const makeBig = async (context) => {
  const b = new MLGraphBuilder(context);
  const x = b.input('x', {dataType: 'float32', shape: [300, 257]});
  const graph = await b.build({y: b.sub(b.mul(x, b.constant('float32', 3)), b.constant('float32', 1))});
  const xt = await context.createTensor({dataType: 'float32', shape: [300, 257], writable: true, readable: true});
  const ys = await Promise.all([0, 1, 2, 3].map(() => context.createTensor({dataType: 'float32', shape: [300, 257], readable: true})));
  return {graph, xt, ys};
};
const big = (k) => Float32Array.from({length: 300 * 257}, (_, i) => (i === k ? NaN : Math.cos(i * 0.37 + k) * 50 - k));
"""


def big_values(k):
    x = np.cos(np.arange(300 * 257) * 0.37 + k) * 50 - k
    x[k] = np.nan
    return x.astype(np.float32).astype(np.float64)


def test_forced_large_writes_go_through_the_upload_buffer(webnn_page, server_url):
    """A write past STAGE_BYTES is filled into the tensor's mapped upload buffer and copied by a
    submit of its own inside writeTensor (no writeBuffer of the tensor); with the slot
    holdStagedWrites, inside dispatch; four writes and dispatches in one run (the buffer not
    mapped again yet: held host copies from the second on) each give the result of their own
    input; a later run after the re-map uses the buffer again; with the slot stageWrites false
    the write is a held writeBuffer."""
    r = run(webnn_page, server_url, BIG + """
      const context = await navigator.ml.createContext();
      tune(context, {deferWrites: true});
      const {graph, xt, ys} = await makeBig(context);
      let log = watchQueue();
      context.writeTensor(xt, big(0));
      await Promise.resolve();
      context.dispatch(graph, {x: xt}, {y: ys[0]});
      const first = [...log];
      const y0 = await read(context, ys[0]);
      log.stop();
      await new Promise((r) => setTimeout(r, 50));
      tune(context, {holdStagedWrites: true});
      log = watchQueue();
      context.writeTensor(xt, big(6));
      await Promise.resolve();
      context.dispatch(graph, {x: xt}, {y: ys[2]});
      const held = [...log];
      const y6 = await read(context, ys[2]);
      log.stop();
      tune(context, {holdStagedWrites: undefined});
      log = watchQueue();
      for (let k = 0; k < 4; k++) { context.writeTensor(xt, big(k + 1)); context.dispatch(graph, {x: xt}, {y: ys[k]}); }
      const burst = [];
      for (const y of ys) burst.push(await read(context, y));
      const burstWrites = log.filter((e) => e === 'write 308400').length;
      log.stop();
      await new Promise((r) => setTimeout(r, 50));
      log = watchQueue();
      context.writeTensor(xt, big(7));
      context.dispatch(graph, {x: xt}, {y: ys[0]});
      const again = [...log];
      const y7 = await read(context, ys[0]);
      log.stop();
      tune(context, {stageWrites: false});
      log = watchQueue();
      context.writeTensor(xt, big(8));
      context.dispatch(graph, {x: xt}, {y: ys[1]});
      const plain = [...log];
      const y8 = await read(context, ys[1]);
      log.stop();
      return {first, held, y0, y6, burst, burstWrites, again, y7, plain, y8};
    """)
    assert r["first"] == ["writeTensor", "submit", "dispatch", "submit"], r["first"]
    assert r["held"] == ["writeTensor", "dispatch", "submit", "submit"], r["held"]
    assert r["again"] == ["writeTensor", "submit", "dispatch", "submit"], r["again"]
    assert r["plain"] == ["writeTensor", "dispatch", "write 308400", "submit"], r["plain"]
    assert r["burstWrites"] in (3, 4)  # the 2nd-4th writes found the upload buffer not mapped again yet
    for got, k in [(r["y0"], 0), (r["y6"], 6), *[(y, k + 1) for k, y in enumerate(r["burst"])], (r["y7"], 7), (r["y8"], 8)]:
        np.testing.assert_allclose(np.array(got, dtype=np.float64), graph(big_values(k)), rtol=1e-6, atol=1e-4)


def test_forced_upload_buffer_refill_destroy_and_device_loss(webnn_page, server_url):
    """An odd-length uint8 write past STAGE_BYTES reads back byte for byte; with writes held
    (holdStagedWrites) a replaced write refills the same mapped buffer (no writeBuffer at all);
    a destroyed tensor destroys its upload buffer; after the application destroys the device of
    a createContext(gpuDevice) context, a write (the mapping detached) throws nothing but the
    spec's InvalidStateError."""
    r = run(webnn_page, server_url, """
      const {tensorState} = await import('/polyfill/inspect.js');
      const {STAGE_BYTES} = await import('/polyfill/gpu/pending_writes.js');
      const context = await navigator.ml.createContext();
      tune(context, {deferWrites: true});
      tune(context, {holdStagedWrites: true});
      const n = 65537;
      const t = await context.createTensor({dataType: 'uint8', shape: [n], writable: true, readable: true});
      const a = Uint8Array.from({length: n}, (_, i) => (i * 13 + 5) % 256);
      const b = Uint8Array.from({length: n}, (_, i) => 255 - (i % 200));
      const log = watchQueue();
      context.writeTensor(t, a);
      context.writeTensor(t, b);
      const back = new Uint8Array(await context.readTensor(t));
      log.stop();
      const destroyed = [];
      const destroy = GPUBuffer.prototype.destroy;
      GPUBuffer.prototype.destroy = function () { destroyed.push(this.label); return destroy.apply(this, arguments); };
      const hadStaging = Boolean(tensorState(t).uploadBuffer);
      context.writeTensor(t, a);
      t.destroy();
      GPUBuffer.prototype.destroy = destroy;
      await new Promise((r) => setTimeout(r, 20));
      // the application's device, destroyed while the upload buffer is mapped
      const device = await (await navigator.gpu.requestAdapter()).requestDevice();
      const shared = await navigator.ml.createContext(device);
      tune(shared, {deferWrites: true});
      const u = await shared.createTensor({dataType: 'uint8', shape: [n], writable: true});
      shared.writeTensor(u, a);
      await new Promise((r) => setTimeout(r, 50));
      const mappedAgain = tensorState(u).uploadBuffer.mapState;
      device.destroy();
      let thrown = 'none';
      try { shared.writeTensor(u, b); } catch (e) { thrown = e.name; }
      return {above: n >= STAGE_BYTES, same: back.length === n && back.every((v, i) => v === b[i]),
              writeBuffers: log.filter((e) => e.startsWith('write ')).length, submits: log.filter((e) => e === 'submit').length,
              hadStaging, freed: tensorState(t).uploadBuffer === null && destroyed.includes('webnn:upload'), mappedAgain, thrown};
    """)
    assert r["above"] and r["same"] and r["hadStaging"] and r["freed"]
    assert r["writeBuffers"] == 0 and r["submits"] == 2  # the one upload copy, the read's copy
    assert r["mappedAgain"] == "mapped" and r["thrown"] in ("none", "InvalidStateError")
