/**
 * Reduction operators (spec §reduction operations): reduceL1, reduceL2, reduceLogSum,
 * reduceLogSumExp, reduceMax, reduceMean, reduceMin, reduceProduct, reduceSum, reduceSumSquare.
 *
 * One table of WGSL fragments (map each element, combine two partial results, finish) over one
 * row kernel (rows.js): a row is one output element, its elements the reduced positions. Long
 * rows get a workgroup each, short rows an invocation each. Floats accumulate in f32 and
 * propagate NaN (max/min included); int32/uint32 (and int8/uint8 for max/min) accumulate in
 * 32-bit integers, wrapping on overflow. reduceLogSumExp subtracts the row max first, so large
 * inputs do not overflow; log and exp are the accurate versions from rows.js.
 */
import {typeError} from '../errors.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {optionsDict, reductionShape} from '../shape/reduce.js';
import {FLOAT_HELPERS, addWorkgroupReduce, declareRowIndexers, rowWorkgroupSize, splitRows, useShortRows} from './rows.js';
import {rankRange, tensorLimits} from './limits.js';

const FLOAT = ['float32', 'float16'];
const INT32 = ['int32', 'uint32'];

/** WGSL constant of a compute type T: 'zero' | 'one' | 'lowest' | 'highest'. */
function constant(T, which) {
  const table = {
    f32: {zero: '0.0', one: '1.0', lowest: '-inf_f32(0u)', highest: 'inf_f32(0u)'},
    i32: {zero: '0i', one: '1i', lowest: 'bitcast<i32>(0x80000000u)', highest: '0x7fffffffi'},
    u32: {zero: '0u', one: '1u', lowest: '0u', highest: '0xffffffffu'},
  };
  return table[T][which];
}

const SUM = (T) => 'a + b';
const MAX = (T) => (T === 'f32' ? 'max_nan(a, b)' : 'max(a, b)');
const MIN = (T) => (T === 'f32' ? 'min_nan(a, b)' : 'min(a, b)');

/**
 * Reducers: data types (spec tensor limits, restricted to what the kernels implement), the
 * initial value, the per-element map of `x`, the combine of `a` and `b`, and the final
 * expression of the row result `acc` (`n` is the element count as f32).
 */
export const REDUCERS = {
  reduceL1: {types: [...FLOAT, ...INT32], init: 'zero', map: (T) => (T === 'u32' ? 'x' : 'abs(x)'), combine: SUM, final: 'acc'},
  reduceL2: {types: FLOAT, init: 'zero', map: () => 'x * x', combine: SUM, final: 'sqrt(acc)'},
  reduceLogSum: {types: FLOAT, init: 'zero', map: () => 'x', combine: SUM, final: 'log_acc(acc)'},
  reduceLogSumExp: {types: FLOAT, init: 'zero', map: () => 'exp_acc(x - m)', combine: SUM, final: 'select(m, m + log_acc(acc), is_finite(m))', shifted: true},
  reduceMax: {types: [...FLOAT, ...INT32, 'int8', 'uint8'], init: 'lowest', map: () => 'x', combine: MAX, final: 'acc'},
  reduceMean: {types: FLOAT, init: 'zero', map: () => 'x', combine: SUM, final: 'acc / n'},
  reduceMin: {types: [...FLOAT, ...INT32, 'int8', 'uint8'], init: 'highest', map: () => 'x', combine: MIN, final: 'acc'},
  reduceProduct: {types: [...FLOAT, ...INT32], init: 'one', map: () => 'x', combine: (T) => 'a * b', final: 'acc'},
  reduceSum: {types: [...FLOAT, ...INT32], init: 'zero', map: () => 'x', combine: SUM, final: 'acc'},
  reduceSumSquare: {types: [...FLOAT, ...INT32], init: 'zero', map: () => 'x * x', combine: SUM, final: 'acc'},
};

function reduceMethod(name) {
  const def = REDUCERS[name];
  /**
   * Spec create reduction operation: MLReduceOptions {axes (default all), keepDimensions = false}.
   * @throws {TypeError} data type not allowed, duplicate or out-of-range axes
   */
  return function method(builder, label, input, options) {
    const opts = optionsDict(options, label);
    const s = builder._operand(input, label);
    if (!def.types.includes(s.dataType)) throw typeError(label, `input data type ${s.dataType} is not one of ${def.types.join(', ')}`);
    const {axes, shape} = reductionShape(s.shape, opts.axes, Boolean(opts.keepDimensions), label);
    return builder._node(name, [input], {axes}, [{dataType: s.dataType, shape}], label)[0];
  };
}

/**
 * Emits the reduction of `input` (an MLOperand) over `axes` into `out` (a Value, one element
 * per row in row-major order of the kept dimensions) with the reducer `def`.
 */
export function reduceRows(L, def, input, axes, out, label) {
  const dt = input.dataType;
  const T = wgslType(dt);
  const split = splitRows(input.shape, axes);
  const short = useShortRows(L.ctx, split.rows, split.n);
  const shader = new Shader(short ? 'reduce_short' : 'reduce').read('X', T).write('Y', T);
  shader.uniform('rows').uniform('n');
  const uniforms = {rows: split.rows, n: split.n, ...declareRowIndexers(shader, split, 0, 'r', 'e')};
  shader.fn(storeHelpers(dt)).fn(FLOAT_HELPERS);
  shader.fn(`fn combine(a: ${T}, b: ${T}) -> ${T} { return ${def.combine(T)}; }
fn map_x(x: ${T}, m: f32) -> ${T} { return ${def.map(T)}; }
fn finish(acc: ${T}, m: f32) -> ${T} { let n = f32(u_n()); return ${def.final}; }`);
  const init = constant(T, def.init);
  const size = short ? 1 : rowWorkgroupSize(split.n);
  const row = short ? 'gi' : 'wg';
  const first = short ? '0u' : 'li';
  const loop = (body) => `for (var j = ${first}; j < u_n(); j += ${size}u) { let x = X[base + e_offset(j)]; ${body} }`;
  let body = `  let base = r_offset(${row});\n  var m = 0.0;\n`;
  if (def.shifted) {
    body += `  m = -inf_f32(0u);\n  ${loop('m = max_nan(m, x);')}\n`;
    if (!short) {
      addWorkgroupReduce(shader, 'wg_max', 'f32', 'max_nan(a, b)', size);
      body += '  m = wg_max(m, li);\n';
    }
  }
  body += `  var acc: ${T} = ${init};\n  ${loop('acc = combine(acc, map_x(x, m));')}\n`;
  if (short) {
    shader.main(`${body}  Y[gi] = ${storeExpr(dt, 'finish(acc, m)')};`);
    L.step({shader, values: [L.value(input), out], uniforms, threads: split.rows, label});
    return;
  }
  addWorkgroupReduce(shader, 'wg_red', T, 'combine(a, b)', size);
  shader.main(`  if (wg >= u_rows()) { return; }
${body}  acc = wg_red(acc, li);
  if (li == 0u) { Y[wg] = ${storeExpr(dt, 'finish(acc, m)')}; }`, {workgroupSize: size, guard: false});
  L.step({shader, values: [L.value(input), out], uniforms, groups: split.rows, label});
}

function lowerReduce(node, L) {
  reduceRows(L, REDUCERS[node.op], node.inputs[0], node.attrs.axes, L.result(node), node.label);
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
