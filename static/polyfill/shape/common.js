/**
 * Shape math shared by every op family: descriptor checks, broadcasting, axes.
 * Pure functions, no GPU. Each throws a TypeError prefixed with the operator's label.
 */
import {typeError} from '../errors.js';
import {DESCRIPTOR_TYPES, DATA_TYPES, MAX_DIMENSION, MAX_RANK, byteLength, elementCount} from '../dtypes.js';

/**
 * Spec "check dimensions" for an MLOperandDescriptor: a known data type, every dimension a valid
 * dimension (integer in 1..2^31-1), rank at most MAX_RANK, element count a valid dimension.
 * @returns {{dataType: string, shape: number[]}} a normalised copy
 * @throws {TypeError}
 */
export function checkDescriptor(desc, label) {
  if (desc === null || typeof desc !== 'object') throw typeError(label, 'descriptor must be an MLOperandDescriptor');
  // the members' former names (type, dimensions), which older WebNN code still passes
  if (desc.dataType === undefined && desc.type !== undefined) {
    throw typeError(label, 'descriptor.dataType is missing (MLOperandDescriptor is {dataType, shape}; type and dimensions are their former names)');
  }
  const dataType = enumValue(desc.dataType, DESCRIPTOR_TYPES, undefined, label, 'dataType');
  const {shape} = desc;
  if (shape === null || typeof shape !== 'object' || typeof shape[Symbol.iterator] !== 'function') {
    throw typeError(label, 'descriptor.shape must be a sequence of dimensions');
  }
  // sequence<[EnforceRange] unsigned long>: ToNumber and truncation, then "valid dimension".
  const dims = [...shape].map((d) => checkUnsigned(d, label, 'dimension'));
  if (dims.length > MAX_RANK) throw typeError(label, `rank ${dims.length} exceeds the supported maximum ${MAX_RANK}`);
  for (const d of dims) {
    if (d < 1 || d > MAX_DIMENSION) throw typeError(label, `invalid dimension ${d} in shape [${dims}]`);
  }
  const count = elementCount(dims);
  if (count > MAX_DIMENSION) throw typeError(label, `element count ${count} of shape [${dims}] is too large`);
  if (count * DATA_TYPES[dataType].bytes > Number.MAX_SAFE_INTEGER) throw typeError(label, 'byte length too large');
  return {dataType, shape: dims};
}

/**
 * A context's size limit (its backend's `tensorLimit`): a tensor is supported when its elements
 * take at most `maxTensorByteLength` bytes at `elementBytes[dataType]` bytes each, the size the
 * backend holds an element of that type in while it computes (WebGPU: the compute layout,
 * dtypes.js COMPUTE_ELEMENT_BYTES). For a type held at its own size that is its tensor-layout
 * byte length; a widened type's limit in tensor-layout bytes is smaller (typeByteLimit).
 * @typedef {{maxTensorByteLength: number, elementBytes: Readonly<Record<string, number>>}} TensorLimit
 */

/**
 * The largest tensor-layout byte length a `dataType` tensor may have under `limit`.
 * @param {string} dataType
 * @param {TensorLimit} limit
 * @returns {number} bytes
 */
export function typeByteLimit(dataType, limit) {
  const elements = Math.floor(limit.maxTensorByteLength / limit.elementBytes[dataType]);
  return Math.ceil(elements * DATA_TYPES[dataType].bytes);
}

/**
 * Spec "check dimensions", applied to every operand a builder makes (inputs, constants and each
 * operator's outputs) and to every tensor a context creates: each dimension an integer in
 * 1..2^31-1, rank at most MAX_RANK, element count a valid dimension, and the byte length
 * supported: the elements' bytes as the backend holds them within `limit` (see TensorLimit).
 * @param {{dataType: string, shape: number[]}} desc an already converted descriptor
 * @param {TensorLimit} limit the context's
 * @returns {{dataType: string, shape: number[]}} desc
 * @throws {TypeError} `[label] ...` naming the shape and the limit
 */
export function checkTensorSize(desc, limit, label) {
  const {dataType, shape} = desc;
  if (shape.length > MAX_RANK) throw typeError(label, `output rank ${shape.length} exceeds the supported maximum ${MAX_RANK}`);
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 1 || d > MAX_DIMENSION) throw typeError(label, `dimension ${d} of shape [${shape}] is not a valid dimension`);
  }
  const count = elementCount(shape);
  if (count > MAX_DIMENSION) throw typeError(label, `element count ${count} of shape [${shape}] is too large`);
  const max = limit.maxTensorByteLength;
  const elementBytes = limit.elementBytes[dataType];
  if (count * elementBytes <= max) return desc;
  const a = `${dataType.startsWith('int') ? 'an' : 'a'} ${dataType} tensor`;
  if (elementBytes === DATA_TYPES[dataType].bytes) {
    throw typeError(label, `${a} of shape [${shape}] is ${byteLength(desc)} bytes, more than maxTensorByteLength (${max})`);
  }
  const most = Math.floor(max / elementBytes);
  throw typeError(label, `${a} of shape [${shape}] has ${count} elements (${byteLength(desc)} bytes); ${a} may have at most `
    + `${most} (${typeByteLimit(dataType, limit)} bytes): this context holds each ${dataType} element in `
    + `${elementBytes === 1 ? 'one byte' : `${elementBytes} bytes`} while it computes, and maxTensorByteLength (${max}) bounds those bytes`);
}

/** Whether two shapes (dimension lists) are equal. */
export function sameShape(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Spec "bidirectionally broadcasting" two shapes (NumPy rules).
 * @returns {number[]} the broadcast shape
 * @throws {TypeError} when the shapes are not compatible
 */
export function broadcastShapes(a, b, label) {
  const rank = Math.max(a.length, b.length);
  const out = new Array(rank);
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw typeError(label, `shapes [${a}] and [${b}] are not broadcastable`);
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/**
 * Spec "unidirectionally broadcastable": can `from` be broadcast to `to` without changing `to`?
 * @returns {boolean}
 */
export function unidirectionallyBroadcastable(from, to) {
  if (from.length > to.length) return false;
  for (let i = 0; i < from.length; i++) {
    const f = from[from.length - 1 - i];
    const t = to[to.length - 1 - i];
    if (f !== t && f !== 1) return false;
  }
  return true;
}

/**
 * Element strides (row-major) of `shape`, with 0 for the dimensions that `shape` broadcasts over
 * when read as `outShape` (dimensions missing on the left or equal to 1 where out is larger).
 * @returns {number[]} one stride per dimension of outShape
 */
export function broadcastStrides(shape, outShape) {
  const strides = new Array(outShape.length).fill(0);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    const o = outShape.length - shape.length + i;
    strides[o] = shape[i] === 1 && outShape[o] !== 1 ? 0 : s;
    s *= shape[i];
  }
  return strides;
}

/** Row-major element strides of a shape. */
export function stridesOf(shape) {
  const strides = new Array(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/**
 * Converts an argument as WebIDL converts to an enum type (MLOperandDataType, MLPaddingMode,
 * MLInputOperandLayout, ...): ToString (a TypeError for a Symbol), then a TypeError unless the
 * string is one of `allowed`. `undefined` gives `fallback` when one is passed (an optional
 * dictionary member with a default).
 * @param {unknown} value
 * @param {readonly string[]} allowed the enum's values
 * @param {string|undefined} fallback
 * @returns {string} the enum value
 * @throws {TypeError} `[label] what "value" is not one of ...`
 */
export function enumValue(value, allowed, fallback, label, what) {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value === 'symbol') throw typeError(label, `${what} must be a string`);
  const v = String(value);
  if (!allowed.includes(v)) throw typeError(label, `${what} "${v}" is not one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  return v;
}

/**
 * Converts an argument as WebIDL's `[EnforceRange] unsigned long` does: ToNumber, a TypeError for
 * NaN, ±Infinity or a value outside [0, 2^32 - 1] after truncation towards zero (1.9 -> 1).
 * @returns {number} the converted integer
 * @throws {TypeError}
 */
export function checkUnsigned(value, label, what) {
  if (typeof value === 'bigint' || typeof value === 'symbol') throw typeError(label, `${what} must be a number`);
  const n = Number(value);
  if (!Number.isFinite(n)) throw typeError(label, `${what} must be a finite number, got ${String(value)}`);
  const t = Math.trunc(n) + 0;
  if (t < 0 || t > 0xffffffff) throw typeError(label, `${what} ${t} is out of the range of unsigned long`);
  return t;
}

/** Converts a sequence of `[EnforceRange] unsigned long` of optional fixed length. */
export function checkUnsignedList(list, label, what, length) {
  if (list === null || typeof list !== 'object' || typeof list[Symbol.iterator] !== 'function') {
    throw typeError(label, `${what} must be a sequence of unsigned integers`);
  }
  const values = [...list];
  if (length !== undefined && values.length !== length) {
    throw typeError(label, `${what} must have ${length} elements, got ${values.length}`);
  }
  return values.map((v) => checkUnsigned(v, label, what));
}

/**
 * Checks axes: each in [0, rank), no duplicates.
 * @returns {number[]}
 */
export function checkAxes(axes, rank, label, what = 'axes') {
  return checkDistinctAxes(checkUnsignedList(axes, label, what), rank, label, what);
}

/**
 * Checks already converted axes (non-negative integers): each below `rank`, none twice.
 * @returns {number[]} `axes`
 * @throws {TypeError}
 */
export function checkDistinctAxes(axes, rank, label, what = 'axes') {
  const seen = new Set();
  for (const a of axes) {
    if (a >= rank) throw typeError(label, `${what} value ${a} is out of range for rank ${rank}`);
    if (seen.has(a)) throw typeError(label, `${what} contains ${a} twice`);
    seen.add(a);
  }
  return axes;
}

/** Checks that `dataType` is among `allowed`. */
export function checkDataType(operand, allowed, label, what = 'input') {
  if (!allowed.includes(operand.dataType)) {
    throw typeError(label, `${what} data type ${operand.dataType} is not one of ${allowed.join(', ')}`);
  }
}

/** Checks the rank of an operand against an exact value or a [min, max] range. */
export function checkRank(operand, rank, label, what = 'input') {
  const r = operand.shape.length;
  const ok = Array.isArray(rank) ? r >= rank[0] && r <= rank[1] : r === rank;
  if (!ok) throw typeError(label, `${what} rank ${r} is not ${Array.isArray(rank) ? `in [${rank}]` : rank}`);
}
