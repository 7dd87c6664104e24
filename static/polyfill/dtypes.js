/**
 * MLOperandDataType facts: byte sizes, ArrayBufferView compatibility, and how each type is
 * stored inside the GPU plan.
 *
 * Spec: "MLOperandDataType and ArrayBufferView compatibility" appendix.
 *
 * Two representations exist:
 *  - the *tensor* layout: an MLTensor's GPUBuffer holds the elements packed row-major, exactly the
 *    bytes of the matching ArrayBufferView (float16 two bytes, int8 one, int64 eight; int4 and
 *    uint4 two elements a byte, the first in the low nibble, a last odd element's high nibble
 *    zero, as Chromium packs them). This is what readTensor/writeTensor/exportToGPU see.
 *  - the *compute* layout used between steps of a compiled graph: one 32-bit word per element for
 *    every type narrower than 64 bits (`f32` for float32 and float16, `i32` for int32, int8 and int4,
 *    `u32` for uint32, uint8 and uint4), two words (lo, hi) for int64/uint64. float16 values stay exactly
 *    representable in binary16 because every step rounds its float16 results when storing them.
 *  The two coincide for float32, int32, uint32, int64 and uint64; float16, int8, uint8, int4 and
 *  uint4 are converted at graph boundaries.
 *
 * int4 and uint4 are not in the WebNN spec's MLOperandDataType; Chromium has them (graph inputs,
 * constants, outputs, MLTensors, dequantizeLinear's input and zeroPoint, quantizeLinear's
 * zeroPoint) and ONNX Runtime Web's WebNN EP depends on them for 4-bit weights, so we follow
 * Chromium. Their ArrayBufferView is Uint8Array (Chromium's), byte length ceil(n / 2).
 */

/**
 * bytes: per element in the tensor layout (0.5 for the 4-bit types; byteLength() rounds up).
 * @type {Record<string, {bytes: number, view: Function, compute: string, words: number, float: boolean, signed: boolean}>}
 */
export const DATA_TYPES = Object.freeze({
  float32: {bytes: 4, view: Float32Array, compute: 'f32', words: 1, float: true, signed: true},
  float16: {bytes: 2, view: globalThis.Float16Array ?? Uint16Array, compute: 'f32', words: 1, float: true, signed: true},
  int32: {bytes: 4, view: Int32Array, compute: 'i32', words: 1, float: false, signed: true},
  uint32: {bytes: 4, view: Uint32Array, compute: 'u32', words: 1, float: false, signed: false},
  int64: {bytes: 8, view: BigInt64Array, compute: 'i64', words: 2, float: false, signed: true},
  uint64: {bytes: 8, view: BigUint64Array, compute: 'u64', words: 2, float: false, signed: false},
  int8: {bytes: 1, view: Int8Array, compute: 'i32', words: 1, float: false, signed: true},
  uint8: {bytes: 1, view: Uint8Array, compute: 'u32', words: 1, float: false, signed: false},
  int4: {bytes: 0.5, view: Uint8Array, compute: 'i32', words: 1, float: false, signed: true},
  uint4: {bytes: 0.5, view: Uint8Array, compute: 'u32', words: 1, float: false, signed: false},
});

/**
 * The spec's MLOperandDataType values, in spec order: every type of at least 8 bits, what the
 * operators that move or compute any type accept (Chromium's "all data types at least 8 bits").
 */
export const ALL_TYPES = Object.freeze(['float32', 'float16', 'int32', 'uint32', 'int64', 'uint64', 'int8', 'uint8']);
/** The 4-bit types Chromium adds (see above). */
export const INT4_TYPES = Object.freeze(['int4', 'uint4']);
/** Every data type an MLOperandDescriptor may name: ALL_TYPES and the 4-bit types. */
export const DESCRIPTOR_TYPES = Object.freeze([...ALL_TYPES, ...INT4_TYPES]);
export const FLOAT_TYPES = Object.freeze(['float32', 'float16']);

/** @returns {boolean} whether `t` is an MLOperandDataType */
export function isDataType(t) {
  return typeof t === 'string' && Object.prototype.hasOwnProperty.call(DATA_TYPES, t);
}

/** Number of elements of a shape (1 for rank 0). */
export function elementCount(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Byte length of an MLOperandDescriptor in the tensor layout (spec "byte length"; ceil(n / 2) for 4-bit). */
export function byteLength(desc) {
  return Math.ceil(elementCount(desc.shape) * DATA_TYPES[desc.dataType].bytes);
}

/** Byte length of a value of this descriptor in the compute layout (4 or 8 bytes per element). */
export function computeByteLength(desc) {
  return elementCount(desc.shape) * COMPUTE_ELEMENT_BYTES[desc.dataType];
}

/**
 * Bytes one element of each data type takes in the compute layout: one 32-bit word, two for
 * int64/uint64. The WebGPU context's maxTensorByteLength bounds a tensor's bytes in this layout
 * (gpu/device_limits.js), so a float16 tensor may take half of it in tensor-layout bytes, an
 * int8/uint8 one a quarter and an int4/uint4 one an eighth.
 * @type {Readonly<Record<string, number>>}
 */
export const COMPUTE_ELEMENT_BYTES = Object.freeze(Object.fromEntries(
  Object.entries(DATA_TYPES).map(([type, info]) => [type, 4 * info.words])));

/** Whether the tensor layout of `dataType` is also its compute layout (no conversion at boundaries). */
export function isDirect(dataType) {
  return DATA_TYPES[dataType].bytes === 4 || DATA_TYPES[dataType].bytes === 8;
}

/**
 * Spec "validate buffer with descriptor": the byte length must match, and an ArrayBufferView
 * must be a Uint8Array or the view type matching the data type (Uint8Array for int4/uint4).
 * @returns {boolean}
 */
export function bufferMatches(source, desc) {
  const info = DATA_TYPES[desc.dataType];
  let length;
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && source instanceof SharedArrayBuffer)) {
    length = source.byteLength;
  } else if (ArrayBuffer.isView(source)) {
    length = source.byteLength;
    const ok = source instanceof Uint8Array && source.constructor === Uint8Array
      || source instanceof info.view
      || (desc.dataType === 'float16' && source instanceof Uint16Array);
    if (!ok) return false;
  } else {
    return false;
  }
  return length === byteLength(desc);
}

/**
 * Byte length of an AllowSharedBufferSource (ArrayBuffer, SharedArrayBuffer or any
 * ArrayBufferView, DataView included), or -1 for anything else. The tensor methods compare only
 * this length, whatever the view's element type, as Chromium 156 does (README, decisions).
 * @returns {number} bytes
 */
export function sourceByteLength(source) {
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && source instanceof SharedArrayBuffer)) {
    return source.byteLength;
  }
  return ArrayBuffer.isView(source) ? source.byteLength : -1;
}

/** A Uint8Array over the bytes of an AllowSharedBufferSource (no copy). */
export function bytesOf(source) {
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  return new Uint8Array(source);
}

/** Largest valid dimension / element count (spec "valid dimension": in the range of long). */
export const MAX_DIMENSION = 2 ** 31 - 1;
/** Highest rank we support (spec leaves it to the implementation). */
export const MAX_RANK = 8;
