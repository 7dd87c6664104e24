/**
 * Matrix products (spec §gemm, §matmul). Validation and shape inference in shape/matmul.js, the
 * kernels in matmul_kernels.js: transposition and broadcasting are expressed as strides, so
 * neither operator copies its inputs; an input that is a deferred transpose/reshape view
 * is read through its strides too (shape/strides.js), and a matmul whose only consumer is a
 * transpose (attrs.transpose, compile/views.js) stores into the transposed layout. Sibling products and fused attention are internal
 * nodes of their own (ops/merged_matmul.js, ops/attention.js).
 */
import {typeError} from '../errors.js';
import {broadcastStrides} from '../shape/common.js';
import {MATMUL_TYPES, gemmShape, matmulShape} from '../shape/matmul.js';
import {matmulStep} from './matmul_kernels.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';
import {batchStridesOf, storeStrides} from '../shape/strides.js';

/**
 * Spec gemm(a, b, options): alpha * A' x B' + beta * C. MLGemmOptions {c, alpha = 1, beta = 1,
 * aTranspose = false, bTranspose = false}.
 * @throws {TypeError} see gemmShape
 */
function gemm(builder, label, a, b, options = {}) {
  if (options !== null && typeof options !== 'object') throw typeError(label, 'options must be an MLGemmOptions dictionary');
  const opts = options ?? {};
  const sa = operandOf(builder, a, label, 'a');
  const sb = operandOf(builder, b, label, 'b');
  const sc = opts.c !== undefined ? operandOf(builder, opts.c, label, 'c') : null;
  const g = gemmShape(sa, sb, sc, opts, label);
  const inputs = sc ? [a, b, opts.c] : [a, b];
  const attrs = {alpha: g.alpha, beta: g.beta, aTranspose: g.aTranspose, bTranspose: g.bTranspose};
  return addNode(builder, 'gemm', inputs, attrs, [{dataType: sa.dataType, shape: g.shape}], label)[0];
}

function lowerGemm(node, L) {
  const [a, b, c] = node.inputs;
  const {alpha, beta, aTranspose, bTranspose} = node.attrs;
  const [M, N] = node.outputs[0].shape;
  const K = aTranspose ? a.shape[0] : a.shape[1];
  const va = L.view(a);
  const vb = L.view(b);
  matmulStep(L, {
    node,
    origins: [...va.origins, ...vb.origins],
    label: node.label,
    dataType: node.outputs[0].dataType,
    a: va.value,
    b: vb.value,
    c: c ? L.value(c) : undefined,
    y: L.result(node),
    M, N, K,
    offsets: {a: va.offset, b: vb.offset},
    aStrides: aTranspose ? [va.strides[1], va.strides[0]] : va.strides,
    bStrides: bTranspose ? [vb.strides[1], vb.strides[0]] : vb.strides,
    cStrides: c ? broadcastStrides(c.shape, [M, N]) : undefined,
    alpha,
    beta,
  });
}

/**
 * Spec matmul(a, b, options): batched matrix product, batch dimensions broadcast.
 * @throws {TypeError} see matmulShape
 */
function matmul(builder, label, a, b) {
  const sa = operandOf(builder, a, label, 'a');
  const sb = operandOf(builder, b, label, 'b');
  const m = matmulShape(sa, sb, label);
  return addNode(builder, 'matmul', [a, b], {}, [{dataType: sa.dataType, shape: m.shape}], label)[0];
}

function lowerMatmul(node, L) {
  const [a, b] = node.inputs;
  const shape = node.outputs[0].shape;
  const rank = shape.length;
  const [M, N] = shape.slice(rank - 2);
  const K = a.shape[a.shape.length - 1];
  const batchShape = shape.slice(0, rank - 2);
  const {transpose} = node.attrs;
  const store = transpose ? storeStrides(shape, transpose.attrs.permutation) : {};
  const va = L.view(a);
  const vb = L.view(b);
  const matrix = (v) => v.strides.slice(v.strides.length - 2);
  matmulStep(L, {
    node,
    origins: [...va.origins, ...vb.origins],
    label: node.label,
    dataType: node.outputs[0].dataType,
    a: va.value,
    b: vb.value,
    y: L.result(transpose ?? node),
    M, N, K,
    offsets: {a: va.offset, b: vb.offset},
    aStrides: matrix(va),
    bStrides: matrix(vb),
    yStrides: store.yStrides,
    yBatchStride: store.yBatchStride,
    batchShape,
    aBatchStrides: batchStridesOf(va, batchShape),
    bBatchStrides: batchStridesOf(vb, batchShape),
  });
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  gemm: {
    optionsIndex: 2,
    method: gemm,
    lower: lowerGemm,
    limits: () => ({
      a: tensorLimits(MATMUL_TYPES, rankRange(2, 2)),
      b: tensorLimits(MATMUL_TYPES, rankRange(2, 2)),
      c: tensorLimits(MATMUL_TYPES, rankRange(0, 2)),
      output: tensorLimits(MATMUL_TYPES, rankRange(2, 2)),
    }),
  },
  matmul: {
    optionsIndex: 2,
    method: matmul,
    lower: lowerMatmul,
    limits: () => ({
      a: tensorLimits(MATMUL_TYPES, rankRange(2)),
      b: tensorLimits(MATMUL_TYPES, rankRange(2)),
      output: tensorLimits(MATMUL_TYPES, rankRange(2)),
    }),
  },
};
