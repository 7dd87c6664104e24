/**
 * Lowering of the internal node rotaryEmbedding (compile/rotary.js): the rotation of the halves
 * of the last axis pair [..., 2, half] of x,
 *   y = x * cos + (swapped * sin) * sign[part]      swapped: the element of the other half
 * as one element-wise step, each product and the sum rounded to f32 in the order of the unfused
 * multiplications and add. cos and sin are read through their broadcast strides.
 */
import {elementCount} from '../dtypes.js';
import {Shader} from '../gpu/wgsl.js';
import {broadcastStrides} from '../shape/common.js';

/** WGSL f32 literal of exactly `v`. */
function f32Literal(v) {
  const bits = new Uint32Array(new Float32Array([v]).buffer)[0];
  return `bitcast<f32>(${bits}u)`;
}

function lowerRotary(node, L) {
  const [x, cos, sin] = node.inputs;
  const {shape, sign} = node.attrs;
  const r = shape.length;
  const half = shape[r - 1];
  const shader = new Shader('rotary').read('X', 'f32').read('C', 'f32').read('S', 'f32').write('Y', 'f32')
    .uniform('shape', 'u32', r).uniform('c_strides', 'u32', r).uniform('s_strides', 'u32', r).uniform('half').main(`
  var rem = gi;
  var co = 0u;
  var so = 0u;
  var part = 0u;
  for (var d = ${r - 1}i; d >= 0; d--) {
    let dim = u_shape(u32(d));
    let i = rem % dim;
    rem /= dim;
    co += i * u_c_strides(u32(d));
    so += i * u_s_strides(u32(d));
    if (d == ${r - 2}i) { part = i; }
  }
  let x = X[gi];
  var swapped: f32;
  var sign: f32;
  if (part == 0u) { swapped = X[gi + u_half()]; sign = ${f32Literal(sign[0])}; } else { swapped = X[gi - u_half()]; sign = ${f32Literal(sign[1])}; }
  let a = x * C[co];
  let b = swapped * S[so];
  Y[gi] = a + b * sign;`);
  L.step({
    shader,
    values: [L.value(x), L.value(cos), L.value(sin), L.result(node)],
    uniforms: {shape, c_strides: broadcastStrides(cos.shape, shape), s_strides: broadcastStrides(sin.shape, shape), half},
    threads: elementCount(shape),
    label: node.label,
  });
}

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  rotaryEmbedding: {lower: lowerRotary},
};
