/**
 * WGSL types per MLOperandDataType in the compute layout (see dtypes.js), and the rounding every
 * kernel applies when it stores a result so that narrow types keep their exact semantics:
 * float16 results are rounded to the nearest binary16 value (ties to even, subnormals, ±Inf, NaN
 * and -0 kept), int8/uint8 results wrap to 8 bits, int4/uint4 results to 4 bits.
 */
import {DATA_TYPES} from '../dtypes.js';

/** WGSL element type of a compute-layout buffer: f32 | i32 | u32 | vec2<u32> (64-bit). */
export function wgslType(dataType) {
  const c = DATA_TYPES[dataType].compute;
  return c === 'i64' || c === 'u64' ? 'vec2<u32>' : c;
}

/**
 * WGSL helpers needed by storeExpr for `dataType`; add them to a Shader with `shader.fn()`.
 * @returns {string}
 */
export function storeHelpers(dataType) {
  if (dataType === 'float16') return F16_ROUND;
  return '';
}

/** Wraps `expr` (of the compute type) so the stored value is exact for dataType. */
export function storeExpr(dataType, expr) {
  switch (dataType) {
    case 'float16': return `f16_round(${expr})`;
    case 'int8': return `((i32(${expr}) << 24u) >> 24u)`;
    case 'uint8': return `(u32(${expr}) & 0xffu)`;
    case 'int4': return `((i32(${expr}) << 28u) >> 28u)`;
    case 'uint4': return `(u32(${expr}) & 0xfu)`;
    default: return expr;
  }
}

/**
 * f16_round(x): x rounded to the nearest binary16 value, computed with integer operations so it
 * needs no shader-f16 and does not depend on the driver's pack2x16float rounding.
 */
export const F16_ROUND = `
fn f16_round(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let sign = b & 0x80000000u;
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) { return x; }               // NaN or Inf
  if (a >= 0x477ff000u) { return bitcast<f32>(sign | 0x7f800000u); } // >= 65520 -> Inf
  if (a < 0x38800000u) {                              // below 2^-14: binary16 subnormal grid 2^-24
    let q = bitcast<f32>(a) * 16777216.0;               // exact scaling by 2^24
    let r = q - floor(q);
    var n = floor(q);
    if (r > 0.5 || (r == 0.5 && (u32(n) & 1u) == 1u)) { n = n + 1.0; }
    return bitcast<f32>(sign | bitcast<u32>(n * 5.9604644775390625e-8));
  }
  // normal: keep 10 of the 23 mantissa bits, ties to even
  let lsb = (a >> 13u) & 1u;
  let rounded = (a + 0xfffu + lsb) & 0xffffe000u;
  return bitcast<f32>(sign | rounded);
}
`;
