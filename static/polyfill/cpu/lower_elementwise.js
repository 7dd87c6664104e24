/**
 * CPU-context lowering (cpu/compile.js) of the element-wise families to ONNX: binary and unary
 * math, comparisons and logical operators, activations, cast, where, triangular, quantization.
 * Each entry is `lower(node, G)` returning the ONNX value name of each node output (G:
 * cpu/onnx_graph.js). The native type lists are ONNX Runtime's CPU kernel registrations; other
 * types run through G.carried()'s wider types.
 */
const F = ['float32'];
const FI = ['float32', 'int32', 'int64'];
const ALL_NUM = ['float32', 'int8', 'uint8', 'int32', 'uint32', 'int64', 'uint64'];
const MINMAX = ['float32', 'int32', 'uint32', 'int64', 'uint64'];
const FIU = ['float32', 'int32', 'int64', 'uint32', 'uint64'];

const typeOf = (operand) => operand.dataType;

function binary(onnx, native) {
  return (node, G) => {
    const [a, b] = node.inputs;
    return [G.carried(typeOf(a), [G.value(a), G.value(b)], native, (n) => G.op(onnx, n))];
  };
}

function unary(onnx, native, attrs = () => ({})) {
  return (node, G) => {
    const x = node.inputs[0];
    return [G.carried(typeOf(x), [G.value(x)], native, (n) => G.op(onnx, n, attrs(node.attrs)))];
  };
}

/**
 * div: integers truncate toward zero with the spec's x / 0 = x and a wrapping MIN / -1 (ONNX
 * Runtime traps on both): the divisor 0 or -1 becomes 1, and -1 negates instead.
 */
function div(node, G) {
  const [a, b] = node.inputs;
  if (['float32', 'float16'].includes(typeOf(a))) return binary('Div', F)(node, G);
  return [G.carried(typeOf(a), [G.value(a), G.value(b)], FIU, ([x, y], type) => {
    const signed = type.startsWith('int');
    const one = G.scalar(type, 1);
    const zero = G.op('Equal', [y, G.scalar(type, 0)]);
    if (!signed) return G.op('Div', [x, G.op('Add', [y, G.op('Cast', [zero], {to: type === 'uint32' ? 12 : 13})])]); // no unsigned Where
    const minusOne = G.op('Equal', [y, G.scalar(type, -1)]);
    const q = G.op('Div', [x, G.op('Where', [G.op('Or', [zero, minusOne]), one, y])]);
    return G.op('Where', [minusOne, G.op('Neg', [x]), q]);
  })];
}

/**
 * pow: floats by Pow; integers exact and wrapping, as on WebGPU (ops/elementwise.js: a negative
 * exponent truncates toward zero, 1 and ±1 for the bases 1 and -1, else 0). ONNX Runtime's
 * integer Pow goes through double and saturates, so this squares and multiplies in int64
 * (wrapping; a narrower type's result is its low bits) over the exponent's bits, as uint64 (all of
 * them, or a constant exponent's significant ones: pow(x, 2) is 2 steps, not 32).
 */
function pow(node, G) {
  const [a, b] = node.inputs;
  const type = typeOf(a);
  if (['float32', 'float16'].includes(type)) return binary('Pow', F)(node, G);
  // a constant exponent needs only as many squarings as its largest value has bits
  const known = G.constantMaxUnsigned(b);
  const bits = known === null ? {int8: 8, uint8: 8, int32: 32, uint32: 32}[type] ?? 64 : Math.max(1, known.toString(2).length);
  let base = G.cast(G.value(a), type, 'int64');
  let e = G.cast(G.value(b), type, 'uint64');
  const one = G.scalar('uint64', 1n);
  let r = G.scalar('int64', 1n);
  for (let k = 0; k < bits; k++) {
    const bit = G.op('Cast', [G.op('BitwiseAnd', [e, one])], {to: 9});
    r = G.op('Where', [bit, G.op('Mul', [r, base]), r]);
    if (k === bits - 1) break;
    base = G.op('Mul', [base, base]);
    e = G.op('BitShift', [e, one], {direction: 'RIGHT'});
  }
  if (type.startsWith('int')) {
    const x = G.cast(G.value(a), type, 'int64');
    const unit = G.op('Or', [G.op('Equal', [x, G.scalar('int64', 1n)]), G.op('Equal', [x, G.scalar('int64', -1n)])]);
    const negative = G.op('Less', [G.cast(G.value(b), type, 'int64'), G.scalar('int64', 0n)]);
    r = G.op('Where', [G.op('And', [negative, G.op('Not', [unit])]), G.scalar('int64', 0n), r]);
  }
  return [G.cast(r, 'int64', type)];
}

/** Comparisons: ONNX gives bool, WebNN uint8. */
function compare(onnx, native) {
  return (node, G) => {
    const [a, b] = node.inputs;
    const r = G.carried(typeOf(a), [G.value(a), G.value(b)], native, (n) => G.op(onnx, n), {outType: null});
    return [G.cast(r, 'bool', 'uint8')];
  };
}

function logical(onnx) {
  return (node, G) => {
    const names = node.inputs.map((x) => G.cast(G.value(x), 'uint8', 'bool'));
    return [G.cast(G.op(onnx, names), 'bool', 'uint8')];
  };
}

/** Unary ops built from several ONNX nodes: `build(G, x, type, attrs)` in float32 (or native). */
function composite(native, build) {
  return (node, G) => {
    const x = node.inputs[0];
    return [G.carried(typeOf(x), [G.value(x)], native, ([v], type) => build(G, v, type, node.attrs))];
  };
}

const f = (value) => ({float: Number(value)});

/**
 * clamp: Max then Min with the bounds (Clip would turn ±Infinity into ±FLT_MAX for an omitted
 * bound); a bound that is ±Infinity is left out.
 */
function clamp(G, x, type, {minValue, maxValue}) {
  const infinite = (v) => typeof v === 'number' && !Number.isFinite(v);
  let y = x;
  if (!infinite(minValue)) y = G.op('Max', [y, G.scalar(type, minValue)]);
  if (!infinite(maxValue)) y = G.op('Min', [y, G.scalar(type, maxValue)]);
  return y === x ? G.op('Identity', [x]) : y;
}

/**
 * Runs `build(G, x64)` in float64 (ONNX Runtime has double Mul, Add, Max, Min): activations
 * whose float32 arithmetic cancels (alpha * x + beta near 0) then round once, like the float64
 * reference and the GPU path's fused multiply-add.
 */
function inDouble(build) {
  return (node, G) => {
    const x = node.inputs[0];
    const xf = G.cast(G.value(x), x.dataType, 'float32');
    const y = build(G, G.op('Cast', [xf], {to: 11}), node.attrs);
    return [G.cast(G.op('Cast', [y], {to: 1}), 'float32', x.dataType)];
  };
}

const d = (G, v) => G.constant('float64', [], new Uint8Array(new Float64Array([v]).buffer));

/** linear: alpha * x + beta. */
const linear = inDouble((G, x, {alpha, beta}) => G.op('Add', [G.op('Mul', [x, d(G, alpha)]), d(G, beta)]));

/** hardSigmoid: max(0, min(1, alpha * x + beta)). */
const hardSigmoid = inDouble((G, x, {alpha, beta}) =>
  G.op('Max', [G.op('Min', [G.op('Add', [G.op('Mul', [x, d(G, alpha)]), d(G, beta)]), d(G, 1)]), d(G, 0)]));

/** hardSwish: x * max(0, min(1, x / 6 + 0.5)). */
const hardSwish = inDouble((G, x) =>
  G.op('Mul', [x, G.op('Max', [G.op('Min', [G.op('Add', [G.op('Div', [x, d(G, 6)]), d(G, 0.5)]), d(G, 1)]), d(G, 0)])]));

/**
 * sigmoid: 1 / (1 + exp(-x)) in float64 (ORT's float32 and float64 Sigmoid lose the tails below
 * about 1e-7: it computes through tanh).
 */
const sigmoid = inDouble((G, x) => G.op('Div', [d(G, 1), G.op('Add', [d(G, 1), G.op('Exp', [G.op('Neg', [x])])])]));

/**
 * elu: x for x >= 0, alpha * (exp(x) - 1) below, in float64 with exp(x) - 1 by its Taylor series
 * x (1 + x (1/2 + x / 6)) for |x| < 1e-5 (ORT's float32 Elu cancels: 0 for -2.7e-8, thousands
 * of ULP off up to |x| = 0.015).
 */
const elu = inDouble((G, x, {alpha}) => {
  const taylor = G.op('Mul', [x, G.op('Add', [d(G, 1), G.op('Mul', [x, G.op('Add', [d(G, 0.5), G.op('Div', [x, d(G, 6)])])])])]);
  const small = G.op('Less', [G.op('Abs', [x]), d(G, 1e-5)]);
  const expm1 = G.op('Where', [small, taylor, G.op('Sub', [G.op('Exp', [x]), d(G, 1)])]);
  return G.op('Where', [G.op('Less', [x, d(G, 0)]), G.op('Mul', [expm1, d(G, alpha)]), x]);
});

/** Numerical Recipes' erfcc: erfc(z) * exp(z * z) = t * exp(poly(t)), t = 1 / (1 + z / 2), z >= 0. */
const ERFCC = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
  1.48851587, -0.82215223, 0.17087277];

/**
 * gelu: 0.5 x erfc(-x / sqrt 2) in float64 (the GPU path's formula, gpu/math.js gelu_f): for
 * x <= 0 that product, for x > 0 x minus it, so neither tail is lost to 1 + erf(x) rounding;
 * ORT's float32 Gelu flushes the negative tail to 0.
 */
function gelu(node, G) {
  const x = node.inputs[0];
  const xf = G.cast(G.value(x), x.dataType, 'float32');
  const x64 = G.op('Cast', [xf], {to: 11});
  const z = G.op('Mul', [G.op('Abs', [x64]), d(G, Math.SQRT1_2)]);
  const t = G.op('Div', [d(G, 1), G.op('Add', [d(G, 1), G.op('Mul', [z, d(G, 0.5)])])]);
  let poly = d(G, ERFCC[ERFCC.length - 1]);
  for (let k = ERFCC.length - 2; k >= 0; k--) poly = G.op('Add', [d(G, ERFCC[k]), G.op('Mul', [t, poly])]);
  // erfc(|x| / sqrt 2) = t * exp(poly - x * x / 2)
  const ec = G.op('Mul', [t, G.op('Exp', [G.op('Sub', [poly, G.op('Mul', [G.op('Mul', [x64, x64]), d(G, 0.5)])])])]);
  const half = G.op('Mul', [G.op('Mul', [x64, d(G, 0.5)]), ec]);
  const negative = G.op('Cast', [half], {to: 1});
  const positive = G.op('Cast', [G.op('Sub', [x64, half])], {to: 1});
  const y = G.op('Where', [G.op('Greater', [xf, G.scalar('float32', 14)]), xf,
    G.op('Where', [G.op('Greater', [xf, G.scalar('float32', 0)]), positive, negative])]);
  return [G.cast(y, 'float32', x.dataType)];
}

/** sign: 1, -1, else 0 (±0 and NaN give +0, as the spec's reference does). */
function sign(node, G) {
  const x = node.inputs[0];
  if (!['float32', 'float16'].includes(x.dataType)) return unary('Sign', ALL_NUM)(node, G);
  return [G.carried(x.dataType, [G.value(x)], F, ([v]) => {
    const zero = G.scalar('float32', 0);
    return G.op('Where', [G.op('Greater', [v, zero]), G.scalar('float32', 1),
      G.op('Where', [G.op('Less', [v, zero]), G.scalar('float32', -1), zero])]);
  })];
}

/** relu: Relu for floats, Max(x, 0) for integers. */
function relu(node, G) {
  const x = node.inputs[0];
  if (['float32', 'float16'].includes(x.dataType)) return unary('Relu', F)(node, G);
  return [G.carried(x.dataType, [G.value(x)], MINMAX, ([v], type) => G.op('Max', [v, G.scalar(type, 0)]))];
}

function prelu(node, G) {
  const [x, slope] = node.inputs;
  return [G.carried(typeOf(x), [G.value(x), G.value(slope)], ['float32', 'int32', 'int64'], ([v, s], type) => {
    const negative = G.op('Less', [v, G.scalar(type, type === 'float32' ? 0 : 0n)]);
    return G.op('Where', [negative, G.op('Mul', [v, s]), v]);
  })];
}

/** The range of each 8- and 32-bit integer type (exact in float64). */
const RANGES = {int8: [-128, 127], uint8: [0, 255], int32: [-2147483648, 2147483647], uint32: [0, 4294967295], int4: [-8, 7], uint4: [0, 15]};

/** Exact float64 bounds of each integer type's saturation, and the value above the last bound. */
const SATURATE = {
  ...RANGES,
  // 64-bit: the largest double below 2^63 (2^64) is 1024 (2048) less; inputs at or past 2^63 (2^64)
  // give the type's maximum through a Where
  int64: [-(2 ** 63), 2 ** 63 - 1024, 2 ** 63, 2n ** 63n - 1n], uint64: [0, 2 ** 64 - 2048, 2 ** 64, 2n ** 64n - 1n],
};

/**
 * cast: ONNX Cast, except float -> integer, which the spec leaves implementation-defined out of
 * range and ORT's Cast wraps (300 -> int8 44): as the WebGPU context does (ops/cast.js), NaN -> 0
 * and values past the target's range saturate; in range, truncation toward zero (Cast's own).
 */
function cast(node, G) {
  const x = node.inputs[0];
  const from = typeOf(x);
  const to = node.attrs.dataType;
  if (!(from === 'float32' || from === 'float16') || !SATURATE[to]) return [G.cast(G.value(x), from, to)];
  const [lo, hi, over, max] = SATURATE[to];
  const x64 = G.op('Cast', [G.cast(G.value(x), from, 'float32')], {to: 11});
  const finite = G.op('Where', [G.op('IsNaN', [x64]), d(G, 0), x64]);
  const y = G.cast(G.op('Clip', [finite, d(G, lo), d(G, hi)]), 'float64', to);
  if (over === undefined) return [y];
  // ORT's Where has no uint64 kernel: select the int64 bit patterns (the maximum's is -1), cast back
  const past = G.op('GreaterOrEqual', [finite, d(G, over)]);
  const bits = to === 'uint64' ? -1n : max;
  return [G.cast(G.op('Where', [past, G.scalar('int64', bits), G.cast(y, to, 'int64')]), 'int64', to)];
}

function where(node, G) {
  const [c, t, e] = node.inputs;
  const cond = G.cast(G.value(c), 'uint8', 'bool');
  return [G.carried(typeOf(t), [cond, G.value(t), G.value(e)], ['float32', 'int32', 'int64', 'uint8'],
    (n) => G.op('Where', n), {typed: [1, 2]})];
}

function triangular(node, G) {
  const x = node.inputs[0];
  const {upper, diagonal} = node.attrs;
  return [G.carried(typeOf(x), [G.value(x), G.scalar('int64', diagonal)], ['float32', 'int64'],
    (n) => G.op('Trilu', n, {upper: upper ? 1 : 0}), {typed: [0]})];
}

/**
 * Expands a block-wise scale or zero point (each dimension divides the input's) to the input
 * shape: reshape to [s0, 1, s1, 1, ...], expand to [s0, b0, s1, b1, ...], reshape.
 */
function expandBlocks(G, name, shape, target) {
  if (shape.length === target.length && shape.every((d, i) => d === target[i])) return name;
  const rank = target.length;
  const padded = [...Array(rank - shape.length).fill(1), ...shape];
  if (padded.every((d, i) => d === 1 || d === target[i])) return name; // plain broadcasting
  const split = padded.flatMap((d, i) => [d, 1]);
  const wide = padded.flatMap((d, i) => [d, target[i] / d]);
  const r = G.op('Reshape', [name, G.i64(split)]);
  return G.op('Reshape', [G.op('Expand', [r, G.i64(wide)]), G.i64(target)]);
}

/** Input types of ONNX's DequantizeLinear that WebNN's dequantizeLinear takes (not uint32). */
const DQ_INPUT = new Set(['int8', 'uint8', 'int4', 'uint4', 'int32']);

/**
 * The one axis along which `scaleShape` blocks `shape` (every other extent equal), as ONNX's
 * DequantizeLinear {axis, block_size} (opset 21); {} for a single scale (per tensor); null when
 * ONNX's operator cannot say it (blocks along several axes).
 */
function blockedAxis(shape, scaleShape) {
  if (shape.length === 0 || scaleShape.length !== shape.length) return null;
  if (scaleShape.every((d) => d === 1)) return {}; // one scale: ONNX's per-tensor form
  const differ = shape.map((d, i) => (d !== scaleShape[i] ? i : -1)).filter((i) => i >= 0);
  if (differ.length !== 1) return null;
  const axis = differ[0];
  return {axis, block_size: shape[axis] / scaleShape[axis]};
}

/**
 * dequantizeLinear: (x - zeroPoint) * scale, in float32. Weights blocked along one axis (ORT's
 * MatMulNBits and GatherBlockQuantized, per-axis scales) go to ONNX's DequantizeLinear, which
 * ORT runs on the packed values: cast, subtracted and multiplied as full-size float tensors,
 * a large model's constant weights would be folded into float copies at session creation and
 * exhaust the wasm heap. Otherwise the zero point is cast before its blocks are expanded (ORT's
 * Expand has no 4-bit kernel; its Cast has).
 */
function dequantizeLinear(node, G) {
  const [x, scale, zp] = node.inputs;
  const shape = x.shape;
  const out = typeOf(node.outputs[0]);
  const onnxTypes = DQ_INPUT.has(typeOf(x)) && typeOf(scale) === 'float32' && out === 'float32';
  const blocked = onnxTypes ? blockedAxis(shape, scale.shape) : null;
  if (blocked) return [G.op('DequantizeLinear', [G.value(x), G.value(scale), G.value(zp)], blocked)];
  const xf = G.cast(G.value(x), typeOf(x), 'float32');
  const zf = expandBlocks(G, G.cast(G.value(zp), typeOf(zp), 'float32'), zp.shape, shape);
  const sf = G.cast(expandBlocks(G, G.value(scale), scale.shape, shape), typeOf(scale), 'float32');
  return [G.cast(G.op('Mul', [G.op('Sub', [xf, zf]), sf]), 'float32', out)];
}

/** quantizeLinear: clamp(roundEven(x / scale) + zeroPoint) in the zero point's type. */
function quantizeLinear(node, G) {
  const [x, scale, zp] = node.inputs;
  const shape = x.shape;
  const out = typeOf(zp);
  const xf = G.cast(G.value(x), typeOf(x), 'float32');
  const sf = G.cast(expandBlocks(G, G.value(scale), scale.shape, shape), typeOf(scale), 'float32');
  const zf = expandBlocks(G, G.cast(G.value(zp), out, 'float32'), zp.shape, shape);
  // the quotient in the input's type, as the spec's div() (float16: rounded to binary16 once more)
  let quotient = G.op('Div', [xf, sf]);
  if (typeOf(x) === 'float16') quotient = G.cast(G.cast(quotient, 'float32', 'float16'), 'float16', 'float32');
  const r = G.op('Round', [quotient]);
  const q = G.op('Add', [G.op('Where', [G.op('IsNaN', [r]), G.scalar('float32', 0), r]), zf]);
  const [lo, hi] = RANGES[out] ?? [-Infinity, Infinity];
  const clipped = Number.isFinite(lo) ? G.op('Clip', [q, G.scalar('float32', lo), G.scalar('float32', hi)]) : q;
  return [G.cast(clipped, 'float32', out)];
}

/** Lowerings by WebNN operator name. */
export const ELEMENTWISE_LOWERINGS = {
  add: binary('Add', FI),
  sub: binary('Sub', FI),
  mul: binary('Mul', FI),
  div,
  max: binary('Max', MINMAX),
  min: binary('Min', MINMAX),
  pow,
  equal: compare('Equal', FI),
  notEqual: (node, G) => [G.cast(G.op('Not', [G.cast(compare('Equal', FI)(node, G)[0], 'uint8', 'bool')]), 'bool', 'uint8')],
  greater: compare('Greater', FIU),
  greaterOrEqual: compare('GreaterOrEqual', FIU),
  lesser: compare('Less', FIU),
  lesserOrEqual: compare('LessOrEqual', FIU),
  logicalAnd: logical('And'),
  logicalOr: logical('Or'),
  logicalXor: logical('Xor'),
  logicalNot: logical('Not'),
  isNaN: (node, G) => [G.cast(G.op('IsNaN', [G.cast(G.value(node.inputs[0]), typeOf(node.inputs[0]), 'float32')]), 'bool', 'uint8')],
  isInfinite: (node, G) => [G.cast(G.op('IsInf', [G.cast(G.value(node.inputs[0]), typeOf(node.inputs[0]), 'float32')]), 'bool', 'uint8')],
  abs: unary('Abs', ALL_NUM),
  ceil: unary('Ceil', F),
  cos: unary('Cos', F),
  erf: unary('Erf', F),
  exp: unary('Exp', F),
  floor: unary('Floor', F),
  identity: (node, G) => [G.op('Identity', [G.value(node.inputs[0])])],
  log: unary('Log', F),
  neg: unary('Neg', ['float32', 'int8', 'int32', 'int64']),
  reciprocal: unary('Reciprocal', F),
  roundEven: unary('Round', F),
  sign,
  sin: unary('Sin', F),
  sqrt: unary('Sqrt', F),
  tan: unary('Tan', F),
  relu,
  sigmoid,
  tanh: unary('Tanh', F),
  softplus: unary('Softplus', F),
  softsign: unary('Softsign', F),
  gelu,
  elu,
  leakyRelu: unary('LeakyRelu', F, (a) => ({alpha: f(a.alpha)})),
  hardSigmoid,
  hardSwish,
  clamp: composite(MINMAX, clamp),
  linear,
  prelu,
  cast,
  where,
  triangular,
  quantizeLinear,
  dequantizeLinear,
};
