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
 * Bindings after B: S (the scales, compute layout f32) and, unless every zero point is 0, Z
 * (the zero points' packed bytes, u32 words). The shader key carries bits, signedness and
 * whether Z exists (`quant.key`).
 *
 * quantizedGemvShader: the matrix-vector product (M = 1) for B contiguous along K in whole
 * 16-byte chunks (32 4-bit or 16 8-bit weights): a workgroup of 256 computes 8 outputs, 32
 * invocations each splitting K in chunks read as one vec4<u32> load each (consecutive
 * invocations read consecutive chunks of a row), the scale applied once per chunk (or per word
 * where the blocks are shorter than a chunk), partial sums added in workgroup memory. On CPU
 * adapters (SwiftShader) the `serial` variant: one invocation a column reading its whole row in
 * order, no workgroup memory or barrier (SwiftShader pays for barriers: the split variant of a
 * 1024 x 1024 int8 product took several times the serial one's time there).
 */
import {Shader} from '../gpu/wgsl.js';
import {wgslType} from '../gpu/types.js';

/** Uniform names of the scale index map (see the module comment). */
const MAP = ['qk_o', 'qk_t', 'qk_b', 'qk_s', 'qn_o', 'qn_t', 'qn_b', 'qn_s'];

/** The uniforms of `scaleMap` ({k, n: {origin, step, block, stride}}). */
export function scaleMapUniforms({k, n}) {
  return {qk_o: k.origin, qk_t: k.step, qk_b: k.block, qk_s: k.stride,
    qn_o: n.origin, qn_t: n.step, qn_b: n.block, qn_s: n.stride};
}

/** WGSL expression: element `i` (u32) of packed array `buf` of `bits`-bit elements, as i32. */
export function packedElementExpr(buf, i, bits, signed) {
  const per = 32 / bits;
  const shift = `(${32 - bits}u - ((${i}) % ${per}u) * ${bits}u)`;
  const word = `(${buf}[(${i}) / ${per}u] << ${shift})`;
  return signed ? `(bitcast<i32>(${word}) >> ${32 - bits}u)` : `i32(${word} >> ${32 - bits}u)`;
}

/**
 * Declares B (and S, Z when `quant`) on `shader`, after A: a float B of element type T (vec4
 * when `vecB`), or the packed B with its scale index uniforms and
 *   fn b_dequant(e: u32, k: u32, n: u32) -> f32
 * @param {object|null} quant {bits, signed, zeroBits, zeroSigned, hasZp}
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
  return f32(${packedElementExpr('B', 'e', quant.bits, quant.signed)}${quant.hasZp ? ' - zero_point(si)' : ''}) * S[si];
}
fn b_dequant(e: u32, k: u32, n: u32) -> f32 { return b_dequant_at(e, scale_index(k, n)); }`);
}

/** The scale index uniforms, `scale_index(k, n)` and, with zero points, `zero_point(si)` (i32). */
function declareScaleMap(shader, quant) {
  for (const name of MAP) shader.uniform(name);
  shader.fn(`fn scale_k(k: u32) -> u32 { return ((u_qk_o() + k * u_qk_t()) / u_qk_b()) * u_qk_s(); }
fn scale_n(n: u32) -> u32 { return ((u_qn_o() + n * u_qn_t()) / u_qn_b()) * u_qn_s(); }
fn scale_index(k: u32, n: u32) -> u32 { return scale_k(k) + scale_n(n); }`);
  if (quant.hasZp) {
    shader.fn(`fn zero_point(si: u32) -> i32 { return ${packedElementExpr('Z', 'si', quant.zeroBits, quant.zeroSigned)}; }`);
  }
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

/** A short key of the packed variant for shader names and pipeline keys. */
export function quantKey(quant) {
  if (!quant) return '';
  return `_q${quant.signed ? 'i' : 'u'}${quant.bits}${quant.hasZp ? `z${quant.zeroSigned ? 'i' : 'u'}${quant.zeroBits}` : ''}`;
}

/** Output columns per workgroup of the quantized matrix-vector kernel, and invocations per column. */
export const QGEMV_COLS = 8;
const QGEMV_LANES = 32;
/** Output columns per workgroup of the serial variant (CPU adapters): one invocation a column. */
export const QGEMV_SERIAL_COLS = 64;

/**
 * Whether the quantized matrix-vector kernel can read this product: one row, B contiguous along
 * K with each column's start on a 16-byte chunk, the blocks along K whole words aligned on
 * words (`chunkScale`: whole chunks aligned on chunks, one scale a chunk).
 * @returns {{chunkScale: boolean}|null}
 */
export function quantizedGemvLayout(quant, u) {
  const per = 32 / quant.bits; // elements a word
  const chunk = 4 * per;
  if (u.M !== 1 || u.batches !== 1 || u.b_sk !== 1 || u.b_base % chunk || (u.N > 1 && u.b_sn % chunk)) return null;
  if (u.qk_t > 1) return null;
  const kb = u.qk_t === 0 ? Infinity : u.qk_b;
  if (u.qk_t === 1 && (kb % per || u.qk_o % per)) return null;
  return {chunkScale: u.qk_t === 0 || (kb % chunk === 0 && u.qk_o % chunk === 0)};
}

/**
 * The quantized matrix-vector shader (see the module comment); `vecA`: A read as vec4s (A
 * contiguous along K, K and A's offset multiples of 4).
 * @param {function} declareCommon (shader, batchRank, hasC) -> cTerm, from matmul_kernels.js
 * @param {function} storeY (dataType, cTerm) -> WGSL of store_y
 * @param {function} storeHelpers the data type's store helpers
 */
export function quantizedGemvShader({dataType, hasC, quant, vecA, chunkScale, serial}, declareCommon, storeY, storeHelpers) {
  const T = wgslType(dataType);
  const {bits, signed, hasZp} = quant;
  const per = 32 / bits;
  const chunk = 4 * per;
  const lanesPer = serial ? 1 : QGEMV_LANES;
  const cols = serial ? QGEMV_SERIAL_COLS : QGEMV_COLS;
  const shader = new Shader(`matmul_qgemv${serial ? '_serial' : ''}${quantKey(quant)}`).read('A', vecA ? 'vec4<f32>' : T)
    .read('B', 'vec4<u32>').read('S', 'f32');
  if (hasZp) shader.read('Z', 'u32');
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, 0, hasC);
  declareScaleMap(shader, quant);
  if (!serial) shader.shared('part', `array<f32, ${QGEMV_COLS * QGEMV_LANES}>`);
  shader.fn(storeHelpers(dataType)).fn(storeY(dataType, cTerm));
  // A's element k (scalar) and its 4 elements from k (k a multiple of 4 when vecA)
  shader.fn(vecA ? `fn a_at(k: u32) -> f32 { let i = u_a_base() + k; return A[i / 4u][i % 4u]; }
fn a4(k: u32) -> vec4<f32> { return A[(u_a_base() + k) / 4u]; }`
    : `fn a_at(k: u32) -> f32 { return f32(A[u_a_base() + k * u_a_sk()]); }
fn a4(k: u32) -> vec4<f32> { return vec4<f32>(a_at(k), a_at(k + 1u), a_at(k + 2u), a_at(k + 3u)); }`);
  // the 4 (8-bit) or 8 (4-bit) elements of a word as vec4<f32>s, element order
  const lanes = bits === 8 ? [[0, 8, 16, 24]] : [[0, 4, 8, 12], [16, 20, 24, 28]];
  const unpack = lanes.map((sh) => {
    const v = (xs) => `vec4<u32>(${xs.map((x) => `${x}u`).join(', ')})`;
    return signed
      ? `vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(w) << ${v(sh.map((x) => 32 - bits - x))}) >> vec4<u32>(${32 - bits}u))`
      : `vec4<f32>((vec4<u32>(w) >> ${v(sh)}) & vec4<u32>(${(1 << bits) - 1}u))`;
  });
  shader.fn(`fn word_dot(w: u32, k: u32, z: f32) -> f32 {
  var t = 0.0;
${unpack.map((e, i) => `  t += dot(${e} - vec4<f32>(z), a4(k + ${4 * i}u));`).join('\n')}
  return t;
}`);
  const zero = (si) => (hasZp ? `f32(zero_point(${si}))` : '0.0');
  const words = [0, 1, 2, 3];
  const full = chunkScale
    ? `        let si = scale_index(k0, n);
        let z = ${zero('si')};
        s += (${words.map((i) => `word_dot(w[${i}], k0 + ${i * per}u, z)`).join(' + ')}) * S[si];`
    : words.map((i) => `        {
          let si = scale_index(k0 + ${i * per}u, n);
          s += word_dot(w[${i}], k0 + ${i * per}u, ${zero('si')}) * S[si];
        }`).join('\n');
  const reduce = serial ? `
  if (n < u_N()) { store_y(s, 0u, n, u_y_base()); }` : `
  part[li] = s;
  workgroupBarrier();
  if (lane < 4u) {
    var t = 0.0;
    for (var j = 0u; j < 8u; j++) { t += part[li + j * 4u]; }
    part[li] = t;
  }
  workgroupBarrier();
  if (lane == 0u && n < u_N()) {
    store_y((part[li] + part[li + 1u]) + (part[li + 2u] + part[li + 3u]), 0u, n, u_y_base());
  }`;
  shader.main(`
  let col = li / ${lanesPer}u;
  let lane = li % ${lanesPer}u;
  let n = wg * ${cols}u + col;
  var s = 0.0;
  if (n < u_N()) {
    let row = (u_b_base() + n * u_b_sn()) / ${chunk}u;
    let chunks = (u_K() + ${chunk - 1}u) / ${chunk}u;
    for (var c = lane; c < chunks; c += ${lanesPer}u) {
      let k0 = c * ${chunk}u;
      let w = B[row + c];
      if (k0 + ${chunk}u <= u_K()) {
${full}
      } else {
        // the last, partial chunk: element by element
        for (var j = 0u; k0 + j < u_K(); j++) {
          let k = k0 + j;
          let si = scale_index(k, n);
          let q = ${signed ? `bitcast<i32>(w[j / ${per}u] << (${32 - bits}u - (j % ${per}u) * ${bits}u)) >> ${32 - bits}u`
    : `i32((w[j / ${per}u] >> ((j % ${per}u) * ${bits}u)) & ${(1 << bits) - 1}u)`};
          s += f32(q${hasZp ? ' - zero_point(si)' : ''}) * S[si] * a_at(k);
        }
      }
    }
  }${reduce}`, {workgroupSize: cols * lanesPer, guard: false});
  return shader;
}
