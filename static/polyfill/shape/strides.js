/**
 * Stride arithmetic for strided views of row-major data (element units): reading a tensor
 * through a transpose or reshape without a copy, storing a matrix product straight into a
 * transposed layout, and broadcasting batch dimensions. Pure functions of shapes and strides,
 * used by the view pass (compile/views.js) and by the kernels that address strided data
 * (ops/gemm.js, ops/attention.js, ops/movement.js, ops/merged_matmul.js).
 */
import {stridesOf} from './common.js';

/**
 * Strides that read `newShape` row-major over data laid out as `shape` with `strides` (a
 * reshape of a strided view without a copy), or null when no such strides exist (the reshape
 * merges dimensions that are not contiguous with each other). Dimensions of size 1 take any stride.
 * @param {number[]} shape @param {number[]} strides @param {number[]} newShape same element count
 * @returns {number[]|null}
 */
export function reshapeStrides(shape, strides, newShape) {
  // groups of old dimensions that are contiguous with each other: [size, innermost stride]
  const dims = [];
  shape.forEach((n, d) => {
    if (n === 1) return;
    const last = dims[dims.length - 1];
    if (last && last.stride === strides[d] * n) {
      last.n *= n;
      last.stride = strides[d];
    } else {
      dims.push({n, stride: strides[d]});
    }
  });
  const out = new Array(newShape.length).fill(0);
  let g = 0;
  let left = dims.length ? dims[0].n : 1;
  for (let d = 0; d < newShape.length; d++) {
    const n = newShape[d];
    if (n === 1) continue;
    if (g >= dims.length || left % n !== 0) return null;
    left /= n;
    out[d] = dims[g].stride * left;
    if (left === 1 && ++g < dims.length) left = dims[g].n;
  }
  for (let d = 0; d < newShape.length; d++) if (newShape[d] === 1) out[d] = 0;
  return out;
}

/**
 * How a matmul of output shape `outShape` ([...batch, M, N]) stores straight into the layout of
 * transpose(output, `perm`): {yStrides: [m, n], yBatchStride} (element units), or null when
 * the batch dimensions do not flatten to one stride.
 * @param {number[]} outShape @param {number[]} perm the transpose's permutation
 */
export function storeStrides(outShape, perm) {
  const r = outShape.length;
  const tStrides = stridesOf(perm.map((p) => outShape[p]));
  const st = outShape.map((_, d) => tStrides[perm.indexOf(d)]);
  let yBatchStride = 0;
  let prev = null;
  for (let d = 0; d < r - 2; d++) {
    if (outShape[d] === 1) continue;
    if (prev !== null && st[prev] !== st[d] * outShape[d]) return null;
    prev = d;
    yBatchStride = st[d];
  }
  return {yStrides: [st[r - 2], st[r - 1]], yBatchStride};
}

/**
 * The strides of `view` for the batch dimensions of a batched product with output batch shape
 * `batchShape` (the operand's batch dimensions right-aligned, size-1 ones broadcast: stride 0).
 * @param {{shape: number[], strides: number[]}} view of a rank >= 2 operand
 * @param {number[]} batchShape
 * @returns {number[]}
 */
export function batchStridesOf(view, batchShape) {
  const rank = view.shape.length - 2;
  return batchShape.map((_, j) => {
    const i = j - (batchShape.length - rank);
    return i < 0 || view.shape[i] === 1 ? 0 : view.strides[i];
  });
}
