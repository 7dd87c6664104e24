/**
 * Lowering of the internal node quantizedMatmul (compile/quantized_matmul.js): a matmul or gemm
 * whose B is a dequantizeLinear of packed constant weights, as one step of the matrix kernels
 * with the packed loader (ops/packed_weights.js), its fused element-wise stages in the epilogue.
 *
 * The packed weights are uploaded once, as their tensor-layout bytes (Lowering packedConstant),
 * shared by every product of the plan reading them; the scales in the compute layout (f32); the
 * zero points as their packed bytes (float ones, compile/block_offsets.js: f32), or not at all
 * when every one is 0. Kernel: the quantized
 * matrix-vector kernel for one row (every decode step of an LLM) where B's layout allows, else
 * the kernel the adapter picks for the shape (the tiled kernels, the gemv kernels, or blocked on
 * CPU adapters), each reading B through the packed loader. The tuning switch `matmul`
 * (tuning.js) forces one as for float products.
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {constantBytes} from '../tensor.js';
import {broadcastStrides} from '../shape/common.js';
import {matmulStep} from './matmul_kernels.js';

function lowerQuantizedMatmul(node, L) {
  const [a, w, scale, zero, c] = node.inputs;
  const {bits, signed, zeroBits, zeroSigned, zeroFloat, alpha, beta, aTranspose, view, scaleMap} = node.attrs;
  const out = node.outputs[0].shape;
  const N = out[out.length - 1];
  const K = view.shape[0];
  const M = elementCount(out) / N;
  const hasZp = constantBytes(slots(zero)).some((byte) => byte !== 0);
  let aStrides = [K, 1];
  let aOffset = 0;
  let aValue;
  let origins = [];
  if (a.shape.length === 2) {
    // a rank-2 A may be a deferred transpose (compile/views.js): read through its strides
    const va = L.view(a);
    origins = va.origins;
    aValue = va.value;
    aOffset = va.offset;
    aStrides = aTranspose ? [va.strides[1], va.strides[0]] : va.strides;
  } else {
    aValue = L.value(a);
  }
  matmulStep(L, {
    node,
    origins,
    label: node.label,
    dataType: node.outputs[0].dataType,
    a: aValue,
    b: L.packedConstant(w),
    c: c ? L.value(c) : undefined,
    y: L.result(node),
    M, N, K,
    offsets: {a: aOffset, b: view.offset},
    aStrides,
    bStrides: view.strides,
    cStrides: c ? broadcastStrides(c.shape, [M, N]) : undefined,
    alpha, beta,
    quant: {bits, signed, zeroBits, zeroSigned, zeroFloat, hasZp, scaleMap,
      scale: L.value(scale), zero: hasZp ? L.packedConstant(zero) : null},
  });
}

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  quantizedMatmul: {lower: lowerQuantizedMatmul},
};
