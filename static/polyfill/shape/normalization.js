/**
 * Validation for batchNormalization, instanceNormalization and layerNormalization (spec
 * §batchNormalization, §instanceNormalization, §layerNormalization). Pure functions, no GPU;
 * every failure is a TypeError prefixed with the operator's label.
 */
import {typeError} from '../errors.js';
import {FLOAT_TYPES} from '../dtypes.js';
import {castNumber} from './cast.js';
import {checkDataType, checkUnsigned} from './common.js';
import {checkDouble} from './matmul.js';
import {checkAxesList} from './reduce.js';

/** Checks an optional/required 1-D (or given-shape) parameter operand: float type of input, exact shape. */
function checkParam(param, input, shape, label, what) {
  if (!param) return;
  checkDataType(param, FLOAT_TYPES, label, what);
  if (param.dataType !== input.dataType) throw typeError(label, `${what} (${param.dataType}) must have the data type of input (${input.dataType})`);
  if (param.shape.length !== shape.length || param.shape.some((d, i) => d !== shape[i])) {
    throw typeError(label, `${what} must have shape [${shape}], got [${param.shape}]`);
  }
}

/** epsilon: a finite double cast to the input's data type. */
function epsilonOf(options, dataType, label) {
  return castNumber(checkDouble(options.epsilon ?? 1e-5, label, 'epsilon'), dataType);
}

/**
 * Spec batchNormalization(input, mean, variance, options) validation.
 * @param {object} s operand slots {input, mean, variance, scale?, bias?}
 * @returns {{axis: number, epsilon: number}}
 * @throws {TypeError}
 */
export function batchNormalizationAttrs(s, options, label) {
  checkDataType(s.input, FLOAT_TYPES, label);
  const rank = s.input.shape.length;
  const axis = checkUnsigned(options.axis ?? 1, label, 'axis');
  if (axis >= rank) throw typeError(label, `axis ${axis} is out of range for rank ${rank}`);
  const channels = [s.input.shape[axis]];
  checkParam(s.mean, s.input, channels, label, 'mean');
  checkParam(s.variance, s.input, channels, label, 'variance');
  const epsilon = epsilonOf(options, s.input.dataType, label);
  checkParam(s.scale, s.input, channels, label, 'scale');
  checkParam(s.bias, s.input, channels, label, 'bias');
  return {axis, epsilon};
}

/**
 * Spec instanceNormalization(input, options) validation: a 4-D input, layout "nchw" | "nhwc".
 * @returns {{layout: string, epsilon: number, axis: number}} axis: the channel dimension
 * @throws {TypeError}
 */
export function instanceNormalizationAttrs(s, options, label) {
  checkDataType(s.input, FLOAT_TYPES, label);
  if (s.input.shape.length !== 4) throw typeError(label, `input must be 4-D, got rank ${s.input.shape.length}`);
  const epsilon = epsilonOf(options, s.input.dataType, label);
  const layout = options.layout === undefined ? 'nchw' : String(options.layout);
  if (layout !== 'nchw' && layout !== 'nhwc') throw typeError(label, `layout "${layout}" is not an MLInputOperandLayout`);
  const axis = layout === 'nchw' ? 1 : 3;
  checkParam(s.scale, s.input, [s.input.shape[axis]], label, 'scale');
  checkParam(s.bias, s.input, [s.input.shape[axis]], label, 'bias');
  return {layout, epsilon, axis};
}

/**
 * Spec layerNormalization(input, options) validation. axes default to 1..rank-1 (none for rank
 * <= 1); scale and bias have the sizes of the input dimensions listed in axes, in axes order.
 * @returns {{axes: number[], epsilon: number}}
 * @throws {TypeError}
 */
export function layerNormalizationAttrs(s, options, label) {
  checkDataType(s.input, FLOAT_TYPES, label);
  const rank = s.input.shape.length;
  const axes = options.axes === undefined
    ? s.input.shape.map((_, i) => i).slice(1)
    : checkAxesList(options.axes, rank, label);
  const epsilon = epsilonOf(options, s.input.dataType, label);
  const shape = axes.map((a) => s.input.shape[a]);
  checkParam(s.scale, s.input, shape, label, 'scale');
  checkParam(s.bias, s.input, shape, label, 'bias');
  return {axes, epsilon};
}
