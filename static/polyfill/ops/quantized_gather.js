/**
 * Lowering of the internal node quantizedGather (compile/quantized_gather.js): gather of a
 * dequantizeLinear of a packed constant table (an LLM's quantized token embedding) as one step
 * that reads only the gathered elements of the packed table and dequantizes each as
 * dequantizeLinear does: (q - zeroPoint) * scale, the difference exact in f32 for 8- and 4-bit
 * values, scale and zero point by the spec's blockwise broadcasting over the table's shape.
 * Indices as gather's (ops/gather.js indexHelper: clamped, negative from the end).
 *
 * The table and the zero points stay their packed tensor-layout bytes on the GPU (Lowering
 * packedConstant), the scales in the compute layout.
 */
import {elementCount} from '../dtypes.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {indexHelper} from './gather.js';
import {packedElementExpr, quantKey} from './packed_weights.js';
import {declareScaleOffset} from './quantize.js';

function lowerQuantizedGather(node, L) {
  const [table, scale, zero, indices] = node.inputs;
  const {bits, signed, zeroBits, zeroSigned, tableShape, scaleShape, inner, axisSize, count} = node.attrs;
  const out = node.outputs[0];
  const key = quantKey({bits, signed, hasZp: true, zeroBits, zeroSigned});
  const shader = new Shader(`quantized_gather${key}`).read('T', 'u32').read('S', wgslType(scale.dataType)).read('Z', 'u32')
    .read('I', wgslType(indices.dataType)).write('Y', wgslType(out.dataType))
    .uniform('inner').uniform('axis_size').uniform('count')
    .fn(indexHelper(indices.dataType)).fn(storeHelpers(out.dataType));
  const offsets = declareScaleOffset(shader, tableShape, scaleShape);
  shader.main(`
  let inner = gi % u_inner();
  let t = gi / u_inner();
  let j = t % u_count();
  let outer = t / u_count();
  let e = (outer * u_axis_size() + index_at(j, u_axis_size())) * u_inner() + inner;
  let so = s_offset(e);
  let q = ${packedElementExpr('T', 'e', bits, signed)} - ${packedElementExpr('Z', 'so', zeroBits, zeroSigned)};
  Y[gi] = ${storeExpr(out.dataType, 'f32(q) * f32(S[so])')};`);
  L.step({
    shader,
    values: [L.packedConstant(table), L.value(scale), L.packedConstant(zero), L.value(indices), L.result(node)],
    uniforms: {inner, axis_size: axisSize, count, ...offsets},
    threads: elementCount(out.shape),
    label: node.label,
  });
}

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  quantizedGather: {lower: lowerQuantizedGather},
};
