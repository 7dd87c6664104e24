/**
 * What the sliding-window operators share (conv2d, convTranspose2d and the pooling operators):
 * the builder method of the two convolutions, their geometry and window uniforms, and the WGSL
 * that turns an invocation into an output position when there is one invocation per element.
 *
 * Input and output are read in place in either layout ("nchw" | "nhwc") through per-dimension
 * element strides listed in n, c, h, w order (uniforms `x_strides`, `y_strides`).
 */
import {typeError} from '../errors.js';
import {checkRank} from '../shape/common.js';
import {dimsOf, layoutStrides} from '../shape/conv.js';
import {addNode, operandOf} from '../builder_state.js';

/**
 * MLGraphBuilder.conv2d / convTranspose2d(input, filter, options) for the op `op`: `checkInput`
 * checks the input's slots (data type, rank), then the filter must be 4-D of the input's data
 * type, `shapeOf` (conv2dShape or convTranspose2dShape of shape/conv.js) gives the attributes
 * and output shape, and the bias must have the input's data type.
 * @returns {function(builder, label, input, filter, options): MLOperand}
 * @throws {TypeError} (the method) invalid operands, data types, ranks, options or output size
 */
export function convMethod(op, shapeOf, checkInput) {
  return function conv(builder, label, input, filter, options) {
    const opts = options ?? {};
    const x = operandOf(builder, input, label, 'input');
    const f = operandOf(builder, filter, label, 'filter');
    const b = opts.bias === undefined ? null : operandOf(builder, opts.bias, label, 'bias');
    checkInput(x, label);
    checkRank(f, 4, label, 'filter');
    if (f.dataType !== x.dataType) throw typeError(label, `filter data type ${f.dataType} must match the input's ${x.dataType}`);
    const {attrs, shape} = shapeOf(x.shape, f.shape, b ? b.shape : null, opts, label);
    if (b && b.dataType !== x.dataType) throw typeError(label, `bias data type ${b.dataType} must match the input's ${x.dataType}`);
    const inputs = b ? [input, filter, opts.bias] : [input, filter];
    return addNode(builder, op, inputs, {...attrs, hasBias: Boolean(b)}, [{dataType: x.dataType, shape}], label)[0];
  };
}

/**
 * Logical sizes and strides of a conv2d or convTranspose2d node: input/output as n, c, h, w;
 * filter sizes by letter, its strides in `filterOrder` ('oihw' for conv2d, 'iohw' for
 * convTranspose2d).
 * @returns {{x: object, f: object, y: object, xStrides: number[], fStrides: number[], yStrides: number[]}}
 */
export function convGeometry(node, filterOrder = 'oihw') {
  const {inputLayout, filterLayout} = node.attrs;
  const [input, filter] = node.inputs;
  const out = node.outputs[0];
  return {
    x: dimsOf(input.shape, inputLayout),
    f: dimsOf(filter.shape, filterLayout),
    y: dimsOf(out.shape, inputLayout),
    xStrides: layoutStrides(input.shape, inputLayout, 'nchw'),
    fStrides: layoutStrides(filter.shape, filterLayout, filterOrder),
    yStrides: layoutStrides(out.shape, inputLayout, 'nchw'),
  };
}

/** Declares the uniforms of the convolution kernels that walk the filter window (not the matmul one). */
export function declareWindowUniforms(shader) {
  return shader.uniform('x_strides', 'u32', 4).uniform('w_strides', 'u32', 4).uniform('y_strides', 'u32', 4)
    .uniform('in_size', 'u32', 2).uniform('out_size', 'u32', 2).uniform('kernel', 'u32', 2)
    .uniform('pad', 'u32', 2).uniform('stride', 'u32', 2).uniform('dilation', 'u32', 2);
}

/** Values of the uniforms declareWindowUniforms() declares, from the node and its convGeometry(). */
export function windowUniforms(node, g) {
  const {padding, strides, dilations} = node.attrs;
  return {
    x_strides: g.xStrides, w_strides: g.fStrides, y_strides: g.yStrides,
    in_size: [g.x.h, g.x.w], out_size: [g.y.h, g.y.w], kernel: [g.f.h, g.f.w],
    pad: [padding[0], padding[2]], stride: strides, dilation: dilations,
  };
}

/**
 * WGSL: the output element of invocation `gi`, the elements counted in n, c, h, w order: `ow`,
 * `oh`, the channel (named `channel`) and `n`. Needs the uniforms `out_size` (height, width) and
 * `channels`.
 */
export function outputPosition(channel) {
  return `  let ow = gi % u_out_size(1u);
  var t = gi / u_out_size(1u);
  let oh = t % u_out_size(0u);
  t = t / u_out_size(0u);
  let ${channel} = t % u_channels();
  let n = t / u_channels();`;
}

/** WGSL: the offset in Y of the output element at n, `channel`, oh, ow (uniform `y_strides`). */
export function outputOffset(channel) {
  return `n * u_y_strides(0u) + ${channel} * u_y_strides(1u) + oh * u_y_strides(2u) + ow * u_y_strides(3u)`;
}
