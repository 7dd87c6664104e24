/**
 * WGSL and CPU conversions between the packed *tensor* layout of the narrow data types and their
 * one-word *compute* layout (see dtypes.js):
 *  - float16: two binary16 values per u32 word (element 2k in bits 0-15) <-> one f32 per element
 *    holding the exactly representable binary16 value;
 *  - int8 / uint8: four bytes per word (element 4k in bits 0-7) <-> one i32 (sign-extended) /
 *    u32 per element;
 *  - int4 / uint4: eight nibbles per word (element 8k in bits 0-3, so byte j holds elements 2j
 *    in its low and 2j + 1 in its high nibble) <-> one i32 (sign-extended) / u32 per element.
 * All conversions are bit-exact, done with integer operations (no shader-f16, no reliance on the
 * driver's pack2x16float/unpack2x16float, which may flush subnormals): subnormals, ±Inf, -0 and
 * NaN payloads (top 10 bits) survive a round trip.
 */
import {F16_ROUND} from './types.js';

/**
 * WGSL: `f16_bits_to_f32(h)` (h: the 16 low bits of a u32) and `f32_to_f16_bits(x)` (x: an f32,
 * rounded to binary16 first with f16_round, so any f32 is accepted), plus F16_ROUND.
 */
export const F16_BITS = `${F16_ROUND}
fn f16_bits_to_f32(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { return bitcast<f32>(sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8)); }
  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}
fn f32_to_f16_bits(v: f32) -> u32 {
  let b = bitcast<u32>(f16_round(v));
  let sign = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return sign | 0x7c00u | max((a >> 13u) & 0x3ffu, 0x200u * u32((a & 0x7fe000u) == 0u)); }
  if (a >= 0x47800000u) { return sign | 0x7c00u; }
  if (a < 0x38800000u) { return sign | u32(bitcast<f32>(a) * 16777216.0); }
  return sign | (((a >> 23u) - 112u) << 10u) | ((a >> 13u) & 0x3ffu);
}
`;

/** Bits of the tensor layout per element of the packed types. */
export const PACKED_BITS = Object.freeze({float16: 16, int8: 8, uint8: 8, int4: 4, uint4: 4});

/**
 * WGSL expression reading element `i` (u32 expression) of the packed buffer `buf` (array<u32>)
 * of `dataType` as its compute type (f32 / i32 / u32). float16 needs F16_BITS in the shader.
 */
export function unpackExpr(dataType, buf, i) {
  switch (dataType) {
    case 'float16': return `f16_bits_to_f32((${buf}[(${i}) >> 1u] >> (((${i}) & 1u) * 16u)) & 0xffffu)`;
    case 'int8': return `(bitcast<i32>(${buf}[(${i}) >> 2u] << (24u - ((${i}) & 3u) * 8u)) >> 24u)`;
    case 'uint8': return `((${buf}[(${i}) >> 2u] >> (((${i}) & 3u) * 8u)) & 0xffu)`;
    case 'int4': return `(bitcast<i32>(${buf}[(${i}) >> 3u] << (28u - ((${i}) & 7u) * 4u)) >> 28u)`;
    case 'uint4': return `((${buf}[(${i}) >> 3u] >> (((${i}) & 7u) * 4u)) & 0xfu)`;
    default: throw new Error(`${dataType} is not a packed type`);
  }
}

/**
 * WGSL expression giving the tensor-layout bits (in the low bits of a u32, not shifted) of the
 * compute value `v` of `dataType`.
 */
export function packBitsExpr(dataType, v) {
  switch (dataType) {
    case 'float16': return `f32_to_f16_bits(${v})`;
    case 'int8': return `(bitcast<u32>(${v}) & 0xffu)`;
    case 'uint8': return `((${v}) & 0xffu)`;
    case 'int4': return `(bitcast<u32>(${v}) & 0xfu)`;
    case 'uint4': return `((${v}) & 0xfu)`;
    default: throw new Error(`${dataType} is not a packed type`);
  }
}

/** binary16 bits -> float32 bits (exact; NaN payload kept). */
export function float16BitsToFloat32Bits(h) {
  const sign = (h & 0x8000) << 16;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) {
    if (m === 0) return sign >>> 0;
    // subnormal: normalise into a float32 normal number
    let shift = 0;
    let mm = m;
    while ((mm & 0x400) === 0) { mm <<= 1; shift++; }
    return (sign | ((113 - shift) << 23) | ((mm & 0x3ff) << 13)) >>> 0;
  }
  if (e === 31) return (sign | 0x7f800000 | (m << 13)) >>> 0;
  return (sign | ((e + 112) << 23) | (m << 13)) >>> 0;
}

/**
 * Compute-layout words (Uint32Array, one per element) of packed tensor-layout bytes.
 * @param {Uint8Array} bytes little-endian tensor-layout data of `count` elements
 * @param {string} dataType float16 | int8 | uint8 | int4 | uint4
 * @returns {Uint32Array}
 */
export function unpackOnCpu(bytes, dataType, count) {
  const out = new Uint32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dataType === 'float16') {
    for (let i = 0; i < count; i++) out[i] = float16BitsToFloat32Bits(view.getUint16(2 * i, true));
  } else if (dataType === 'int8') {
    for (let i = 0; i < count; i++) out[i] = view.getInt8(i) >>> 0;
  } else if (dataType === 'uint8') {
    for (let i = 0; i < count; i++) out[i] = view.getUint8(i);
  } else if (dataType === 'int4' || dataType === 'uint4') {
    const signed = dataType === 'int4';
    for (let i = 0; i < count; i++) {
      const nibble = (bytes[i >> 1] >> ((i & 1) * 4)) & 0xf;
      out[i] = signed ? ((nibble << 28) >> 28) >>> 0 : nibble;
    }
  } else {
    throw new Error(`${dataType} is not a packed type`);
  }
  return out;
}

/**
 * `bytes` as a Uint8Array of whole 16-byte chunks (zero-padded; at least one chunk): the length
 * packed data takes on the GPU, read as vec4<u32> by the quantized matrix-vector kernel.
 */
export function chunkPadded(bytes) {
  const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.byteLength % 16 === 0 && view.byteLength > 0) return view;
  const out = new Uint8Array(Math.max(16, Math.ceil(view.byteLength / 16) * 16));
  out.set(view);
  return out;
}
