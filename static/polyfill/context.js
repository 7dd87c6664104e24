/**
 * MLContext (spec §MLContext): tensors, reads and writes, dispatch, limits, loss. Validation is
 * here; the work goes to the context's backend, chosen once when it is made (ml.js): the WebGPU
 * backend (webgpu_backend.js) or the CPU backend (cpu/backend.js). See createContextObject.
 */
import {domError, typeError} from './errors.js';
import {byteLength, bytesOf, sourceByteLength} from './dtypes.js';
import {checkDescriptor, checkTensorSize} from './shape/common.js';
import {MLTensor, createTensorObject, destroyTensor, isTensor, tensorSlots} from './tensor.js';
import {destroyGraph, graphSlots, isGraph} from './graph.js';
import {checkExportDevice, checkNotExported, exportTensor} from './interop.js';
import {checkTensor, validateNamed} from './context_checks.js';
import {DEFAULT_TUNING} from './tuning.js';

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
  get accelerated() { return CONTEXT_SLOTS.get(this).backend.accelerated; }

  /** @type {Promise<{message: string}>} resolves when the context is lost or destroyed */
  get lost() { return CONTEXT_SLOTS.get(this).lostPromise; }

  /**
   * Spec createTensor(): a zero-filled tensor.
   * @param {{dataType: string, shape: number[], readable?: boolean, writable?: boolean}} descriptor
   * @returns {Promise<MLTensor>}
   * @throws (rejects) InvalidStateError when lost, TypeError for a bad descriptor or one of a
   *   byte length the context does not support (shape/common.js checkTensorSize:
   *   opSupportLimits().maxTensorByteLength, less for the types its backend widens), UnknownError
   *   when the GPU cannot allocate it
   */
  async createTensor(descriptor) {
    const s = liveSlots(this);
    const desc = checkTensorSize(checkDescriptor(descriptor, 'createTensor'), s.tensorLimit, 'createTensor');
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
   * @throws (rejects) TypeError for a bad or unsupported descriptor (as createTensor), or inputData
   *   of another byte length
   */
  async createConstantTensor(descriptor, inputData) {
    const s = liveSlots(this);
    const desc = checkTensorSize(checkDescriptor(descriptor, 'createConstantTensor'), s.tensorLimit, 'createConstantTensor');
    if (sourceByteLength(inputData) !== byteLength(desc)) {
      throw typeError('createConstantTensor', `inputData must be a buffer source of ${byteLength(desc)} bytes`);
    }
    const tensor = await newTensor(this, s, desc, {readable: false, writable: false, constant: true});
    s.backend.writeConstant(tensorSlots(tensor), bytesOf(inputData));
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
   *   devices), or an unsupported byte length (as createTensor); UnknownError when the GPU cannot
   *   allocate it
   */
  async createExportableTensor(descriptor, gpuDevice) {
    const s = liveSlots(this);
    const desc = checkTensorSize(checkDescriptor(descriptor, 'createExportableTensor'), s.tensorLimit, 'createExportableTensor');
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
    s.backend.flush();
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
    s.backend.write(t, bytesOf(inputData));
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
    return s.backend.read(t, outputData);
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
    for (const [kind, entries] of [['input', inputEntries], ['output', outputEntries]]) {
      for (const [name, t] of entries) {
        // WebIDL's record<USVString, MLTensor>: a typed array (MLContext.compute()'s) is no MLTensor
        if (!isTensor(t)) throw typeError('dispatch', `${kind} "${name}" is not an MLTensor (createTensor() makes one)`);
        if (tensorSlots(t).context !== this) throw typeError('dispatch', `${kind} "${name}": the tensor belongs to another context`);
        if (tensorSlots(t).destroyed) throw typeError('dispatch', `${kind} "${name}": the tensor is destroyed`);
      }
    }
    validateNamed(inputEntries, g.inputDescriptors, 'input');
    validateNamed(outputEntries, g.outputDescriptors, 'output');
    for (const t of all) checkNotExported(tensorSlots(t), 'dispatch');
    s.backend.dispatch(g.plan, Object.fromEntries(inputEntries.map(([n, t]) => [n, tensorSlots(t)])),
      Object.fromEntries(outputEntries.map(([n, t]) => [n, tensorSlots(t)])));
  }

  /** Spec opSupportLimits(): exactly what this implementation supports. */
  opSupportLimits() {
    return CONTEXT_SLOTS.get(this).backend.opSupportLimits();
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
 * A new tensor whose memory the backend allocates (a zero-filled GPU buffer or ArrayBuffer).
 * @returns {Promise<MLTensor>}
 * @throws (rejects) what the backend's allocate() throws (UnknownError, InvalidStateError)
 */
async function newTensor(context, s, desc, init) {
  return createTensorObject(context, s.tensors, desc, {...await s.backend.allocate(desc), ...init});
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
  s.backend.destroy();
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
 * Creates an MLContext on `backend`, the one object that allocates, writes, reads, dispatches and
 * compiles for it: the WebGPU backend (webgpu_backend.js) or the CPU backend (cpu/backend.js),
 * chosen once by ml.js. Both implement
 *   accelerated, tensorLimit, attach(context, slots), allocate(desc),
 *   writeConstant(t, bytes), write(t, bytes), read(t, outputData), flush(),
 *   dispatch(plan, inputs, outputs), compile(context, entries), opSupportLimits(), destroy()
 * (t: tensor slots; inputs/outputs: name -> tensor slots). `tensorLimit` (shape/common.js
 * TensorLimit) is the size check of every tensor the context creates and operand its builders
 * make, and gives opSupportLimits() its maxTensorByteLength.
 * @param {object} backend
 * @param {{powerPreference: string, tuning?: object, slots?: object}} options tuning: a frozen
 *   tuning.js object; slots: the backend's own context slots (the WebGPU device, pool, ...)
 * @returns {MLContext}
 */
export function createContextObject(backend, {powerPreference, tuning = DEFAULT_TUNING, slots = {}}) {
  const context = Object.create(MLContext.prototype);
  const s = {...commonSlots(powerPreference, tuning), ...slots, backend, tensorLimit: backend.tensorLimit};
  CONTEXT_SLOTS.set(context, s);
  backend.attach(context, s);
  return context;
}
