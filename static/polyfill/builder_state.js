/**
 * The internal state of each MLGraphBuilder (spec §MLGraphBuilder), kept off the public object in
 * a module-private WeakMap, and the functions graph_builder.js and the operator modules (ops/*.js)
 * use on it: check an operand argument, record an operator node. It imports neither
 * graph_builder.js nor ops/, so operator modules can import it without an import cycle.
 */
import {domError, typeError} from './errors.js';
import {checkTensorSize} from './shape/common.js';
import {createOperand, isOperand, slots} from './operand.js';
import {tensorSlots} from './tensor.js';
import {INT4_TYPES} from './dtypes.js';

/**
 * The builder methods that take int4/uint4 operands, as in Chromium 156's opSupportLimits():
 * dequantizeLinear (input, zeroPoint) and quantizeLinear (zeroPoint); they check the roles
 * themselves (ops/quantize.js). Every other method refuses a 4-bit operand in operandOf().
 */
const FOUR_BIT_METHODS = new Set(['dequantizeLinear', 'quantizeLinear']);

/** MLGraphBuilder -> {context, ctx, built, inputNames, nodes, origin} */
const STATE = new WeakMap();

/**
 * Gives a new MLGraphBuilder its state.
 * @param {object} builder the MLGraphBuilder
 * @param {object} context its MLContext
 * @param {object} ctx the context's slots (context.js contextSlots)
 */
export function initBuilderState(builder, context, ctx) {
  // origin: {type, label} of the builder method running now (outermost call), recorded on its nodes
  STATE.set(builder, {context, ctx, built: false, inputNames: new Set(), nodes: [], origin: null});
}

/**
 * @returns {{context: object, ctx: object, built: boolean, inputNames: Set<string>, nodes: object[],
 *   origin: ?{type: string, label: string}}|undefined} the builder's state (undefined for a non-builder)
 */
export function builderState(builder) {
  return STATE.get(builder);
}

/**
 * Throws unless the builder may still record operators.
 * @throws {TypeError} when `builder` is not an MLGraphBuilder (a method called on another object)
 * @throws {DOMException} InvalidStateError after build() or when the context is lost
 */
export function checkCanBuild(builder, label) {
  const s = STATE.get(builder);
  if (!s) throw new TypeError('Illegal invocation');
  if (s.built) throw domError('InvalidStateError', 'the builder has already built a graph', label);
  if (s.ctx.lostInfo) throw domError('InvalidStateError', 'the context is lost', label);
}

/**
 * Spec "check dimensions" for every operand this builder makes: valid dimensions and element
 * count, and a byte length the context supports (its tensorLimit: the elements' bytes as its
 * backend computes on them within opSupportLimits().maxTensorByteLength).
 * @param {{dataType: string, shape: number[]}} desc
 * @returns {{dataType: string, shape: number[]}} desc
 * @throws {TypeError}
 */
export function checkSupported(builder, desc, label) {
  return checkTensorSize(desc, STATE.get(builder).ctx.tensorLimit, label);
}

/**
 * Checks that `value` is an MLOperand of `builder` (and not a destroyed constant tensor).
 * @param {string} what the argument's name, for the message
 * @returns {object} the operand's slots (operand.js)
 * @throws {TypeError}
 */
export function operandOf(builder, value, label, what = 'input') {
  if (!isOperand(value)) throw typeError(label, `${what} is not an MLOperand`);
  const s = slots(value);
  if (s.builder !== builder) throw typeError(label, `${what} belongs to another MLGraphBuilder`);
  if (s.kind === 'constant' && s.tensor && tensorSlots(s.tensor).destroyed) throw typeError(label, `${what} is a destroyed constant tensor`);
  if (INT4_TYPES.includes(s.dataType) && !FOUR_BIT_METHODS.has(STATE.get(builder).origin?.type)) {
    throw typeError(label, `${what}'s data type ${s.dataType} is not supported (only dequantizeLinear and quantizeLinear take 4-bit operands)`);
  }
  return s;
}

/**
 * Runs `fn` with `origin` recorded on the nodes it makes, unless an outer builder method's
 * origin is already set (an operator built from others keeps the outer method's origin).
 * @param {{type: string, label: string}} origin type: the builder method, label: the user's label or ''
 */
export function withOrigin(builder, origin, fn) {
  const s = STATE.get(builder);
  if (s.origin) return fn();
  s.origin = origin;
  try {
    return fn();
  } finally {
    s.origin = null;
  }
}

/**
 * Records an operator node and returns its output operands, in a new array: the caller's to hand
 * out (split() and the recurrent ops return it), so a user who reorders it in place (ORT-web's
 * WebNN EP reverses split's halves for RotaryEmbedding) cannot reorder the node's outputs.
 * @param {string} op spec operator name
 * @param {MLOperand[]} inputs operand inputs (positional and from options), already checked
 * @param {object} attrs everything the kernel needs beyond the inputs
 * @param {{dataType: string, shape: number[]}[]} outDescs
 * @param {string} label
 * @returns {MLOperand[]}
 * @throws {TypeError} an output descriptor fails checkSupported (nothing is recorded then)
 */
export function addNode(builder, op, inputs, attrs, outDescs, label) {
  const s = STATE.get(builder);
  // origin: the builder operator the node came from (type = method name, label = the user's
  // label option or ''), for the profile of compiled steps (profiling.js)
  const origin = s.origin ?? {type: op, label: ''};
  for (const desc of outDescs) checkSupported(builder, desc, label);
  const node = {id: s.nodes.length, op, inputs, attrs, label, origin, outputs: []};
  node.outputs = outDescs.map((desc, index) => createOperand(builder, desc, {kind: 'op', node, index}));
  s.nodes.push(node);
  return node.outputs.slice();
}
