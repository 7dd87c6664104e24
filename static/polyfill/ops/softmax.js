/**
 * softmax(input, axis) (spec §softmax): exp(x - max) / sum(exp(x - max)) along `axis`, the
 * max subtracted first for numerical stability. A row is the `axis` dimension at one position of
 * the others; long rows get one workgroup each (max and sum reduced in workgroup memory), short
 * rows one invocation each. As in the float64 definition, NaN anywhere in a row makes the row
 * NaN, as does +Inf or a row of only -Inf (x - max is NaN there); a -Inf entry among finite
 * ones gives 0. These are decided explicitly (gpu/math.js's max_nan_f, is_finite_f and exp_f, which
 * is 0 at -Inf and within 1 ULP elsewhere), not left to the driver's exp() of NaN/Inf.
 */
import {checkDataType} from '../shape/common.js';
import {checkAxis} from '../shape/reduce.js';
import {FLOAT_TYPES} from '../dtypes.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {addMathHelpers} from '../gpu/math.js';
import {addWorkgroupReduce, declareRowIndexers, rowWorkgroupSize, splitRows, useShortRows} from './rows.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

/**
 * Spec softmax(input, axis, options).
 * @throws {TypeError} input not float32/float16, axis not an unsigned long below the rank
 */
function softmax(builder, label, input, axis) {
  const s = operandOf(builder, input, label);
  checkDataType(s, FLOAT_TYPES, label);
  const a = checkAxis(axis, s.shape.length, label);
  return addNode(builder, 'softmax', [input], {axis: a}, [{dataType: s.dataType, shape: s.shape}], label)[0];
}

function lowerSoftmax(node, L) {
  const input = node.inputs[0];
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const split = splitRows(input.shape, [node.attrs.axis]);
  const short = useShortRows(L.ctx, split.rows, split.n);
  const shader = new Shader(short ? 'softmax_short' : 'softmax').read('X', T).write('Y', T);
  shader.uniform('rows').uniform('n');
  const uniforms = {rows: split.rows, n: split.n, ...declareRowIndexers(shader, split, 0, 'r', 'e')};
  shader.fn(storeHelpers(dt));
  // exp(x - max) (0 for x = -Inf); a row whose max is NaN or ±Inf is NaN.
  const store = storeExpr(dt, 'select(nan_f(), exp_f(f32(X[o]) - m) / s, is_finite_f(m))');
  if (short) {
    shader.main(`
  let base = r_offset(gi);
  var m = -inf_f();
  for (var j = 0u; j < u_n(); j++) { m = max_nan_f(m, f32(X[base + e_offset(j)])); }
  var s = 0.0;
  for (var j = 0u; j < u_n(); j++) { s += exp_f(f32(X[base + e_offset(j)]) - m); }
  for (var j = 0u; j < u_n(); j++) {
    let o = base + e_offset(j);
    Y[o] = ${store};
  }`);
    addMathHelpers(shader);
    L.step({shader, values: [L.value(input), L.result(node)], uniforms, threads: split.rows, label: node.label});
    return;
  }
  const size = rowWorkgroupSize(split.n, split.rows);
  addWorkgroupReduce(shader, 'wg_max', 'f32', 'max_nan_f(a, b)', size);
  addWorkgroupReduce(shader, 'wg_sum', 'f32', 'a + b', size);
  shader.main(`
  if (wg >= u_rows()) { return; }
  let base = r_offset(wg);
  var m = -inf_f();
  for (var j = li; j < u_n(); j += ${size}u) { m = max_nan_f(m, f32(X[base + e_offset(j)])); }
  m = wg_max(m, li);
  var s = 0.0;
  for (var j = li; j < u_n(); j += ${size}u) { s += exp_f(f32(X[base + e_offset(j)]) - m); }
  s = wg_sum(s, li);
  for (var j = li; j < u_n(); j += ${size}u) {
    let o = base + e_offset(j);
    Y[o] = ${store};
  }`, {workgroupSize: size, guard: false});
  addMathHelpers(shader);
  L.step({shader, values: [L.value(input), L.result(node)], uniforms, groups: split.rows, label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  softmax: {
    optionsIndex: 2,
    method: softmax,
    lower: lowerSoftmax,
    limits: () => ({input: tensorLimits(FLOAT_TYPES, rankRange(1)), output: tensorLimits(FLOAT_TYPES, rankRange(1))}),
  },
};
