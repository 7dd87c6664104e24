/**
 * MLContext (spec §MLContext) on one GPUDevice: tensors, reads and writes, dispatch, limits.
 * Each context owns its BufferPool and PipelineCache; nothing is shared between contexts.
 */
import {domError, typeError} from './errors.js';
import {byteLength, bytesOf, sourceByteLength} from './dtypes.js';
import {checkDescriptor, checkTensorSize} from './shape/common.js';
import {BufferPool} from './gpu/buffer_pool.js';
import {Completion} from './gpu/completion.js';
import {PendingWrites} from './gpu/pending_writes.js';
import {PipelineCache} from './gpu/pipeline_cache.js';
import {captureErrors} from './gpu/error_scope.js';
import {MLTensor, createTensorObject, destroyTensor, isTensor, tensorSlots} from './tensor.js';
import {opSupportLimits} from './ops/support_limits.js';
import {maxTensorByteLength} from './gpu/device_limits.js';
import {destroyGraph, graphSlots, isGraph} from './graph.js';
import {checkExportDevice, checkNotExported, exportTensor} from './interop.js';
import {checkTensor, isDetached, validateNamed} from './context_checks.js';
import {FAULT_IN_BYTES, touchPages} from './host_memory.js';
import {DEFAULT_TUNING} from './tuning.js';

// The CPU context (cpu/backend.js) may run where WebGPU's globals are missing.
const TENSOR_USAGE = globalThis.GPUBufferUsage ? GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST : 0;

/** Rounds a byte length up to a multiple of 4 (WebGPU copy granularity), at least 4. */
export function paddedLength(bytes) {
  return Math.max(4, Math.ceil(bytes / 4) * 4);
}

const CONTEXT_SLOTS = new WeakMap();

/** @returns {object} the internal state of an MLContext */
export function contextSlots(context) {
  return CONTEXT_SLOTS.get(context);
}

export class MLContext {
  constructor() {
    throw new TypeError('Illegal constructor');
  }

  /**
   * @type {boolean} spec MLContext.accelerated: true when the work runs on a GPU (WebGPU), false
   * for the CPU context (cpu/backend.js)
   */
  get accelerated() { return !CONTEXT_SLOTS.get(this).cpu; }

  /** @type {Promise<{message: string}>} resolves when the context is lost or destroyed */
  get lost() { return CONTEXT_SLOTS.get(this).lostPromise; }

  /**
   * Spec createTensor(): a zero-filled tensor.
   * @param {{dataType: string, shape: number[], readable?: boolean, writable?: boolean}} descriptor
   * @returns {Promise<MLTensor>}
   * @throws (rejects) InvalidStateError when lost, TypeError for a bad descriptor or one whose
   *   byte length exceeds opSupportLimits().maxTensorByteLength, UnknownError when the GPU
   *   cannot allocate it
   */
  async createTensor(descriptor) {
    const s = liveSlots(this);
    const desc = checkTensorSize(checkDescriptor(descriptor, 'createTensor'), s.maxTensorByteLength, 'createTensor');
    return newTensor(this, s, desc, {
      readable: Boolean(descriptor.readable),
      writable: Boolean(descriptor.writable),
      constant: false,
    });
  }

  /**
   * Spec createConstantTensor(): a tensor holding a copy of `inputData`, usable only as a constant.
   * `inputData`: any AllowSharedBufferSource of exactly the tensor's byte length, whatever its
   * view type (Chromium 156; the draft also asks a matching view type).
   * @returns {Promise<MLTensor>}
   * @throws (rejects) TypeError for a bad or over-maxTensorByteLength descriptor, or inputData
   *   of another byte length
   */
  async createConstantTensor(descriptor, inputData) {
    const s = liveSlots(this);
    const desc = checkTensorSize(checkDescriptor(descriptor, 'createConstantTensor'), s.maxTensorByteLength, 'createConstantTensor');
    if (sourceByteLength(inputData) !== byteLength(desc)) {
      throw typeError('createConstantTensor', `inputData must be a buffer source of ${byteLength(desc)} bytes`);
    }
    const tensor = await newTensor(this, s, desc, {readable: false, writable: false, constant: true});
    if (!s.cpu) upload(s, tensorSlots(tensor).buffer, bytesOf(inputData));
    tensorSlots(tensor).bytes = bytesOf(inputData).slice();
    return tensor;
  }

  /**
   * Chromium 156 createExportableTensor(): a zero-filled tensor whose memory exportToGPU() can
   * hand to `gpuDevice` without a copy (see interop.js). `gpuDevice` must be the device this
   * context runs on, so the context must come from navigator.ml.createContext(gpuDevice).
   * @param {{dataType: string, shape: number[], readable?: boolean, writable?: boolean}} descriptor
   * @param {GPUDevice} gpuDevice
   * @returns {Promise<MLTensor>} a tensor whose `gpuDevice` is `gpuDevice`
   * @throws (rejects) InvalidStateError when the context is lost; TypeError for a bad descriptor,
   *   or a gpuDevice that is not this context's device (WebGPU cannot share a buffer between
   *   devices), or a byte length beyond maxTensorByteLength; UnknownError when the GPU cannot
   *   allocate it
   */
  async createExportableTensor(descriptor, gpuDevice) {
    const s = liveSlots(this);
    const desc = checkTensorSize(checkDescriptor(descriptor, 'createExportableTensor'), s.maxTensorByteLength, 'createExportableTensor');
    checkExportDevice(s, gpuDevice);
    return newTensor(this, s, desc, {
      readable: Boolean(descriptor.readable),
      writable: Boolean(descriptor.writable),
      constant: false,
      exportDevice: gpuDevice,
    });
  }

  /**
   * Chromium 156 exportToGPU(): the tensor's own GPUBuffer (usage STORAGE | COPY_SRC | COPY_DST,
   * size = byte length rounded up to 4) holding its elements packed row-major in the tensor
   * layout (float16/int8/uint8/int64 packed too: the application sees those bytes). No copy and
   * no CPU wait: the queue orders the WebNN work already submitted on the tensor before anything
   * the application submits after the promise resolves. Until the application calls destroy() on
   * the buffer, WebNN use of the tensor throws a TypeError; destroy() gives the tensor back to
   * WebNN without freeing its memory. Exporting an exported tensor returns the same buffer.
   * @param {MLTensor} tensor created by createExportableTensor() on this context
   * @returns {Promise<GPUBuffer>}
   * @throws (rejects) InvalidStateError when the context is lost or destroyed; TypeError for a
   *   tensor of another context, a destroyed tensor, or one not created by createExportableTensor()
   */
  async exportToGPU(tensor) {
    const s = liveSlots(this);
    const t = checkTensor(this, tensor, 'exportToGPU');
    s.pendingWrites?.flush();
    return exportTensor(t);
  }

  /**
   * Spec writeTensor(): queues a copy of `inputData` into the tensor. `inputData`: any
   * AllowSharedBufferSource of exactly the tensor's byte length, whatever its view type
   * (Chromium 156 MLContext::writeTensor compares byte lengths only). On hardware adapters a copy
   * of less than 64 KiB is held and written right before the context's next dispatch / readTensor /
   * exportToGPU (the upload then reaches the GPU process with the work that reads it); a larger one
   * goes into the tensor's mapped upload buffer and out at once (gpu/pending_writes.js).
   * @throws {TypeError} foreign/destroyed/non-writable tensor, mismatched data, tensor exported to WebGPU
   * @throws {DOMException} InvalidStateError when the context is lost
   */
  writeTensor(tensor, inputData) {
    const t = checkTensor(this, tensor, 'writeTensor');
    if (!t.writable) throw typeError('writeTensor', 'the tensor is not writable');
    if (sourceByteLength(inputData) !== byteLength(t.desc)) {
      throw typeError('writeTensor', `inputData must be a buffer source of ${byteLength(t.desc)} bytes`);
    }
    const s = liveSlots(this);
    checkNotExported(t, 'writeTensor');
    if (s.cpu) s.cpu.write(t, bytesOf(inputData));
    else if (s.tuning.deferWrites ?? s.completion.active) {
      // a write into the tensor's upload buffer goes out at once (gpu/pending_writes.js)
      const staged = s.pendingWrites.add(t, bytesOf(inputData), s.tuning.stageWrites);
      if (staged && !s.tuning.holdStagedWrites) s.pendingWrites.flush();
    }
    else {
      // writes held while holding was on (configureContext may turn fastReadback off) go out
      // first: flushed later, an older copy would replace this newer data
      s.pendingWrites.flush();
      upload(s, t.buffer, bytesOf(inputData));
    }
  }

  /**
   * Spec readTensor(tensor) and readTensor(tensor, outputData). `outputData`: any
   * AllowSharedBufferSource (DataView and views of other element types included) of at least the
   * tensor's byte length; its first byteLength bytes are filled, the rest left as they were
   * (Chromium 156 MLTensor::ReadTensorImpl; the 2026-06 draft asks an exact match).
   * @throws (rejects) TypeError for a foreign/destroyed/unreadable tensor or outputData smaller
   *   than the tensor
   * @returns {Promise<ArrayBuffer|undefined>} a new ArrayBuffer, or undefined after filling outputData
   */
  async readTensor(tensor, outputData) {
    const t = checkTensor(this, tensor, 'readTensor');
    if (!t.readable) throw typeError('readTensor', 'the tensor is not readable');
    if (outputData !== undefined && sourceByteLength(outputData) < byteLength(t.desc)) {
      throw typeError('readTensor', `outputData must be a buffer source of at least ${byteLength(t.desc)} bytes`);
    }
    const s = liveSlots(this);
    checkNotExported(t, 'readTensor');
    if (s.cpu) return s.cpu.read(t, outputData, isDetached);
    s.pendingWrites.flush();
    const size = byteLength(t.desc);
    const padded = paddedLength(size);
    // the result, allocated before anything is queued; its pages are faulted in while the GPU
    // works (host_memory.js; the tuning switch `faultInReads` false turns that off)
    const result = outputData === undefined ? new ArrayBuffer(size) : null;
    const staging = s.pool.acquire(padded, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'webnn:readTensor');
    const encoder = s.device.createCommandEncoder({label: 'webnn:readTensor'});
    encoder.copyBufferToBuffer(t.buffer, 0, staging, 0, padded);
    s.device.queue.submit([encoder.finish()]);
    let settle;
    const pending = new Promise((resolve, reject) => { settle = {resolve, reject}; });
    t.pending.add(settle);
    if (result && size >= FAULT_IN_BYTES && s.tuning.faultInReads) queueMicrotask(() => touchPages(result));
    s.completion.wait(staging.mapAsync(GPUMapMode.READ, 0, padded)).then(() => {
      if (!t.pending.has(settle)) return;
      t.pending.delete(settle);
      const bytes = new Uint8Array(staging.getMappedRange(0, padded), 0, size);
      if (result) {
        new Uint8Array(result).set(bytes);
        settle.resolve(result);
      } else if (isDetached(outputData)) {
        settle.reject(typeError('readTensor', 'outputData was detached while the read was pending'));
      } else {
        bytesOf(outputData).set(bytes);
        settle.resolve(undefined);
      }
    }, async (e) => {
      if (!t.pending.delete(settle)) return;
      // The staging buffer is ours and stays alive until the map settles, so an AbortError means
      // the device destroyed it. Otherwise give the device's `lost` promise, which settles in a
      // later task (later still on a loaded machine), up to a second before calling it unknown.
      const lost = Boolean(s.lostInfo) || e.name === 'AbortError' || await Promise.race([
        s.device.lost.then(() => true), new Promise((r) => setTimeout(() => r(false), 1000))]);
      settle.reject(lost ? domError('InvalidStateError', 'the context is lost', 'readTensor')
        : domError('UnknownError', `reading the tensor failed: ${e.message}`, 'readTensor'));
    }).finally(() => {
      if (staging.mapState === 'mapped') staging.unmap();
      s.pool.release([staging]);
    });
    return pending;
  }

  /**
   * Spec dispatch(): queues one execution of `graph` reading `inputs` and writing `outputs`
   * (records of name -> MLTensor). Writes held by writeTensor go out first (gpu/pending_writes.js),
   * then the compiled plan is encoded and submitted (compile/plan.js Plan.dispatch: one command
   * buffer, or several onto an idle queue on hardware adapters); where the context nudges queue
   * waits (gpu/completion.js), it then waits, nudged, for that work.
   * @throws {TypeError} foreign graph or tensors, duplicates, names or descriptors not matching,
   *   a tensor exported to WebGPU
   * @throws {DOMException} InvalidStateError for a destroyed graph or a lost context
   */
  dispatch(graph, inputs, outputs) {
    if (!isGraph(graph) || graphSlots(graph).context !== this) throw typeError('dispatch', 'the graph does not belong to this context');
    const g = graphSlots(graph);
    if (g.destroyed) throw domError('InvalidStateError', 'the graph is destroyed', 'dispatch');
    const s = liveSlots(this);
    const inputEntries = Object.entries(inputs ?? {});
    const outputEntries = Object.entries(outputs ?? {});
    const all = [...inputEntries, ...outputEntries].map(([, t]) => t);
    if (new Set(all).size !== all.length) throw typeError('dispatch', 'the same MLTensor is bound more than once');
    for (const t of all) {
      if (!isTensor(t) || tensorSlots(t).context !== this) throw typeError('dispatch', 'a tensor does not belong to this context');
      if (tensorSlots(t).destroyed) throw typeError('dispatch', 'a tensor is destroyed');
    }
    validateNamed(inputEntries, g.inputDescriptors, 'input');
    validateNamed(outputEntries, g.outputDescriptors, 'output');
    for (const t of all) checkNotExported(tensorSlots(t), 'dispatch');
    s.pendingWrites?.flush();
    g.plan.dispatch(s, Object.fromEntries(inputEntries.map(([n, t]) => [n, tensorSlots(t)])),
      Object.fromEntries(outputEntries.map(([n, t]) => [n, tensorSlots(t)])));
    s.completion?.afterSubmit();
  }

  /** Spec opSupportLimits(): exactly what this implementation supports. */
  opSupportLimits() {
    const s = CONTEXT_SLOTS.get(this);
    return s.cpu ? s.cpu.opSupportLimits() : opSupportLimits(s);
  }

  /** Spec destroy(): loses the context, destroying its graphs and tensors. Idempotent. */
  destroy() {
    const s = CONTEXT_SLOTS.get(this);
    if (s.lostInfo) return;
    loseContext(this, 'MLContext.destroy() was called');
  }

  get [Symbol.toStringTag]() { return 'MLContext'; }
}

/**
 * @returns {object} the context's slots, after checking it is not lost
 * @throws {DOMException} InvalidStateError when the context is lost
 */
function liveSlots(context) {
  const s = CONTEXT_SLOTS.get(context);
  if (s.lostInfo) throw domError('InvalidStateError', `the context is lost: ${s.lostInfo.message}`);
  return s;
}

/**
 * Allocates a tensor's buffer (zero-filled by WebGPU, as the spec requires).
 * @param {object} s the context's slots
 * @returns {Promise<MLTensor>}
 * @throws (rejects) UnknownError when the size exceeds maxBufferSize or the GPU cannot allocate it
 */
async function newTensor(context, s, desc, init) {
  if (s.cpu) return createTensorObject(context, s.tensors, desc, {bytes: new Uint8Array(byteLength(desc)), ...init});
  const size = paddedLength(byteLength(desc));
  if (size > s.device.limits.maxBufferSize) {
    throw domError('UnknownError', `a tensor of ${size} bytes exceeds the device's maxBufferSize (${s.device.limits.maxBufferSize})`, 'createTensor');
  }
  const {result: buffer, error} = captureErrors(s.device, () => s.device.createBuffer({
    size, usage: TENSOR_USAGE, label: `webnn:tensor[${desc.dataType} ${desc.shape}]`}));
  const failure = await error;
  if (failure || s.lostInfo) {
    buffer.destroy();
    if (s.lostInfo) throw domError('InvalidStateError', 'the context was lost while the tensor was created', 'createTensor');
    throw domError('UnknownError', `the GPU could not allocate ${size} bytes for the tensor: ${failure.message}`, 'createTensor');
  }
  return createTensorObject(context, s.tensors, desc, {buffer, ...init});
}

/** Queues a write of `bytes` to the start of `buffer` (padded to a multiple of 4 bytes). */
function upload(s, buffer, bytes) {
  if (bytes.byteLength % 4 === 0) {
    s.device.queue.writeBuffer(buffer, 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } else {
    const padded = new Uint8Array(paddedLength(bytes.byteLength));
    padded.set(bytes);
    s.device.queue.writeBuffer(buffer, 0, padded);
  }
}

/**
 * Loses the context (spec "lose the context"): destroys its graphs and tensors, frees its pools,
 * destroys a device of its own, and resolves `lost` with {message}. Idempotent.
 * @param {MLContext} context
 * @param {string} message the MLContextLostInfo message
 */
export function loseContext(context, message) {
  const s = CONTEXT_SLOTS.get(context);
  if (s.lostInfo) return;
  s.lostInfo = {message};
  for (const graph of [...s.graphs]) destroyGraph(graph);
  for (const tensor of [...s.tensors]) destroyTensor(tensor);
  if (s.cpu) {
    s.cpu.destroy();
  } else {
    s.pendingWrites.drop();
    s.pool.destroy();
    s.completion.destroy();
    if (s.ownsDevice) s.device.destroy();
  }
  s.resolveLost(s.lostInfo);
}

/** The slots every context has, whichever backend: its graphs and tensors, the lost promise, its tuning. */
function commonSlots(powerPreference, tuning) {
  let resolveLost;
  const lostPromise = new Promise((r) => { resolveLost = r; });
  // tuning: the frozen switches of tuning.js, replaced (never mutated) by configureContext()
  return {powerPreference, tuning, graphs: new Set(), tensors: new Set(), lostInfo: null, lostPromise, resolveLost, nextTensorId: 1};
}

/**
 * Creates an MLContext on `device`.
 * @param {GPUDevice} device
 * @param {{ownsDevice: boolean, adapterInfo?: object, powerPreference: string,
 *   polyfill?: {fastReadback?: boolean, profiling?: boolean, tuning?: object}}} options polyfill: this
 *   polyfill's own context options (options.js polyfillOptions; tuning: a frozen tuning.js object)
 * @returns {MLContext}
 */
export function createContextObject(device, {ownsDevice, adapterInfo, powerPreference, polyfill = {}}) {
  const context = Object.create(MLContext.prototype);
  const tuning = polyfill.tuning ?? DEFAULT_TUNING;
  const completion = new Completion(device, {adapterInfo, enabled: polyfill.fastReadback !== false, tuning});
  CONTEXT_SLOTS.set(context, {
    ...commonSlots(powerPreference, tuning),
    device,
    maxTensorByteLength: maxTensorByteLength(device),
    ownsDevice,
    adapterInfo,
    completion,
    pendingWrites: new PendingWrites(device),
    profilingRequested: Boolean(polyfill.profiling),
    profiling: Boolean(polyfill.profiling) && device.features.has('timestamp-query'),
    pool: new BufferPool(device, completion),
    pipelines: new PipelineCache(device),
  });
  // A device of our own is destroyed only by loseContext() itself; the application's device (createContext(gpuDevice))
  // may be destroyed by the application, which loses the context.
  device.lost.then((info) => {
    if (info.reason !== 'destroyed' || !ownsDevice) loseContext(context, `the GPUDevice was ${info.reason === 'destroyed' ? 'destroyed' : 'lost'}: ${info.message}`);
  });
  return context;
}


/**
 * Creates an MLContext whose graphs and tensors live on the CPU (cpu/backend.js): no GPUDevice;
 * tensors are ArrayBuffer-backed (`bytes` slot) and the backend owns reads, writes and graphs.
 * @param {object} backend {write(t, bytes), read(t, outputData, isDetached), compile(context, entries),
 *   opSupportLimits(), destroy(), maxTensorByteLength}
 * @param {{powerPreference: string}} options
 * @returns {MLContext}
 */
export function createCpuContextObject(backend, {powerPreference, tuning = DEFAULT_TUNING}) {
  const context = Object.create(MLContext.prototype);
  CONTEXT_SLOTS.set(context, {
    ...commonSlots(powerPreference, tuning),
    cpu: backend,
    device: null,
    maxTensorByteLength: backend.maxTensorByteLength,
  });
  return context;
}
