/**
 * quantizeLinear and dequantizeLinear (spec §quantizeLinear, §dequantizeLinear) with blockwise
 * broadcasting of scale and zeroPoint (spec "blockwise broadcasting": same rank as the input,
 * each dimension dividing the input's; element i of the input uses the scale element at
 * index_d / (inputDim_d / scaleDim_d) in every dimension d).
 *
 *   dequantizeLinear: output = (input - zeroPoint) * scale. The difference is formed exactly
 *     (64-bit) and rounded once to f32, then multiplied (one more rounding; exact for 8-bit
 *     inputs with |difference| * scale representable).
 *   quantizeLinear: output = saturate(roundEven(input / scale) + zeroPoint) to the output type,
 *     the quotient rounded to the input's type as the spec's div() does (see quantizeRound), the
 *     zeroPoint added and the result saturated exactly (64-bit).
 *
 * Beyond the spec, as Chromium: int4 and uint4 for dequantizeLinear's input and zeroPoint and for
 * quantizeLinear's zeroPoint (so its output), the types ONNX Runtime Web's WebNN EP writes
 * 4-bit weights in. In the compute layout they are one i32 / u32 per element (dtypes.js).
 */
import {typeError} from '../errors.js';
import {elementCount} from '../dtypes.js';
import {checkDataType} from '../shape/common.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {collectHelpers, helpersUsedIn} from '../gpu/wgsl_lib.js';
import {LIBRARY, kindOf} from './elementwise_kernel.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

const FLOATS = ['float32', 'float16'];
const INTS = ['uint8', 'int8', 'uint32', 'int32', 'int4', 'uint4'];

/** Output range of quantizeLinear per zeroPoint type, as int64 words [lo, hi]. */
const RANGES = {
  int8: ['vec2<u32>(0xffffff80u, 0xffffffffu)', 'vec2<u32>(127u, 0u)'],
  uint8: ['vec2<u32>(0u, 0u)', 'vec2<u32>(255u, 0u)'],
  int32: ['vec2<u32>(0x80000000u, 0xffffffffu)', 'vec2<u32>(0x7fffffffu, 0u)'],
  uint32: ['vec2<u32>(0u, 0u)', 'vec2<u32>(0xffffffffu, 0u)'],
  int4: ['vec2<u32>(0xfffffff8u, 0xffffffffu)', 'vec2<u32>(7u, 0u)'],
  uint4: ['vec2<u32>(0u, 0u)', 'vec2<u32>(15u, 0u)'],
};

/**
 * roundEven(x / s) as an int64, where x / s is the spec's div() in the input's type: correctly
 * rounded to f32 (div_f), then to binary16 for float16 inputs (f16_round; rounding the f32
 * quotient again is exact rounding, 24 >= 2 * 11 + 2 bits). A quotient that rounds onto a tie
 * rounds to even, as the spec's emulation roundEven(div(input, scale)) and ONNX's
 * QuantizeLinear do (0.5 / fl(5 / 255) is 25.5 in f32 although the exact ratio is below 25.5).
 * Saturates at ±2^40; NaN gives 0.
 */
function quantizeRound(inputType) {
  const quotient = inputType === 'float16' ? 'f16_round(div_f(x, s))' : 'div_f(x, s)';
  return `fn quantize_i64(x: f32, s: f32) -> vec2<u32> {
  let t = ${quotient};
  if (is_nan_f(t)) { return vec2<u32>(0u, 0u); }
  return f32_to_i64(clamp(round_even_f(t), -1099511627776.0, 1099511627776.0));
}`;
}

/** Spec steps shared by both operators (ranks, equal shapes, blockwise broadcastable). */
function checkScaleZeroPoint(si, ss, sz, label) {
  const rank = si.shape.length;
  if (ss.shape.length !== rank || sz.shape.length !== rank) throw typeError(label, `scale and zeroPoint must have the input's rank ${rank}`);
  if (ss.shape.some((d, i) => d !== sz.shape[i])) throw typeError(label, `scale [${ss.shape}] and zeroPoint [${sz.shape}] must have the same shape`);
  if (ss.shape.some((d, i) => si.shape[i] % d !== 0)) throw typeError(label, `scale [${ss.shape}] is not blockwise broadcastable to the input [${si.shape}]`);
}

function quantizeMethod(builder, label, input, scale, zeroPoint) {
  const si = operandOf(builder, input, label, 'input');
  const ss = operandOf(builder, scale, label, 'scale');
  const sz = operandOf(builder, zeroPoint, label, 'zeroPoint');
  checkDataType(si, FLOATS, label, 'input');
  checkDataType(ss, FLOATS, label, 'scale');
  if (ss.dataType !== si.dataType) throw typeError(label, `scale (${ss.dataType}) must have the input's data type (${si.dataType})`);
  checkDataType(sz, INTS, label, 'zeroPoint');
  checkScaleZeroPoint(si, ss, sz, label);
  return addNode(builder, 'quantizeLinear', [input, scale, zeroPoint], {}, [{dataType: sz.dataType, shape: si.shape.slice()}], label)[0];
}

function dequantizeMethod(builder, label, input, scale, zeroPoint) {
  const si = operandOf(builder, input, label, 'input');
  const ss = operandOf(builder, scale, label, 'scale');
  const sz = operandOf(builder, zeroPoint, label, 'zeroPoint');
  checkDataType(si, INTS, label, 'input');
  checkDataType(ss, FLOATS, label, 'scale');
  checkDataType(sz, INTS, label, 'zeroPoint');
  if (sz.dataType !== si.dataType) throw typeError(label, `zeroPoint (${sz.dataType}) must have the input's data type (${si.dataType})`);
  checkScaleZeroPoint(si, ss, sz, label);
  return addNode(builder, 'dequantizeLinear', [input, scale, zeroPoint], {}, [{dataType: ss.dataType, shape: si.shape.slice()}], label)[0];
}

/** WGSL expression of one output element from `x`, `s` (scale) and `z` (zeroPoint). */
function elementExpr(op, inType, zpType) {
  const wide = (v, t) => (kindOf(t) === 'i' ? `i64_from_i32(${v})` : `u64_from_u32(${v})`);
  if (op === 'dequantizeLinear') return `i64_to_f32(i64_sub(${wide('x', inType)}, ${wide('z', inType)})) * s`;
  const [lo, hi] = RANGES[zpType];
  const sum = `i64_min(i64_max(i64_add(quantize_i64(x, s), ${wide('z', zpType)}), ${lo}), ${hi})`;
  return kindOf(zpType) === 'i' ? `bitcast<i32>(${sum}.x)` : `${sum}.x`;
}

/**
 * Declares on `shader` the blockwise broadcast of a scale of `scaleShape` over an input of
 * `shape` (spec "blockwise broadcasting"): `fn s_offset(i: u32) -> u32`, the scale element of
 * the input's row-major element i, and its uniforms.
 * @returns {object} the uniform values
 */
export function declareScaleOffset(shader, shape, scaleShape) {
  const rank = shape.length;
  if (rank === 0) {
    shader.fn('fn s_offset(i: u32) -> u32 { return 0u; }');
    return {};
  }
  shader.uniform('shape', 'u32', rank).uniform('block', 'u32', rank).uniform('s_strides', 'u32', rank);
  const strides = [];
  let st = 1;
  for (let d = rank - 1; d >= 0; d--) { strides[d] = st; st *= scaleShape[d]; }
  shader.fn(`fn s_offset(i: u32) -> u32 {
  var rem = i;
  var off = 0u;
  for (var d = ${rank - 1}i; d >= 0; d--) {
    let dim = u_shape(u32(d));
    off += ((rem % dim) / u_block(u32(d))) * u_s_strides(u32(d));
    rem /= dim;
  }
  return off;
}`);
  return {shape, block: shape.map((d, i) => d / scaleShape[i]), s_strides: strides};
}

function lowerQuantize(node, L) {
  const [input, scale, zeroPoint] = node.inputs;
  const out = node.outputs[0];
  const expr = elementExpr(node.op, input.dataType, zeroPoint.dataType);
  const shader = new Shader(node.op).read('X', wgslType(input.dataType)).read('S', wgslType(scale.dataType))
    .read('Z', wgslType(zeroPoint.dataType)).write('Y', wgslType(out.dataType));
  const uniforms = declareScaleOffset(shader, input.shape, scale.shape);
  const round = node.op === 'quantizeLinear' ? quantizeRound(input.dataType) : '';
  const helpers = helpersUsedIn(LIBRARY, expr + round);
  shader.fn(storeHelpers(out.dataType)).fn(collectHelpers(LIBRARY, helpers));
  if (input.dataType === 'float16' && out.dataType !== 'float16') shader.fn(storeHelpers(input.dataType));
  if (round) shader.fn(round);
  shader.main(`  let x = X[gi];
  let so = s_offset(gi);
  let s = S[so];
  let z = Z[so];
  Y[gi] = ${storeExpr(out.dataType, expr)};`);
  L.step({
    shader,
    values: [L.value(input), L.value(scale), L.value(zeroPoint), L.result(node)],
    uniforms,
    threads: elementCount(input.shape),
    label: node.label,
  });
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  quantizeLinear: {
    optionsIndex: 3,
    method: quantizeMethod,
    lower: lowerQuantize,
    limits: () => ({input: tensorLimits(FLOATS, rankRange()), scale: tensorLimits(FLOATS, rankRange()),
      zeroPoint: tensorLimits(INTS, rankRange()), output: tensorLimits(INTS, rankRange())}),
  },
  dequantizeLinear: {
    optionsIndex: 3,
    method: dequantizeMethod,
    lower: lowerQuantize,
    limits: () => ({input: tensorLimits(INTS, rankRange()), scale: tensorLimits(FLOATS, rankRange()),
      zeroPoint: tensorLimits(INTS, rankRange()), output: tensorLimits(FLOATS, rankRange())}),
  },
};
