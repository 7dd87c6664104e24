/**
 * Packed quantized B operands of the matrix kernels (compile/quantized_matmul.js): B is the
 * tensor-layout bytes of an int8 / uint8 / int4 / uint4 constant, read as u32 words (element e
 * in bits (e % per) * bits of word e / per, per = 32 / bits: bytes little-endian, the low nibble
 * of a byte first), and every load of B dequantizes:
 *   B[k, n] = f32(q - zeroPoint) * scale
 * with q the element at b_base + k * b_sk + n * b_sn (elements of W, the same stride uniforms
 * as a float B), and the scale / zero point element of (k, n)
 *   si = ((qk_o + k * qk_t) / qk_b) * qk_s + ((qn_o + n * qn_t) / qn_b) * qn_s
 * (per-tensor, per-axis or block-wise; see compile/quantized_matmul.js mapScales). The
 * difference is exact in f32 and the product rounds once, as dequantizeLinear computes it, so
 * a kernel with this loader computes exactly what it computes on the dequantized weights.
 *
 * Integers become floats without a conversion instruction (a GPU issues those at a fraction of
 * its float rate, and a 4-bit kernel converts two elements a byte): the element's bits, its sign
 * bit flipped for signed types, are OR-ed into the mantissa of 2^23, giving the f32 2^23 + q + o
 * (o = 2^(bits-1) for signed types, else 0), an integer below 2^24 and so exact; the zero point
 * becomes 2^23 + zeroPoint + o the same way (`q_offset`, the constant 2^23 + o without zero
 * points), and their difference is q - zeroPoint exactly.
 *
 * Float zero points (`quant.zeroFloat`: a block offset folded in by compile/block_offsets.js,
 * B[k, n] = (q - z) * scale with z = zeroPoint - offset / scale not an integer): Z holds them as
 * f32, and the element's 2^23 + o is subtracted first (exact), the zero point after (lessZero).
 *
 * Bindings after B: S (the scales, compute layout f32) and, unless every zero point is 0, Z
 * (the zero points' packed bytes, u32 words; float zero points: f32 bits). The shader key
 * carries bits, signedness and the zero points' kind (`quantKey`).
 *
 * The matrix-vector kernel of one-row products is ops/quantized_gemv.js.
 */

/** Uniform names of the scale index map (see the module comment). */
const MAP = ['qk_o', 'qk_t', 'qk_b', 'qk_s', 'qn_o', 'qn_t', 'qn_b', 'qn_s'];

/** The uniforms of `scaleMap` ({k, n: {origin, step, block, stride}}). */
export function scaleMapUniforms({k, n}) {
  return {qk_o: k.origin, qk_t: k.step, qk_b: k.block, qk_s: k.stride,
    qn_o: n.origin, qn_t: n.step, qn_b: n.block, qn_s: n.stride};
}

/** The bits of the f32 2^23. */
const MAGIC = 0x4b000000;

/** The offset o of the module comment: 2^(bits-1) for signed types, else 0. */
function signOffset(bits, signed) {
  return signed ? 2 ** (bits - 1) : 0;
}

/**
 * WGSL: the u32 that, XOR-ed with an element's `bits` bits, gives the bits of the f32
 * 2^23 + q + o (module comment).
 */
function magicMask(bits, signed) {
  return `0x${(MAGIC | signOffset(bits, signed)).toString(16)}u`;
}

/** WGSL f32 literal 2^23 + o: the offset of elements of this type without zero points. */
export function magicOffset(bits, signed) {
  return `${2 ** 23 + signOffset(bits, signed)}.0`;
}

/** WGSL expression: element j (u32) of word `w` of `bits`-bit elements as the f32 2^23 + q + o. */
export function wordMagic(w, j, bits, signed) {
  const per = 32 / bits;
  return `bitcast<f32>(((${w} >> ((${j} % ${per}u) * ${bits}u)) & ${(1 << bits) - 1}u) ^ ${magicMask(bits, signed)})`;
}

/**
 * WGSL expressions: the elements of word `w` (u32) as vec4<f32>s in element order (one for 8-bit
 * elements, two for 4-bit), each q - zeroPoint with `z` the f32 q_offset gives.
 * @param {object} quant {bits, signed, hasZp, zeroFloat}
 */
export function unpackWord(quant, w, z) {
  const {bits, signed} = quant;
  const shifts = bits === 8 ? [[0, 8, 16, 24]] : [[0, 4, 8, 12], [16, 20, 24, 28]];
  const v = (xs) => `vec4<u32>(${xs.map((x) => `${x}u`).join(', ')})`;
  return shifts.map((sh) => lessZero(quant, `bitcast<vec4<f32>>(((vec4<u32>(${w}) >> ${v(sh)}) & vec4<u32>(${(1 << bits) - 1}u)) ^ vec4<u32>(${magicMask(bits, signed)}))`,
    `vec4<f32>(${z})`, 'vec4<f32>'));
}

/** Whether `quant`'s Z binding holds float zero points (module comment). */
function floatZeros(quant) {
  return Boolean(quant.zeroFloat && quant.hasZp);
}

/** WGSL vec4<f32>: the weight of lane i of a half word read in place (unpackNibblesInPlace): 16^i. */
export const NIBBLE_WEIGHTS = 'vec4<f32>(1.0, 16.0, 256.0, 4096.0)';
/** WGSL vec4<f32>: 1 / NIBBLE_WEIGHTS, what A's elements are multiplied by to meet them. */
export const NIBBLE_SCALES = 'vec4<f32>(1.0, 0.0625, 0.00390625, 0.000244140625)';

/**
 * WGSL expressions: the 8 elements of 4-bit word `w` as two vec4<f32>s, element i of each half
 * left at bit 4i (no shift: one AND and one XOR, which a GPU issues as one logic instruction) and
 * so worth (q - zeroPoint) * 16^i, exactly (2^23 + 15 * 4096 < 2^24); a dot product with A's
 * elements times NIBBLE_SCALES gives what unpackWord's does. The high half is `w >> 16`.
 * `z`: the scalar q_offset gives.
 */
export function unpackNibblesInPlace(quant, w, z) {
  const o = signOffset(quant.bits, quant.signed);
  const lanes = [0, 1, 2, 3];
  const masks = `vec4<u32>(${lanes.map((i) => `0x${(0xf << (4 * i)).toString(16)}u`).join(', ')})`;
  const magic = `vec4<u32>(${lanes.map((i) => `0x${(MAGIC | (o << (4 * i))).toString(16)}u`).join(', ')})`;
  const base = `vec4<f32>(${lanes.map((i) => `${2 ** 23 + o * 16 ** i}.0`).join(', ')})`;
  // integer zero points: 2^23 + (z + o) * 16^i in one subtraction; float ones after 2^23 + o * 16^i
  const less = floatZeros(quant)
    ? (x) => `((${x} - ${base}) - ${z} * ${NIBBLE_WEIGHTS})`
    : (x) => `(${x} - fma(vec4<f32>(${z} - 8388608.0), ${NIBBLE_WEIGHTS}, vec4<f32>(8388608.0)))`;
  return [w, `(${w} >> 16u)`].map((h) => less(`bitcast<vec4<f32>>((vec4<u32>(${h}) & ${masks}) ^ ${magic})`));
}

/**
 * WGSL expression: `magic` (elements as 2^23 + q + o, f32 or `type`) less zero point `z` (what
 * q_offset gives), i.e. q - zeroPoint: one subtraction for integer zero points, for float ones
 * (module comment) the 2^23 + o first.
 */
export function lessZero(quant, magic, z, type = 'f32') {
  if (!floatZeros(quant)) return `(${magic} - ${z})`;
  return `((${magic} - ${type}(${magicOffset(quant.bits, quant.signed)})) - ${z})`;
}

/** WGSL expression: element j (a u32 expression) of word `w` of `bits`-bit elements, as i32. */
function wordElement(w, j, bits, signed) {
  const per = 32 / bits;
  return signed
    ? `(bitcast<i32>(${w} << (${32 - bits}u - (${j} % ${per}u) * ${bits}u)) >> ${32 - bits}u)`
    : `i32((${w} >> ((${j} % ${per}u) * ${bits}u)) & ${(1 << bits) - 1}u)`;
}

/** WGSL expression: element `i` (u32) of packed array `buf` of `bits`-bit elements, as i32. */
export function packedElementExpr(buf, i, bits, signed) {
  return wordElement(`${buf}[(${i}) / ${32 / bits}u]`, `(${i})`, bits, signed);
}

/**
 * Declares B (and S, Z when `quant`) on `shader`, after A: a float B of element type T (vec4
 * when `vecB`), or the packed B with its scale index uniforms and
 *   fn b_dequant(e: u32, k: u32, n: u32) -> f32
 * @param {object|null} quant {bits, signed, zeroBits, zeroSigned, hasZp, zeroFloat}
 */
export function declareB(shader, T, quant, vecB = false) {
  if (!quant) {
    shader.read('B', vecB ? 'vec4<f32>' : T);
    return;
  }
  shader.read('B', 'u32').read('S', 'f32');
  if (quant.hasZp) shader.read('Z', 'u32');
  declareScaleMap(shader, quant);
  shader.fn(`fn b_dequant_at(e: u32, si: u32) -> f32 {
  return ${lessZero(quant, wordMagic(`B[e / ${32 / quant.bits}u]`, 'e', quant.bits, quant.signed), 'q_offset(si)')} * S[si];
}
fn b_dequant(e: u32, k: u32, n: u32) -> f32 { return b_dequant_at(e, scale_index(k, n)); }`);
}

/**
 * The scale index uniforms, `scale_index(k, n)` and `q_offset(si)`: what to subtract from an
 * element's 2^23 + q + o to leave q - zeroPoint (module comment).
 */
export function declareScaleMap(shader, quant) {
  for (const name of MAP) shader.uniform(name);
  shader.fn(`fn scale_k(k: u32) -> u32 { return ((u_qk_o() + k * u_qk_t()) / u_qk_b()) * u_qk_s(); }
fn scale_n(n: u32) -> u32 { return ((u_qn_o() + n * u_qn_t()) / u_qn_b()) * u_qn_s(); }
fn scale_index(k: u32, n: u32) -> u32 { return scale_k(k) + scale_n(n); }`);
  if (!quant.hasZp) {
    shader.fn(`fn q_offset(si: u32) -> f32 { return ${magicOffset(quant.bits, quant.signed)}; }`);
    return;
  }
  if (quant.zeroFloat) {
    shader.fn('fn q_offset(si: u32) -> f32 { return bitcast<f32>(Z[si]); }');
    return;
  }
  // a zero point of another width or signedness than the elements: its offset o differs
  const adjust = signOffset(quant.bits, quant.signed) - signOffset(quant.zeroBits, quant.zeroSigned);
  shader.fn(`fn q_offset(si: u32) -> f32 {
  return ${wordMagic(`Z[si / ${32 / quant.zeroBits}u]`, 'si', quant.zeroBits, quant.zeroSigned)}${adjust ? ` + ${adjust}.0` : ''};
}`);
}

/**
 * WGSL expression of B's element at packed index `e` whose scale index is `si` (the kernel
 * adding up scale_k(k) and scale_n(n) it computed once for several loads).
 */
export function bLoadAt(e, si) {
  return `b_dequant_at(${e}, ${si})`;
}

/** WGSL expression of B's element at packed / float index `e` for (k, n), as f32. */
export function bLoad(quant, e, k, n) {
  return quant ? `b_dequant(${e}, ${k}, ${n})` : `f32(B[${e}])`;
}

/**
 * Whether the tiled kernels can load packed B a word at a time with one scale a word (`quant.words`,
 * matmul_tiled.js): B contiguous along K, every column and batch starting on a word, and one scale
 * along K or blocks along K of whole words aligned on words. `u`: the product's uniforms.
 */
export function wordLoads(quant, u, bBatchStrides) {
  const per = 32 / quant.bits;
  if (u.b_sk !== 1 || u.b_base % per || (u.N > 1 && u.b_sn % per) || bBatchStrides.some((x) => x % per)) return false;
  if (u.qk_t > 1) return false;
  return u.qk_t === 0 || (u.qk_b % per === 0 && u.qk_o % per === 0);
}

/** A short key of the packed variant for shader names and pipeline keys. */
export function quantKey(quant) {
  if (!quant) return '';
  const zero = quant.zeroFloat ? 'zf' : `z${quant.zeroSigned ? 'i' : 'u'}${quant.zeroBits}`;
  return `_q${quant.signed ? 'i' : 'u'}${quant.bits}${quant.hasZp ? zero : ''}${quant.words ? 'w' : ''}`;
}
