/**
 * MLTensor (spec §MLTensor): a GPUBuffer owned by an MLContext holding the tensor's elements packed
 * row-major (the bytes of the matching ArrayBufferView; see dtypes.js).
 */

const SLOTS = new WeakMap();

/** @returns {object} internal slots of an MLTensor */
export function tensorSlots(tensor) {
  return SLOTS.get(tensor);
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
    const s = SLOTS.get(this);
    if (s.destroyed) return;
    s.destroyed = true;
    s.context._releaseTensor(this);
  }

  get [Symbol.toStringTag]() { return 'MLTensor'; }
}

/**
 * Creates an MLTensor.
 * @param {object} context the owning MLContext
 * @param {{dataType: string, shape: number[]}} desc
 * @param {{buffer: GPUBuffer, readable: boolean, writable: boolean, constant: boolean, exportDevice?: GPUDevice}} init
 *   exportDevice: set for createExportableTensor() tensors (interop.js adds `exported` and
 *   `destroyIntercepted` while they are exported)
 * @returns {MLTensor}
 */
export function createTensorObject(context, desc, init) {
  const tensor = Object.create(MLTensor.prototype);
  SLOTS.set(tensor, {
    context,
    desc: {dataType: desc.dataType, shape: desc.shape.slice()},
    frozenShape: Object.freeze(desc.shape.slice()),
    destroyed: false,
    exported: false,
    pending: new Set(),
    ...init,
  });
  return tensor;
}
