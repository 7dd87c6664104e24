/**
 * Row decomposition shared by softmax, the reductions and the normalizations: a tensor is seen
 * as `rows` rows (the dimensions that are kept) of `n` elements (the dimensions that are reduced
 * or normalised over), both addressed through strides held in uniforms, and one workgroup (or,
 * for short rows, one invocation) handles one row. useShortRows() picks between the two.
 *
 * Also the WGSL helpers these kernels share: NaN-propagating max/min, ±Inf without constant
 * folding, and a two-level workgroup reduction (256 invocations, two barriers).
 */
import {declareIndexer} from '../gpu/wgsl.js';
import {stridesOf} from '../shape/common.js';
import {isSoftwareAdapter} from './adapter_kind.js';

/**
 * Drops size-1 dimensions and merges neighbours that are contiguous in every stride list, so
 * index arithmetic runs over as few dimensions as possible. Row-major enumeration is unchanged.
 * @param {number[]} shape
 * @param {number[][]} stridesList one stride per dimension, per addressed tensor
 * @returns {{shape: number[], strides: number[][]}}
 */
export function collapse(shape, stridesList) {
  const dims = [];
  const strides = stridesList.map(() => []);
  for (let i = 0; i < shape.length; i++) {
    if (shape[i] === 1) continue;
    const last = dims.length - 1;
    if (last >= 0 && stridesList.every((s, k) => strides[k][last] === s[i] * shape[i])) {
      dims[last] *= shape[i];
      stridesList.forEach((s, k) => { strides[k][last] = s[i]; });
    } else {
      dims.push(shape[i]);
      stridesList.forEach((s, k) => strides[k].push(s[i]));
    }
  }
  return {shape: dims, strides};
}

/**
 * Splits `shape` into rows (dimensions not in `axes`, input order) and elements (dimensions in
 * `axes`, input order), each collapsed, for the input's own strides and any `extra` stride lists
 * (one stride per input dimension, e.g. a broadcast scale).
 * @param {number[]} shape
 * @param {number[]} axes reduced / normalised dimensions
 * @param {number[][]} [extra]
 * @returns {{rows: number, n: number, row: {shape, strides: number[][]}, elem: {shape, strides: number[][]}}}
 *   strides[0] are the input's, strides[1..] the extra lists'
 */
export function splitRows(shape, axes, extra = []) {
  const lists = [stridesOf(shape), ...extra];
  const inAxes = new Set(axes);
  const pick = (keep) => {
    const idx = shape.map((_, i) => i).filter((i) => inAxes.has(i) !== keep);
    return collapse(idx.map((i) => shape[i]), lists.map((s) => idx.map((i) => s[i])));
  };
  const row = pick(true);
  const elem = pick(false);
  const count = (s) => s.reduce((a, b) => a * b, 1);
  return {rows: count(row.shape), n: count(elem.shape), row, elem};
}

/**
 * Declares on `shader` the indexers `${prefix}_offset(i)` for one tensor's row and element
 * strides and returns their uniforms.
 * @param {object} split from splitRows
 * @param {number} k which stride list (0 = input)
 */
export function declareRowIndexers(shader, split, k, rowPrefix, elemPrefix) {
  declareIndexer(shader, rowPrefix, split.row.shape.length);
  declareIndexer(shader, elemPrefix, split.elem.shape.length);
  return {
    [`${rowPrefix}_shape`]: split.row.shape, [`${rowPrefix}_strides`]: split.row.strides[k],
    [`${elemPrefix}_shape`]: split.elem.shape, [`${elemPrefix}_strides`]: split.elem.strides[k],
  };
}

/**
 * WGSL: is_nan, is_finite, NaN-propagating max_nan/min_nan and inf_f32() for f32, computed through the bit
 * patterns so that no fast-math assumption removes them; exp_acc and log_acc, accurate to a few ULP
 * (the WGSL builtins are not, near 0 for log and for large |x| for exp).
 */
export const FLOAT_HELPERS = `
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn inf_f32(zero: u32) -> f32 { return bitcast<f32>(0x7f800000u + zero); }
fn nan_f32(zero: u32) -> f32 { return bitcast<f32>(0x7fc00000u + zero); }
fn max_nan(a: f32, b: f32) -> f32 { return select(max(a, b), nan_f32(0u), is_nan(a) || is_nan(b)); }
fn min_nan(a: f32, b: f32) -> f32 { return select(min(a, b), nan_f32(0u), is_nan(a) || is_nan(b)); }
// exp(x) within about 1 ULP for finite x (the builtin's x * log2(e) rounding costs up to ~|x| ULP):
// Cody-Waite reduction x = k ln2 + r, |r| <= ln2 / 2, then a degree-7 Taylor polynomial.
// Exactly 0 below -104 (-Inf included), +Inf above 88.8; NaN gives an unspecified value.
fn exp_acc(x: f32) -> f32 {
  if (x < -104.0) { return 0.0; }
  if (x > 88.8) { return inf_f32(0u); }
  let k = round(x * 1.4426950408889634);
  let r = (x - k * 0.693145751953125) - k * 1.4286068203094172e-6;
  let p = 1.0 + r * (1.0 + r * (0.5 + r * (0.16666667 + r * (0.041666668 + r * (0.008333334 + r * (0.0013888889 + r * 0.0001984127))))));
  return ldexp(p, i32(k));
}
// log(x) within about 2 ULP: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s),
// s = (m - 1) / (m + 1), by its odd series; e ln2 added in two parts. NaN or x < 0 -> NaN,
// 0 -> -Inf, +Inf -> +Inf.
fn log_acc(x: f32) -> f32 {
  if (is_nan(x) || x < 0.0) { return nan_f32(0u); }
  if (x == 0.0) { return -inf_f32(0u); }
  if (!is_finite(x)) { return x; }
  var b = bitcast<u32>(x);
  var e = i32((b >> 23u) & 0xffu) - 127;
  if ((b & 0x7f800000u) == 0u) {
    b = bitcast<u32>(x * 8388608.0);
    e = i32((b >> 23u) & 0xffu) - 150;
  }
  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);
  if (m > 1.4142135) { m = m * 0.5; e = e + 1; }
  let s = (m - 1.0) / (m + 1.0);
  let s2 = s * s;
  let p = s2 * (0.33333334 + s2 * (0.2 + s2 * (0.14285715 + s2 * (0.11111111 + s2 * 0.09090909))));
  let ef = f32(e);
  return (ef * 0.693145751953125 + (2.0 * s + 2.0 * s * p)) + ef * 1.4286068203094172e-6;
}
`;

/**
 * Whether one invocation per row beats one workgroup per row: on a CPU adapter always; on a GPU
 * for rows of at most 32 elements, or of at most 256 when there are enough rows (8192) to fill
 * the device without splitting rows. The context slot `kernelOverrides.rows` ('invocation' |
 * 'workgroup') forces one (tests, benchmarks).
 * @param {object} ctx context slots
 */
export function useShortRows(ctx, rows, n) {
  const override = ctx.kernelOverrides?.rows;
  if (override) return override === 'invocation';
  if (isSoftwareAdapter(ctx)) return true;
  return n <= 32 || (n <= 256 && rows >= 8192);
}

/**
 * Workgroup size for a row kernel over rows of `n` elements: 64 invocations up to 2048 elements,
 * 256 beyond (either is a square, for the two-level reduction below).
 */
export function rowWorkgroupSize(n) {
  return n <= 2048 ? 64 : 256;
}

/**
 * Adds to `shader` a workgroup-wide reduction `fn ${name}(v: T, li: u32) -> T` over `size`
 * invocations (64 or 256), combining with the WGSL expression `combine` of `a` and `b`:
 * sqrt(size) partial results of sqrt(size) values, then every invocation combines the partials.
 * Call it in uniform control flow; every invocation gets the result.
 */
export function addWorkgroupReduce(shader, name, T, combine, size) {
  const w = Math.round(Math.sqrt(size));
  shader.shared(`${name}_a`, `array<${T}, ${size}>`).shared(`${name}_b`, `array<${T}, ${w}>`);
  shader.fn(`
fn ${name}_op(a: ${T}, b: ${T}) -> ${T} { return ${combine}; }
fn ${name}(v: ${T}, li: u32) -> ${T} {
  ${name}_a[li] = v;
  workgroupBarrier();
  if (li < ${w}u) {
    var t = ${name}_a[li];
    for (var j = 1u; j < ${w}u; j++) { t = ${name}_op(t, ${name}_a[li + j * ${w}u]); }
    ${name}_b[li] = t;
  }
  workgroupBarrier();
  var r = ${name}_b[0];
  for (var j = 1u; j < ${w}u; j++) { r = ${name}_op(r, ${name}_b[j]); }
  return r;
}`);
}
