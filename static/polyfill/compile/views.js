/**
 * Strided views: transpose and reshape as addressing instead of copies.
 *
 * Lowering defers a transpose (and a reshape or identity of a deferred view) as a View: the
 * Value holding the data, an element offset into it and a stride per dimension of the operand's
 * shape (element units, compute layout). A consumer that can address strided data (the matrix
 * kernels: matmul and gemm read A and B through strides) reads the View directly, so
 * matmul(Q, transpose(K)) or matmul(transpose(reshape(X)), W) is one dispatch; any other
 * consumer asks Lowering.value() for the operand, which materializes the View with one strided
 * copy at that point (a chain of transposes and reshapes is one copy).
 *
 * Store side: a matmul whose only consumer is a transpose (attention's context, [B, H, S, D] ->
 * [B, S, H, D]) stores its elements straight into the transposed layout when that layout gives
 * each matrix row and column one stride and the batch one stride (planStoreViews); the transpose
 * then has no step.
 *
 * A View: {value, offset: number, shape: number[], strides: number[], origins: {type, label}[]
 * (the builder operators folded into it, for the consuming step's profile), materialize():
 * Value}.
 */
import {slots, useCounts} from '../operand.js';
import {stridesOf} from '../shape/common.js';

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
 * The matmuls that store into their only consumer's transposed layout.
 * @param {object[]} nodes reachable nodes, topological order
 * @param {object[]} outputs the graph's output operands
 * @param {Map<object, object[]>} tails the fusion pass's producer -> stages (those keep their store)
 * @returns {Map<object, object>} matmul node -> the transpose node it stores for
 */
export function planStoreViews(nodes, outputs, tails) {
  const uses = useCounts(nodes, outputs);
  const consumer = new Map();
  for (const node of nodes) for (const input of node.inputs) consumer.set(slots(input), node);
  const views = new Map();
  for (const node of nodes) {
    if (node.op !== 'matmul' || tails.has(node)) continue;
    const s = slots(node.outputs[0]);
    const next = consumer.get(s);
    if (uses.get(s) !== 1 || next?.op !== 'transpose') continue;
    if (storeStrides(node.outputs[0].shape, next.attrs.permutation)) views.set(node, next);
  }
  return views;
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
