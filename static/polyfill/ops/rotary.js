/**
 * Lowering of the internal node rotaryEmbedding (compile/rotary.js): the rotation of the halves
 * of the last axis pair [..., 2, half] of x,
 *   y = x * cos + (swapped * sin) * sign[part]      swapped: the element of the other half
 * as one element-wise step, each product and the sum rounded to f32 in the order of the unfused
 * multiplications and add. x is read through its view's strides, cos and sin through their
 * broadcast strides.
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
  const shader = new Shader('rotary').read('X', 'f32').read('C', 'f32').read('S', 'f32').write('Y', 'f32')
    .uniform('shape', 'u32', r).uniform('x_strides', 'u32', r).uniform('c_strides', 'u32', r).uniform('s_strides', 'u32', r)
    .uniform('x_base').main(`
  var rem = gi;
  var xo = u_x_base();
  var co = 0u;
  var so = 0u;
  var part = 0u;
  for (var d = ${r - 1}i; d >= 0; d--) {
    let dim = u_shape(u32(d));
    let i = rem % dim;
    rem /= dim;
    co += i * u_c_strides(u32(d));
    so += i * u_s_strides(u32(d));
    if (d == ${r - 2}i) { part = i; } else { xo += i * u_x_strides(u32(d)); }
  }
  let ps = u_x_strides(${r - 2}u);
  let x = X[xo + part * ps];
  let swapped = X[xo + (1u - part) * ps];
  let sign = select(${f32Literal(sign[1])}, ${f32Literal(sign[0])}, part == 0u);
  let a = x * C[co];
  let b = swapped * S[so];
  Y[gi] = a + b * sign;`);
  // x through its strides: a column range of merged sibling products (compile/siblings.js) is read in place
  const vx = L.view(x);
  L.step({
    shader,
    values: [vx.value, L.value(cos), L.value(sin), L.result(node)],
    origins: vx.origins,
    uniforms: {shape, x_strides: vx.strides, x_base: vx.offset, c_strides: broadcastStrides(cos.shape, shape),
      s_strides: broadcastStrides(sin.shape, shape)},
    threads: elementCount(shape),
    label: node.label,
  });
}

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  rotaryEmbedding: {lower: lowerRotary},
};
