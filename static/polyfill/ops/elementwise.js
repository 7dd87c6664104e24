/**
 * Element-wise operators (spec §Element-wise binary operations, §Element-wise logical operations,
 * §Element-wise unary operations): each is one line in a table of WGSL expressions per kind of
 * data type (see elementwise_kernel.js), over one generic kernel. Binary and logical operators
 * broadcast NumPy-style (spec "bidirectionally broadcasting").
 *
 * Integer semantics: add/sub/mul/neg/abs wrap around; div truncates toward zero, x / 0 = x;
 * pow with a negative integer exponent truncates toward zero (1, ±1 for bases 1 and -1, else 0).
 * Float max/min propagate NaN; comparisons are false with a NaN operand (notEqual true);
 * sign(NaN) = 0 as the spec's "0 otherwise" says.
 */
import {typeError} from '../errors.js';
import {ALL_TYPES} from '../dtypes.js';
import {broadcastShapes, checkDataType} from '../shape/common.js';
import {emitElementwise, kindOf} from './elementwise_kernel.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

const F = ['float32', 'float16'];
const SIGNED = ['float32', 'float16', 'int64', 'int32', 'int8'];
const U8 = ['uint8'];

/** Same expression for every integer kind of 32 bits or less. */
const int32 = (e) => ({i: e, u: e});
/** Same expression for both 64-bit kinds. */
const int64 = (e) => ({i64: e, u64: e});

/** Binary operators returning the input type: WGSL expressions on `a`, `b` per kind. */
export const BINARY = {
  add: {types: ALL_TYPES, f: 'a + b', ...int32('a + b'), ...int64('i64_add(a, b)')},
  sub: {types: ALL_TYPES, f: 'a - b', ...int32('a - b'), ...int64('i64_sub(a, b)')},
  mul: {types: ALL_TYPES, f: 'a * b', ...int32('a * b'), ...int64('i64_mul(a, b)')},
  div: {types: ALL_TYPES, f: 'div_f(a, b)', ...int32('a / b'), i64: 'i64_div(a, b)', u64: 'u64_div(a, b)'},
  max: {types: ALL_TYPES, f: 'select(select(b, a, a > b), a + b, is_nan_f(a) || is_nan_f(b))', ...int32('max(a, b)'), i64: 'i64_max(a, b)', u64: 'u64_max(a, b)'},
  min: {types: ALL_TYPES, f: 'select(select(b, a, a < b), a + b, is_nan_f(a) || is_nan_f(b))', ...int32('min(a, b)'), i64: 'i64_min(a, b)', u64: 'u64_min(a, b)'},
  pow: {types: ALL_TYPES, f: 'pow_f(a, b)', i: 'i32_pow(a, b)', u: 'u32_pow(a, b)', i64: 'i64_pow(a, b)', u64: 'u64_pow(a, b)'},
};

const ORDERED = '!(is_nan_f(a) || is_nan_f(b)) && ';

/** Logical operators: boolean WGSL expressions, stored as uint8 0/1. */
export const LOGICAL = {
  equal: {types: ALL_TYPES, f: `${ORDERED}a == b`, ...int32('a == b'), ...int64('i64_eq(a, b)')},
  notEqual: {types: ALL_TYPES, f: `!(${ORDERED}a == b)`, ...int32('a != b'), ...int64('!i64_eq(a, b)')},
  greater: {types: ALL_TYPES, f: `${ORDERED}a > b`, ...int32('a > b'), i64: 'i64_lt(b, a)', u64: 'u64_lt(b, a)'},
  greaterOrEqual: {types: ALL_TYPES, f: `${ORDERED}a >= b`, ...int32('a >= b'), i64: '!i64_lt(a, b)', u64: '!u64_lt(a, b)'},
  lesser: {types: ALL_TYPES, f: `${ORDERED}a < b`, ...int32('a < b'), i64: 'i64_lt(a, b)', u64: 'u64_lt(a, b)'},
  lesserOrEqual: {types: ALL_TYPES, f: `${ORDERED}a <= b`, ...int32('a <= b'), i64: '!i64_lt(b, a)', u64: '!u64_lt(b, a)'},
  logicalAnd: {types: U8, u: 'a != 0u && b != 0u'},
  logicalOr: {types: U8, u: 'a != 0u || b != 0u'},
  logicalXor: {types: U8, u: '(a != 0u) != (b != 0u)'},
  logicalNot: {types: U8, unary: true, u: 'x == 0u'},
  isNaN: {types: F, unary: true, f: 'is_nan_f(x)'},
  isInfinite: {types: F, unary: true, f: 'is_inf_f(x)'},
};

/** Unary operators returning the input type: WGSL expressions on `x` per kind. */
export const UNARY = {
  abs: {types: SIGNED, f: 'abs(x)', i: 'abs(x)', i64: 'i64_abs(x)'},
  ceil: {types: F, f: 'ceil(x)'},
  cos: {types: F, f: 'cos_f(x)'},
  erf: {types: F, f: 'erf_f(x)'},
  exp: {types: F, f: 'exp_f(x)'},
  floor: {types: F, f: 'floor(x)'},
  log: {types: F, f: 'log_f(x)', h: 'log_f16(x)'},
  neg: {types: SIGNED, f: '-x', i: '-x', i64: 'i64_neg(x)'},
  reciprocal: {types: F, f: 'div_f(1.0, x)'},
  roundEven: {types: F, f: 'round_even_f(x)'},
  sin: {types: F, f: 'sin_f(x)'},
  sign: {types: SIGNED, f: 'select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0)', i: 'sign(x)', i64: 'i64_sign(x)'},
  sqrt: {types: F, f: 'sqrt_f(x)'},
  tan: {types: F, f: 'tan_f(x)'},
};

/**
 * The expression of table entry `def` for inputs of dataType (the builder checked the type):
 * `h` overrides `f` for float16 where a result rounded first to f32 could round wrongly to f16.
 */
export function exprFor(def, dataType) {
  if (dataType === 'float16' && def.h) return def.h;
  return def[kindOf(dataType)];
}

function binaryMethod(name, def, outType) {
  return function method(builder, label, a, b) {
    const sa = operandOf(builder, a, label, 'a');
    const sb = operandOf(builder, b, label, 'b');
    checkDataType(sa, def.types, label, 'a');
    if (sa.dataType !== sb.dataType) throw typeError(label, `a (${sa.dataType}) and b (${sb.dataType}) must have the same data type`);
    const shape = broadcastShapes(sa.shape, sb.shape, label);
    return addNode(builder, name, [a, b], {}, [{dataType: outType ?? sa.dataType, shape}], label)[0];
  };
}

function unaryMethod(name, def, outType) {
  return function method(builder, label, input) {
    const s = operandOf(builder, input, label, def.unary ? 'a' : 'input');
    checkDataType(s, def.types, label, def.unary ? 'a' : 'input');
    return addNode(builder, name, [input], {}, [{dataType: outType ?? s.dataType, shape: s.shape.slice()}], label)[0];
  };
}

function lowerWith(table, bool) {
  return (node, L) => {
    const def = table[node.op];
    const vars = node.inputs.length === 1 ? ['x'] : ['a', 'b'];
    emitElementwise(L, node, {expr: exprFor(def, node.inputs[0].dataType), vars, bool});
  };
}

/** Operator table entries (see ops/index.js). */
export const operators = {};
for (const [name, def] of Object.entries(BINARY)) {
  const t = tensorLimits(def.types, rankRange());
  operators[name] = {optionsIndex: 2, method: binaryMethod(name, def), lower: lowerWith(BINARY, false), limits: () => ({a: t, b: t, output: t})};
}
for (const [name, def] of Object.entries(LOGICAL)) {
  const t = tensorLimits(def.types, rankRange());
  const out = tensorLimits(U8, rankRange());
  operators[name] = def.unary
    ? {optionsIndex: 1, method: unaryMethod(name, def, 'uint8'), lower: lowerWith(LOGICAL, true), limits: () => ({a: t, output: out})}
    : {optionsIndex: 2, method: binaryMethod(name, def, 'uint8'), lower: lowerWith(LOGICAL, true), limits: () => ({a: t, b: t, output: out})};
}
for (const [name, def] of Object.entries(UNARY)) {
  const t = tensorLimits(def.types, rankRange());
  operators[name] = {optionsIndex: 1, method: unaryMethod(name, def), lower: lowerWith(UNARY, false), limits: () => ({input: t, output: t})};
}
