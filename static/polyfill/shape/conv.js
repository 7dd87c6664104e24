/**
 * Shape inference and validation for conv2d (spec §conv2d) and convTranspose2d
 * (spec §convTranspose2d). Pure functions, no GPU; every error is a TypeError prefixed with the
 * operator's label.
 *
 * Layout letters: the input/output layout ("nchw" | "nhwc") and the filter layout (conv2d:
 * "oihw" | "hwio" | "ohwi" | "ihwo", convTranspose2d: "iohw" | "hwoi" | "ohwi") name the meaning
 * of each dimension, so a tensor's element strides per logical dimension are found by looking
 * the letter up in the layout string (see layoutStrides).
 */
import {typeError} from '../errors.js';
import {enumValue} from './common.js';
import {MAX_DIMENSION} from '../dtypes.js';
import {checkUnsigned, checkUnsignedList, stridesOf} from './common.js';

export const INPUT_LAYOUTS = Object.freeze(['nchw', 'nhwc']);
export const CONV2D_FILTER_LAYOUTS = Object.freeze(['oihw', 'hwio', 'ohwi', 'ihwo']);
export const CONV_TRANSPOSE2D_FILTER_LAYOUTS = Object.freeze(['iohw', 'hwoi', 'ohwi']);

/** A valid dimension (spec): an integer in 1..2^31-1. */
export function isValidDimension(value) {
  return Number.isInteger(value) && value > 0 && value <= MAX_DIMENSION;
}

/**
 * A sequence<[EnforceRange] unsigned long> option of `length` items, or `fallback` when absent.
 * @param {boolean} [nonZero] throw when an item is 0
 * @throws {TypeError} wrong length, not unsigned integers, or a zero item when nonZero
 */
export function listOption(value, length, fallback, label, what, nonZero = false) {
  if (value === undefined) return fallback.slice();
  const list = checkUnsignedList(value, label, what, length);
  if (nonZero && list.some((v) => v === 0)) throw typeError(label, `${what} must not contain 0, got [${list}]`);
  return list;
}

/**
 * Spec "calculate conv output size": (inputSize - ((filterSize - 1) * dilation + 1) + beginningPadding
 * + endingPadding) / stride + 1, unrounded (callers floor or ceil).
 * @returns {number}
 */
export function convOutputSize(inputSize, filterSize, beginningPadding, endingPadding, stride, dilation) {
  const effectiveFilterSize = (filterSize - 1) * dilation + 1;
  return (inputSize - effectiveFilterSize + beginningPadding + endingPadding) / stride + 1;
}

/**
 * Spec "calculate convtranspose output size": (inputSize - 1) * stride + (filterSize - 1) * dilation
 * + 1 - beginningPadding - endingPadding.
 * @returns {number}
 */
export function convTransposeOutputSize(inputSize, filterSize, beginningPadding, endingPadding, stride, dilation) {
  const effectiveFilterSize = (filterSize - 1) * dilation + 1;
  return (inputSize - 1) * stride + effectiveFilterSize - beginningPadding - endingPadding;
}

/**
 * Reads a 4-D shape through its layout string.
 * @param {number[]} shape
 * @param {string} layout e.g. "nhwc" or "hwio"
 * @returns {Record<string, number>} size per layout letter, e.g. {n, c, h, w}
 */
export function dimsOf(shape, layout) {
  const dims = {};
  for (let i = 0; i < layout.length; i++) dims[layout[i]] = shape[i];
  return dims;
}

/**
 * Element strides of a row-major tensor of `shape` (laid out as `layout`) listed in the logical
 * order `order`: layoutStrides([2, 5, 5, 3], 'nhwc', 'nchw') gives the strides of n, c, h, w.
 * @returns {number[]}
 */
export function layoutStrides(shape, layout, order) {
  const strides = stridesOf(shape);
  return [...order].map((letter) => strides[layout.indexOf(letter)]);
}

/** Shape of a tensor with the sizes `dims` (by letter) in `layout` order. */
export function shapeOf(dims, layout) {
  return [...layout].map((letter) => dims[letter]);
}

/** The options shared by conv2d and convTranspose2d, with spec defaults and checks. */
function commonConvOptions(options, label, filterLayouts, defaultFilterLayout) {
  const padding = listOption(options.padding, 4, [0, 0, 0, 0], label, 'padding');
  const strides = listOption(options.strides, 2, [1, 1], label, 'strides', true);
  const dilations = listOption(options.dilations, 2, [1, 1], label, 'dilations', true);
  const groups = options.groups === undefined ? 1 : checkUnsigned(options.groups, label, 'groups');
  if (groups === 0) throw typeError(label, 'groups must not be 0');
  const inputLayout = enumValue(options.inputLayout, INPUT_LAYOUTS, 'nchw', label, 'inputLayout');
  const filterLayout = enumValue(options.filterLayout, filterLayouts, defaultFilterLayout, label, 'filterLayout');
  return {padding, strides, dilations, groups, inputLayout, filterLayout};
}

/**
 * Spec conv2d steps "calculate the output shape" and the option checks before it.
 * @param {number[]} inputShape 4-D, in options.inputLayout
 * @param {number[]} filterShape 4-D, in options.filterLayout
 * @param {number[]|null} biasShape or null when there is no bias
 * @param {object} options MLConv2dOptions (bias already resolved by the caller)
 * @returns {{attrs: object, shape: number[]}} normalised options and the output shape
 * @throws {TypeError}
 */
export function conv2dShape(inputShape, filterShape, biasShape, options, label) {
  const attrs = commonConvOptions(options, label, CONV2D_FILTER_LAYOUTS, 'oihw');
  const {padding, strides, dilations, groups, inputLayout, filterLayout} = attrs;
  const x = dimsOf(inputShape, inputLayout);
  const f = dimsOf(filterShape, filterLayout);
  if (x.c % groups !== 0) throw typeError(label, `input channels ${x.c} are not divisible by groups ${groups}`);
  if (x.c / groups !== f.i) throw typeError(label, `input channels / groups (${x.c}/${groups}) must equal the filter's input channels ${f.i} (filterLayout "${filterLayout}", shape [${filterShape}])`);
  if (f.o % groups !== 0) throw typeError(label, `output channels ${f.o} are not divisible by groups ${groups}`);
  if (biasShape && (biasShape.length !== 1 || biasShape[0] !== f.o)) throw typeError(label, `bias shape [${biasShape}] must be [${f.o}]`);
  const outputHeight = Math.floor(convOutputSize(x.h, f.h, padding[0], padding[1], strides[0], dilations[0]));
  const outputWidth = Math.floor(convOutputSize(x.w, f.w, padding[2], padding[3], strides[1], dilations[1]));
  if (!isValidDimension(outputHeight) || !isValidDimension(outputWidth)) {
    throw typeError(label, `the output size ${outputHeight}x${outputWidth} is not valid (input ${x.h}x${x.w}, filter ${f.h}x${f.w}, padding [${padding}], strides [${strides}], dilations [${dilations}])`);
  }
  const shape = shapeOf({n: x.n, c: f.o, h: outputHeight, w: outputWidth}, inputLayout);
  return {attrs, shape};
}

/**
 * Spec convTranspose2d steps "calculate the output shape" and the option checks before it.
 * @param {number[]} inputShape 4-D, in options.inputLayout
 * @param {number[]} filterShape 4-D, in options.filterLayout ("iohw" | "hwoi" | "ohwi")
 * @param {number[]|null} biasShape
 * @param {object} options MLConvTranspose2dOptions
 * @returns {{attrs: object, shape: number[]}}
 * @throws {TypeError}
 */
export function convTranspose2dShape(inputShape, filterShape, biasShape, options, label) {
  const padding = listOption(options.padding, 4, [0, 0, 0, 0], label, 'padding');
  const strides = listOption(options.strides, 2, [1, 1], label, 'strides', true);
  const dilations = listOption(options.dilations, 2, [1, 1], label, 'dilations', true);
  const outputPadding = listOption(options.outputPadding, 2, [0, 0], label, 'outputPadding');
  const outputSizes = options.outputSizes === undefined ? null : listOption(options.outputSizes, 2, [], label, 'outputSizes');
  if (!outputSizes && (outputPadding[0] >= strides[0] || outputPadding[1] >= strides[1])) {
    throw typeError(label, `outputPadding [${outputPadding}] must be smaller than strides [${strides}]`);
  }
  const groups = options.groups === undefined ? 1 : checkUnsigned(options.groups, label, 'groups');
  if (groups === 0) throw typeError(label, 'groups must not be 0');
  const inputLayout = enumValue(options.inputLayout, INPUT_LAYOUTS, 'nchw', label, 'inputLayout');
  const filterLayout = enumValue(options.filterLayout, CONV_TRANSPOSE2D_FILTER_LAYOUTS, 'iohw', label, 'filterLayout');
  const x = dimsOf(inputShape, inputLayout);
  const f = dimsOf(filterShape, filterLayout);
  if (x.c !== f.i) throw typeError(label, `input channels ${x.c} must equal the filter's input channels ${f.i} (filterLayout "${filterLayout}", shape [${filterShape}])`);
  if (x.c % groups !== 0) throw typeError(label, `input channels ${x.c} are not divisible by groups ${groups}`);
  const outputChannels = f.o * groups;
  if (!isValidDimension(outputChannels)) throw typeError(label, `output channels ${f.o}*${groups} are not a valid dimension`);
  if (biasShape && (biasShape.length !== 1 || biasShape[0] !== outputChannels)) throw typeError(label, `bias shape [${biasShape}] must be [${outputChannels}]`);
  const calculatedHeight = convTransposeOutputSize(x.h, f.h, padding[0], padding[1], strides[0], dilations[0]);
  const calculatedWidth = convTransposeOutputSize(x.w, f.w, padding[2], padding[3], strides[1], dilations[1]);
  let outputHeight;
  let outputWidth;
  if (outputSizes) {
    [outputHeight, outputWidth] = outputSizes;
    if (outputHeight < calculatedHeight || outputHeight >= calculatedHeight + strides[0]) {
      throw typeError(label, `outputSizes[0] ${outputHeight} must be in [${calculatedHeight}, ${calculatedHeight + strides[0]})`);
    }
    if (outputWidth < calculatedWidth || outputWidth >= calculatedWidth + strides[1]) {
      throw typeError(label, `outputSizes[1] ${outputWidth} must be in [${calculatedWidth}, ${calculatedWidth + strides[1]})`);
    }
  } else {
    outputHeight = calculatedHeight + outputPadding[0];
    outputWidth = calculatedWidth + outputPadding[1];
  }
  if (!isValidDimension(outputHeight) || !isValidDimension(outputWidth)) {
    throw typeError(label, `the output size ${outputHeight}x${outputWidth} is not valid`);
  }
  const shape = shapeOf({n: x.n, c: outputChannels, h: outputHeight, w: outputWidth}, inputLayout);
  return {attrs: {padding, strides, dilations, outputPadding, groups, inputLayout, filterLayout}, shape};
}
