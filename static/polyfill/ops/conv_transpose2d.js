/**
 * convTranspose2d (spec §convTranspose2d): validation, shape inference and lowering.
 *
 * Computed as a gather, one invocation per output element: output row oy receives input row iy
 * through filter row ky when oy + beginningPadding = iy * stride + ky * dilation, so each
 * invocation walks its filter taps, keeps those that land on an input row and column, and sums
 * over the input channels of its group. Input layout "nchw" | "nhwc" and filter layout
 * "iohw" | "hwoi" | "ohwi" are read in place through strides (uniforms). Output rows and columns
 * added by outputPadding or outputSizes get whatever taps reach them (often only the bias).
 */
import {checkDataType, checkRank} from '../shape/common.js';
import {convTranspose2dShape} from '../shape/conv.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {tensorLimits, rankRange} from './limits.js';
import {convGeometry, convMethod, declareWindowUniforms, outputOffset, outputPosition, windowUniforms} from './window.js';
import {addEpilogue} from './epilogue.js';

const F = ['float32', 'float16'];

/**
 * MLGraphBuilder.convTranspose2d(input, filter, options) (spec §convTranspose2d).
 * @throws {TypeError} invalid operands, data types, ranks, options or output sizes
 */
const convTranspose2d = convMethod('convTranspose2d', convTranspose2dShape, (x, label) => {
  checkRank(x, 4, label, 'input');
  checkDataType(x, F, label, 'input');
});

/** Lowers a convTranspose2d node to one dispatch. */
function lower(node, L) {
  const {groups, hasBias} = node.attrs;
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const g = convGeometry(node, 'iohw');
  const shader = new Shader('convTranspose2d').read('X', T).read('W', T);
  if (hasBias) shader.read('B', T);
  declareWindowUniforms(shader.write('Y', T).fn(storeHelpers(dt)))
    .uniform('channels').uniform('cin_per_group').uniform('cout_per_group');
  const ep = addEpilogue(shader, L, node);
  shader.main(`
${outputPosition('oc')}
  let grp = oc / u_cout_per_group();
  let ocg = oc % u_cout_per_group();
  let cin = u_cin_per_group();
  let xbase = n * u_x_strides(0u) + grp * cin * u_x_strides(1u);
  let wbase = grp * cin * u_w_strides(0u) + ocg * u_w_strides(1u);
  var acc = ${hasBias ? 'B[oc]' : '0.0'};
  for (var ky = 0u; ky < u_kernel(0u); ky++) {
    let ty = i32(oh + u_pad(0u)) - i32(ky * u_dilation(0u));
    if (ty < 0) { break; }
    let iy = u32(ty) / u_stride(0u);
    if (u32(ty) % u_stride(0u) != 0u || iy >= u_in_size(0u)) { continue; }
    for (var kx = 0u; kx < u_kernel(1u); kx++) {
      let tx = i32(ow + u_pad(1u)) - i32(kx * u_dilation(1u));
      if (tx < 0) { break; }
      let ix = u32(tx) / u_stride(1u);
      if (u32(tx) % u_stride(1u) != 0u || ix >= u_in_size(1u)) { continue; }
      var xi = xbase + iy * u_x_strides(2u) + ix * u_x_strides(3u);
      var wi = wbase + ky * u_w_strides(2u) + kx * u_w_strides(3u);
      for (var ic = 0u; ic < cin; ic++) {
        acc += X[xi] * W[wi];
        xi += u_x_strides(1u);
        wi += u_w_strides(0u);
      }
    }
  }
  let yi = ${outputOffset('oc')};
  Y[yi] = ${storeExpr(dt, 'epilogue(acc, yi)')};`);
  const uniforms = {...windowUniforms(node, g), channels: g.y.c, cin_per_group: g.x.c / groups, cout_per_group: g.f.o, ...ep.uniforms};
  const values = node.inputs.map((operand) => L.value(operand));
  values.push(L.result(node), ...ep.values);
  L.step({shader, values, uniforms, threads: g.y.n * g.y.c * g.y.h * g.y.w, label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  convTranspose2d: {
    optionsIndex: 2,
    method: convTranspose2d,
    lower,
    limits: () => ({
      input: tensorLimits(F, rankRange(4, 4)),
      filter: tensorLimits(F, rankRange(4, 4)),
      bias: tensorLimits(F, rankRange(1, 1)),
      output: tensorLimits(F, rankRange(4, 4)),
    }),
  },
};
