/**
 * CPU-context lowering (cpu/compile.js) of the sliding-window operators to ONNX: conv2d,
 * convTranspose2d, averagePool2d, l2Pool2d, maxPool2d. ONNX wants NCHW data and OIHW (conv) /
 * IOHW (convTranspose) filters: other layouts get Transposes, which ONNX Runtime folds into
 * constant filters at session creation.
 */
const F = ['float32'];
const NHWC_TO_NCHW = [0, 3, 1, 2];
const NCHW_TO_NHWC = [0, 2, 3, 1];
/** Filter layout -> permutation to ONNX's order. */
const CONV_FILTER = {oihw: null, hwio: [3, 2, 0, 1], ohwi: [0, 3, 1, 2], ihwo: [3, 0, 1, 2]};
const TRANSPOSE_FILTER = {iohw: null, hwoi: [3, 2, 0, 1], ohwi: [3, 0, 1, 2]};

const transpose = (G, name, perm) => (perm ? G.op('Transpose', [name], {perm}) : name);

/** Spatial sizes [h, w] of a 4-D shape in `layout`. */
const spatial = (shape, layout) => (layout === 'nchw' ? [shape[2], shape[3]] : [shape[1], shape[2]]);

/**
 * Runs `build(x)` on the input in NCHW and float32 (carried), returning the output in the
 * node's layout and type.
 */
function nchw(node, G, layout, names, build) {
  const x = node.inputs[0];
  return G.carried(x.dataType, names, F, ([v, ...rest], type) => {
    const y = build(transpose(G, v, layout === 'nhwc' ? NHWC_TO_NCHW : null), rest, type);
    return transpose(G, y, layout === 'nhwc' ? NCHW_TO_NHWC : null);
  });
}

function conv2d(node, G) {
  const [x, w, b] = node.inputs;
  const {padding, strides, dilations, groups, inputLayout, filterLayout} = node.attrs;
  const names = [G.value(x), G.value(w), ...(b ? [G.value(b)] : [])];
  return [nchw(node, G, inputLayout, names, (v, [wv, bv]) => G.op('Conv', [v, transpose(G, wv, CONV_FILTER[filterLayout]), ...(bv ? [bv] : [])], {
    pads: [padding[0], padding[2], padding[1], padding[3]], strides, dilations, group: groups,
  }))];
}

function convTranspose2d(node, G) {
  const [x, w, b] = node.inputs;
  const {padding, strides, dilations, outputPadding, groups, inputLayout, filterLayout} = node.attrs;
  const [inH, inW] = spatial(x.shape, inputLayout);
  const [outH, outW] = spatial(node.outputs[0].shape, inputLayout);
  const fShape = w.shape;
  const perm = TRANSPOSE_FILTER[filterLayout];
  const [kH, kW] = perm ? [fShape[perm[2]], fShape[perm[3]]] : [fShape[2], fShape[3]];
  // outputSizes is folded into the output shape: the output padding that gives it
  const natural = (n, s, p0, p1, d, k) => (n - 1) * s - p0 - p1 + d * (k - 1) + 1;
  const op = [outH - natural(inH, strides[0], padding[0], padding[1], dilations[0], kH),
    outW - natural(inW, strides[1], padding[2], padding[3], dilations[1], kW)];
  void outputPadding;
  const names = [G.value(x), G.value(w), ...(b ? [G.value(b)] : [])];
  return [nchw(node, G, inputLayout, names, (v, [wv, bv]) => G.op('ConvTranspose', [v, transpose(G, wv, perm), ...(bv ? [bv] : [])], {
    pads: [padding[0], padding[2], padding[1], padding[3]], strides, dilations, group: groups, output_padding: op,
  }))];
}

const POOLS = {
  averagePool2d: (attrs) => ['AveragePool', {...attrs, count_include_pad: 0}],
  maxPool2d: (attrs) => ['MaxPool', attrs],
  l2Pool2d: (attrs) => ['LpPool', {...attrs, p: 2}],
};

/**
 * Pooling with the padding written out (ONNX Runtime wants each pad smaller than the window):
 * the input padded by Pad (-Infinity for max, 0 otherwise, plus the extra end rows a ceil
 * rounding needs), then a pool without pads; the average divides by the taps inside the input,
 * the average of a padded mask of ones.
 */
function explicitPool(G, node, v, attrs, out) {
  const [onnx] = POOLS[node.op]({});
  const [, channels, inH, inW] = attrs.nchwShape;
  const {kernel_shape: k, pads, strides: s} = attrs;
  const d = attrs.dilations ?? [1, 1];
  const extra = [0, 1].map((i) => Math.max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - ([inH, inW][i] + pads[i] + pads[i + 2])));
  const all = [0, 0, pads[0], pads[1], 0, 0, pads[2] + extra[0], pads[3] + extra[1]];
  const plain = {kernel_shape: k, strides: s, ...(attrs.dilations ? {dilations: d} : {})};
  const padded = (x, value) => G.op('Pad', [x, G.i64(all), G.scalar('float32', value)]);
  if (onnx === 'MaxPool') return G.op('MaxPool', [padded(v, -Infinity)], plain);
  if (onnx === 'LpPool') return G.op('LpPool', [padded(v, 0)], {...plain, p: 2});
  // average (ORT's AveragePool has no dilations): window sums by a depthwise Conv with a filter
  // of ones, divided by the same sum over a plane of ones (the taps inside the input)
  const ones = (n) => G.constant('float32', [n, 1, k[0], k[1]], new Uint8Array(new Float32Array(n * k[0] * k[1]).fill(1).buffer));
  const conv = {kernel_shape: k, strides: s, dilations: d};
  const sum = G.op('Conv', [padded(v, 0), ones(channels)], {...conv, group: channels});
  const plane = G.constant('float32', [1, 1, inH, inW], new Uint8Array(new Float32Array(inH * inW).fill(1).buffer));
  const count = G.op('Conv', [padded(plane, 0), ones(1)], conv);
  return G.op('Div', [sum, count]);
}

function pool(node, G) {
  const x = node.inputs[0];
  const {windowDimensions, padding, strides, dilations, layout} = node.attrs;
  const [inH, inW] = spatial(x.shape, layout);
  const [outH, outW] = spatial(node.outputs[0].shape, layout);
  const floorSize = (n, k, p0, p1, s, d) => Math.floor((n + p0 + p1 - d * (k - 1) - 1) / s) + 1;
  const ceil = floorSize(inH, windowDimensions[0], padding[0], padding[1], strides[0], dilations[0]) < outH
    || floorSize(inW, windowDimensions[1], padding[2], padding[3], strides[1], dilations[1]) < outW;
  const pads = [padding[0], padding[2], padding[1], padding[3]];
  const wide = pads.some((p, i) => p >= windowDimensions[i % 2])
    || (node.op === 'averagePool2d' && dilations.some((v) => v !== 1));
  const [onnx, attrs] = POOLS[node.op]({kernel_shape: windowDimensions, pads, strides, dilations, ceil_mode: ceil ? 1 : 0});
  if (onnx === 'AveragePool' && dilations.every((d) => d === 1)) delete attrs.dilations;
  // maxPool of 32-bit integers in float64 (exact); ORT's MaxPool has no integer kernel beyond 8 bits
  const native = node.op === 'maxPool2d' ? ['float32', 'int8', 'uint8'] : F;
  const dt = x.dataType;
  const wideInt = node.op === 'maxPool2d' && ['int32', 'uint32'].includes(dt);
  const build = (v) => {
    const t = transpose(G, v, layout === 'nhwc' ? NHWC_TO_NCHW : null);
    const channels = layout === 'nchw' ? x.shape[1] : x.shape[3];
    const y = wide ? explicitPool(G, node, t, {...attrs, nchwShape: [x.shape[0], channels, inH, inW]}, [outH, outW]) : G.op(onnx, [t], attrs);
    return transpose(G, y, layout === 'nhwc' ? NCHW_TO_NHWC : null);
  };
  if (wideInt && !wide) return [G.cast(G.op('Cast', [build(G.op('Cast', [G.value(x)], {to: 11}))], {to: dt === 'int32' ? 6 : 12}), dt, dt)];
  return [G.carried(dt, [G.value(x)], native, ([v]) => build(v))];
}

/** Lowerings by WebNN operator name. */
export const WINDOW_LOWERINGS = {conv2d, convTranspose2d, averagePool2d: pool, maxPool2d: pool, l2Pool2d: pool};
