/**
 * resample2d (spec §resample2d): nearest-neighbor or bilinear resampling along two axes of a 4-D
 * tensor, one invocation per output element.
 *
 * Coordinates follow the spec with scale = outputSize / inputSize for each resampled axis:
 * inputCoordinate = clamp((outputCoordinate + 0.5) * inputSize / outputSize - 0.5, 0, inputSize - 1).
 * They are computed exactly in integers, as (2o + 1) * in - out over 2 * out, so nearest-neighbor
 * ties (round half down: ceil(c - 0.5)) and the linear weights match the rational values of the
 * spec; when 2 * in * out could overflow 32 bits a float variant of the same formula is used.
 * For "linear", axes[1] is x and axes[0] is y in the spec's formula.
 */
import {elementCount} from '../dtypes.js';
import {checkDataType, checkRank, stridesOf} from '../shape/common.js';
import {resample2dShape} from '../shape/pool.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {tensorLimits, rankRange} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

const F = ['float32', 'float16'];

/**
 * MLGraphBuilder.resample2d(input, options) (spec §resample2d).
 * @throws {TypeError} invalid input, data type, rank, scales, sizes or axes
 */
function resample2d(builder, label, input, options) {
  const x = operandOf(builder, input, label, 'input');
  checkDataType(x, F, label, 'input');
  checkRank(x, 4, label, 'input');
  const {attrs, shape} = resample2dShape(x.shape, options ?? {}, label);
  return addNode(builder, 'resample2d', [input], attrs, [{dataType: x.dataType, shape}], label)[0];
}

/**
 * WGSL `fn source_coord(o, inSize, outSize) -> vec3<f32>`: (x0, x1, t) with x0 = floor(c),
 * x1 = ceil(c), t = c - x0 for the clamped input coordinate c of output coordinate o (x0 and x1
 * as exact small integers in f32).
 */
const COORD_EXACT = `
fn source_coord(o: u32, in_size: u32, out_size: u32) -> vec3<f32> {
  let a = (2u * o + 1u) * in_size;
  let den = 2u * out_size;
  if (a <= out_size) { return vec3<f32>(0.0, 0.0, 0.0); }
  let num = a - out_size;
  let x0 = num / den;
  if (x0 >= in_size - 1u) { return vec3<f32>(f32(in_size - 1u), f32(in_size - 1u), 0.0); }
  let rem = num % den;
  return vec3<f32>(f32(x0), f32(x0 + select(0u, 1u, rem > 0u)), f32(rem) / f32(den));
}
fn nearest_coord(o: u32, in_size: u32, out_size: u32) -> u32 {
  let a = (2u * o + 1u) * in_size;
  let den = 2u * out_size;
  if (a <= den) { return 0u; }
  return min((a - 1u) / den, in_size - 1u);
}`;

const COORD_FLOAT = `
fn source_coord(o: u32, in_size: u32, out_size: u32) -> vec3<f32> {
  let c = clamp((f32(o) + 0.5) * f32(in_size) / f32(out_size) - 0.5, 0.0, f32(in_size - 1u));
  return vec3<f32>(floor(c), ceil(c), c - floor(c));
}
fn nearest_coord(o: u32, in_size: u32, out_size: u32) -> u32 {
  let c = clamp((f32(o) + 0.5) * f32(in_size) / f32(out_size) - 0.5, 0.0, f32(in_size - 1u));
  return u32(ceil(c - 0.5));
}`;

/** Lowers a resample2d node to one dispatch. */
function lower(node, L) {
  const {mode, axes} = node.attrs;
  const input = node.inputs[0];
  const out = node.outputs[0];
  const dt = out.dataType;
  const T = wgslType(dt);
  const exact = axes.every((a) => 2 * input.shape[a] * out.shape[a] + 2 * out.shape[a] < 2 ** 32);
  const shader = new Shader(`resample2d_${mode}`).read('X', T).write('Y', T).fn(storeHelpers(dt))
    .uniform('in_shape', 'u32', 4).uniform('in_strides', 'u32', 4).uniform('out_shape', 'u32', 4).uniform('axes', 'u32', 2)
    .fn(exact ? COORD_EXACT : COORD_FLOAT);
  const body = mode === 'linear' ? `
  let cy = source_coord(c[ay], u_in_shape(ay), u_out_shape(ay));
  let cx = source_coord(c[ax], u_in_shape(ax), u_out_shape(ax));
  let sy = u_in_strides(ay);
  let sx = u_in_strides(ax);
  let y0 = base + u32(cy.x) * sy;
  let y1 = base + u32(cy.y) * sy;
  let x0 = u32(cx.x) * sx;
  let x1 = u32(cx.y) * sx;
  let tx = cx.z;
  let ty = cy.z;
  let vy0 = X[y0 + x0] * (1.0 - tx) + X[y0 + x1] * tx;
  let vy1 = X[y1 + x0] * (1.0 - tx) + X[y1 + x1] * tx;
  let v = vy0 * (1.0 - ty) + vy1 * ty;` : `
  let v = X[base + nearest_coord(c[ay], u_in_shape(ay), u_out_shape(ay)) * u_in_strides(ay)
              + nearest_coord(c[ax], u_in_shape(ax), u_out_shape(ax)) * u_in_strides(ax)];`;
  shader.main(`
  var c: array<u32, 4>;
  var rem = gi;
  for (var d = 3i; d >= 0i; d--) {
    c[d] = rem % u_out_shape(u32(d));
    rem = rem / u_out_shape(u32(d));
  }
  let ay = u_axes(0u);
  let ax = u_axes(1u);
  var base = 0u;
  for (var d = 0u; d < 4u; d++) {
    if (d != ay && d != ax) { base += c[d] * u_in_strides(d); }
  }${body}
  Y[gi] = ${storeExpr(dt, 'v')};`);
  const uniforms = {in_shape: input.shape, in_strides: stridesOf(input.shape), out_shape: out.shape, axes};
  L.step({shader, values: [L.value(input), L.result(node)], uniforms, threads: elementCount(out.shape), label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  resample2d: {
    optionsIndex: 1,
    method: resample2d,
    lower,
    limits: () => ({input: tensorLimits(F, rankRange(4, 4)), output: tensorLimits(F, rankRange(4, 4))}),
  },
};
