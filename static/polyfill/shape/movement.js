/**
 * Shape inference and validation of the data-movement operators (spec §reshape, §transpose,
 * §concat, §slice, §split, §expand, §tile, §reverse, §pad), and the index plan shared by their
 * kernels. Pure functions, no GPU; every check throws a TypeError prefixed with `[label]`.
 */
import {typeError} from '../errors.js';
import {MAX_DIMENSION, MAX_RANK, elementCount} from '../dtypes.js';
import {checkAxes, checkUnsigned, checkUnsignedList, enumValue, stridesOf, unidirectionallyBroadcastable} from './common.js';

/** Spec "valid tensor count": 1 to 8192 inputs or outputs. */
export const MAX_TENSOR_COUNT = 8192;

/**
 * Checks a computed output shape (spec "creating an MLOperandDescriptor"): rank at most MAX_RANK,
 * every dimension and the element count valid dimensions.
 * @returns {number[]} the shape
 * @throws {TypeError}
 */
export function checkOutputShape(shape, label) {
  if (shape.length > MAX_RANK) throw typeError(label, `output rank ${shape.length} exceeds the supported maximum ${MAX_RANK}`);
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 1 || d > MAX_DIMENSION) throw typeError(label, `output dimension ${d} of [${shape}] is not a valid dimension`);
  }
  if (elementCount(shape) > MAX_DIMENSION) throw typeError(label, `output shape [${shape}] has too many elements`);
  return shape;
}

/** A list of valid dimensions (integers 1..2^31-1), e.g. reshape/expand newShape. */
function checkDimensionList(list, label, what) {
  const values = checkUnsignedList(list, label, what);
  for (const d of values) {
    if (d < 1 || d > MAX_DIMENSION) throw typeError(label, `${what} item ${d} is not a valid dimension`);
  }
  return values;
}

/**
 * Spec reshape(): newShape has the same element count as input (rank 0 newShape = scalar).
 * @returns {number[]} the output shape
 */
export function reshapeShape(inputShape, newShape, label) {
  const shape = checkDimensionList(newShape, label, 'newShape');
  if (shape.length > MAX_RANK) throw typeError(label, `newShape rank ${shape.length} exceeds the supported maximum ${MAX_RANK}`);
  if (elementCount(shape) !== elementCount(inputShape)) {
    throw typeError(label, `newShape [${shape}] has ${elementCount(shape)} elements, input [${inputShape}] has ${elementCount(inputShape)}`);
  }
  return shape;
}

/**
 * Spec transpose(): permutation defaults to [N-1, ..., 0]; its size must be the rank, values in
 * [0, N) without duplicates.
 * @returns {number[]} the permutation
 */
export function transposePermutation(rank, permutation, label) {
  if (permutation === undefined) return Array.from({length: rank}, (_, i) => rank - 1 - i);
  const perm = checkUnsignedList(permutation, label, 'permutation');
  if (perm.length !== rank) throw typeError(label, `permutation has ${perm.length} values for rank ${rank}`);
  return checkAxes(perm, rank, label, 'permutation');
}

/**
 * Spec concat(): same data type and rank, same dimensions except on axis.
 * @param {{dataType: string, shape: number[]}[]} inputs operand slots
 * @returns {number[]} the output shape
 */
export function concatShape(inputs, axis, label) {
  if (inputs.length < 1 || inputs.length > MAX_TENSOR_COUNT) throw typeError(label, `inputs must hold 1 to ${MAX_TENSOR_COUNT} operands, got ${inputs.length}`);
  const first = inputs[0];
  checkUnsigned(axis, label, 'axis');
  if (axis >= first.shape.length) throw typeError(label, `axis ${axis} is out of range for rank ${first.shape.length}`);
  const shape = first.shape.slice();
  for (let k = 1; k < inputs.length; k++) {
    const s = inputs[k];
    if (s.dataType !== first.dataType) throw typeError(label, `inputs[${k}] data type ${s.dataType} differs from ${first.dataType}`);
    if (s.shape.length !== first.shape.length) throw typeError(label, `inputs[${k}] rank ${s.shape.length} differs from ${first.shape.length}`);
    s.shape.forEach((d, i) => {
      if (i !== axis && d !== first.shape[i]) throw typeError(label, `inputs[${k}] shape [${s.shape}] differs from [${first.shape}] off axis ${axis}`);
    });
    shape[axis] += s.shape[axis];
    if (shape[axis] > MAX_DIMENSION) throw typeError(label, 'the concatenated dimension is too large');
  }
  return checkOutputShape(shape, label);
}

/**
 * Spec slice(): starts/sizes/strides of length rank, sizes >= 1, strides >= 1,
 * starts + sizes <= input size. Output size per axis is ceil(size / stride).
 * @returns {{shape: number[], starts: number[], strides: number[]}}
 */
export function sliceParams(inputShape, starts, sizes, strides, label) {
  const rank = inputShape.length;
  const st = checkUnsignedList(starts, label, 'starts');
  const sz = checkUnsignedList(sizes, label, 'sizes');
  if (sz.some((s) => s === 0)) throw typeError(label, 'sizes must not contain 0');
  if (st.length !== rank || sz.length !== rank) throw typeError(label, `starts and sizes must have ${rank} values (the input rank)`);
  const step = strides === undefined ? new Array(rank).fill(1) : checkUnsignedList(strides, label, 'strides');
  if (step.length !== rank) throw typeError(label, `strides must have ${rank} values (the input rank)`);
  const shape = [];
  for (let i = 0; i < rank; i++) {
    if (step[i] < 1) throw typeError(label, `strides[${i}] must be at least 1`);
    if (st[i] > inputShape[i]) throw typeError(label, `starts[${i}] = ${st[i]} is beyond the input dimension ${inputShape[i]}`);
    if (st[i] + sz[i] > inputShape[i]) throw typeError(label, `starts[${i}] + sizes[${i}] = ${st[i] + sz[i]} exceeds the input dimension ${inputShape[i]}`);
    shape.push(Math.ceil(sz[i] / step[i]));
  }
  return {shape, starts: st, strides: step};
}

/**
 * Spec split(): `splits` is a count that divides shape[axis], or a list of positive sizes
 * summing to shape[axis].
 * @returns {number[]} the size of each output along axis
 */
export function splitSizes(inputShape, splits, axis, label) {
  checkUnsigned(axis, label, 'axis');
  if (axis >= inputShape.length) throw typeError(label, `axis ${axis} is out of range for rank ${inputShape.length}`);
  const dim = inputShape[axis];
  if (typeof splits === 'number') {
    splits = checkUnsigned(splits, label, 'splits');
    if (splits < 1 || splits > MAX_TENSOR_COUNT) throw typeError(label, `splits must be 1 to ${MAX_TENSOR_COUNT}, got ${splits}`);
    if (dim % splits !== 0) throw typeError(label, `splits ${splits} does not divide the dimension ${dim} of axis ${axis}`);
    return new Array(splits).fill(dim / splits);
  }
  const sizes = checkUnsignedList(splits, label, 'splits');
  if (sizes.length < 1 || sizes.length > MAX_TENSOR_COUNT) throw typeError(label, `splits must hold 1 to ${MAX_TENSOR_COUNT} sizes, got ${sizes.length}`);
  if (sizes.some((s) => s === 0)) throw typeError(label, 'splits must not contain 0');
  const sum = sizes.reduce((a, b) => a + b, 0);
  if (sum !== dim) throw typeError(label, `splits sum to ${sum}, the dimension of axis ${axis} is ${dim}`);
  return sizes;
}

/**
 * Spec expand(): input shape unidirectionally broadcastable to newShape.
 * @returns {number[]} the output shape (= newShape)
 */
export function expandShape(inputShape, newShape, label) {
  const shape = checkDimensionList(newShape, label, 'newShape');
  if (!unidirectionallyBroadcastable(inputShape, shape)) throw typeError(label, `input shape [${inputShape}] cannot be expanded to [${shape}]`);
  return checkOutputShape(shape, label);
}

/**
 * Spec tile(): repetitions of length rank, no 0.
 * @returns {number[]} the output shape
 */
export function tileShape(inputShape, repetitions, label) {
  const reps = checkUnsignedList(repetitions, label, 'repetitions');
  if (reps.length !== inputShape.length) throw typeError(label, `repetitions must have ${inputShape.length} values (the input rank)`);
  if (reps.some((r) => r === 0)) throw typeError(label, 'repetitions must not contain 0');
  return checkOutputShape(inputShape.map((d, i) => d * reps[i]), label);
}

/**
 * Spec reverse(): axes default to all; no duplicates, each in [0, rank).
 * @returns {number[]} the axes to reverse
 */
export function reverseAxes(rank, axes, label) {
  if (axes === undefined) return Array.from({length: rank}, (_, i) => i);
  return checkAxes(axes, rank, label, 'axes');
}

/** MLPaddingMode values, with "symmetric" (Chromium's extension; see padShape). */
export const PADDING_MODES = Object.freeze(['constant', 'edge', 'reflection', 'symmetric']);

/**
 * Spec pad(): paddings of length rank; "reflection" needs each padding smaller than the input
 * dimension. Decision: "symmetric" (as Chromium accepts it: the edge element is repeated)
 * needs each padding at most the input dimension.
 * @returns {{shape: number[], begin: number[], end: number[], mode: string}} the output shape, the
 *   paddings and the mode (WebIDL-converted)
 */
export function padShape(inputShape, beginningPadding, endingPadding, mode, label) {
  const rank = inputShape.length;
  const begin = checkUnsignedList(beginningPadding, label, 'beginningPadding');
  const end = checkUnsignedList(endingPadding, label, 'endingPadding');
  if (begin.length !== rank || end.length !== rank) throw typeError(label, `beginningPadding and endingPadding must have ${rank} values (the input rank)`);
  mode = enumValue(mode, PADDING_MODES, undefined, label, 'mode');
  for (let i = 0; i < rank; i++) {
    const d = inputShape[i];
    if (mode === 'reflection' && (begin[i] >= d || end[i] >= d)) {
      throw typeError(label, `reflection padding (${begin[i]}, ${end[i]}) must be smaller than the dimension ${d} of axis ${i}`);
    }
    if (mode === 'symmetric' && (begin[i] > d || end[i] > d)) {
      throw typeError(label, `symmetric padding (${begin[i]}, ${end[i]}) must not exceed the dimension ${d} of axis ${i}`);
    }
  }
  return {shape: checkOutputShape(inputShape.map((d, i) => d + begin[i] + end[i]), label), begin, end, mode};
}

/**
 * pad() with runs of unpadded dimensions merged (and unpadded size-1 dimensions dropped), so the
 * kernel walks as few dimensions as possible; the result pads the same elements.
 * @returns {{inShape: number[], outShape: number[], begin: number[]}}
 */
export function padPlan(inputShape, begin, end) {
  const dims = [];
  inputShape.forEach((n, i) => {
    const padded = begin[i] > 0 || end[i] > 0;
    const last = dims[dims.length - 1];
    if (!padded && n === 1) return;
    if (!padded && last && !last.padded) last.n *= n;
    else dims.push({n, b: begin[i], e: end[i], padded});
  });
  return {inShape: dims.map((d) => d.n), outShape: dims.map((d) => d.n + d.b + d.e), begin: dims.map((d) => d.b)};
}

/**
 * The index plan of a strided copy, over the output (gather form) or the input (scatter form):
 * for a linear index i over `shape` (row-major), with coordinates c[d],
 *   offset(i) = base + sum_d (c[d] % mod[d]) * stride[d]
 * where strides may be negative (reverse) or 0 (broadcast) and mod[d] < shape[d] wraps (tile).
 * This merges adjacent dimensions that are contiguous in both index spaces and drops size-1
 * dimensions, so most plans end at rank 1 or 2.
 * @param {number[]} shape iteration shape
 * @param {number[]} stride element stride per dimension (may be negative or 0)
 * @param {number} base element offset
 * @param {number[]} [mod] wrap per dimension (default: none)
 * @returns {{shape: number[], stride: number[], mod: number[], base: number}}
 */
export function simplifyStrided(shape, stride, base = 0, mod = shape) {
  const dims = [];
  shape.forEach((n, d) => {
    if (n === 1) return;
    const wraps = mod[d] < n && mod[d] > 1;
    const st = mod[d] === 1 ? 0 : stride[d];
    const last = dims[dims.length - 1];
    if (!wraps && last && !last.wraps && last.stride === st * n) {
      last.n *= n;
      last.stride = st;
    } else {
      dims.push({n, stride: st, mod: mod[d], wraps});
    }
  });
  return {shape: dims.map((x) => x.n), stride: dims.map((x) => x.stride), mod: dims.map((x) => (x.wraps ? x.mod : x.n)), base};
}

/** Strided plan reading `inputShape` with axes permuted by `perm` (output dim d = input dim perm[d]). */
export function transposePlan(inputShape, perm) {
  const s = stridesOf(inputShape);
  return simplifyStrided(perm.map((p) => inputShape[p]), perm.map((p) => s[p]));
}

/** Strided plan of slice(): base = sum starts * strides, stride = step * input stride. */
export function slicePlan(inputShape, outShape, starts, steps) {
  const s = stridesOf(inputShape);
  const base = starts.reduce((acc, st, i) => acc + st * s[i], 0);
  return simplifyStrided(outShape, steps.map((k, i) => k * s[i]), base);
}

/** Strided plan of expand(): stride 0 on broadcast dimensions. */
export function expandPlan(inputShape, outShape) {
  const s = new Array(outShape.length).fill(0);
  const inStrides = stridesOf(inputShape);
  inputShape.forEach((d, i) => {
    const o = outShape.length - inputShape.length + i;
    s[o] = d === 1 ? 0 : inStrides[i];
  });
  return simplifyStrided(outShape, s);
}

/** Strided plan of tile(): output coordinate wraps at the input dimension. */
export function tilePlan(inputShape, outShape) {
  return simplifyStrided(outShape, stridesOf(inputShape), 0, inputShape);
}

/** Strided plan of reverse(): negative strides from the last element on reversed axes. */
export function reversePlan(inputShape, axes) {
  const s = stridesOf(inputShape);
  let base = 0;
  const stride = s.map((v, i) => {
    if (!axes.includes(i)) return v;
    base += (inputShape[i] - 1) * v;
    return -v;
  });
  return simplifyStrided(inputShape, stride, base);
}

/** Scatter-form plan writing input `k` of concat into the output at `offset` along axis. */
export function concatPlan(inputShape, outShape, axis, offset) {
  const s = stridesOf(outShape);
  return simplifyStrided(inputShape, s, offset * s[axis]);
}
