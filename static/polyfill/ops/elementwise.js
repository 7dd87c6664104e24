/**
 * Element-wise operators (spec §element-wise binary operations, §element-wise unary operations,
 * clamp, relu, sigmoid, tanh): each is one line in a table of WGSL expressions over one generic
 * kernel. Binary operators broadcast NumPy-style (spec "bidirectionally broadcasting").
 */
import {typeError} from '../errors.js';
import {broadcastShapes, broadcastStrides, checkDataType} from '../shape/common.js';
import {elementCount} from '../dtypes.js';
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {castNumber} from '../shape/cast.js';
import {tensorLimits, rankRange} from './limits.js';

const F = ['float32', 'float16'];

/** WGSL helpers some expressions need. */
const POW = `
fn pow_f(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return 1.0; }
  if (a == 1.0) { return 1.0; }
  let m = pow(abs(a), b);
  if (a < 0.0 || (a == 0.0 && bitcast<u32>(a) != 0u)) {
    if (floor(b) != b) { return select(bitcast<f32>(0x7fc00000u), m, a == 0.0); }
    let odd = abs(b) < 16777216.0 && (i32(abs(b)) & 1) == 1;
    return select(m, -m, odd);
  }
  if (a == 0.0) { return select(0.0, bitcast<f32>(0x7f800000u), b < 0.0); }
  return m;
}`;

/** Binary operators: a table of WGSL expressions on `a`, `b` of the compute type. */
export const BINARY = {
  add: {types: F, expr: 'a + b'},
  sub: {types: F, expr: 'a - b'},
  mul: {types: F, expr: 'a * b'},
  div: {types: F, expr: 'a / b'},
  max: {types: F, expr: 'select(max(a, b), a + b, a != a || b != b)'},
  min: {types: F, expr: 'select(min(a, b), a + b, a != a || b != b)'},
  pow: {types: F, expr: 'pow_f(a, b)', helpers: POW},
};

/**
 * Unary operators: WGSL expressions on `x`. `attrs` lists the uniforms (f32) an operator takes
 * from its options, read in the expression as u_<name>().
 */
export const UNARY = {
  relu: {types: F, expr: 'select(x, 0.0, x < 0.0)'},
  sigmoid: {types: F, expr: '1.0 / (1.0 + exp(-x))'},
  tanh: {types: F, expr: 'select(tanh(x), sign(x), abs(x) > 10.0)'},
  clamp: {types: F, expr: 'select(select(x, u_minValue(), x < u_minValue()), u_maxValue(), x > u_maxValue())', attrs: ['minValue', 'maxValue']},
};

function binaryMethod(name) {
  return function method(builder, label, a, b) {
    const sa = builder._operand(a, label, 'a');
    const sb = builder._operand(b, label, 'b');
    if (sa.dataType !== sb.dataType) throw typeError(label, `a (${sa.dataType}) and b (${sb.dataType}) must have the same data type`);
    checkDataType(sa, BINARY[name].types, label, 'a');
    const shape = broadcastShapes(sa.shape, sb.shape, label);
    return builder._node(name, [a, b], {}, [{dataType: sa.dataType, shape}], label)[0];
  };
}

function lowerBinary(node, L) {
  const def = BINARY[node.op];
  const [a, b] = node.inputs.map((x) => L.value(x));
  const out = node.outputs[0];
  const shape = out.shape;
  const dt = out.dataType;
  const T = wgslType(dt);
  const shapes = node.inputs.map((x) => x.shape);
  const flat = shapes.every((s) => elementCount(s) === elementCount(shape));
  const rank = flat ? 0 : shape.length;
  const shader = new Shader(node.op).read('A', T).read('B', T).write('Y', T);
  shader.fn(storeHelpers(dt)).fn(def.helpers ?? '');
  const uniforms = {};
  if (flat) {
    shader.fn('fn a_offset(i: u32) -> u32 { return i; }\nfn b_offset(i: u32) -> u32 { return i; }');
  } else {
    declareIndexer(shader, 'a', rank);
    declareIndexer(shader, 'b', rank);
    Object.assign(uniforms, {a_shape: shape, b_shape: shape, a_strides: broadcastStrides(shapes[0], shape), b_strides: broadcastStrides(shapes[1], shape)});
  }
  shader.main(`  let a = A[a_offset(gi)];\n  let b = B[b_offset(gi)];\n  Y[gi] = ${storeExpr(dt, def.expr)};`);
  L.step({shader, values: [a, b, L.result(node)], uniforms, threads: elementCount(shape), label: node.label});
}

function unaryMethod(name) {
  const def = UNARY[name];
  return function method(builder, label, input, options = {}) {
    const s = builder._operand(input, label);
    checkDataType(s, def.types, label);
    const attrs = {};
    if (name === 'clamp') {
      const minValue = options.minValue ?? -Infinity;
      const maxValue = options.maxValue ?? Infinity;
      if (typeof minValue !== 'number' && typeof minValue !== 'bigint') throw typeError(label, 'minValue must be a number');
      if (typeof maxValue !== 'number' && typeof maxValue !== 'bigint') throw typeError(label, 'maxValue must be a number');
      attrs.minValue = castNumber(minValue, s.dataType);
      attrs.maxValue = castNumber(maxValue, s.dataType);
      if (Number.isNaN(attrs.minValue) || Number.isNaN(attrs.maxValue)) throw typeError(label, 'minValue and maxValue must not be NaN');
      if (attrs.minValue > attrs.maxValue) throw typeError(label, `minValue ${attrs.minValue} is greater than maxValue ${attrs.maxValue}`);
    }
    return builder._node(name, [input], attrs, [{dataType: s.dataType, shape: s.shape}], label)[0];
  };
}

function lowerUnary(node, L) {
  const def = UNARY[node.op];
  const x = L.value(node.inputs[0]);
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const shader = new Shader(node.op).read('X', T).write('Y', T);
  const uniforms = {};
  for (const name of def.attrs ?? []) {
    shader.uniform(name, 'f32');
    uniforms[name] = Number(node.attrs[name]);
  }
  shader.fn(storeHelpers(dt)).fn(def.helpers ?? '');
  shader.main(`  let x = X[gi];\n  Y[gi] = ${storeExpr(dt, def.expr)};`);
  L.step({shader, values: [x, L.result(node)], uniforms, threads: elementCount(node.outputs[0].shape), label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {};
for (const [name, def] of Object.entries(BINARY)) {
  operators[name] = {
    optionsIndex: 2,
    method: binaryMethod(name),
    lower: lowerBinary,
    limits: () => ({a: tensorLimits(def.types, rankRange()), b: tensorLimits(def.types, rankRange()), output: tensorLimits(def.types, rankRange())}),
  };
}
for (const [name, def] of Object.entries(UNARY)) {
  operators[name] = {
    optionsIndex: 1,
    method: unaryMethod(name),
    lower: lowerUnary,
    limits: () => ({input: tensorLimits(def.types, rankRange()), output: tensorLimits(def.types, rankRange())}),
  };
}
