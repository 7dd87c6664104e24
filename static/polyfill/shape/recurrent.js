/**
 * Validation and output shapes of the recurrent operators (spec §gru, §gruCell, §lstm,
 * §lstmCell). Pure functions, no GPU; every failure is a TypeError prefixed with the label.
 *
 * Each function takes the operands' slots by spec name and the options dictionary, and returns
 * the attributes the kernels need: sizes, gate order, activations, flags for optional operands.
 */
import {typeError} from '../errors.js';
import {FLOAT_TYPES, MAX_DIMENSION} from '../dtypes.js';
import {checkDataType, checkUnsigned, enumValue, sameShape} from './common.js';

const ACTIVATIONS = ['relu', 'sigmoid', 'tanh'];
const DIRECTIONS = ['forward', 'backward', 'both'];

/** Gate positions (in units of hiddenSize) within the weight's gate dimension, per layout. */
export const GRU_LAYOUTS = {zrn: {z: 0, r: 1, n: 2}, rzn: {r: 0, z: 1, n: 2}};
export const LSTM_LAYOUTS = {iofg: {i: 0, o: 1, f: 2, g: 3}, ifgo: {i: 0, f: 1, g: 2, o: 3}};

/** Checks an operand's data type (float, same as input) and exact shape; absent operands pass. */
function checkOperand(s, input, shape, label, what) {
  if (!s) return;
  checkDataType(s, FLOAT_TYPES, label, what);
  if (s.dataType !== input.dataType) throw typeError(label, `${what} (${s.dataType}) must have the data type of input (${input.dataType})`);
  if (!sameShape(s.shape, shape)) throw typeError(label, `${what} must have shape [${shape}], got [${s.shape}]`);
}

function activationList(value, count, defaults, label) {
  if (value === undefined) return defaults;
  if (value === null || typeof value !== 'object' || typeof value[Symbol.iterator] !== 'function') {
    throw typeError(label, 'activations must be a sequence of MLRecurrentNetworkActivation');
  }
  const list = [...value].map((a) => enumValue(a, ACTIVATIONS, undefined, label, 'activation'));
  if (list.length !== count) throw typeError(label, `activations must have ${count} entries, got ${list.length}`);
  return list;
}

function checkRanks(ops, rank, label) {
  for (const [what, s] of Object.entries(ops)) {
    checkDataType(s, FLOAT_TYPES, label, what);
    if (s.shape.length !== rank) throw typeError(label, `${what} must be ${rank}-D, got rank ${s.shape.length}`);
  }
}

/** `{name: true}` for each slot given, `{name: false}` for each absent optional operand. */
function presence(s) {
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Boolean(v)]));
}

/**
 * Adds the gate options to `attrs` and returns it: gru/gruCell (`gates` 3) get layout (zrn, rzn),
 * resetAfter (default true) and 2 activations; lstm/lstmCell (4) get layout (iofg, ifgo) and
 * 3 activations.
 * @throws {TypeError} an unknown layout or activation, or the wrong number of activations
 */
function addGateOptions(attrs, gates, options, label) {
  if (gates === 3) {
    attrs.layout = enumValue(options.layout, Object.keys(GRU_LAYOUTS), 'zrn', label, 'layout');
    attrs.resetAfter = options.resetAfter === undefined ? true : Boolean(options.resetAfter);
    attrs.activations = activationList(options.activations, 2, ['sigmoid', 'tanh'], label);
  } else {
    attrs.layout = enumValue(options.layout, Object.keys(LSTM_LAYOUTS), 'iofg', label, 'layout');
    attrs.activations = activationList(options.activations, 3, ['sigmoid', 'tanh', 'tanh'], label);
  }
  return attrs;
}

/**
 * Spec gru() / lstm() steps. `gates` is 3 (gru) or 4 (lstm).
 * @param {object} s slots: input, weight, recurrentWeight, bias?, recurrentBias?,
 *   initialHiddenState?, (lstm) peepholeWeight?, initialCellState?
 * @returns {object} attrs {steps, hiddenSize, batchSize, inputSize, numDirections, direction,
 *   layout, activations, returnSequence, resetAfter?, has: {bias, recurrentBias, ...}}
 */
export function recurrentAttrs(kind, s, stepsArg, hiddenArg, options, label) {
  const gates = kind === 'gru' ? 3 : 4;
  const direction = enumValue(options.direction, DIRECTIONS, 'forward', label, 'direction');
  const numDirections = direction === 'both' ? 2 : 1;
  checkRanks({input: s.input, weight: s.weight, recurrentWeight: s.recurrentWeight}, 3, label);
  for (const w of ['weight', 'recurrentWeight']) {
    if (s[w].dataType !== s.input.dataType) throw typeError(label, `${w} must have the data type of input`);
  }
  const steps = checkUnsigned(stepsArg, label, 'steps');
  const hiddenSize = checkUnsigned(hiddenArg, label, 'hiddenSize');
  if (steps === 0) throw typeError(label, 'steps must be greater than 0');
  if (s.input.shape[0] !== steps) throw typeError(label, `input.shape[0] (${s.input.shape[0]}) must equal steps (${steps})`);
  const [, batchSize, inputSize] = s.input.shape;
  const g = gates * hiddenSize;
  if (!sameShape(s.weight.shape, [numDirections, g, inputSize])) throw typeError(label, `weight must have shape [${numDirections}, ${g}, ${inputSize}], got [${s.weight.shape}]`);
  if (!sameShape(s.recurrentWeight.shape, [numDirections, g, hiddenSize])) throw typeError(label, `recurrentWeight must have shape [${numDirections}, ${g}, ${hiddenSize}], got [${s.recurrentWeight.shape}]`);
  if (hiddenSize * 2 * gates > MAX_DIMENSION) throw typeError(label, `hiddenSize ${hiddenSize} is too large`);
  checkOperand(s.bias, s.input, [numDirections, g], label, 'bias');
  checkOperand(s.recurrentBias, s.input, [numDirections, g], label, 'recurrentBias');
  if (kind === 'lstm') checkOperand(s.peepholeWeight, s.input, [numDirections, 3 * hiddenSize], label, 'peepholeWeight');
  checkOperand(s.initialHiddenState, s.input, [numDirections, batchSize, hiddenSize], label, 'initialHiddenState');
  if (kind === 'lstm') checkOperand(s.initialCellState, s.input, [numDirections, batchSize, hiddenSize], label, 'initialCellState');
  const attrs = {
    steps, hiddenSize, batchSize, inputSize, numDirections, direction,
    returnSequence: Boolean(options.returnSequence),
    has: presence(s),
  };
  return addGateOptions(attrs, gates, options, label);
}

/**
 * Spec gruCell() / lstmCell() steps.
 * @param {object} s slots: input, weight, recurrentWeight, hiddenState, (lstm) cellState,
 *   bias?, recurrentBias?, (lstm) peepholeWeight?
 * @returns {object} attrs {hiddenSize, batchSize, inputSize, layout, activations, resetAfter?, has}
 */
export function cellAttrs(kind, s, hiddenArg, options, label) {
  const gates = kind === 'gruCell' ? 3 : 4;
  const required = {input: s.input, weight: s.weight, recurrentWeight: s.recurrentWeight, hiddenState: s.hiddenState};
  if (kind === 'lstmCell') required.cellState = s.cellState;
  checkRanks(required, 2, label);
  for (const w of Object.keys(required)) {
    if (required[w].dataType !== s.input.dataType) throw typeError(label, `${w} must have the data type of input`);
  }
  const hiddenSize = checkUnsigned(hiddenArg, label, 'hiddenSize');
  const [batchSize, inputSize] = s.input.shape;
  const g = gates * hiddenSize;
  if (!sameShape(s.weight.shape, [g, inputSize])) throw typeError(label, `weight must have shape [${g}, ${inputSize}], got [${s.weight.shape}]`);
  if (!sameShape(s.recurrentWeight.shape, [g, hiddenSize])) throw typeError(label, `recurrentWeight must have shape [${g}, ${hiddenSize}], got [${s.recurrentWeight.shape}]`);
  if (!sameShape(s.hiddenState.shape, [batchSize, hiddenSize])) throw typeError(label, `hiddenState must have shape [${batchSize}, ${hiddenSize}], got [${s.hiddenState.shape}]`);
  if (kind === 'lstmCell' && !sameShape(s.cellState.shape, [batchSize, hiddenSize])) throw typeError(label, `cellState must have shape [${batchSize}, ${hiddenSize}], got [${s.cellState.shape}]`);
  if (hiddenSize * 2 * gates > MAX_DIMENSION) throw typeError(label, `hiddenSize ${hiddenSize} is too large`);
  checkOperand(s.bias, s.input, [g], label, 'bias');
  checkOperand(s.recurrentBias, s.input, [g], label, 'recurrentBias');
  if (kind === 'lstmCell') checkOperand(s.peepholeWeight, s.input, [3 * hiddenSize], label, 'peepholeWeight');
  const attrs = {
    steps: 1, hiddenSize, batchSize, inputSize, numDirections: 1, direction: 'forward', returnSequence: false,
    has: presence(s),
  };
  return addGateOptions(attrs, gates, options, label);
}
