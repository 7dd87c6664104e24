/**
 * cumulativeSum(input, axis, {exclusive, reversed}) (spec §cumulativeSum): running sums along
 * `axis`, inclusive or exclusive of the current element, forward or from the end.
 *
 * Short rows (or many of them): one invocation scans a row. Long rows: a workgroup of 64 splits
 * the row into 64 consecutive chunks, sums each, scans the 64 chunk sums in workgroup memory,
 * then each invocation writes its chunk's running sums from its chunk's starting offset.
 * Floats in f32, integers in their compute type (int64/uint64 as (lo, hi) words), wrapping.
 */
import {typeError} from '../errors.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {optionsDict} from '../shape/reduce.js';
import {declareRowIndexers, splitRows, useShortRows} from './rows.js';
import {rankRange, tensorLimits} from './limits.js';
import {ARITH, arith, int64Helpers, kindOf} from './reduce.js';
import {addNode, operandOf} from '../builder_state.js';

const TYPES = ['float32', 'float16', 'int32', 'uint32', 'int64', 'uint64'];
const CHUNKS = 64;

/** WebIDL `unsigned long` (no [EnforceRange]): NaN/±Inf -> 0, else truncated modulo 2^32. */
function toUnsignedLong(value, label) {
  if (typeof value === 'bigint' || typeof value === 'symbol') throw typeError(label, 'axis must be a number');
  const n = Number(value);
  if (!Number.isFinite(n)) return 0;
  const t = Math.trunc(n) % 2 ** 32;
  return t < 0 ? t + 2 ** 32 : t;
}

/**
 * Spec cumulativeSum(input, axis, options): MLCumulativeSumOptions {exclusive = false,
 * reversed = false}.
 * @throws {TypeError} data type not allowed, axis >= rank (rank 0 included)
 */
function cumulativeSum(builder, label, input, axis, options) {
  const opts = optionsDict(options, label);
  const s = operandOf(builder, input, label);
  if (!TYPES.includes(s.dataType)) throw typeError(label, `input data type ${s.dataType} is not one of ${TYPES.join(', ')}`);
  const a = toUnsignedLong(axis, label);
  if (a >= s.shape.length) throw typeError(label, `axis ${a} is out of range for rank ${s.shape.length}`);
  const attrs = {axis: a, exclusive: Boolean(opts.exclusive), reversed: Boolean(opts.reversed)};
  return addNode(builder, 'cumulativeSum', [input], attrs, [{dataType: s.dataType, shape: s.shape}], label)[0];
}

function lowerCumulativeSum(node, L) {
  const input = node.inputs[0];
  const dt = input.dataType;
  const T = wgslType(dt);
  const {axis, exclusive, reversed} = node.attrs;
  const split = splitRows(input.shape, [axis]);
  const short = useShortRows(L.ctx, split.rows, split.n);
  const shader = new Shader(`cumulativeSum${short ? '_short' : ''}`).read('X', T).write('Y', T);
  shader.uniform('rows').uniform('n');
  const uniforms = {rows: split.rows, n: split.n, ...declareRowIndexers(shader, split, 0, 'r', 'e')};
  const kind = kindOf(dt);
  const zero = ARITH.zero[kind];
  const add = (acc, x) => arith('add', kind, acc, x);
  shader.fn(int64Helpers(add('acc', 'x')));
  // position p of the scan order -> element index along the axis
  shader.fn(storeHelpers(dt)).fn(`fn at(p: u32) -> u32 { return ${reversed ? 'u_n() - 1u - p' : 'p'}; }`);
  const scan = (from, to) => `for (var p = ${from}; p < ${to}; p++) {
    let o = base + e_offset(at(p));
    let x = X[o];
    ${exclusive ? `Y[o] = ${storeExpr(dt, 'acc')};\n    acc = ${add('acc', 'x')};` : `acc = ${add('acc', 'x')};\n    Y[o] = ${storeExpr(dt, 'acc')};`}
  }`;
  const values = [L.value(input), L.result(node)];
  if (short) {
    shader.main(`  let base = r_offset(gi);\n  var acc: ${T} = ${zero};\n  ${scan('0u', 'u_n()')}`);
    L.step({shader, values, uniforms, threads: split.rows, label: node.label});
    return;
  }
  shader.shared('sums', `array<${T}, ${CHUNKS}>`);
  shader.main(`  if (wg >= u_rows()) { return; }
  let base = r_offset(wg);
  let chunk = (u_n() + ${CHUNKS - 1}u) / ${CHUNKS}u;
  let start = min(li * chunk, u_n());
  let end = min(start + chunk, u_n());
  var acc: ${T} = ${zero};
  for (var p = start; p < end; p++) { acc = ${add('acc', 'X[base + e_offset(at(p))]')}; }
  sums[li] = acc;
  workgroupBarrier();
  acc = ${zero};
  for (var c = 0u; c < li; c++) { acc = ${add('acc', 'sums[c]')}; }
  ${scan('start', 'end')}`, {workgroupSize: CHUNKS, guard: false});
  L.step({shader, values, uniforms, groups: split.rows, label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  cumulativeSum: {
    optionsIndex: 2,
    method: cumulativeSum,
    lower: lowerCumulativeSum,
    limits: () => ({input: tensorLimits(TYPES, rankRange(1)), output: tensorLimits(TYPES, rankRange(1))}),
  },
};
