/**
 * Lowering of the internal node rotaryEmbedding (compile/rotary.js): the rotation of the halves
 * of the last axis pair [..., 2, half] of x,
 *   y = x * cos + (swapped * sin) * sign[part]      swapped: the element of the other half
 * as one element-wise step, each product and the sum rounded to f32 in the order of the unfused
 * multiplications and add (float16: each then rounded to binary16 as well, so the step's values
 * are the unfused operators'). x is read through its view's strides, cos and sin through their
 * broadcast strides. rotaryEmbeddingPair: two such rotations (a layer's q and k) in one step.
 */
import {elementCount} from '../dtypes.js';
import {Shader} from '../gpu/wgsl.js';
import {F16_ROUND} from '../gpu/types.js';
import {broadcastStrides} from '../shape/common.js';

/** WGSL f32 literal of exactly `v`. */
function f32Literal(v) {
  const bits = new Uint32Array(new Float32Array([v]).buffer)[0];
  return `bitcast<f32>(${bits}u)`;
}

/**
 * The step of `members` ([x, shape, sign, output index] each) rotated by `cos` and `sin`: one
 * rotation, or two (the internal node rotaryEmbeddingPair: a layer's q and k, compile/rotary.js)
 * whose elements follow each other in the step's invocations, each with its own shape, strides
 * and output.
 */
function rotaryStep(node, L, cos, sin, members, dataType) {
  const r = members[0][1].length;
  const half = dataType === 'float16';
  const round = (v) => (half ? `f16_round(${v})` : v);
  const shader = new Shader(`${members.length > 1 ? 'rotary_pair' : 'rotary'}${half ? '_f16' : ''}`);
  if (half) shader.fn(F16_ROUND);
  members.forEach((_, m) => shader.read(`X${m}`, 'f32'));
  shader.read('C', 'f32').read('S', 'f32');
  members.forEach((_, m) => shader.write(`Y${m}`, 'f32'));
  members.forEach((_, m) => shader.uniform(`shape${m}`, 'u32', r).uniform(`x${m}_strides`, 'u32', r)
    .uniform(`c${m}_strides`, 'u32', r).uniform(`s${m}_strides`, 'u32', r).uniform(`x${m}_base`).uniform(`count${m}`));
  const body = (m, sign) => `
    var rem = e;
    var xo = u_x${m}_base();
    var co = 0u;
    var so = 0u;
    var part = 0u;
    for (var d = ${r - 1}i; d >= 0; d--) {
      let dim = u_shape${m}(u32(d));
      let i = rem % dim;
      rem /= dim;
      co += i * u_c${m}_strides(u32(d));
      so += i * u_s${m}_strides(u32(d));
      if (d == ${r - 2}i) { part = i; } else { xo += i * u_x${m}_strides(u32(d)); }
    }
    let ps = u_x${m}_strides(${r - 2}u);
    let x = X${m}[xo + part * ps];
    let swapped = X${m}[xo + (1u - part) * ps];
    let sign = select(${f32Literal(sign[1])}, ${f32Literal(sign[0])}, part == 0u);
    let a = ${round('x * C[co]')};
    let b = ${round('swapped * S[so]')};
    Y${m}[e] = ${round(`a + ${round('b * sign')}`)};`;
  shader.main(members.length > 1 ? `
  if (gi < u_count0()) {
    let e = gi;${body(0, members[0][2])}
  } else {
    let e = gi - u_count0();${body(1, members[1][2])}
  }` : `
  {
    let e = gi;${body(0, members[0][2])}
  }`);
  // x through its strides: a column range of merged sibling products (compile/siblings.js) is read in place
  const views = members.map(([x]) => L.view(x));
  const uniforms = {};
  members.forEach(([, shape], m) => Object.assign(uniforms, {
    [`shape${m}`]: shape, [`x${m}_strides`]: views[m].strides, [`x${m}_base`]: views[m].offset, [`count${m}`]: elementCount(shape),
    [`c${m}_strides`]: broadcastStrides(cos.shape, shape), [`s${m}_strides`]: broadcastStrides(sin.shape, shape)}));
  L.step({
    shader,
    values: [...views.map((v) => v.value), L.value(cos), L.value(sin), ...members.map(([, , , out]) => L.result(node, out))],
    origins: views.flatMap((v) => v.origins),
    uniforms,
    threads: members.reduce((t, [, shape]) => t + elementCount(shape), 0),
    label: node.label,
  });
}

function lowerRotary(node, L) {
  const [x, cos, sin] = node.inputs;
  rotaryStep(node, L, cos, sin, [[x, node.attrs.shape, node.attrs.sign, 0]], node.attrs.dataType);
}

/** The internal node rotaryEmbeddingPair (compile/rotary.js): two rotations as one step. */
function lowerRotaryPair(node, L) {
  const [x0, x1, cos, sin] = node.inputs;
  const [a, b] = node.attrs.members;
  rotaryStep(node, L, cos, sin, [[x0, a.shape, a.sign, 0], [x1, b.shape, b.sign, 1]], a.dataType);
}

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  rotaryEmbedding: {lower: lowerRotary},
  rotaryEmbeddingPair: {lower: lowerRotaryPair},
};
