/**
 * Row decomposition shared by softmax, the reductions and the normalizations: a tensor is seen
 * as `rows` rows (the dimensions that are kept) of `n` elements (the dimensions that are reduced
 * or normalised over), both addressed through strides held in uniforms, and one workgroup (or,
 * for short rows, one invocation) handles one row. useShortRows() picks between the two.
 *
 * Also the two-level workgroup reduction these kernels share (64 or 256 invocations, two barriers).
 * Their float math (NaN tests, NaN-propagating max/min, ±Inf, exp, log, sqrt) is gpu/math.js's,
 * added by addMathHelpers(shader) once a kernel's text is complete.
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
 * Whether one invocation per row beats one workgroup per row: on a CPU adapter always; on a GPU
 * for rows of at most 32 elements, or of at most 256 when there are enough rows (8192) to fill
 * the device without splitting rows. The tuning switch `rows` (tuning.js) forces one.
 * @param {object} ctx context slots
 */
export function useShortRows(ctx, rows, n) {
  const override = ctx.tuning.rows;
  if (override) return override === 'invocation';
  if (isSoftwareAdapter(ctx)) return true;
  return n <= 32 || (n <= 256 && rows >= 8192);
}

/** Rows fewer than this leave a large GPU's cores mostly idle with 64 invocations per row. */
const FEW_ROWS = 1024;

/**
 * Workgroup size for a row kernel over `rows` rows of `n` elements: 256 invocations for rows of
 * more than 2048 elements, and for rows of 512 or more when there are fewer than FEW_ROWS of them
 * (BERT's layer normalizations, 128 rows of 768: at 64 invocations a row a large GPU runs them
 * with about one warp per core, waiting on memory); 64 otherwise (either is a square, for
 * the two-level reduction below).
 * @param {number} n elements per row
 * @param {number} [rows] rows (default: many)
 */
export function rowWorkgroupSize(n, rows = Infinity) {
  return n > 2048 || (n >= 512 && rows < FEW_ROWS) ? 256 : 64;
}

/** The second array's length of addWorkgroupReduce's reduce over `size` invocations. */
function reduceColumns(size) {
  return Math.round(Math.sqrt(size));
}

/** The elements of workgroup memory addWorkgroupReduce declares for `size` invocations. */
export function workgroupReduceElements(size) {
  return size + reduceColumns(size);
}

/**
 * Adds to `shader` a workgroup-wide reduction `fn ${name}(v: T, li: u32) -> T` over `size`
 * invocations (64 or 256), combining with the WGSL expression `combine` of `a` and `b`:
 * sqrt(size) partial results of sqrt(size) values, then every invocation combines the partials.
 * Call it in uniform control flow; every invocation gets the result.
 */
export function addWorkgroupReduce(shader, name, T, combine, size) {
  const w = reduceColumns(size);
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
