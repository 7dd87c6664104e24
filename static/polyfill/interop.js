/**
 * WebGPU interop, as Chromium 156 exposes it (no spec text yet; Chromium's MLContext and MLTensor
 * IDL): `navigator.ml.createContext(gpuDevice)`,
 * `MLContext.createExportableTensor(descriptor, gpuDevice)`, `MLContext.exportToGPU(tensor)`,
 * `MLTensor.gpuDevice`.
 *
 * Model (zero copy):
 *  - A context made by `createContext(gpuDevice)` records every GPU command on the application's
 *    GPUDevice and submits it to that device's queue. An exportable tensor's memory is a plain
 *    GPUBuffer of that device (usage STORAGE | COPY_SRC | COPY_DST) holding the tensor layout of
 *    dtypes.js: elements packed row-major, little-endian, exactly the bytes readTensor() returns.
 *  - exportToGPU() hands the application *that* GPUBuffer: nothing is copied, for every data type.
 *    float32, int32 and uint32 read directly as `array<f32|i32|u32>` in WGSL. The packed types are
 *    exported as they are stored, so the application sees the packed bytes: float16 two bytes per
 *    element (read it as `array<f16>` when the device has "shader-f16", otherwise as `array<u32>`
 *    with unpack2x16float), int8/uint8 one byte per element (`array<u32>` with unpack4xI8 /
 *    unpack4xU8 or shifts), int64/uint64 eight bytes (`array<vec2<u32>>`, low word first).
 *    `GPUBuffer.size` is the tensor's byte length rounded up to a multiple of 4 (at least 4), as
 *    WebGPU copies need; the bytes past the byte length are not part of the tensor.
 *  - Ordering is the queue's. The export promise resolves at once (no CPU wait): every WebNN
 *    command touching the tensor was submitted to the same queue before it resolves, so anything
 *    the application submits afterwards runs after that work and sees its results. Work the
 *    application submitted before a WebNN call does not see that call's results.
 *  - While exported, WebNN use of the tensor (dispatch, readTensor, writeTensor) throws a TypeError
 *    (as Chromium does) that says so. Calling `destroy()` on the exported GPUBuffer ends the export:
 *    the tensor is usable by WebNN again, with the application's writes in it, and its memory is
 *    not freed. Exporting again returns the same GPUBuffer object.
 *  - `MLTensor.destroy()` (or `MLContext.destroy()`) while exported does not pull the memory away
 *    from under the application: the tensor becomes unusable by WebNN at once, and the memory is
 *    freed when the application destroys the GPUBuffer. Otherwise the memory is freed at once;
 *    WebGPU keeps it alive for command buffers already submitted.
 *
 * How the GPUBuffer's destroy() is intercepted: the exported buffer gets an own, non-enumerable
 * `destroy` property shadowing `GPUBuffer.prototype.destroy`. Two consequences the polyfill
 * cannot prevent: calling `GPUBuffer.prototype.destroy.call(buffer)` really frees the tensor's
 * memory (the tensor then fails in WebNN as a destroyed buffer would), and the application can
 * still encode commands with the GPUBuffer object after destroy() — they then read or write the
 * tensor's memory behind WebNN's back (a native implementation would reject them as a use of a
 * destroyed buffer). Do neither.
 *
 * Only the context's own device can be given to createExportableTensor(): WebGPU cannot share one
 * buffer between two GPUDevices, so interop needs a context made by createContext(gpuDevice).
 */
import {domError, typeError} from './errors.js';

/**
 * Checks the gpuDevice argument of createExportableTensor().
 * @param {object} ctx context slots ({device, ownsDevice})
 * @param {*} gpuDevice
 * @throws {TypeError} gpuDevice is not a GPUDevice, or not the device the context runs on
 */
export function checkExportDevice(ctx, gpuDevice) {
  if (typeof GPUDevice === 'undefined' || !(gpuDevice instanceof GPUDevice)) {
    throw typeError('createExportableTensor', 'gpuDevice is not a GPUDevice');
  }
  if (gpuDevice !== ctx.device) {
    const hint = ctx.ownsDevice
      ? 'this MLContext runs on a GPUDevice of its own; create it with navigator.ml.createContext(gpuDevice) to share tensors with that device'
      : 'this MLContext runs on another GPUDevice; a tensor can only be exported to the device of its context';
    throw typeError('createExportableTensor', `gpuDevice cannot share memory with this MLContext: ${hint}`);
  }
}

/**
 * Throws when the tensor is exported to WebGPU (every WebNN use checks this).
 * @param {object} t tensor slots
 * @param {string} what the calling method, for the message prefix
 * @throws {TypeError}
 */
export function checkNotExported(t, what) {
  if (t.exported) {
    throw typeError(what, `the tensor [${t.desc.dataType} ${t.desc.shape}] is exported to WebGPU; `
      + 'call destroy() on the GPUBuffer that exportToGPU() returned to give it back to WebNN');
  }
}

/**
 * exportToGPU()'s work once the context and tensor are known to be usable: marks the tensor
 * exported and returns its own GPUBuffer. Already exported: returns the same buffer again.
 * @param {object} t tensor slots (exportDevice, buffer, exported)
 * @returns {GPUBuffer} the tensor's memory
 * @throws {TypeError} the tensor was not created by createExportableTensor()
 */
export function exportTensor(t) {
  if (!t.exportDevice) {
    throw typeError('exportToGPU', 'the tensor was not created by createExportableTensor(), so it cannot be exported to WebGPU');
  }
  if (!t.exported) {
    interceptDestroy(t);
    t.exported = true;
  }
  return t.buffer;
}

/**
 * Frees a tensor's GPUBuffer when MLTensor.destroy() runs; an exported buffer stays with the
 * application until it destroys it (see the module comment).
 * @param {object} t tensor slots
 */
export function releaseTensorMemory(t) {
  if (t.exported) return; // freed by endExport() when the application lets go
  if (!t.buffer) {
    t.bytes = null; // a CPU context's tensor (cpu/backend.js): work already queued keeps its reference
    return;
  }
  freeBuffer(t.buffer);
}

/** Intercepts the application's destroy() of the buffer (installed once per tensor). */
function interceptDestroy(t) {
  if (t.destroyIntercepted) return;
  t.destroyIntercepted = true;
  Object.defineProperty(t.buffer, 'destroy', {
    configurable: true,
    enumerable: false,
    writable: false,
    value: function destroy() { endExport(t); },
  });
}

/**
 * The application destroyed the exported GPUBuffer: WebNN may use the tensor again, or, when
 * the tensor was destroyed meanwhile, its memory is freed now. Repeated calls do nothing, as
 * WebGPU's destroy() is idempotent.
 */
function endExport(t) {
  if (!t.exported) return;
  t.exported = false;
  if (t.destroyed) freeBuffer(t.buffer);
}

/** Really frees a tensor's buffer, bypassing the intercepted destroy(). */
function freeBuffer(buffer) {
  GPUBuffer.prototype.destroy.call(buffer);
}

/**
 * Rejects createContext(gpuDevice) for a device that is already lost or destroyed.
 * GPUDevice.lost settles asynchronously: after one queue round trip a device destroyed before
 * this call has a settled `lost`, which wins the race against an already-resolved promise
 * (reactions run in subscription order).
 * @param {GPUDevice} device
 * @returns {Promise<void>}
 * @throws (rejects) InvalidStateError when the device is lost
 */
export async function checkDeviceAlive(device) {
  // A device destroyed in this very task reports it only after the GPU process answers: one
  // queue round trip lets `lost` settle first.
  await device.queue.onSubmittedWorkDone().catch(() => {});
  const lost = await Promise.race([device.lost, undefined]);
  if (lost) {
    throw domError('InvalidStateError', `the GPUDevice is lost (${lost.reason}): ${lost.message}`, 'createContext');
  }
}
