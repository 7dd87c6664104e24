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
import {typeError} from '../errors.js';
import {checkDataType, checkRank} from '../shape/common.js';
import {convTranspose2dShape, dimsOf, layoutStrides} from '../shape/conv.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {tensorLimits, rankRange} from './limits.js';

const F = ['float32', 'float16'];

/**
 * MLGraphBuilder.convTranspose2d(input, filter, options) (spec §convTranspose2d).
 * @throws {TypeError} invalid operands, data types, ranks, options or output sizes
 */
function convTranspose2d(builder, label, input, filter, options) {
  const opts = options ?? {};
  const x = builder._operand(input, label, 'input');
  const f = builder._operand(filter, label, 'filter');
  const b = opts.bias === undefined ? null : builder._operand(opts.bias, label, 'bias');
  checkRank(x, 4, label, 'input');
  checkDataType(x, F, label, 'input');
  checkRank(f, 4, label, 'filter');
  if (f.dataType !== x.dataType) throw typeError(label, `filter data type ${f.dataType} must match the input's ${x.dataType}`);
  const {attrs, shape} = convTranspose2dShape(x.shape, f.shape, b ? b.shape : null, opts, label);
  if (b && b.dataType !== x.dataType) throw typeError(label, `bias data type ${b.dataType} must match the input's ${x.dataType}`);
  const inputs = b ? [input, filter, opts.bias] : [input, filter];
  return builder._node('convTranspose2d', inputs, {...attrs, hasBias: Boolean(b)}, [{dataType: x.dataType, shape}], label)[0];
}

/** Lowers a convTranspose2d node to one dispatch. */
function lower(node, L) {
  const {inputLayout, filterLayout, padding, strides, dilations, groups, hasBias} = node.attrs;
  const [input, filter] = node.inputs;
  const out = node.outputs[0];
  const dt = out.dataType;
  const T = wgslType(dt);
  const x = dimsOf(input.shape, inputLayout);
  const f = dimsOf(filter.shape, filterLayout);
  const y = dimsOf(out.shape, inputLayout);
  const shader = new Shader('convTranspose2d').read('X', T).read('W', T);
  if (hasBias) shader.read('B', T);
  shader.write('Y', T).fn(storeHelpers(dt))
    .uniform('x_strides', 'u32', 4).uniform('w_strides', 'u32', 4).uniform('y_strides', 'u32', 4)
    .uniform('in_size', 'u32', 2).uniform('out_size', 'u32', 2).uniform('kernel', 'u32', 2)
    .uniform('pad', 'u32', 2).uniform('stride', 'u32', 2).uniform('dilation', 'u32', 2)
    .uniform('channels').uniform('cin_per_group').uniform('cout_per_group');
  shader.main(`
  let ow = gi % u_out_size(1u);
  var t = gi / u_out_size(1u);
  let oh = t % u_out_size(0u);
  t = t / u_out_size(0u);
  let oc = t % u_channels();
  let n = t / u_channels();
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
  Y[n * u_y_strides(0u) + oc * u_y_strides(1u) + oh * u_y_strides(2u) + ow * u_y_strides(3u)] = ${storeExpr(dt, 'acc')};`);
  const uniforms = {
    x_strides: layoutStrides(input.shape, inputLayout, 'nchw'),
    w_strides: layoutStrides(filter.shape, filterLayout, 'iohw'),
    y_strides: layoutStrides(out.shape, inputLayout, 'nchw'),
    in_size: [x.h, x.w], out_size: [y.h, y.w], kernel: [f.h, f.w],
    pad: [padding[0], padding[2]], stride: strides, dilation: dilations,
    channels: y.c, cin_per_group: x.c / groups, cout_per_group: f.o,
  };
  const values = node.inputs.map((operand) => L.value(operand));
  values.push(L.result(node));
  L.step({shader, values, uniforms, threads: y.n * y.c * y.h * y.w, label: node.label});
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
