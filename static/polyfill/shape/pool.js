/**
 * Shape inference and validation for the pooling operators (spec §Pooling operations:
 * averagePool2d, l2Pool2d, maxPool2d) and resample2d (spec §resample2d). Pure functions, no GPU;
 * every error is a TypeError prefixed with the operator's label.
 */
import {typeError} from '../errors.js';
import {checkAxes} from './common.js';
import {INPUT_LAYOUTS, convOutputSize, dimsOf, isValidDimension, listOption, shapeOf} from './conv.js';
import {enumValue} from './common.js';

export const ROUNDING_TYPES = Object.freeze(['floor', 'ceil']);
export const INTERPOLATION_MODES = Object.freeze(['nearest-neighbor', 'linear']);

/**
 * Spec "create a pooling operation", option checks and "calculate the output shape".
 *
 * Decision: two steps of the 2026-06 draft are not followed, because pages written for native
 * WebNN (Chromium, and the web-platform-tests) rely on the opposite: the draft resets padding to
 * [0, 0, 0, 0] whenever outputSizes exists, and requires each outputSizes item to be smaller than
 * its stride (WPT's valid case outputSizes [3, 3] with strides [2, 2] would throw). Here padding
 * is honoured with outputSizes, and outputSizes must only be the floor or the ceiling of the
 * calculated output size, as in Chromium.
 *
 * @param {number[]} inputShape 4-D, in options.layout
 * @param {object} options MLPool2dOptions
 * @returns {{attrs: {windowDimensions: number[], padding: number[], strides: number[],
 *   dilations: number[], layout: string}, shape: number[]}}
 * @throws {TypeError}
 */
export function pool2dShape(inputShape, options, label) {
  const layout = enumValue(options.layout, INPUT_LAYOUTS, 'nchw', label, 'layout');
  const rounding = enumValue(options.outputShapeRounding, ROUNDING_TYPES, 'floor', label, 'outputShapeRounding');
  const x = dimsOf(inputShape, layout);
  const windowDimensions = listOption(options.windowDimensions, 2, [x.h, x.w], label, 'windowDimensions', true);
  const outputSizes = options.outputSizes === undefined ? null : listOption(options.outputSizes, 2, [], label, 'outputSizes');
  const padding = listOption(options.padding, 4, [0, 0, 0, 0], label, 'padding');
  const strides = listOption(options.strides, 2, [1, 1], label, 'strides', true);
  const dilations = listOption(options.dilations, 2, [1, 1], label, 'dilations', true);
  const calculatedHeight = convOutputSize(x.h, windowDimensions[0], padding[0], padding[1], strides[0], dilations[0]);
  const calculatedWidth = convOutputSize(x.w, windowDimensions[1], padding[2], padding[3], strides[1], dilations[1]);
  let outputHeight;
  let outputWidth;
  if (outputSizes) {
    [outputHeight, outputWidth] = outputSizes;
    const isFloor = outputHeight === Math.floor(calculatedHeight) && outputWidth === Math.floor(calculatedWidth);
    const isCeil = outputHeight === Math.ceil(calculatedHeight) && outputWidth === Math.ceil(calculatedWidth);
    if (!isFloor && !isCeil) {
      throw typeError(label, `outputSizes [${outputSizes}] are neither the floor nor the ceiling of the calculated output sizes [${calculatedHeight}, ${calculatedWidth}]`);
    }
  } else {
    const round = rounding === 'floor' ? Math.floor : Math.ceil;
    outputHeight = round(calculatedHeight);
    outputWidth = round(calculatedWidth);
  }
  if (!isValidDimension(outputHeight) || !isValidDimension(outputWidth)) {
    throw typeError(label, `the output size ${outputHeight}x${outputWidth} is not valid (input ${x.h}x${x.w}, window [${windowDimensions}], padding [${padding}], strides [${strides}], dilations [${dilations}])`);
  }
  const shape = shapeOf({n: x.n, c: x.c, h: outputHeight, w: outputWidth}, layout);
  return {attrs: {windowDimensions, padding, strides, dilations, layout}, shape};
}

/**
 * Spec resample2d option checks and "calculate the output shape".
 * @param {number[]} inputShape 4-D
 * @param {object} options MLResample2dOptions
 * @returns {{attrs: {mode: string, axes: number[]}, shape: number[]}}
 * @throws {TypeError}
 */
export function resample2dShape(inputShape, options, label) {
  const mode = enumValue(options.mode, INTERPOLATION_MODES, 'nearest-neighbor', label, 'mode');
  let scales = [1, 1];
  if (options.scales !== undefined) {
    const list = options.scales;
    if (list === null || typeof list !== 'object' || typeof list[Symbol.iterator] !== 'function') throw typeError(label, 'scales must be a sequence of 2 numbers');
    scales = [...list].map((s) => (typeof s === 'number' ? Math.fround(s) : NaN));
    if (scales.some((s) => !Number.isFinite(s))) throw typeError(label, `scales must be finite numbers, got [${[...list]}]`);
    if (scales.length !== 2 || scales.some((s) => s <= 0)) throw typeError(label, `scales must be 2 numbers greater than 0, got [${scales}]`);
  }
  const sizes = options.sizes === undefined ? null : listOption(options.sizes, 2, [], label, 'sizes', true);
  const axes = options.axes === undefined ? [2, 3] : checkAxes(options.axes, inputShape.length, label);
  if (axes.length !== 2) throw typeError(label, `axes must have 2 elements, got [${axes}]`);
  const shape = inputShape.slice();
  axes.forEach((axis, index) => {
    const size = sizes ? sizes[index] : Math.floor(inputShape[axis] * scales[index]);
    if (!isValidDimension(size)) throw typeError(label, `the output size ${size} along axis ${axis} is not valid`);
    shape[axis] = size;
  });
  return {attrs: {mode, axes}, shape};
}
