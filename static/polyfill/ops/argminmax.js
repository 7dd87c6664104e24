/**
 * argMin / argMax (spec §argMin/argMax operations): the index along `axis` of the smallest /
 * largest value. Ties resolve to the lowest index (the spec leaves ties to the implementation;
 * this is NumPy's choice), and a NaN counts as the extreme value (NumPy's choice too), so the
 * first NaN of a row is its answer. Output int32, or int64 stored as (lo, hi) words.
 */
import {typeError} from '../errors.js';
import {Shader} from '../gpu/wgsl.js';
import {wgslType} from '../gpu/types.js';
import {checkAxis, optionsDict, reductionShape} from '../shape/reduce.js';
import {enumValue} from '../shape/common.js';
import {addMathHelpers} from '../gpu/math.js';
import {addWorkgroupReduce, declareRowIndexers, rowWorkgroupSize, splitRows, useShortRows} from './rows.js';
import {rankRange, tensorLimits} from './limits.js';
import {arith, int64Helpers, kindOf} from './reduce.js';
import {addNode, operandOf} from '../builder_state.js';

/** Input types (spec: any). */
const INPUT_TYPES = ['float32', 'float16', 'int32', 'uint32', 'int64', 'uint64', 'int8', 'uint8'];
const OUTPUT_TYPES = ['int32', 'int64'];
const MAX_INDEX = {int32: 2 ** 31 - 1, int64: Number.MAX_SAFE_INTEGER};

function argMethod(name) {
  /**
   * Spec create an argMin/argMax operation: MLArgMinMaxOptions {keepDimensions = false,
   * outputDataType = "int32"}.
   * @throws {TypeError} axis out of range, input type not supported, outputDataType not int32/int64
   */
  return function method(builder, label, input, axis, options) {
    const opts = optionsDict(options, label);
    const s = operandOf(builder, input, label);
    if (!INPUT_TYPES.includes(s.dataType)) throw typeError(label, `input data type ${s.dataType} is not one of ${INPUT_TYPES.join(', ')}`);
    const a = checkAxis(axis, s.shape.length, label);
    const outputDataType = enumValue(opts.outputDataType, OUTPUT_TYPES, 'int32', label, 'outputDataType');
    if (s.shape[a] > MAX_INDEX[outputDataType]) throw typeError(label, `dimension ${s.shape[a]} does not fit ${outputDataType}`);
    const {shape} = reductionShape(s.shape, [a], Boolean(opts.keepDimensions), label);
    return addNode(builder, name, [input], {axis: a}, [{dataType: outputDataType, shape}], label)[0];
  };
}

/** WGSL: `better(a, b)` picks the winning (value, index) pair. */
function pickFn(T, kind, isMax) {
  const wins = isMax ? arith('lt', kind, 'b.v', 'a.v') : arith('lt', kind, 'a.v', 'b.v');
  const nan = kind === 'f'
    ? `  if (is_nan_f(a.v) != is_nan_f(b.v)) { if (is_nan_f(a.v)) { return a; } return b; }
  if (is_nan_f(a.v)) { if (a.i < b.i) { return a; } return b; }\n`
    : '';
  return `struct Pair { v: ${T}, i: u32 };
fn better(a: Pair, b: Pair) -> Pair {
${nan}  if (${wins} || (${arith('eq', kind, 'a.v', 'b.v')} && a.i < b.i)) { return a; }
  return b;
}`;
}

function lowerArg(node, L) {
  const input = node.inputs[0];
  const T = wgslType(input.dataType);
  const outType = node.outputs[0].dataType;
  const O = wgslType(outType);
  const split = splitRows(input.shape, [node.attrs.axis]);
  const short = useShortRows(L.ctx, split.rows, split.n);
  const shader = new Shader(`${node.op}${short ? '_short' : ''}`).read('X', T).write('Y', O);
  shader.uniform('rows').uniform('n');
  const uniforms = {rows: split.rows, n: split.n, ...declareRowIndexers(shader, split, 0, 'r', 'e')};
  const pick = pickFn(T, kindOf(input.dataType), node.op === 'argMax');
  shader.fn(int64Helpers(pick)).fn(pick);
  const store = O === 'vec2<u32>' ? 'vec2<u32>(best.i, 0u)' : `${O}(best.i)`;
  const size = short ? 1 : rowWorkgroupSize(split.n, split.rows);
  const row = short ? 'gi' : 'wg';
  const body = `  let base = r_offset(${row});
  var best = Pair(X[base + e_offset(${short ? '0u' : 'min(li, u_n() - 1u)'})], ${short ? '0u' : 'min(li, u_n() - 1u)'});
  for (var j = ${short ? '1u' : 'li'}; j < u_n(); j += ${size}u) { best = better(best, Pair(X[base + e_offset(j)], j)); }
`;
  const values = [L.value(input), L.result(node)];
  if (short) {
    shader.main(`${body}  Y[gi] = ${store};`);
    addMathHelpers(shader);
    L.step({shader, values, uniforms, threads: split.rows, label: node.label});
    return;
  }
  addWorkgroupReduce(shader, 'wg_best', 'Pair', 'better(a, b)', size);
  shader.main(`  if (wg >= u_rows()) { return; }
${body}  best = wg_best(best, li);
  if (li == 0u) { Y[wg] = ${store}; }`, {workgroupSize: size, guard: false});
  addMathHelpers(shader);
  L.step({shader, values, uniforms, groups: split.rows, label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {};
for (const name of ['argMin', 'argMax']) {
  operators[name] = {
    optionsIndex: 2,
    method: argMethod(name),
    lower: lowerArg,
    limits: () => ({input: tensorLimits(INPUT_TYPES, rankRange(1)), output: tensorLimits(OUTPUT_TYPES, rankRange())}),
  };
}
