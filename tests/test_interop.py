"""WebGPU interop (Chromium 156 surface, static/polyfill/interop.js).

- navigator.ml.createContext(gpuDevice), createExportableTensor(descriptor, gpuDevice),
  exportToGPU(tensor), MLTensor.gpuDevice, MLGraph.devices;
- an export is the tensor's own memory (no copy, no CPU wait), packed types included;
- the errors: non-exportable tensor, use while exported, another device, a destroyed context.
The buffer-sharing demo and its benchmark tool: tests/test_demo_interop.py.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.graph_runner import run_js

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

# Helpers prefixed to every JS body below.
HELPERS = """
const appDevice = async () => {
  const adapter = await navigator.gpu.requestAdapter({powerPreference: 'high-performance'});
  return adapter.requestDevice({label: 'test app device'});
};
// Copies `size` bytes of `buffer` to a mappable buffer and returns them (app work on the queue).
const readBytes = async (device, buffer, size = buffer.size) => {
  const staging = device.createBuffer({size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, staging, 0, size);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return out;
};
// Runs `body` (WGSL statements using index i) over `count` invocations on storage buffer Y.
const runShader = (device, type, count, body, buffer) => {
  const code = `@group(0) @binding(0) var<storage, read_write> Y: array<${type}>;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
      let i = g.x; if (i >= ${count}u) { return; } ${body} }`;
  const pipeline = device.createComputePipeline({layout: 'auto', compute: {module: device.createShaderModule({code}), entryPoint: 'main'}});
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, device.createBindGroup({layout: pipeline.getBindGroupLayout(0), entries: [{binding: 0, resource: {buffer}}]}));
  pass.dispatchWorkgroups(Math.ceil(count / 64));
  pass.end();
  device.queue.submit([enc.finish()]);
};
// Counts calls of GPU methods that copy or wait while `fn` runs.
const countCalls = async (fn) => {
  const watched = [[GPUQueue.prototype, 'onSubmittedWorkDone'], [GPUQueue.prototype, 'submit'], [GPUQueue.prototype, 'writeBuffer'],
                   [GPUCommandEncoder.prototype, 'copyBufferToBuffer'], [GPUBuffer.prototype, 'mapAsync']];
  const counts = {};
  const saved = watched.map(([proto, name]) => {
    const original = proto[name];
    counts[name] = 0;
    proto[name] = function (...args) { counts[name]++; return original.apply(this, args); };
    return () => { proto[name] = original; };
  });
  try { await fn(); } finally { saved.forEach((restore) => restore()); }
  return counts;
};
const f32 = (shape) => ({dataType: 'float32', shape});
"""


def run(page, server_url, body):
    """Run an async JS body after HELPERS on the harness page; return {ok} or {error, message}."""
    return run_js(page, server_url, HELPERS + body)


def ok(page, server_url, body):
    result = run(page, server_url, body)
    assert "ok" in result, f"JS failed: {result}"
    return result["ok"]


# ----------------------------------------------------------------------------- zero copy


def test_export_shares_memory_both_ways(webnn_page, server_url):
    """An app shader reads what WebNN wrote and writes into the exported buffer; after destroy()
    WebNN's readTensor sees the app's values. Export and destroy copy nothing and wait for nothing."""
    r = ok(webnn_page, server_url, """
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const t = await ctx.createExportableTensor({...f32([3, 5]), readable: true, writable: true}, device);
      ctx.writeTensor(t, Float32Array.from({length: 15}, (_, i) => -i));
      let buf, again;
      const exportCalls = await countCalls(async () => { buf = await ctx.exportToGPU(t); again = await ctx.exportToGPU(t); });
      runShader(device, 'f32', 15, 'Y[i] = Y[i] * 2.0 + 100.0;', buf);
      const destroyCalls = await countCalls(async () => buf.destroy());
      const back = Array.from(new Float32Array(await ctx.readTensor(t)));
      // WebNN uses the tensor again: a graph reading it.
      const b = new MLGraphBuilder(ctx);
      const g = await b.build({y: b.relu(b.input('x', f32([3, 5])))});
      const y = await ctx.createTensor({...f32([3, 5]), readable: true});
      ctx.dispatch(g, {x: t}, {y});
      return {back, relu: Array.from(new Float32Array(await ctx.readTensor(y))), same: buf === again,
              size: buf.size, usage: buf.usage, wantUsage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
              isGPUBuffer: buf instanceof GPUBuffer, gpuDevice: t.gpuDevice === device, exportCalls, destroyCalls};
    """)
    expected = 100.0 - 2.0 * np.arange(15)
    np.testing.assert_array_equal(r["back"], expected)
    np.testing.assert_array_equal(r["relu"], np.maximum(expected, 0))
    assert r["same"] and r["isGPUBuffer"] and r["gpuDevice"]
    assert r["size"] == 60 and r["usage"] == r["wantUsage"]
    assert all(v == 0 for v in r["exportCalls"].values()), r["exportCalls"]
    assert all(v == 0 for v in r["destroyCalls"].values()), r["destroyCalls"]


def test_queue_order_without_cpu_wait(webnn_page, server_url):
    """App work submitted after a dispatch sees its results, app work submitted before the next
    dispatch does not see that one's, and nothing between them waits on the CPU."""
    r = ok(webnn_page, server_url, """
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const b = new MLGraphBuilder(ctx);
      const g = await b.build({y: b.relu(b.input('x', f32([64])))});
      const x = await ctx.createTensor({...f32([64]), writable: true});
      const y = await ctx.createExportableTensor(f32([64]), device);
      const snaps = [0, 1].map(() => device.createBuffer({size: 256, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC}));
      const a = Float32Array.from({length: 64}, (_, i) => i - 32);
      const calls = await countCalls(async () => {
        const inputs = [a, a.map((v) => 2 * v + 1)];
        for (let k = 0; k < 2; k++) {
          ctx.writeTensor(x, inputs[k]);
          ctx.dispatch(g, {x}, {y});
          const buf = await ctx.exportToGPU(y);
          const enc = device.createCommandEncoder();
          enc.copyBufferToBuffer(buf, 0, snaps[k], 0, 256);
          device.queue.submit([enc.finish()]);
          buf.destroy();
        }
      });
      const read = async (s) => Array.from(new Float32Array((await readBytes(device, s)).buffer));
      return {calls, first: await read(snaps[0]), second: await read(snaps[1])};
    """)
    a = np.arange(64, dtype=np.float64) - 32
    np.testing.assert_array_equal(r["first"], np.maximum(a, 0))
    np.testing.assert_array_equal(r["second"], np.maximum(2 * a + 1, 0))
    assert r["calls"]["onSubmittedWorkDone"] == 0 and r["calls"]["mapAsync"] == 0, r["calls"]


@pytest.mark.parametrize("data_type,values", [
    ("float16", np.array([1.5, -2.0, 65504.0, -0.0, 0.099976, np.inf, 3.0], np.float16)),
    ("int8", np.array([-128, 127, 0, -1, 5, 9, -77], np.int8)),
    ("uint8", np.array([0, 255, 128, 1, 2, 3, 200], np.uint8)),
    ("int32", np.array([-(2 ** 31), 2 ** 31 - 1, 0, -5, 7, 1, 2], np.int32)),
])
def test_export_packed_types_zero_copy(webnn_page, server_url, data_type, values):
    """The app sees the packed tensor layout (float16: 2 bytes, int8/uint8: 1 byte per element),
    the buffer size is the byte length rounded up to 4, and the app's writes come back packed."""
    raw = values.tobytes()
    r = ok(webnn_page, server_url, f"""
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const t = await ctx.createExportableTensor({{dataType: '{data_type}', shape: [7], readable: true, writable: true}}, device);
      ctx.writeTensor(t, new Uint8Array({json.dumps(list(raw))}));
      const buf = await ctx.exportToGPU(t);
      const seen = Array.from(await readBytes(device, buf));
      runShader(device, 'u32', buf.size / 4, 'Y[i] = ~Y[i];', buf);   // invert every bit
      buf.destroy();
      return {{size: buf.size, seen, back: Array.from(new Uint8Array(await ctx.readTensor(t)))}};
    """)
    n = len(raw)
    assert r["size"] == -(-n // 4) * 4
    assert bytes(r["seen"][:n]) == raw
    assert bytes(r["back"]) == bytes(b ^ 0xFF for b in raw)


def test_tensor_destroyed_while_exported_keeps_memory_until_buffer_destroyed(webnn_page, server_url):
    """MLTensor.destroy() during an export leaves the app's buffer usable; the app's destroy()
    then frees it (using it afterwards is a WebGPU validation error)."""
    r = ok(webnn_page, server_url, """
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const t = await ctx.createExportableTensor({...f32([16]), readable: true, writable: true}, device);
      const buf = await ctx.exportToGPU(t);
      t.destroy();
      runShader(device, 'f32', 16, 'Y[i] = f32(i) + 0.5;', buf);
      const alive = Array.from(new Float32Array((await readBytes(device, buf)).buffer));
      let readErr = null;
      try { await ctx.readTensor(t); } catch (e) { readErr = e.name; }
      let exportErr = null;
      try { await ctx.exportToGPU(t); } catch (e) { exportErr = e.name; }
      buf.destroy();
      device.pushErrorScope('validation');
      const staging = device.createBuffer({size: 64, usage: GPUBufferUsage.COPY_DST});
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buf, 0, staging, 0, 64);
      device.queue.submit([enc.finish()]);
      const freed = (await device.popErrorScope()) !== null;
      // Not exported: MLTensor.destroy() frees at once.
      const u = await ctx.createExportableTensor(f32([16]), device);
      const ubuf = await ctx.exportToGPU(u);
      ubuf.destroy();
      u.destroy();
      device.pushErrorScope('validation');
      const enc2 = device.createCommandEncoder();
      enc2.copyBufferToBuffer(ubuf, 0, staging, 0, 64);
      device.queue.submit([enc2.finish()]);
      const freed2 = (await device.popErrorScope()) !== null;
      return {alive, readErr, exportErr, freed, freed2};
    """)
    np.testing.assert_array_equal(r["alive"], np.arange(16) + 0.5)
    assert r["readErr"] == "TypeError" and r["exportErr"] == "TypeError"
    assert r["freed"] and r["freed2"]


# ------------------------------------------------------------------------------- errors


def test_export_errors(webnn_page, server_url):
    """Non-exportable tensor, use while exported (dispatch, readTensor, writeTensor), a destroyed
    context: each throws the error Chromium 156 throws, with a message saying why."""
    r = ok(webnn_page, server_url, """
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const errs = {};
      const catchErr = async (name, fn) => {
        try { await fn(); errs[name] = null; } catch (e) { errs[name] = [e.name, e.message]; }
      };
      const plain = await ctx.createTensor({...f32([4]), readable: true, writable: true});
      await catchErr('notExportable', () => ctx.exportToGPU(plain));
      const b = new MLGraphBuilder(ctx);
      const g = await b.build({y: b.relu(b.input('x', f32([4])))});
      const t = await ctx.createExportableTensor({...f32([4]), readable: true, writable: true}, device);
      const buf = await ctx.exportToGPU(t);
      await catchErr('dispatchInput', () => ctx.dispatch(g, {x: t}, {y: plain}));
      await catchErr('dispatchOutput', () => ctx.dispatch(g, {x: plain}, {y: t}));
      await catchErr('read', () => ctx.readTensor(t));
      await catchErr('readInto', () => ctx.readTensor(t, new Float32Array(4)));
      await catchErr('write', () => ctx.writeTensor(t, new Float32Array(4)));
      buf.destroy();
      buf.destroy();   // idempotent, and still not a real free
      await catchErr('afterDestroy', () => ctx.readTensor(t));
      ctx.destroy();
      await catchErr('exportAfterContextDestroy', () => ctx.exportToGPU(t));
      await catchErr('createAfterContextDestroy', () => ctx.createExportableTensor(f32([4]), device));
      const syncThrow = (() => { try { ctx.exportToGPU(t).catch(() => {}); return false; } catch { return true; } })();
      return {errs, devices: g.devices, frozen: Object.isFrozen(g.devices), sameArray: g.devices === g.devices,
              plainDevice: plain.gpuDevice, syncThrow};
    """)
    errs = r["errs"]
    assert errs["notExportable"][0] == "TypeError" and "createExportableTensor" in errs["notExportable"][1]
    for name in ("dispatchInput", "dispatchOutput", "read", "readInto", "write"):
        assert errs[name] is not None and errs[name][0] == "TypeError", (name, errs[name])
        assert "exported to WebGPU" in errs[name][1] and "destroy()" in errs[name][1], (name, errs[name])
    assert errs["afterDestroy"] is None
    assert errs["exportAfterContextDestroy"][0] == "InvalidStateError"
    assert errs["createAfterContextDestroy"][0] == "InvalidStateError"
    assert r["devices"] == ["gpu"] and r["frozen"] and r["sameArray"]
    assert r["plainDevice"] is None and not r["syncThrow"]


def test_cannot_export_to_another_device(webnn_page, server_url):
    """A tensor's memory lives on its context's device: another device, a context with its own
    device, and another context's tensor are all refused."""
    r = ok(webnn_page, server_url, """
      const [devA, devB] = [await appDevice(), await appDevice()];
      const ctxA = await navigator.ml.createContext(devA);
      const ctxB = await navigator.ml.createContext(devB);
      const own = await navigator.ml.createContext();
      const errs = {};
      const catchErr = async (name, fn) => {
        try { await fn(); errs[name] = null; } catch (e) { errs[name] = [e.name, e.message]; }
      };
      await catchErr('otherDevice', () => ctxA.createExportableTensor(f32([2]), devB));
      await catchErr('ownDeviceContext', () => own.createExportableTensor(f32([2]), devA));
      await catchErr('notADevice', () => ctxA.createExportableTensor(f32([2]), {}));
      const tA = await ctxA.createExportableTensor(f32([2]), devA);
      await catchErr('otherContext', () => ctxB.exportToGPU(tA));
      const buf = await ctxA.exportToGPU(tA);
      // Using A's buffer on device B is a WebGPU validation error.
      devB.pushErrorScope('validation');
      const staging = devB.createBuffer({size: 8, usage: GPUBufferUsage.COPY_DST});
      const enc = devB.createCommandEncoder();
      enc.copyBufferToBuffer(buf, 0, staging, 0, 8);
      devB.queue.submit([enc.finish()]);
      const crossDeviceError = (await devB.popErrorScope()) !== null;
      buf.destroy();
      return {errs, crossDeviceError};
    """)
    for name in ("otherDevice", "ownDeviceContext", "notADevice", "otherContext"):
        assert r["errs"][name] is not None and r["errs"][name][0] == "TypeError", (name, r["errs"][name])
    assert "createContext(gpuDevice)" in r["errs"]["ownDeviceContext"][1]
    assert r["crossDeviceError"]


def test_app_destroying_its_device_loses_the_context(webnn_page, server_url):
    """createContext(gpuDevice): the app's device.destroy() loses the context; a lost device is refused."""
    r = ok(webnn_page, server_url, """
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const t = await ctx.createTensor({...f32([2]), readable: true});
      device.destroy();
      const info = await ctx.lost;
      const errs = {};
      try { await ctx.createTensor(f32([2])); } catch (e) { errs.create = e.name; }
      try { await ctx.readTensor(t); } catch (e) { errs.read = e.name; }
      await device.lost;
      try { await navigator.ml.createContext(device); } catch (e) { errs.context = [e.name, e.message]; }
      // destroyed in the same task as the call: refused too, not a context lost a moment later
      const fresh = await appDevice();
      fresh.destroy();
      try { await navigator.ml.createContext(fresh); errs.sameTask = 'resolved'; } catch (e) { errs.sameTask = e.name; }
      // MLContext.destroy() never destroys the application's device.
      const other = await appDevice();
      const ctx2 = await navigator.ml.createContext(other);
      ctx2.destroy();
      const stillAlive = await Promise.race([other.lost.then(() => false), new Promise((r) => setTimeout(() => r(true), 200))]);
      const buf = other.createBuffer({size: 4, usage: GPUBufferUsage.COPY_DST});
      return {message: info.message, errs, stillAlive, usable: buf.size === 4};
    """)
    assert "destroyed" in r["message"]
    assert r["errs"]["create"] == "InvalidStateError"
    assert r["errs"]["read"] in ("TypeError", "InvalidStateError")
    assert r["errs"]["context"][0] == "InvalidStateError" and "lost" in r["errs"]["context"][1]
    assert r["errs"]["sameTask"] == "InvalidStateError"
    assert r["stillAlive"] and r["usable"]


def test_read_pending_when_the_app_destroys_its_device(webnn_page, server_url):
    """A read in flight when the application destroys the context's device rejects with
    InvalidStateError (the context is lost), not UnknownError."""
    r = ok(webnn_page, server_url, """
      const device = await appDevice();
      const ctx = await navigator.ml.createContext(device);
      const t = await ctx.createTensor({...f32([4]), readable: true});
      const p = ctx.readTensor(t);
      device.destroy();
      try { await p; return 'resolved'; } catch (e) { return e.name; }
    """)
    assert r == "InvalidStateError"
