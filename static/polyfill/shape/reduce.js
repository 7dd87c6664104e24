/**
 * Shape inference and validation for softmax, the reductions, argMin/argMax, cumulativeSum and
 * the normalizations (spec §reduction operations, "calculate reduction output sizes"). Pure
 * functions, no GPU; every failure is a TypeError prefixed with the operator's label.
 */
import {typeError} from '../errors.js';
import {checkDistinctAxes, checkUnsigned} from './common.js';

/**
 * An axis argument: `[EnforceRange] unsigned long` below `rank`.
 * @throws {TypeError}
 */
export function checkAxis(value, rank, label, what = 'axis') {
  const axis = checkUnsigned(value, label, what);
  if (axis >= rank) throw typeError(label, `${what} ${axis} is out of range for rank ${rank}`);
  return axis;
}

/**
 * A `sequence<[EnforceRange] unsigned long>` of distinct axes below `rank`.
 * @returns {number[]}
 * @throws {TypeError}
 */
export function checkAxesList(value, rank, label, what = 'axes') {
  if (value === null || typeof value !== 'object' || typeof value[Symbol.iterator] !== 'function') {
    throw typeError(label, `${what} must be a sequence of unsigned integers`);
  }
  return checkDistinctAxes([...value].map((a) => checkUnsigned(a, label, what)), rank, label, what);
}

/**
 * Spec "calculate reduction output sizes".
 * @param {number[]} shape input shape
 * @param {number[]|undefined} axes undefined = all axes
 * @param {boolean} keepDimensions
 * @returns {{axes: number[], shape: number[]}} the validated axes and the output shape
 * @throws {TypeError} duplicate or out-of-range axes
 */
export function reductionShape(shape, axes, keepDimensions, label) {
  const rank = shape.length;
  const list = axes === undefined ? shape.map((_, i) => i) : checkAxesList(axes, rank, label);
  const set = new Set(list);
  const out = keepDimensions ? shape.map((d, i) => (set.has(i) ? 1 : d)) : shape.filter((_, i) => !set.has(i));
  return {axes: list, shape: out};
}

/**
 * A dictionary argument: undefined/null become {}, anything else must be an object.
 * @throws {TypeError}
 */
export function optionsDict(options, label) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw typeError(label, 'options must be a dictionary');
  return options;
}
