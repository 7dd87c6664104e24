/**
 * MLTensor (spec §MLTensor): a GPUBuffer owned by an MLContext holding the tensor's elements packed
 * row-major (the bytes of the matching ArrayBufferView; see dtypes.js).
 */
import {domError} from './errors.js';
import {releaseTensorMemory} from './interop.js';

const SLOTS = new WeakMap();

/** @returns {object} internal slots of an MLTensor */
export function tensorSlots(tensor) {
  return SLOTS.get(tensor);
}

/**
 * The tensor-layout bytes of a constant operand (its slots): the builder's copy, or those of the
 * MLTensor it was made from (builder.constant(tensor)).
 * @returns {Uint8Array|ArrayBufferView}
 */
export function constantBytes(operandSlots) {
  return operandSlots.tensor ? tensorSlots(operandSlots.tensor).bytes : operandSlots.bytes;
}

/** @returns {boolean} */
export function isTensor(value) {
  return SLOTS.has(value);
}

export class MLTensor {
  constructor() {
    throw new TypeError('Illegal constructor');
  }

  /** @type {string} MLOperandDataType */
  get dataType() { return SLOTS.get(this).desc.dataType; }
  /** @type {number[]} */
  get shape() { return SLOTS.get(this).frozenShape; }
  /** @type {boolean} readTensor allowed */
  get readable() { return SLOTS.get(this).readable; }
  /** @type {boolean} writeTensor allowed */
  get writable() { return SLOTS.get(this).writable; }
  /** @type {boolean} created by createConstantTensor */
  get constant() { return SLOTS.get(this).constant; }
  /**
   * Chromium 156 MLTensor.gpuDevice: the GPUDevice given to createExportableTensor(), or null for
   * a tensor that cannot be exported.
   * @type {GPUDevice|null}
   */
  get gpuDevice() { return SLOTS.get(this).exportDevice ?? null; }

  /**
   * Spec MLTensor.destroy(): rejects pending reads; later WebNN use throws. The memory is freed
   * (WebGPU keeps it for commands already submitted), except while the tensor is exported to
   * WebGPU: then it is freed when the application destroys the exported GPUBuffer (interop.js).
   * Idempotent.
   */
  destroy() {
    destroyTensor(this);
  }

  get [Symbol.toStringTag]() { return 'MLTensor'; }
}

/**
 * MLTensor.destroy() (also used by context.js when the context is lost, so that a page replacing
 * MLTensor.prototype.destroy changes nothing): rejects pending reads with InvalidStateError,
 * removes the tensor from its context's live set and frees the memory (WebGPU keeps it for
 * command buffers already submitted); an exported tensor's memory is freed only when the
 * application destroys the GPUBuffer it holds (interop.js). Idempotent.
 * @param {MLTensor} tensor
 */
export function destroyTensor(tensor) {
  const s = SLOTS.get(tensor);
  if (s.destroyed) return;
  s.destroyed = true;
  for (const p of s.pending) p.reject(domError('InvalidStateError', 'the tensor was destroyed', 'readTensor'));
  s.pending.clear();
  s.liveTensors.delete(tensor);
  // writeTensor's upload buffer (gpu/pending_writes.js): WebGPU frees it after copies already submitted
  s.uploadStaging?.buffer.destroy();
  s.uploadStaging = null;
  releaseTensorMemory(s);
}

/**
 * Creates an MLTensor.
 * @param {object} context the owning MLContext
 * @param {Set<MLTensor>} liveTensors the context's set of live tensors: the tensor is added, and
 *   removed again by destroyTensor()
 * @param {{dataType: string, shape: number[]}} desc
 * @param {{buffer: GPUBuffer, readable: boolean, writable: boolean, constant: boolean, exportDevice?: GPUDevice}} init
 *   exportDevice: set for createExportableTensor() tensors (interop.js adds `exported` and
 *   `destroyIntercepted` while they are exported)
 * @returns {MLTensor}
 */
export function createTensorObject(context, liveTensors, desc, init) {
  const tensor = Object.create(MLTensor.prototype);
  SLOTS.set(tensor, {
    context,
    liveTensors,
    desc: {dataType: desc.dataType, shape: desc.shape.slice()},
    frozenShape: Object.freeze(desc.shape.slice()),
    destroyed: false,
    exported: false,
    pending: new Set(),
    ...init,
  });
  liveTensors.add(tensor);
  return tensor;
}
