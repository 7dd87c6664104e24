/**
 * The matrix-vector kernels of one-row products with packed quantized weights (an LLM's decode
 * step: y[n] = sum_k x[k] * dequantize(W[n, k]), W contiguous along K; ops/packed_weights.js
 * says how a packed element, its scale and its zero point are found).
 *
 * Split variant (hardware adapters): a workgroup of 256 invocations is `groups` column groups of
 * 256 / groups lanes; a group computes `columns` adjacent outputs. Lane l reads the u32 words
 * l, l + lanes, l + 2 * lanes ... of each of its columns' rows, so consecutive lanes read
 * consecutive words (one 128-byte line a subgroup a column) and consecutive A elements (8 or 4
 * floats a word, read once for all the columns). `unroll` words a lane are loaded before any is
 * used, keeping that many loads a column in flight. Partial sums are added in workgroup memory
 * (a halving tree). Lanes do not hold whole 16-byte chunks of a row: consecutive lanes would then
 * read A 128 bytes apart (docs/packed-weights.md has the measurements).
 *
 * Serial variant (CPU adapters, SwiftShader): one invocation a column reading its row in 16-byte
 * chunks, no workgroup memory or barrier (SwiftShader pays for barriers).
 */
import {Shader} from '../gpu/wgsl.js';
import {wgslType} from '../gpu/types.js';
import {declareScaleMap, quantKey, unpackWord, wordMagic} from './packed_weights.js';

/** Invocations a workgroup of the split variant. */
const THREADS = 256;
/** Output columns per workgroup of the serial variant: one invocation a column. */
const SERIAL_COLS = 64;
/** Workgroups the split variant aims for before it gives a group fewer columns. */
const TARGET_GROUPS = 256;

/**
 * Whether the kernels can read this product: one row, B contiguous along K with each column's
 * start on a 16-byte chunk, the blocks along K whole words aligned on words (`chunkScale`:
 * whole chunks aligned on chunks, one scale a chunk, which the serial variant uses).
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
 * The split variant's shape for an N x K product of `bits`-bit weights: the tuning switch
 * `qgemvConfig` where set (a member left out: chosen as below), else 2 words a lane in flight,
 * as many lanes a column as keep two words a lane (32 to 128: K split across up to half the
 * workgroup), and 4 columns a group, fewer while that gives under TARGET_GROUPS workgroups
 * (docs/packed-weights.md: the shapes measured).
 * @returns {{groups: number, columns: number, unroll: number}}
 */
export function chooseGemvConfig(ctx, N, K, bits) {
  const want = ctx.tuning.qgemvConfig ?? {};
  const unroll = want.unroll ?? 2;
  const words = Math.ceil(K * bits / 32);
  let lanes = 32;
  while (lanes < 128 && lanes * 2 * 2 <= words) lanes *= 2;
  const groups = want.groups ?? THREADS / lanes;
  let columns = want.columns ?? 4;
  if (!want.columns) {
    while (columns > 1 && Math.ceil(N / (groups * columns)) < TARGET_GROUPS) columns /= 2;
  }
  return {groups, columns, unroll};
}

/** Workgroups of the kernel for N columns. */
export function gemvWorkgroups(N, serial, config) {
  return Math.ceil(N / (serial ? SERIAL_COLS : config.groups * config.columns));
}

/**
 * The shader (see the module comment); `vecA`: A read as vec4s (A contiguous along K, K and A's
 * offset multiples of 4); `config` from chooseGemvConfig (split variant).
 * @param {function} declareCommon (shader, batchRank, hasC) -> cTerm, from matmul_kernels.js
 * @param {function} storeY (dataType, cTerm) -> WGSL of store_y
 * @param {function} storeHelpers the data type's store helpers
 */
export function quantizedGemvShader({dataType, hasC, quant, vecA, chunkScale, serial, config}, declareCommon, storeY, storeHelpers) {
  const T = wgslType(dataType);
  const {bits, signed, hasZp} = quant;
  const name = serial ? 'matmul_qgemv_serial' : `matmul_qgemv_g${config.groups}c${config.columns}u${config.unroll}`;
  const shader = new Shader(`${name}${quantKey(quant)}`).read('A', vecA ? 'vec4<f32>' : T)
    .read('B', serial ? 'vec4<u32>' : 'u32').read('S', 'f32');
  if (hasZp) shader.read('Z', 'u32');
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, 0, hasC);
  declareScaleMap(shader, quant);
  shader.fn(storeHelpers(dataType)).fn(storeY(dataType, cTerm));
  // A's element k (scalar) and its 4 elements from k (k a multiple of 4 when vecA)
  shader.fn(vecA ? `fn a_at(k: u32) -> f32 { let i = u_a_base() + k; return A[i / 4u][i % 4u]; }
fn a4(k: u32) -> vec4<f32> { return A[(u_a_base() + k) / 4u]; }`
    : `fn a_at(k: u32) -> f32 { return f32(A[u_a_base() + k * u_a_sk()]); }
fn a4(k: u32) -> vec4<f32> { return vec4<f32>(a_at(k), a_at(k + 1u), a_at(k + 2u), a_at(k + 3u)); }`);
  const parts = unpackWord(bits, signed, 'w', 'z');
  // a word's dot product with A's elements from k: `av` the vec4s of A it meets
  const aParams = parts.map((_, i) => `a${i}: vec4<f32>`).join(', ');
  shader.fn(`fn word_dot(w: u32, z: f32, ${aParams}) -> f32 {
  return ${parts.map((e, i) => `dot(${e}, a${i})`).join(' + ')};
}`);
  const zero = (si) => `q_offset(${si})`;
  if (serial) return serialBody(shader, {bits, signed, chunkScale, zero});
  return splitBody(shader, {bits, signed, parts, zero, config});
}

/** The split variant's entry point (module comment). */
function splitBody(shader, {bits, signed, parts, zero, config}) {
  const {groups, columns: R, unroll: U} = config;
  const lanes = THREADS / groups;
  const per = 32 / bits;
  const rs = [...Array(R).keys()];
  const us = [...Array(U).keys()];
  shader.shared('part', `array<f32, ${R * THREADS}>`);
  // one word of each column at word index `wi` (its A elements from k; `sk` the scale index of
  // k, scale_k(k) unless given)
  const words = (wi, u, sk = `scale_k(k${u})`) => `      let k${u} = (${wi}) * ${per}u;
${parts.map((_, i) => `      let a${u}_${i} = a4(k${u} + ${4 * i}u);`).join('\n')}
      let sk${u} = ${sk};
${rs.map((r) => `      { let si = sk${u} + sn${r}; s${r} += word_dot(q${u}_${r}, ${zero('si')}, ${parts.map((_, i) => `a${u}_${i}`).join(', ')}) * S[si]; }`).join('\n')}`;
  const loads = (u, wi) => rs.map((r) => `      let q${u}_${r} = B[row${r} + ${wi}];`).join('\n');
  const tree = [];
  for (let h = lanes / 2; h >= 1; h /= 2) {
    tree.push(`  if (lane < ${h}u) {
${rs.map((r) => `    part[${r * THREADS}u + li] += part[${r * THREADS}u + li + ${h}u];`).join('\n')}
  }
  workgroupBarrier();`);
  }
  shader.main(`
  let g = li / ${lanes}u;
  let lane = li % ${lanes}u;
  let n0 = (wg * ${groups}u + g) * ${R}u;
  let words = u_K() / ${per}u;
${rs.map((r) => `  let col${r} = min(n0 + ${r}u, u_N() - 1u);
  let row${r} = (u_b_base() + col${r} * u_b_sn()) / ${per}u;
  let sn${r} = scale_n(col${r});
  var s${r} = 0.0;`).join('\n')}
  // the scale index of each unrolled word: where one stride of the loop spans whole scale
  // blocks (or one scale spans K), advanced by a constant, else recomputed (an integer division)
  let stride_k = ${U * lanes * per}u;
  let whole = u_qk_t() == 0u || stride_k % u_qk_b() == 0u;
  let sk_step = select(0u, (stride_k / u_qk_b()) * u_qk_s(), u_qk_t() != 0u);
${us.map((u) => `  var skw${u} = scale_k((lane + ${u * lanes}u) * ${per}u);`).join('\n')}
  var w = lane;
  for (; w + ${(U - 1) * lanes}u < words; w += ${U * lanes}u) {
${us.map((u) => loads(u, `w + ${u * lanes}u`)).join('\n')}
${us.map((u) => words(`w + ${u * lanes}u`, u, `skw${u}`)).join('\n')}
    if (whole) {
${us.map((u) => `      skw${u} += sk_step;`).join('\n')}
    } else {
${us.map((u) => `      skw${u} = scale_k((w + ${(U + u) * lanes}u) * ${per}u);`).join('\n')}
    }
  }
  for (; w < words; w += ${lanes}u) {
${loads(0, 'w')}
${words('w', 0)}
  }
  // the last, partial word (K not a multiple of ${per}): element by element
  if (lane == 0u) {
    for (var k = words * ${per}u; k < u_K(); k++) {
      let sk = scale_k(k);
      let j = k - words * ${per}u;
${rs.map((r) => `      { let si = sk + sn${r}; s${r} += (${wordMagic(`B[row${r} + words]`, 'j', bits, signed)} - q_offset(si)) * S[si] * a_at(k); }`).join('\n')}
    }
  }
${rs.map((r) => `  part[${r * THREADS}u + li] = s${r};`).join('\n')}
  workgroupBarrier();
${tree.join('\n')}
  if (lane < ${R}u && n0 + lane < u_N()) {
    store_y(part[lane * ${THREADS}u + g * ${lanes}u], 0u, n0 + lane, u_y_base());
  }`, {workgroupSize: THREADS, guard: false});
  return shader;
}

/** The serial variant's entry point: one invocation a column, 16-byte chunks in order. */
function serialBody(shader, {bits, signed, chunkScale, zero}) {
  const per = 32 / bits;
  const chunk = 4 * per;
  const wordsOf = (i) => `word_dot(w[${i}], z, ${(bits === 8 ? [0] : [0, 4]).map((o) => `a4(k0 + ${i * per + o}u)`).join(', ')})`;
  const full = chunkScale
    ? `        let si = scale_index(k0, n);
        let z = ${zero('si')};
        s += (${[0, 1, 2, 3].map(wordsOf).join(' + ')}) * S[si];`
    : [0, 1, 2, 3].map((i) => `        {
          let si = scale_index(k0 + ${i * per}u, n);
          let z = ${zero('si')};
          s += ${wordsOf(i)} * S[si];
        }`).join('\n');
  shader.main(`
  let n = wg * ${SERIAL_COLS}u + li;
  if (n >= u_N()) { return; }
  var s = 0.0;
  let row = (u_b_base() + n * u_b_sn()) / ${chunk}u;
  let chunks = (u_K() + ${chunk - 1}u) / ${chunk}u;
  for (var c = 0u; c < chunks; c++) {
    let k0 = c * ${chunk}u;
    let w = B[row + c];
    if (k0 + ${chunk}u <= u_K()) {
${full}
    } else {
      // the last, partial chunk: element by element
      for (var j = 0u; k0 + j < u_K(); j++) {
        let k = k0 + j;
        let si = scale_index(k, n);
        s += (${wordMagic(`w[j / ${per}u]`, 'j', bits, signed)} - q_offset(si)) * S[si] * a_at(k);
      }
    }
  }
  store_y(s, 0u, n, u_y_base());`, {workgroupSize: SERIAL_COLS, guard: false});
  return shader;
}
