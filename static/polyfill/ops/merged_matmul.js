/**
 * The internal operator `mergedMatmul`: sibling matrix products of one A (a transformer layer's
 * Q, K and V projections) as one product, made by the siblings pass (compile/siblings.js).
 *
 * Node: {op: 'mergedMatmul', label, inputs: [A], attrs: {dataType, K, widths, weights, bias,
 * members, quant?}, outputs: []}: `weights` the members' constant B's concatenated along N in the
 * compute layout ([K, sum(widths)]), or for packed siblings `quant` (their packed weights as rows
 * [N, R], scales and zero points [N, S], the packed loader's scale map; ops/packed_weights.js),
 * `bias` their biases concatenated likewise (or null), `members` one
 * {node, out, origins} per sibling: `out` the operand its result is (after its reshapes), `node`
 * its original product. The merged [..., M, N] result is one temporary; each member's `out` is a
 * deferred strided view of its columns (compile/views.js), which reshapes, transposes and the
 * attention step read in place, and any other reader materializes with one strided copy.
 *
 * The internal operator `gatedMatmul` (compile/gated_pairs.js): two products of one A, one read
 * by a stage of the other's epilogue (a SwiGLU MLP's gate and up), as one product whose B
 * interleaves their columns; matmulStep's `pair` stores the epilogue of each column pair.
 * Node: {op: 'gatedMatmul', inputs: [A], attrs: {dataType, K, N, epilogue, weights, quant},
 * outputs: the first product's}: `weights` [K, 2N] in the compute layout, or `quant` as above
 * with 2N rows.
 *
 * The bias rides in the product as its C term (ops/matmul_kernels.js: A x B + C, then stored), so
 * a float16 product rounds once where matmul -> add rounds twice (within the operators' float16
 * tolerance).
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {stridesOf} from '../shape/common.js';
import {simplifyStrided} from '../shape/movement.js';
import {batchStridesOf, reshapeStrides} from '../shape/strides.js';
import {chunkPadded} from '../gpu/packing.js';
import {matmulStep} from './matmul_kernels.js';
import {stridedCopy} from './movement.js';

/** A constant Value of `data` (padded to whole 16-byte chunks), labelled `what`. */
function constantValue(L, data, what) {
  const bytes = chunkPadded(data);
  return L.newValue('constant', bytes.byteLength, `constant ${what}`, {data: bytes});
}

/** matmulStep's packed B of merged packed siblings (compile/siblings.js attrs.quant). */
function packedB(quant, constant) {
  const {bits, signed, zeroBits, zeroSigned, zeroFloat, hasZp, scaleMap, scales, zeros} = quant;
  return {bits, signed, zeroBits, zeroSigned, zeroFloat, hasZp, scaleMap, scale: constant(scales, 'scales'),
    zero: hasZp ? constant(zeros, 'zero points') : null};
}

/**
 * Lowers a mergedMatmul node: one matrix product step, and a deferred view per member.
 * @param {object} node see the module comment
 * @param {import('../compile/lowering.js').Lowering} L
 */
function lowerMergedMatmul(node, L) {
  const {dataType, K, widths, weights, bias, members, quant} = node.attrs;
  const first = members[0].node;
  const N = widths.reduce((a, b) => a + b, 0);
  const constant = (data, what) => constantValue(L, data, `${what} (${members.length} merged)`);
  const b = quant ? constant(quant.weights, `[${N},${quant.view.strides[1]}] packed`) : constant(weights, `[${K},${N}]`);
  const c = bias ? constant(bias, `[${N}]`) : undefined;
  const shape = first.outputs[0].shape;
  const rank = shape.length;
  const M = shape[rank - 2];
  const batchShape = shape.slice(0, rank - 2);
  const merged = [...shape.slice(0, rank - 1), N];
  const y = L.newValue('temp', elementCount(merged) * 4, `${first.label}:merged`);
  const va = L.view(node.inputs[0]);
  matmulStep(L, {
    label: node.label,
    origins: va.origins,
    dataType,
    a: va.value,
    b,
    c,
    y,
    M, N, K,
    offsets: {a: va.offset},
    aStrides: va.strides.slice(va.strides.length - 2),
    bStrides: quant ? quant.view.strides : [N, 1],
    quant: quant ? packedB(quant, constant) : undefined,
    cStrides: c ? [0, 1] : undefined,
    batchShape,
    aBatchStrides: batchStridesOf(va, batchShape),
    bBatchStrides: batchShape.map(() => 0),
    yBatchStride: M * N,
  });
  let col = 0;
  members.forEach((m, i) => {
    const offset = col;
    const own = slots(m.out).shape;
    // the member's [..., M, N_i] columns of the merged [..., M, N], then its reshapes
    const strides = reshapeStrides(m.node.outputs[0].shape, stridesOf(merged), own);
    const view = {value: y, offset, shape: own, strides, origins: []};  // its operators are the merged step's
    // its copy, when a reader needs one, is the member product's
    view.materialize = () => L.within([m.node.origin], () => {
      const out = L.newValue('temp', elementCount(own) * 4, `${m.node.label}:0`);
      stridedCopy(L, y, out, dataType, simplifyStrided(own, strides, offset), false, m.node.label);
      return out;
    });
    L.defer(m.out, view);
    col += widths[i];
  });
}

/**
 * Lowers a gatedMatmul node: the paired product (ops/matmul_kernels.js matmulStep `pair`), A's
 * rows all its rows but the last axis (a rank-2 A read through its view).
 */
function lowerGatedMatmul(node, L) {
  const {dataType, K, N, weights, quant} = node.attrs;
  const constant = (data, what) => constantValue(L, data, `${what} (gated pair)`);
  const b = quant ? constant(quant.weights, `[${2 * N},${quant.view.strides[1]}] packed`) : constant(weights, `[${K},${2 * N}]`);
  const a = node.inputs[0];
  const M = elementCount(node.outputs[0].shape) / N;
  const va = a.shape.length === 2 ? L.view(a) : {value: L.value(a), offset: 0, strides: [K, 1], origins: []};
  matmulStep(L, {
    node,
    pair: true,
    label: node.label,
    origins: va.origins,
    dataType,
    a: va.value,
    b,
    y: L.result(node),
    M, N: 2 * N, K,
    offsets: {a: va.offset},
    aStrides: va.strides,
    bStrides: quant ? quant.view.strides : [2 * N, 1],
    yStrides: [N, 1],
    yBatchStride: M * N,
    quant: quant ? packedB(quant, constant) : undefined,
  });
}

/** Internal operator table entries (see ops/internal.js). */
export const internalOperators = {
  mergedMatmul: {lower: lowerMergedMatmul},
  gatedMatmul: {lower: lowerGatedMatmul},
};
