/**
 * Activation operators (spec §clamp, §elu, §gelu, §hardSigmoid, §hardSwish, §leakyRelu,
 * §linear, §prelu, §relu, §sigmoid, §softplus, §softsign, §tanh): a table of WGSL expressions
 * per kind of data type over the generic element-wise kernel (elementwise_kernel.js).
 *
 * Options are converted as WebIDL does: `double` (alpha, beta) by ToNumber and must be finite;
 * MLNumber (clamp's minValue, maxValue) stays a BigInt or is ToNumber'd. They are then cast to the input's data type (spec "cast") before use, so a
 * float16 graph computes with float16 parameters and an int64 clamp with exact bigints.
 * NaN inputs propagate through every float activation.
 */
import {typeError} from '../errors.js';
import {ALL_TYPES} from '../dtypes.js';
import {broadcastShapes, checkDataType} from '../shape/common.js';
import {castNumber} from '../shape/cast.js';
import {emitElementwise, kindOf} from './elementwise_kernel.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

const F = ['float32', 'float16'];
const SIGNED = ['float32', 'float16', 'int64', 'int32', 'int8'];

/**
 * Single-input activations. `options`: MLXxxOptions members with their spec defaults (`double`),
 * read in the expressions as p_<name>().
 */
export const ACTIVATIONS = {
  relu: {types: SIGNED, f: 'clamp_nan_f(x, 0.0, inf_f())', i: 'max(x, 0)', i64: 'select(x, vec2<u32>(0u, 0u), i64_is_neg(x))'},
  sigmoid: {types: F, f: 'sigmoid_f(x)'},
  tanh: {types: F, f: 'tanh_f(x)'},
  elu: {types: F, options: {alpha: 1}, f: 'select(x, p_alpha() * expm1_f(x), x < 0.0)'},
  gelu: {types: F, f: 'gelu_f(x)'},
  hardSigmoid: {types: F, options: {alpha: 0.2, beta: 0.5},
    f: 'clamp_nan_f(mul_add_f(p_alpha(), x, p_beta()), 0.0, 1.0)'},
  hardSwish: {types: F, f: 'div_f(x * clamp_nan_f(x + 3.0, 0.0, 6.0), 6.0)'},
  leakyRelu: {types: F, options: {alpha: 0.01}, f: 'select(x, p_alpha() * x, x < 0.0)'},
  linear: {types: F, options: {alpha: 1, beta: 0}, f: 'mul_add_f(p_alpha(), x, p_beta())'},
  softplus: {types: F, f: 'clamp_nan_f(x, 0.0, inf_f()) + log1p_f(exp_f(-abs(x)))'},
  softsign: {types: F, f: 'div_f(x, 1.0 + abs(x))'},
  clamp: {types: ALL_TYPES, clamp: true,
    f: 'clamp_nan_f(x, p_minValue(), p_maxValue())',
    i: 'clamp(x, p_minValue(), p_maxValue())', u: 'clamp(x, p_minValue(), p_maxValue())',
    i64: 'i64_min(i64_max(x, p_minValue()), p_maxValue())', u64: 'u64_min(u64_max(x, p_minValue()), p_maxValue())'},
};

/** prelu(input, slope): `a` is the input, `b` the slope. */
const PRELU = {types: SIGNED, f: 'select(a, b * a, a < 0.0)', i: 'select(a, a * b, a < 0)', i64: 'select(a, i64_mul(a, b), i64_is_neg(a))'};

/** WebIDL `double`: ToNumber (a BigInt or Symbol throws), then it must be finite. */
function toDouble(value, label, what) {
  if (typeof value === 'bigint' || typeof value === 'symbol') throw typeError(label, `${what} must be a number`);
  const n = Number(value);
  if (!Number.isFinite(n)) throw typeError(label, `${what} must be a finite number, got ${String(value)}`);
  return n;
}

/** WebIDL `(bigint or unrestricted double)` (MLNumber): a BigInt stays one, anything else ToNumber. */
function toMLNumber(value, label, what) {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'symbol') throw typeError(label, `${what} must be an MLNumber`);
  return Number(value);
}

/** Spec clamp steps: minValue/maxValue cast to the input type; min > max is a TypeError. */
function clampAttrs(options, dataType, label) {
  const lo = castNumber(toMLNumber(options.minValue ?? -Infinity, label, 'minValue'), dataType);
  const hi = castNumber(toMLNumber(options.maxValue ?? Infinity, label, 'maxValue'), dataType);
  if (lo > hi) throw typeError(label, `minValue ${lo} is greater than maxValue ${hi}`);
  return {minValue: lo, maxValue: hi};
}

function activationMethod(name, def) {
  return function method(builder, label, input, options) {
    const s = operandOf(builder, input, label);
    checkDataType(s, def.types, label);
    options = options ?? {};
    if (typeof options !== 'object' && typeof options !== 'function') throw typeError(label, 'options must be a dictionary');
    let attrs = {};
    if (def.clamp) attrs = clampAttrs(options, s.dataType, label);
    for (const [key, fallback] of Object.entries(def.options ?? {})) {
      attrs[key] = castNumber(toDouble(options[key] ?? fallback, label, key), s.dataType);
    }
    return addNode(builder, name, [input], attrs, [{dataType: s.dataType, shape: s.shape.slice()}], label)[0];
  };
}

function lowerActivation(node, L) {
  const def = ACTIVATIONS[node.op];
  const dataType = node.inputs[0].dataType;
  const attrs = {};
  // the activation's own parameters, not the fused stages a pass added (attrs.epilogue)
  for (const [key, value] of Object.entries(node.attrs)) if (key !== 'epilogue') attrs[key] = {value, dataType};
  emitElementwise(L, node, {expr: def[kindOf(dataType)], vars: ['x'], attrs});
}

function preluMethod(builder, label, input, slope) {
  const si = operandOf(builder, input, label, 'input');
  const ss = operandOf(builder, slope, label, 'slope');
  checkDataType(si, PRELU.types, label, 'input');
  if (ss.dataType !== si.dataType) throw typeError(label, `slope (${ss.dataType}) must have the input's data type (${si.dataType})`);
  const shape = broadcastShapes(ss.shape, si.shape, label);
  return addNode(builder, 'prelu', [input, slope], {}, [{dataType: si.dataType, shape}], label)[0];
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  prelu: {
    optionsIndex: 2,
    method: preluMethod,
    lower: (node, L) => emitElementwise(L, node, {expr: PRELU[kindOf(node.inputs[0].dataType)], vars: ['a', 'b']}),
    limits: () => {
      const t = tensorLimits(PRELU.types, rankRange());
      return {input: t, slope: t, output: t};
    },
  },
};
for (const [name, def] of Object.entries(ACTIVATIONS)) {
  const t = tensorLimits(def.types, rankRange());
  operators[name] = {optionsIndex: 1, method: activationMethod(name, def), lower: lowerActivation, limits: () => ({input: t, output: t})};
}
