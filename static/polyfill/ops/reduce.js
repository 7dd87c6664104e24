/**
 * Reduction operators (spec §reduction operations): reduceL1, reduceL2, reduceLogSum,
 * reduceLogSumExp, reduceMax, reduceMean, reduceMin, reduceProduct, reduceSum, reduceSumSquare.
 *
 * One table of WGSL fragments (map each element, combine two partial results, finish) over one
 * row kernel (rows.js): a row is one output element, its elements the reduced positions. Long
 * rows get a workgroup each, short rows an invocation each. Floats accumulate in f32 and
 * propagate NaN (max/min included); integers accumulate in their compute type (32-bit, or
 * 64-bit as (lo, hi) words through gpu/int64.js), wrapping on overflow. reduceLogSumExp subtracts
 * the row max first, so large inputs do not overflow. Float math (NaN-propagating max/min, ±Inf,
 * exp_f, log_f, sqrt_f) is gpu/math.js's, so these results agree with the element-wise operators.
 * A float reduceMin/reduceMax heads fused element-wise chains (compile/fusion.js; ORT's
 * DynamicQuantizeLinear: reduceMax -> max with 0 -> sub -> div), applied at its store.
 */
import {typeError} from '../errors.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {optionsDict, reductionShape} from '../shape/reduce.js';
import {addWorkgroupReduce, declareRowIndexers, rowWorkgroupSize, splitRows, useShortRows} from './rows.js';
import {rankRange, tensorLimits} from './limits.js';
import {INT64} from '../gpu/int64.js';
import {addMathHelpers} from '../gpu/math.js';
import {collectHelpers, helpersUsedIn} from '../gpu/wgsl_lib.js';
import {addNode, operandOf} from '../builder_state.js';
import {addEpilogue} from './epilogue.js';

const FLOAT = ['float32', 'float16'];
const INTEGER = ['int32', 'uint32', 'int64', 'uint64'];

/** Arithmetic kind of a data type's compute layout: f (f32), i32, u32, i64, u64 (vec2<u32>). */
export function kindOf(dataType) {
  return {float32: 'f', float16: 'f', int32: 'i32', int8: 'i32', uint32: 'u32', uint8: 'u32', int64: 'i64', uint64: 'u64'}[dataType];
}

/**
 * WGSL fragments per arithmetic kind: constants, and binary operations of `a` and `b` (64-bit
 * ones through gpu/int64.js; add and mul wrap, as for 32-bit integers).
 */
export const ARITH = {
  zero: {f: '0.0', i32: '0i', u32: '0u', i64: 'vec2<u32>(0u, 0u)', u64: 'vec2<u32>(0u, 0u)'},
  one: {f: '1.0', i32: '1i', u32: '1u', i64: 'vec2<u32>(1u, 0u)', u64: 'vec2<u32>(1u, 0u)'},
  lowest: {f: '-inf_f()', i32: 'bitcast<i32>(0x80000000u)', u32: '0u', i64: 'vec2<u32>(0u, 0x80000000u)', u64: 'vec2<u32>(0u, 0u)'},
  highest: {f: 'inf_f()', i32: '0x7fffffffi', u32: '0xffffffffu', i64: 'vec2<u32>(0xffffffffu, 0x7fffffffu)', u64: 'vec2<u32>(0xffffffffu, 0xffffffffu)'},
  add: {f: 'a + b', i32: 'a + b', u32: 'a + b', i64: 'i64_add(a, b)', u64: 'i64_add(a, b)'},
  mul: {f: 'a * b', i32: 'a * b', u32: 'a * b', i64: 'i64_mul(a, b)', u64: 'i64_mul(a, b)'},
  max: {f: 'max_nan_f(a, b)', i32: 'max(a, b)', u32: 'max(a, b)', i64: 'i64_max(a, b)', u64: 'u64_max(a, b)'},
  min: {f: 'min_nan_f(a, b)', i32: 'min(a, b)', u32: 'min(a, b)', i64: 'i64_min(a, b)', u64: 'u64_min(a, b)'},
  /** a < b */
  lt: {f: 'a < b', i32: 'a < b', u32: 'a < b', i64: 'i64_lt(a, b)', u64: 'u64_lt(a, b)'},
  /** a == b */
  eq: {f: 'a == b', i32: 'a == b', u32: 'a == b', i64: 'all(a == b)', u64: 'all(a == b)'},
};

/** ARITH[op][kind] with `a` and `b` replaced by the given WGSL expressions. */
export function arith(op, kind, a = 'a', b = 'b') {
  return ARITH[op][kind].replace(/\b[ab]\b/g, (v) => (v === 'a' ? a : b));
}

/** WGSL of the gpu/int64.js helpers that `code` calls. */
export function int64Helpers(code) {
  return collectHelpers(INT64, helpersUsedIn(INT64, code));
}

const L1 = {f: 'abs(x)', i32: 'abs(x)', u32: 'x', i64: 'i64_abs(x)', u64: 'x'};
const SQUARE = {f: 'x * x', i32: 'x * x', u32: 'x * x', i64: 'i64_mul(x, x)', u64: 'i64_mul(x, x)'};

/**
 * Reducers: data types (the spec's tensor limits), the initial value (an ARITH constant), the
 * per-element map of `x`, the combining ARITH operation, and the final expression of the row
 * result `acc` (`n` is the element count as f32; `m` the row max where `shifted`).
 */
export const REDUCERS = {
  reduceL1: {types: [...FLOAT, ...INTEGER], init: 'zero', map: L1, combine: 'add', final: 'acc'},
  reduceL2: {types: FLOAT, init: 'zero', map: SQUARE, combine: 'add', final: 'sqrt_f(acc)'},
  reduceLogSum: {types: FLOAT, init: 'zero', map: {f: 'x'}, combine: 'add', final: 'log_f(acc)'},
  reduceLogSumExp: {types: FLOAT, init: 'zero', map: {f: 'exp_f(x - m)'}, combine: 'add', final: 'select(m, m + log_f(acc), is_finite_f(m))', shifted: true},
  reduceMax: {types: [...FLOAT, ...INTEGER, 'int8', 'uint8'], init: 'lowest', combine: 'max', final: 'acc'},
  reduceMean: {types: FLOAT, init: 'zero', map: {f: 'x'}, combine: 'add', final: 'acc / n'},
  reduceMin: {types: [...FLOAT, ...INTEGER, 'int8', 'uint8'], init: 'highest', combine: 'min', final: 'acc'},
  reduceProduct: {types: [...FLOAT, ...INTEGER], init: 'one', combine: 'mul', final: 'acc'},
  reduceSum: {types: [...FLOAT, ...INTEGER], init: 'zero', combine: 'add', final: 'acc'},
  reduceSumSquare: {types: [...FLOAT, ...INTEGER], init: 'zero', map: SQUARE, combine: 'add', final: 'acc'},
};

function reduceMethod(name) {
  const def = REDUCERS[name];
  /**
   * Spec create reduction operation: MLReduceOptions {axes (default all), keepDimensions = false}.
   * @throws {TypeError} data type not allowed, duplicate or out-of-range axes
   */
  return function method(builder, label, input, options) {
    const opts = optionsDict(options, label);
    const s = operandOf(builder, input, label);
    if (!def.types.includes(s.dataType)) throw typeError(label, `input data type ${s.dataType} is not one of ${def.types.join(', ')}`);
    const {axes, shape} = reductionShape(s.shape, opts.axes, Boolean(opts.keepDimensions), label);
    return addNode(builder, name, [input], {axes}, [{dataType: s.dataType, shape}], label)[0];
  };
}

/**
 * Emits the reduction of `input` (an MLOperand) over `axes` into `out` (a Value, one element
 * per row in row-major order of the kept dimensions) with the reducer `def`; `node`'s fused
 * stages (attrs.epilogue) are applied to each row's result.
 */
export function reduceRows(L, def, input, axes, out, label, node = null) {
  const dt = input.dataType;
  const T = wgslType(dt);
  const split = splitRows(input.shape, axes);
  const short = useShortRows(L.ctx, split.rows, split.n);
  const shader = new Shader(short ? 'reduce_short' : 'reduce').read('X', T).write('Y', T);
  shader.uniform('rows').uniform('n');
  const uniforms = {rows: split.rows, n: split.n, ...declareRowIndexers(shader, split, 0, 'r', 'e')};
  const kind = kindOf(dt);
  const fns = `fn combine(a: ${T}, b: ${T}) -> ${T} { return ${ARITH[def.combine][kind]}; }
fn map_x(x: ${T}, m: f32) -> ${T} { return ${def.map?.[kind] ?? 'x'}; }
fn finish(acc: ${T}, m: f32) -> ${T} { let n = f32(u_n()); return ${def.final}; }`;
  shader.fn(storeHelpers(dt)).fn(int64Helpers(fns)).fn(fns);
  const ep = node?.attrs.epilogue?.length ? addEpilogue(shader, L, node) : null;
  const result = (i) => storeExpr(dt, ep ? `epilogue(finish(acc, m), ${i})` : 'finish(acc, m)');
  const values = [L.value(input), out, ...(ep?.values ?? [])];
  Object.assign(uniforms, ep?.uniforms);
  const init = ARITH[def.init][kind];
  const size = short ? 1 : rowWorkgroupSize(split.n, split.rows);
  const row = short ? 'gi' : 'wg';
  const first = short ? '0u' : 'li';
  const loop = (body) => `for (var j = ${first}; j < u_n(); j += ${size}u) { let x = X[base + e_offset(j)]; ${body} }`;
  let body = `  let base = r_offset(${row});\n  var m = 0.0;\n`;
  if (def.shifted) {
    body += `  m = -inf_f();\n  ${loop('m = max_nan_f(m, x);')}\n`;
    if (!short) {
      addWorkgroupReduce(shader, 'wg_max', 'f32', 'max_nan_f(a, b)', size);
      body += '  m = wg_max(m, li);\n';
    }
  }
  body += `  var acc: ${T} = ${init};\n  ${loop('acc = combine(acc, map_x(x, m));')}\n`;
  if (short) {
    shader.main(`${body}  Y[gi] = ${result('gi')};`);
    addMathHelpers(shader);
    L.step({shader, values, uniforms, threads: split.rows, label});
    return;
  }
  addWorkgroupReduce(shader, 'wg_red', T, 'combine(a, b)', size);
  shader.main(`  if (wg >= u_rows()) { return; }
${body}  acc = wg_red(acc, li);
  if (li == 0u) { Y[wg] = ${result('wg')}; }`, {workgroupSize: size, guard: false});
  addMathHelpers(shader);
  L.step({shader, values, uniforms, groups: split.rows, label});
}

function lowerReduce(node, L) {
  reduceRows(L, REDUCERS[node.op], node.inputs[0], node.attrs.axes, L.result(node), node.label, node);
}

/** Operator table entries (see ops/index.js). */
export const operators = {};
for (const [name, def] of Object.entries(REDUCERS)) {
  operators[name] = {
    optionsIndex: 1,
    method: reduceMethod(name),
    lower: lowerReduce,
    limits: () => ({input: tensorLimits(def.types, rankRange()), output: tensorLimits(def.types, rankRange())}),
  };
}
