/**
 * Shape inference and validation of gather, gatherElements, gatherND, scatterElements and
 * scatterND (spec §gather ... §scatterND). Pure functions, no GPU; TypeErrors carry `[label]`.
 *
 * Each returns the output shape and the sizes the kernels need (ops/gather.js):
 *   outer/inner: element counts before/after the axis; axisSize: the input's axis dimension.
 */
import {typeError} from '../errors.js';
import {elementCount} from '../dtypes.js';
import {checkUnsigned, stridesOf} from './common.js';
import {checkOutputShape} from './movement.js';

/** Data types allowed for `indices` (spec tensor limits of the gather and scatter ops). */
export const INDEX_TYPES = Object.freeze(['int32', 'uint32', 'int64']);

function checkIndices(indices, label) {
  if (!INDEX_TYPES.includes(indices.dataType)) {
    throw typeError(label, `indices data type ${indices.dataType} is not one of ${INDEX_TYPES.join(', ')}`);
  }
}

function checkAxis(axis, rank, label) {
  checkUnsigned(axis, label, 'axis');
  if (axis >= rank) throw typeError(label, `axis ${axis} is out of range for input rank ${rank}`);
  return axis;
}

function checkMinRank(operand, min, label, what) {
  if (operand.shape.length < min) throw typeError(label, `${what} rank ${operand.shape.length} is less than ${min}`);
}

/** inner = product of shape after axis. */
function innerSize(shape, axis) {
  return elementCount(shape.slice(axis + 1));
}

/**
 * Spec gather(): output shape input[:axis] + indices.shape + input[axis+1:].
 * @returns {{shape: number[], inner: number, axisSize: number}}
 */
export function gatherParams(input, indices, axis, label) {
  checkIndices(indices, label);
  checkMinRank(input, 1, label, 'input');
  checkAxis(axis, input.shape.length, label);
  const shape = [...input.shape.slice(0, axis), ...indices.shape, ...input.shape.slice(axis + 1)];
  return {shape: checkOutputShape(shape, label), inner: innerSize(input.shape, axis), axisSize: input.shape[axis]};
}

/** indices.shape must equal input.shape except on axis (gatherElements, scatterElements). */
function checkElementsShape(input, indices, axis, label) {
  const expected = input.shape.slice();
  if (indices.shape.length === expected.length) expected[axis] = indices.shape[axis];
  if (indices.shape.length !== expected.length || indices.shape.some((d, i) => d !== expected[i])) {
    throw typeError(label, `indices shape [${indices.shape}] must equal the input shape [${input.shape}] except on axis ${axis}`);
  }
}

/**
 * Spec gatherElements(): output shape = indices shape.
 * @returns {{shape: number[], inner: number, axisSize: number, indicesAxisSize: number}}
 */
export function gatherElementsParams(input, indices, axis, label) {
  checkIndices(indices, label);
  checkMinRank(input, 1, label, 'input');
  checkAxis(axis, input.shape.length, label);
  checkElementsShape(input, indices, axis, label);
  return {shape: indices.shape.slice(), inner: innerSize(input.shape, axis), axisSize: input.shape[axis], indicesAxisSize: indices.shape[axis]};
}

/**
 * The coordinate size k = indices.shape[-1] of gatherND/scatterND, checked against the input rank.
 * @returns {{k: number, slice: number, dims: number[], strides: number[], shape: number[]}}
 *   shape: indices.shape[:-1] + input.shape[k:]; slice: elements per gathered slice; dims and
 *   strides of the k indexed input dimensions
 */
function ndParams(input, indices, label) {
  checkIndices(indices, label);
  checkMinRank(input, 1, label, 'input');
  checkMinRank(indices, 1, label, 'indices');
  const k = indices.shape[indices.shape.length - 1];
  if (k > input.shape.length) throw typeError(label, `indices.shape[-1] = ${k} exceeds the input rank ${input.shape.length}`);
  const shape = [...indices.shape.slice(0, -1), ...input.shape.slice(k)];
  return {k, slice: elementCount(input.shape.slice(k)), dims: input.shape.slice(0, k), strides: stridesOf(input.shape).slice(0, k), shape};
}

/** Spec gatherND(): output shape indices.shape[:-1] + input.shape[k:]. */
export function gatherNDParams(input, indices, label) {
  const p = ndParams(input, indices, label);
  checkOutputShape(p.shape, label);
  return p;
}

function checkUpdates(input, updates, label) {
  if (updates.dataType !== input.dataType) throw typeError(label, `updates data type ${updates.dataType} differs from the input's ${input.dataType}`);
}

/**
 * Spec scatterElements(): updates and indices of one shape, equal to input's except on axis.
 * @returns {{inner: number, axisSize: number, indicesAxisSize: number}}
 */
export function scatterElementsParams(input, indices, updates, axis, label) {
  checkIndices(indices, label);
  checkUpdates(input, updates, label);
  checkMinRank(input, 1, label, 'input');
  checkAxis(axis, input.shape.length, label);
  checkElementsShape(input, indices, axis, label);
  if (updates.shape.length !== indices.shape.length || updates.shape.some((d, i) => d !== indices.shape[i])) {
    throw typeError(label, `updates shape [${updates.shape}] must equal the indices shape [${indices.shape}]`);
  }
  return {inner: innerSize(input.shape, axis), axisSize: input.shape[axis], indicesAxisSize: indices.shape[axis]};
}

/** Spec scatterND(): updates shape must be indices.shape[:-1] + input.shape[k:]. */
export function scatterNDParams(input, indices, updates, label) {
  checkUpdates(input, updates, label);
  const p = ndParams(input, indices, label);
  if (updates.shape.length !== p.shape.length || updates.shape.some((d, i) => d !== p.shape[i])) {
    throw typeError(label, `updates shape [${updates.shape}] must be [${p.shape}]`);
  }
  return p;
}
