/**
 * CPU-context lowering (cpu/compile.js) of data movement, gather/scatter, reductions, softmax
 * and the other non-element-wise families to ONNX (see lower_elementwise.js for the contract).
 * Attributes come from the nodes the shared builder recorded (ops/*.js); where WebNN folds an
 * option into the output shape (keepDimensions, roundingType, outputSizes, repetitions, sizes),
 * the ONNX form is derived from the shapes.
 */
const F = ['float32'];
const FI = ['float32', 'int32', 'int64'];
const typeOf = (operand) => operand.dataType;
const shapeOf = (operand) => operand.shape;
const reshape = (G, name, shape) => G.op('Reshape', [name, G.i64(shape)]);

function slice(node, G) {
  const x = node.inputs[0];
  const {starts, strides} = node.attrs;
  const sizes = shapeOf(node.outputs[0]);
  const ends = starts.map((s, i) => s + (sizes[i] - 1) * strides[i] + 1);
  const axes = starts.map((_, i) => i);
  if (axes.length === 0) return [G.op('Identity', [G.value(x)])];
  return [G.op('Slice', [G.value(x), G.i64(starts), G.i64(ends), G.i64(axes), G.i64(strides)])];
}

/** Reverses `axes` of `name` (Slice with step -1). */
function reverseAxes(G, name, axes) {
  if (axes.length === 0) return G.op('Identity', [name]);
  const big = -(2n ** 63n);
  return G.op('Slice', [name, G.i64(axes.map(() => -1)), G.i64(axes.map(() => big)), G.i64(axes), G.i64(axes.map(() => -1))]);
}

/** pad 'symmetric' (ONNX has none): per axis, mirrored slices including the edge, concatenated. */
function padSymmetric(G, name, shape, begin, end) {
  let value = name;
  shape.forEach((n, axis) => {
    const parts = [];
    if (begin[axis] > 0) parts.push(reverseAxes(G, G.op('Slice', [value, G.i64([0]), G.i64([begin[axis]]), G.i64([axis])]), [axis]));
    parts.push(value);
    if (end[axis] > 0) parts.push(reverseAxes(G, G.op('Slice', [value, G.i64([n - end[axis]]), G.i64([n]), G.i64([axis])]), [axis]));
    if (parts.length > 1) value = G.op('Concat', parts, {axis});
  });
  return value;
}

function valueOfWords(words, dataType) {
  const view = new DataView(new Uint32Array(words).buffer);
  switch (dataType) {
    case 'float32': case 'float16': return view.getFloat32(0, true);
    case 'int64': return view.getBigInt64(0, true);
    case 'uint64': return view.getBigUint64(0, true);
    case 'uint32': return view.getUint32(0, true);
    default: return view.getInt32(0, true);
  }
}

function pad(node, G) {
  const x = node.inputs[0];
  const {begin, end, mode, value} = node.attrs;
  const dt = typeOf(x);
  if (shapeOf(x).length === 0) return [G.op('Identity', [G.value(x)])];
  if (mode === 'symmetric') return [padSymmetric(G, G.value(x), shapeOf(x), begin, end)];
  const pads = G.i64([...begin, ...end]);
  const onnxMode = {constant: 'constant', edge: 'edge', reflection: 'reflect'}[mode];
  const inputs = [G.value(x), pads];
  if (mode === 'constant') {
    // ONNX wants the pad value in the input's type; float16's is cast from its float32 value
    const v = valueOfWords(value, dt);
    inputs.push(dt === 'float16' ? G.cast(G.scalar('float32', v), 'float32', 'float16') : G.scalar(dt, v));
  }
  return [G.op('Pad', inputs, {mode: onnxMode})];
}

function split(node, G) {
  const {axis, sizes} = node.attrs;
  return G.node('Split', [G.value(node.inputs[0]), G.i64(sizes)], {axis}, sizes.length);
}

function tile(node, G) {
  const x = node.inputs[0];
  const reps = shapeOf(node.outputs[0]).map((d, i) => d / shapeOf(x)[i]);
  return [G.op('Tile', [G.value(x), G.i64(reps)])];
}

/**
 * Indices as int64, clamped as the WebGPU path does (ops/gather.js index_at): below -n to the
 * first, n and above to the last element; -n..-1 count from the end (ONNX does that itself).
 * `sizes`: the dimension sizes the last index dimension addresses ([n] for the axis ops,
 * broadcast along the last dimension).
 */
function clampedIndices(G, operand, sizes, nd) {
  const v = G.cast(G.value(operand), typeOf(operand), 'int64');
  const lo = nd ? G.i64(sizes.map((n) => -n)) : G.scalar('int64', -sizes[0]);
  const hi = nd ? G.i64(sizes.map((n) => n - 1)) : G.scalar('int64', sizes[0] - 1);
  return G.op('Max', [G.op('Min', [v, hi]), lo]);
}

const gatherLike = (onnx) => (node, G) => {
  const [x, idx] = node.inputs;
  const {axis} = node.attrs;
  return [G.op(onnx, [G.value(x), clampedIndices(G, idx, [shapeOf(x)[axis]], false)], {axis})];
};

function gatherND(node, G) {
  const [x, idx] = node.inputs;
  const k = shapeOf(idx).at(-1);
  return [G.op('GatherND', [G.value(x), clampedIndices(G, idx, shapeOf(x).slice(0, k), true)])];
}

function scatterElements(node, G) {
  const [x, idx, u] = node.inputs;
  const {axis} = node.attrs;
  return [G.op('ScatterElements', [G.value(x), clampedIndices(G, idx, [shapeOf(x)[axis]], false), G.value(u)], {axis})];
}

function scatterND(node, G) {
  const [x, idx, u] = node.inputs;
  const k = shapeOf(idx).at(-1);
  return [G.op('ScatterND', [G.value(x), clampedIndices(G, idx, shapeOf(x).slice(0, k), true), G.value(u)])];
}

const REDUCE = {
  reduceL1: ['ReduceL1', FI, 'Abs'],
  reduceL2: ['ReduceL2', FI, 'Abs'],
  reduceLogSum: ['ReduceLogSum', F, 'Log'],
  reduceLogSumExp: ['ReduceLogSumExp', F, 'Identity'],
  reduceMax: ['ReduceMax', ['float32', 'int32', 'int64', 'int8', 'uint8'], 'Identity'],
  reduceMean: ['ReduceMean', ['float32', 'int32'], 'Identity'],
  reduceMin: ['ReduceMin', ['float32', 'int32', 'int64', 'int8', 'uint8'], 'Identity'],
  reduceProduct: ['ReduceProd', FI, 'Identity'],
  reduceSum: ['ReduceSum', FI, 'Identity'],
  reduceSumSquare: ['ReduceSumSquare', FI, 'SumSquare'],
};

const FLOATS = ['float32', 'float16'];
const SIGN_BIT = -(2n ** 63n);

/** Whether any element along `axes` is NaN (keepdims), as bool. */
const anyNaN = (G, v, axes) => G.op('Cast', [G.op('ReduceMax', [G.op('Cast', [G.op('IsNaN', [v])], {to: 6}), G.i64(axes)], {keepdims: 1})], {to: 9});

/**
 * An exact integer reduction (ORT's int64 ReduceSum/ReduceProd go through floating point):
 * the reduced axes moved last and flattened to [outer, n], then halved log2(n) times with the
 * element-wise `combine` (Add, Mul: exact and wrapping), odd lengths padded with `identity`.
 */
function exactIntReduce(G, v, shape, axes, combine, identity) {
  const keep = shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const outer = keep.reduce((p, i) => p * shape[i], 1);
  let n = axes.reduce((p, i) => p * shape[i], 1);
  let t = reshape(G, G.op('Transpose', [v], {perm: [...keep, ...axes]}), [outer, n]);
  const slice = (from, to) => G.op('Slice', [t, G.i64([from]), G.i64([to]), G.i64([1])]);
  while (n > 1) {
    if (n % 2) {
      const pad = G.constant('int64', [outer, 1], new Uint8Array(new BigInt64Array(outer).fill(identity).buffer));
      t = G.op('Concat', [t, pad], {axis: 1});
      n += 1;
    }
    const half = n / 2;
    t = G.op(combine, [slice(0, half), slice(half, n)]);
    n = half;
  }
  return t;
}

/** Integer reductions done exactly, as int64: op -> [pre-map, combine, identity]. */
const EXACT_INT = {reduceSum: [null, 'Add', 0n], reduceL1: ['Abs', 'Add', 0n], reduceSumSquare: ['Square', 'Add', 0n], reduceProduct: [null, 'Mul', 1n]};

function reduce(node, G) {
  const [onnx, native, empty] = REDUCE[node.op];
  const x = node.inputs[0];
  const {axes} = node.attrs;
  const out = shapeOf(node.outputs[0]);
  const minMax = onnx === 'ReduceMax' || onnx === 'ReduceMin';
  if (minMax && typeOf(x) === 'uint64' && axes.length > 0) {
    // uint64 order as int64 order: flip the sign bit (ORT's ReduceMax has no uint64 kernel)
    const flip = (v) => G.op('BitwiseXor', [v, G.scalar('int64', SIGN_BIT)]);
    const r = G.op(onnx, [flip(G.cast(G.value(x), 'uint64', 'int64')), G.i64(axes)], {keepdims: 1});
    return [G.cast(reshape(G, flip(r), out), 'int64', 'uint64')];
  }
  const integer = !FLOATS.includes(typeOf(x));
  if (integer && EXACT_INT[node.op] && axes.length > 0) {
    const [pre, combine, identity] = EXACT_INT[node.op];
    return [G.carried(typeOf(x), [G.value(x)], ['int64'], ([v]) => {
      const unsigned = typeOf(x).startsWith('uint');
      const mapped = pre === 'Square' ? G.op('Mul', [v, v]) : pre && !unsigned ? G.op(pre, [v]) : v;
      return reshape(G, exactIntReduce(G, mapped, shapeOf(x), axes, combine, identity), out);
    })];
  }
  return [G.carried(typeOf(x), [G.value(x)], native, ([v], type) => {
    if (axes.length === 0) return empty === 'SumSquare' ? G.op('Mul', [v, v]) : G.op(empty, [v]);
    let r = G.op(onnx, [v, G.i64(axes)], {keepdims: 1});
    // ORT's ReduceMax/Min skip NaN, and its ReduceLogSumExp loses it next to +Infinity; the
    // spec's max/min and exp/sum/log propagate it
    if ((minMax || onnx === 'ReduceLogSumExp') && FLOATS.includes(typeOf(x))) r = G.op('Where', [anyNaN(G, v, axes), G.scalar(type, NaN), r]);
    return reshape(G, r, out);
  })];
}

/**
 * argMax/argMin of 64-bit integers: TopK with k = 1 (ONNX's TopK puts the lower index first among
 * equal values; ORT's ArgMax has no 64-bit kernel); uint64 as int64 with the sign bit flipped.
 */
function argTopK(G, node, onnx) {
  const x = node.inputs[0];
  const {axis} = node.attrs;
  let v = G.value(x);
  if (typeOf(x) === 'uint64') v = G.op('BitwiseXor', [G.cast(v, 'uint64', 'int64'), G.scalar('int64', SIGN_BIT)]);
  const [, index] = G.node('TopK', [v, G.i64([1])], {axis, largest: onnx === 'ArgMax' ? 1 : 0, sorted: 1}, 2);
  return index;
}

/** argMax/argMin: the first extreme index; a NaN counts as the extreme (its first index wins). */
const argMinMax = (onnx) => (node, G) => {
  const x = node.inputs[0];
  const out = node.outputs[0];
  const {axis} = node.attrs;
  if (typeOf(x) === 'int64' || typeOf(x) === 'uint64') return [G.cast(reshape(G, argTopK(G, node, onnx), shapeOf(out)), 'int64', typeOf(out))];
  const attrs = {axis, keepdims: 1, select_last_index: 0};
  let v = G.value(x);
  if (typeOf(x) === 'uint32') v = G.op('Cast', [v], {to: 11}); // exact in float64
  const r = typeOf(x) === 'uint32' ? G.op(onnx, [v], attrs) : G.carried(typeOf(x), [v], ['float32', 'int32', 'int8', 'uint8'],
    ([u]) => {
      const a = G.op(onnx, [u], attrs);
      if (!FLOATS.includes(typeOf(x))) return a;
      const firstNaN = G.op('ArgMax', [G.op('Cast', [G.op('IsNaN', [u])], {to: 6})], attrs);
      return G.op('Where', [anyNaN(G, u, [axis]), firstNaN, a]);
    }, {outType: null});
  return [G.cast(reshape(G, r, shapeOf(out)), 'int64', typeOf(out))];
};

function cumulativeSum(node, G) {
  const x = node.inputs[0];
  const {axis, exclusive, reversed} = node.attrs;
  return [G.carried(typeOf(x), [G.value(x), G.scalar('int64', axis)], FI,
    (n) => G.op('CumSum', n, {exclusive: exclusive ? 1 : 0, reverse: reversed ? 1 : 0}), {typed: [0]})];
}

function softmax(node, G) {
  const x = node.inputs[0];
  return [G.carried(typeOf(x), [G.value(x)], F, (n) => G.op('Softmax', n, {axis: node.attrs.axis}))];
}

/** Shape [1, .., n, .., 1] of rank `rank` with `n` at `axis`, for per-channel vectors. */
function along(rank, axis, n) {
  return Array.from({length: rank}, (_, i) => (i === axis ? n : 1));
}

function batchNormalization(node, G) {
  const [x, mean, variance, ...rest] = node.inputs;
  const {axis, epsilon, hasScale, hasBias} = node.attrs;
  const rank = shapeOf(x).length;
  const c = shapeOf(x)[axis];
  const vec = (o) => reshape(G, G.cast(G.value(o), typeOf(o), 'float32'), along(rank, axis, c));
  const xf = G.cast(G.value(x), typeOf(x), 'float32');
  const denom = G.op('Sqrt', [G.op('Add', [vec(variance), G.scalar('float32', epsilon)])]);
  let y = G.op('Div', [G.op('Sub', [xf, vec(mean)]), denom]);
  if (hasScale) y = G.op('Mul', [y, vec(rest[0])]);
  if (hasBias) y = G.op('Add', [y, vec(rest[hasScale ? 1 : 0])]);
  return [G.cast(y, 'float32', typeOf(x))];
}

/** (x - mean) / sqrt(var + eps) over `axes`, in float32, by reductions (population variance). */
function normalize(G, xf, axes, epsilon) {
  const mean = G.op('ReduceMean', [xf, G.i64(axes)], {keepdims: 1});
  const d = G.op('Sub', [xf, mean]);
  const v = G.op('ReduceMean', [G.op('Mul', [d, d]), G.i64(axes)], {keepdims: 1});
  return G.op('Div', [d, G.op('Sqrt', [G.op('Add', [v, G.scalar('float32', epsilon)])])]);
}

function instanceNormalization(node, G) {
  const [x, ...rest] = node.inputs;
  const {layout, epsilon, hasScale, hasBias} = node.attrs;
  const rank = shapeOf(x).length;
  const axis = layout === 'nchw' ? 1 : 3;
  const c = shapeOf(x)[axis];
  const vec = (o) => reshape(G, G.cast(G.value(o), typeOf(o), 'float32'), along(rank, axis, c));
  let y = normalize(G, G.cast(G.value(x), typeOf(x), 'float32'), layout === 'nchw' ? [2, 3] : [1, 2], epsilon);
  if (hasScale) y = G.op('Mul', [y, vec(rest[0])]);
  if (hasBias) y = G.op('Add', [y, vec(rest[hasScale ? 1 : 0])]);
  return [G.cast(y, 'float32', typeOf(x))];
}

function layerNormalization(node, G) {
  const [x, ...rest] = node.inputs;
  const {axes, epsilon, hasScale, hasBias} = node.attrs;
  const shape = shapeOf(x);
  const rank = shape.length;
  const xf = G.cast(G.value(x), typeOf(x), 'float32');
  // scale/bias have the input's dimensions at `axes` (in axes order): as broadcastable operands
  const sorted = [...axes].sort((a, b) => a - b);
  const vec = (o) => {
    let v = G.cast(G.value(o), typeOf(o), 'float32');
    const order = sorted.map((a) => axes.indexOf(a));
    if (order.some((p, i) => p !== i)) v = G.op('Transpose', [v], {perm: order});
    return reshape(G, v, shape.map((d, i) => (sorted.includes(i) ? d : 1)));
  };
  const trailing = sorted.length > 0 && sorted.every((a, i) => a === rank - sorted.length + i);
  let y;
  if (trailing && hasScale && axes.every((a, i) => a === sorted[i])) {
    // ONNX LayerNormalization: one fused kernel (the encoder's case)
    const norm = shape.slice(sorted[0]);
    const s = reshape(G, G.cast(G.value(rest[0]), typeOf(rest[0]), 'float32'), norm);
    const b = hasBias ? reshape(G, G.cast(G.value(rest[1]), typeOf(rest[1]), 'float32'), norm) : '';
    y = G.op('LayerNormalization', [xf, s, b], {axis: sorted[0], epsilon: {float: epsilon}});
  } else {
    y = sorted.length === 0 ? G.op('Mul', [G.op('Sub', [xf, xf]), G.scalar('float32', 1)]) : normalize(G, xf, sorted, epsilon);
    if (hasScale) y = G.op('Mul', [y, vec(rest[0])]);
    if (hasBias) y = G.op('Add', [y, vec(rest[hasScale ? 1 : 0])]);
  }
  return [G.cast(y, 'float32', typeOf(x))];
}

function gemm(node, G) {
  const [a, b, c] = node.inputs;
  const {alpha, beta, aTranspose, bTranspose} = node.attrs;
  const names = [G.value(a), G.value(b)];
  if (c) names.push(G.value(c));
  return [G.carried(typeOf(a), names, F, (n) => G.op('Gemm', n,
    {alpha: {float: alpha}, beta: {float: beta}, transA: aTranspose ? 1 : 0, transB: bTranspose ? 1 : 0}))];
}

function matmul(node, G) {
  const [a, b] = node.inputs;
  return [G.carried(typeOf(a), [G.value(a), G.value(b)], FI, (n) => G.op('MatMul', n))];
}

function resample2d(node, G) {
  const x = node.inputs[0];
  const {mode, axes} = node.attrs;
  const out = shapeOf(node.outputs[0]);
  const attrs = mode === 'linear'
    ? {mode: 'linear', coordinate_transformation_mode: 'half_pixel', axes}
    : {mode: 'nearest', coordinate_transformation_mode: 'half_pixel', nearest_mode: 'round_prefer_floor', axes};
  const inner = (axes[0] === 2 && axes[1] === 3) || (axes[0] === 1 && axes[1] === 2);
  if (inner) return [G.carried(typeOf(x), [G.value(x), '', '', G.i64(axes.map((a) => out[a]))], F, (n) => G.op('Resize', n, attrs), {typed: [0]})];
  // ORT resizes only the two innermost axes (or 1, 2): move the axes there and back
  const rest = [0, 1, 2, 3].filter((a) => !axes.includes(a));
  const perm = [...rest, ...axes];
  const inverse = perm.map((_, i) => perm.indexOf(i));
  return [G.carried(typeOf(x), [G.value(x)], F, ([v]) => {
    const t = G.op('Transpose', [v], {perm});
    const r = G.op('Resize', [t, '', '', G.i64(axes.map((a) => out[a]))], {...attrs, axes: [2, 3]});
    return G.op('Transpose', [r], {perm: inverse});
  })];
}

/** Lowerings by WebNN operator name. */
export const TENSOR_LOWERINGS = {
  reshape: (node, G) => [reshape(G, G.value(node.inputs[0]), shapeOf(node.outputs[0]))],
  transpose: (node, G) => [G.op('Transpose', [G.value(node.inputs[0])], {perm: node.attrs.permutation})],
  concat: (node, G) => [G.op('Concat', node.inputs.map((x) => G.value(x)), {axis: node.attrs.axis})],
  slice,
  split,
  expand: (node, G) => [G.op('Expand', [G.value(node.inputs[0]), G.i64(shapeOf(node.outputs[0]))])],
  tile,
  pad,
  reverse: (node, G) => [reverseAxes(G, G.value(node.inputs[0]), node.attrs.axes)],
  gather: gatherLike('Gather'),
  gatherElements: gatherLike('GatherElements'),
  gatherND,
  scatterElements,
  scatterND,
  ...Object.fromEntries(Object.keys(REDUCE).map((op) => [op, reduce])),
  argMax: argMinMax('ArgMax'),
  argMin: argMinMax('ArgMin'),
  cumulativeSum,
  softmax,
  batchNormalization,
  instanceNormalization,
  layerNormalization,
  gemm,
  matmul,
  resample2d,
};
