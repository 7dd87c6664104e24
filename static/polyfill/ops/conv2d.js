/**
 * conv2d (spec §conv2d): validation, shape inference and lowering.
 *
 * Every input layout ("nchw" | "nhwc") and filter layout ("oihw" | "hwio" | "ohwi" | "ihwo") is
 * read in place through per-dimension element strides passed as uniforms, so no transpose is ever
 * emitted. Three kernels, chosen at build time from the shapes:
 *  - pointwise (1x1 filter, stride 1, dilation 1, no padding, groups 1): a matrix product on
 *    the one matrix core (matmul_kernels.js), see lowerPointwise();
 *  - depthwise (one input and one output channel per group, e.g. groups == channels): one
 *    invocation per 4 consecutive outputs of a row;
 *  - general: one invocation per (batch, row, 4 consecutive columns, block of 4 output channels
 *    of one group), so every input value loaded feeds 4 outputs and every weight 4.
 * Accumulation is in f32 for float32 and float16 (float16 results are rounded when stored).
 */
import {checkDataType, checkRank} from '../shape/common.js';
import {conv2dShape} from '../shape/conv.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {tensorLimits, rankRange} from './limits.js';
import {matmulStep} from './matmul_kernels.js';
import {isSoftwareAdapter} from './adapter_kind.js';
import {addEpilogue} from './epilogue.js';
import {convGeometry, convMethod, declareWindowUniforms, windowUniforms} from './window.js';

const F = ['float32', 'float16'];

/** Output channels computed per invocation by the general kernel. */
const BLOCK = 4;

/**
 * MLGraphBuilder.conv2d(input, filter, options) (spec §conv2d).
 * @throws {TypeError} invalid operands, data types, ranks, options or an invalid output size
 */
const conv2d = convMethod('conv2d', conv2dShape, (x, label) => {
  checkDataType(x, F, label, 'input');
  checkRank(x, 4, label, 'input');
});

/**
 * WGSL looping over the filter window of the output columns ow0..ow0+3 of row oh (columns past
 * the last are clamped to it and their results dropped by the caller). For each tap with at
 * least one column inside the input, `body` runs with `xc` (vec4<u32> input offsets of the
 * group's first channel), `ok` (vec4<bool>: the column is inside the input, not in the padding)
 * and `wt` (filter offset of the tap for channel 0 of the block). Padding reads as 0.
 */
function windowLoop(body) {
  return `
  let ih0 = i32(oh * u_stride(0u)) - i32(u_pad(0u));
  let owl = min(vec4<u32>(ow0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(u_out_size(1u) - 1u));
  let iw0 = vec4<i32>(owl * u_stride(1u)) - vec4<i32>(i32(u_pad(1u)));
  let wmax = vec4<i32>(i32(u_in_size(1u)) - 1);
  for (var ky = 0u; ky < u_kernel(0u); ky++) {
    let iy = ih0 + i32(ky * u_dilation(0u));
    if (iy < 0 || iy >= i32(u_in_size(0u))) { continue; }
    let xrow = xbase + u32(iy) * u_x_strides(2u);
    for (var kx = 0u; kx < u_kernel(1u); kx++) {
      let ix = iw0 + vec4<i32>(i32(kx * u_dilation(1u)));
      let ok = (ix >= vec4<i32>(0)) & (ix <= wmax);
      if (!any(ok)) { continue; }
      let xc = vec4<u32>(xrow) + vec4<u32>(clamp(ix, vec4<i32>(0), wmax)) * u_x_strides(3u);
      let wt = wbase + ky * u_w_strides(2u) + kx * u_w_strides(3u);
${body}
    }
  }`;
}

/** WGSL: the input values at offsets `xc`, 0 where `ok` is false. */
const LOAD4 = 'select(vec4<f32>(0.0), vec4<f32>(X[xi.x], X[xi.y], X[xi.z], X[xi.w]), ok)';

/** WGSL `fn load_x(row, ix)`: the input at column ix of the row at offset `row`, 0 outside. */
const LOAD_X = `
fn load_x(row: u32, ix: i32) -> f32 {
  let inside = ix >= 0 && ix < i32(u_in_size(1u));
  return select(0.0, X[row + u32(clamp(ix, 0, i32(u_in_size(1u)) - 1)) * u_x_strides(3u)], inside);
}`;

/**
 * Depthwise kernel (one input and one output channel per group): one invocation per batch,
 * channel, row and 4 consecutive output columns. With stride 1 and dilation 1 along the width
 * (a variant of the shader text), the 4 columns slide over one input row as a vec4 window, one
 * new input load per filter tap instead of four.
 */
function lowerDepthwise(node, L, g, values) {
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const {strides, dilations, hasBias} = node.attrs;
  const unitW = strides[1] === 1 && dilations[1] === 1;
  const shader = declareWindowUniforms(new Shader(unitW ? 'conv2d_depthwise_unit' : 'conv2d_depthwise').read('X', T).read('W', T));
  if (hasBias) shader.read('B', T);
  shader.write('Y', T).fn(storeHelpers(dt)).fn(LOAD_X).uniform('channels').uniform('blocks_w');
  const ep = addEpilogue(shader, L, node);
  const store = (lane, j) => `  if (ow0 + ${j}u < u_out_size(1u)) {
    let yi = ybase + (ow0 + ${j}u) * u_y_strides(3u);
    Y[yi] = ${storeExpr(dt, `epilogue(acc.${lane}, yi)`)};
  }`;
  const taps = unitW ? `
  let ih0 = i32(oh * u_stride(0u)) - i32(u_pad(0u));
  let iw0 = i32(ow0) - i32(u_pad(1u));
  for (var ky = 0u; ky < u_kernel(0u); ky++) {
    let iy = ih0 + i32(ky * u_dilation(0u));
    if (iy < 0 || iy >= i32(u_in_size(0u))) { continue; }
    let xrow = xbase + u32(iy) * u_x_strides(2u);
    var v = vec4<f32>(0.0, load_x(xrow, iw0), load_x(xrow, iw0 + 1), load_x(xrow, iw0 + 2));
    var wt = wbase + ky * u_w_strides(2u);
    for (var kx = 0u; kx < u_kernel(1u); kx++) {
      v = vec4<f32>(v.yzw, load_x(xrow, iw0 + i32(kx) + 3));
      acc += v * W[wt];
      wt += u_w_strides(3u);
    }
  }` : windowLoop(`      let xi = xc;
      acc += ${LOAD4} * W[wt];`);
  shader.main(`
  let ow0 = (gi % u_blocks_w()) * 4u;
  let t = gi / u_blocks_w();
  let oh = t % u_out_size(0u);
  let nc = t / u_out_size(0u);
  let c = nc % u_channels();
  let n = nc / u_channels();
  let xbase = n * u_x_strides(0u) + c * u_x_strides(1u);
  let wbase = c * u_w_strides(0u);
  var acc = vec4<f32>(${hasBias ? 'B[c]' : '0.0'});
${taps}
  let ybase = n * u_y_strides(0u) + c * u_y_strides(1u) + oh * u_y_strides(2u);
${['x', 'y', 'z', 'w'].map(store).join('\n')}`);
  const blocksW = Math.ceil(g.y.w / 4);
  const uniforms = {...windowUniforms(node, g), channels: g.y.c, blocks_w: blocksW, ...ep.uniforms};
  L.step({shader, values: [...values, ...ep.values], uniforms, threads: g.y.n * g.y.c * g.y.h * blocksW, label: node.label});
}

/**
 * General kernel: one invocation per batch, group, block of BLOCK output channels of that group,
 * row and 4 consecutive output columns; the input-channel loop is innermost and every input
 * value loaded feeds BLOCK accumulators (acc<j> holds the channels of column j).
 */
function lowerGeneral(node, L, g, values) {
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const {groups, hasBias} = node.attrs;
  const coutPerGroup = g.f.o / groups;
  const blocks = Math.ceil(coutPerGroup / BLOCK);
  const shader = declareWindowUniforms(new Shader('conv2d').read('X', T).read('W', T));
  if (hasBias) shader.read('B', T);
  shader.write('Y', T).fn(storeHelpers(dt));
  shader.uniform('cin_per_group').uniform('cout_per_group').uniform('blocks').uniform('group_blocks').uniform('blocks_w');
  const ep = addEpilogue(shader, L, node);
  const column = (j) => `  if (ow0 + ${j}u < u_out_size(1u)) {
    let yb = ybase + (ow0 + ${j}u) * u_y_strides(3u);
    let a = acc${j}${hasBias ? ' + bias' : ''};
${['x', 'y', 'z', 'w'].map((lane, i) => `    if (count > ${i}u) {
      let yi = yb + (oc0 + ${i}u) * u_y_strides(1u);
      Y[yi] = ${storeExpr(dt, `epilogue(a.${lane}, yi)`)};
    }`).join('\n')}
  }`;
  shader.main(`
  let ow0 = (gi % u_blocks_w()) * 4u;
  var t = gi / u_blocks_w();
  let oh = t % u_out_size(0u);
  t = t / u_out_size(0u);
  let gb = t % u_group_blocks();
  let n = t / u_group_blocks();
  let grp = gb / u_blocks();
  let oc0 = grp * u_cout_per_group() + (gb % u_blocks()) * ${BLOCK}u;
  let count = min(${BLOCK}u, (grp + 1u) * u_cout_per_group() - oc0);
  let lane = vec4<u32>(0u, min(1u, count - 1u), min(2u, count - 1u), min(3u, count - 1u));
  let wl = lane * u_w_strides(0u);
  let cin = u_cin_per_group();
  let xbase = n * u_x_strides(0u) + grp * cin * u_x_strides(1u);
  let wbase = oc0 * u_w_strides(0u);
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
${windowLoop(`      var xi = xc;
      var wi = wt;
      for (var ic = 0u; ic < cin; ic++) {
        let xv = ${LOAD4};
        let wv = vec4<f32>(W[wi + wl.x], W[wi + wl.y], W[wi + wl.z], W[wi + wl.w]);
        acc0 += xv.x * wv;
        acc1 += xv.y * wv;
        acc2 += xv.z * wv;
        acc3 += xv.w * wv;
        xi += vec4<u32>(u_x_strides(1u));
        wi += u_w_strides(1u);
      }`)}
${hasBias ? '  let bias = vec4<f32>(B[oc0 + lane.x], B[oc0 + lane.y], B[oc0 + lane.z], B[oc0 + lane.w]);' : ''}
  let ybase = n * u_y_strides(0u) + oh * u_y_strides(2u);
${[0, 1, 2, 3].map(column).join('\n')}`);
  const blocksW = Math.ceil(g.y.w / 4);
  const uniforms = {
    ...windowUniforms(node, g),
    cin_per_group: g.f.i, cout_per_group: coutPerGroup, blocks, group_blocks: groups * blocks, blocks_w: blocksW,
    ...ep.uniforms,
  };
  L.step({shader, values: [...values, ...ep.values], uniforms, threads: g.y.n * groups * blocks * g.y.h * blocksW, label: node.label});
}

/** Whether the node is a 1x1, stride 1, dilation 1, unpadded, ungrouped convolution. */
function isPointwise(node, g) {
  const {padding, strides, dilations, groups} = node.attrs;
  return groups === 1 && g.f.h === 1 && g.f.w === 1 && padding.every((p) => p === 0) &&
    strides.every((s) => s === 1) && dilations.every((d) => d === 1);
}

/**
 * The matrix kernel of a pointwise conv2d of M output channels: the tuning switch
 * `pointwise` (tuning.js) if set; on a CPU adapter
 * (SwiftShader) 'blocked', since barriers and workgroup memory make the tiled kernel slower
 * there; on hardware GPUs 'blocked' below 32 output channels, which waste most of a 64-row tile,
 * else the matrix core's own choice (docs/design-notes.md, "Pointwise convolutions";
 * tools/bench_conv.py measures them).
 * @returns {string|undefined} a matmulStep kernel, undefined for chooseMatmulKernel()'s
 */
function pointwiseKernel(ctx, M) {
  const override = ctx.tuning.pointwise;
  if (override) return override;
  if (isSoftwareAdapter(ctx) || M < 32) return 'blocked';
  return undefined;
}

/**
 * Pointwise conv2d as a matrix product per batch: Y[o, p] = sum_c W[o, c] * X[c, p] (+ bias[o]),
 * p = h * width + w. Both layouts fit because the positions of one channel are equally spaced in
 * memory (nchw: stride 1, nhwc: stride C): A = filter (M = output channels x K = input
 * channels), B = input (K x N = height * width), the bias a C term broadcast along N; every
 * operand is addressed through its (row, column) strides, so nothing is copied.
 */
function lowerPointwise(node, L, g, values) {
  const [x, w, bias, y] = node.attrs.hasBias ? values : [values[0], values[1], undefined, values[2]];
  const batched = g.x.n > 1;
  matmulStep(L, {
    node,
    label: node.label,
    dataType: node.outputs[0].dataType,
    kernel: pointwiseKernel(L.ctx, g.f.o),
    a: w, b: x, c: bias, y,
    M: g.f.o, N: g.x.h * g.x.w, K: g.f.i,
    aStrides: [g.fStrides[0], g.fStrides[1]],
    bStrides: [g.xStrides[1], g.xStrides[3]],
    cStrides: [1, 0],
    yStrides: [g.yStrides[1], g.yStrides[3]],
    batchShape: batched ? [g.x.n] : [],
    aBatchStrides: batched ? [0] : [],
    bBatchStrides: batched ? [g.xStrides[0]] : [],
    yBatchStride: g.yStrides[0],
  });
}

/** Lowers a conv2d node to one dispatch of the kernel that fits its shapes. */
function lower(node, L) {
  const g = convGeometry(node);
  const values = node.inputs.map((operand) => L.value(operand));
  values.push(L.result(node));
  if (isPointwise(node, g)) return lowerPointwise(node, L, g, values);
  if (g.f.i === 1 && g.f.o === node.attrs.groups) return lowerDepthwise(node, L, g, values);
  return lowerGeneral(node, L, g, values);
}

/** MLConv2dSupportLimits. */
function limits() {
  return {
    input: tensorLimits(F, rankRange(4, 4)),
    filter: tensorLimits(F, rankRange(4, 4)),
    bias: tensorLimits(F, rankRange(1, 1)),
    output: tensorLimits(F, rankRange(4, 4)),
  };
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  conv2d: {optionsIndex: 2, method: conv2d, lower, limits},
};
