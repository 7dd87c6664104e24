/**
 * The two-dimensional matrix-product shaders of matmul_kernels.js:
 *  - tiled: a workgroup of 16x16 invocations computes a 64x64 tile of Y (4x4 per invocation) or,
 *    `wide`, a 128x128 tile (8x8 per invocation, as two 4-row and two 4-column groups 64 apart
 *    so that neighbouring invocations read neighbouring vec4s of workgroup memory). A and B pass
 *    through workgroup memory in 16-deep slices of K, loaded so that neighbouring invocations
 *    read neighbouring addresses for either memory order of A and B (a variant of the text);
 *    the next slice's loads are issued into registers before the current slice is multiplied,
 *    so their latency hides behind its multiply-adds. tiled128 writes the 16 multiply steps of a
 *    slice out (constant offsets into the tiles; docs/design-notes.md, "The tiled kernels").
 *    Workgroups take their tiles in bands of BAND tile rows, down each column of the band and
 *    then the next (a 4096^3 product's B, 64 MB, no longer passes through the cache for every 4
 *    rows of tiles).
 *  - blocked: no workgroup memory or barrier; each invocation reads its 4 rows of A and 4
 *    columns of B straight from storage. On a CPU adapter (SwiftShader), where barriers are
 *    expensive, this is the fast one.
 *  - split (a variant of tiled): the workgroups of each tile share K out in `u_split_k()` ranges of
 *    `u_k_chunk()` (a multiple of 16) and store their raw sums in a scratch array P, split-major
 *    [split][batch][m][n]; matmul_kernels.js's reduce step adds them in split order (so results do
 *    not vary run to run) and applies alpha, C and the epilogue. For products of few tiles and a
 *    long K (a 1x1 convolution over a 7x7 map), which would otherwise occupy a few of a large GPU's
 *    cores.
 * The accumulators are unrolled into named variables (no dynamically indexed arrays).
 * Where the data allows (see matmul_kernels.js), A and/or B are read as vec4s.
 */
import {Shader} from '../gpu/wgsl.js';
import {storeHelpers, wgslType} from '../gpu/types.js';
import {bLoad, bLoadAt, declareB, quantKey, unpackWord} from './packed_weights.js';

/** Tile rows per band of the tiled kernels' workgroup order. */
const BAND = 8;

/** WGSL `fn store_row(v, m, n, y0)`: 4 columns of one row from a vec4 through store_y, skipping a
 * row past M and columns past N. */
const STORE_ROW = `
fn store_row(v: vec4<f32>, m: u32, n: u32, y0: u32) {
  if (m >= u_M()) { return; }
  for (var j = 0u; j < 4u; j++) {
    if (n + j < u_N()) { store_y(v[j], m, n + j, y0); }
  }
}`;

/**
 * Adds the output functions both shaders use: the data type's store helpers, `store_y` (one
 * element of Y, C term and epilogue included) and `store_row`; `split`: a `store_y` that writes
 * the raw sum to the partial-sum array P (row-major M x N from `y0`) instead.
 */
function addStores(shader, dataType, cTerm, storeY, split = false) {
  if (split) {
    shader.fn('fn store_y(v: f32, m: u32, n: u32, p0: u32) { P[p0 + m * u_N() + n] = v; }');
  } else {
    shader.fn(storeHelpers(dataType)).fn(storeY(dataType, cTerm));
  }
  shader.fn(STORE_ROW);
}

/**
 * @param {function} declareCommon (shader, batchRank, hasC) -> cTerm, from matmul_kernels.js
 * @param {function} storeY (dataType, cTerm) -> WGSL of store_y
 */
export function tiledShader({dataType, batchRank, hasC, aKContiguous, bNContiguous, wide, vecA, vecB, split, quant}, declareCommon, storeY) {
  const T = wgslType(dataType);
  const tile = wide ? 128 : 64;
  const q = tile / 4; // vec4s per k-row of a staged tile
  const halves = wide ? [0, 1] : [0];
  const name = `matmul_tiled${wide ? '128' : ''}${split ? '_split' : ''}${quantKey(quant)}`;
  const shader = new Shader(name).read('A', vecA ? 'vec4<f32>' : T);
  declareB(shader, T, quant, vecB);
  if (hasC && !split) shader.read('C', T);
  shader.write(split ? 'P' : 'Y', split ? 'f32' : T);
  const cTerm = declareCommon(shader, batchRank, hasC && !split);
  shader.uniform('tilesN').uniform('tilesM');
  if (split) shader.uniform('split_k').uniform('k_chunk');
  shader.shared('As', `array<vec4<f32>, ${16 * q}>`).shared('Bs', `array<vec4<f32>, ${16 * q}>`);
  if (!vecA) {
    shader.fn(`fn load_a(m: u32, k: u32, a0: u32) -> f32 {
  if (m < u_M() && k < u_K()) { return f32(A[a0 + m * u_a_sm() + k * u_a_sk()]); }
  return 0.0;
}`);
  }
  if (!vecB && !quant) {
    shader.fn(`fn load_b(k: u32, n: u32, b0: u32) -> f32 {
  if (k < u_K() && n < u_N()) { return ${bLoad(quant, 'b0 + k * u_b_sk() + n * u_b_sn()', 'k', 'n')}; }
  return 0.0;
}`);
  }
  addStores(shader, dataType, cTerm, storeY, split);
  const aIdx = aKContiguous ? `let ka = e % 16u; let ma = e / 16u;` : `let ma = e % ${tile}u; let ka = e / ${tile}u;`;
  const bIdx = bNContiguous ? `let nb = e % ${tile}u; let kb = e / ${tile}u;` : `let kb = e % 16u; let nb = e / 16u;`;
  // Staging, in two halves so that the next slice's global loads are in flight while the
  // current slice is computed: fetch (into the invocation's registers pa / pb, for the slice at
  // k = kn) and stage (registers into the workgroup tiles). Scalar loads (any layout) or, where
  // the contiguous axis holds whole vec4s (vecA: A contiguous in K, K % 4 == 0; vecB: B
  // contiguous in N, N % 4 == 0; aligned offsets), one vec4 per load: A's vec4 runs along k
  // (scattered into the [k][m] tile), B's along n (stored as is).
  const nA = vecA ? tile / 64 : tile / 16;
  const nB = vecB ? tile / 64 : tile / 16;
  const regA = `  var pa: array<${vecA ? 'vec4<f32>' : 'f32'}, ${nA}>;`;
  // packed B a word at a time where the layout allows (wordFetch)
  const words = quant?.words ? wordFetch(quant, tile) : null;
  const regB = `  var pb: array<${vecB ? 'vec4<f32>' : 'f32'}, ${nB}>;`;
  const fetchA = vecA ? `    for (var i = 0u; i < ${nA}u; i++) {
      let e = li + i * 256u;
      let ma = e / 4u;
      let kq = (e % 4u) * 4u;
      var v = vec4<f32>();
      if (m0 + ma < u_M() && kn + kq < u_K()) { v = A[(a0 + (m0 + ma) * u_a_sm() + kn + kq) / 4u]; }
      pa[i] = v;
    }` : `    for (var i = 0u; i < ${nA}u; i++) {
      let e = li + i * 256u;
      ${aIdx}
      pa[i] = load_a(m0 + ma, kn + ka, a0);
    }`;
  const stageA = vecA ? `    for (var i = 0u; i < ${nA}u; i++) {
      let e = li + i * 256u;
      let ma = e / 4u;
      let kq = (e % 4u) * 4u;
      let v = pa[i];
      As[kq * ${q}u + ma / 4u][ma % 4u] = v.x;
      As[(kq + 1u) * ${q}u + ma / 4u][ma % 4u] = v.y;
      As[(kq + 2u) * ${q}u + ma / 4u][ma % 4u] = v.z;
      As[(kq + 3u) * ${q}u + ma / 4u][ma % 4u] = v.w;
    }` : `    for (var i = 0u; i < ${nA}u; i++) {
      let e = li + i * 256u;
      ${aIdx}
      As[ka * ${q}u + ma / 4u][ma % 4u] = pa[i];
    }`;
  // packed B (quant): the scale offsets of the invocation's columns (fixed for the whole K loop)
  // are computed once, and a fetch computes each row's once (once for all its loads where they
  // share the row, B contiguous in K), so a load costs no division
  const nbOf = (i) => (bNContiguous ? `((li + ${i * 256}u) % ${tile}u)` : `((li + ${i * 256}u) / 16u)`);
  const kbOf = (i) => (bNContiguous ? `((li + ${i * 256}u) / ${tile}u)` : '(li % 16u)');
  const snInit = words ? words.init : quant && !vecB ? [...Array(nB).keys()].map((i) => `  let sn${i} = scale_n(min(n0 + ${nbOf(i)}, u_N() - 1u));`).join('\n') : '';
  const fetchQuant = `${bNContiguous ? '' : '    let sk = scale_k(min(kn + (li % 16u), u_K() - 1u));\n'}${[...Array(nB).keys()].map((i) => `    {
      let kb = ${kbOf(i)};
      let nb = ${nbOf(i)};
      let k = kn + kb;
      let n = n0 + nb;
      var v = 0.0;
      if (k < u_K() && n < u_N()) {
        v = ${bLoadAt('b0 + k * u_b_sk() + n * u_b_sn()', `${bNContiguous ? 'scale_k(k)' : 'sk'} + sn${i}`)};
      }
      pb[${i}] = v;
    }`).join('\n')}`;
  const fetchB = words ? words.fetch : quant && !vecB ? fetchQuant : vecB ? `    for (var i = 0u; i < ${nB}u; i++) {
      let e = li + i * 256u;
      let nq = e % ${q}u;
      let kb = e / ${q}u;
      var v = vec4<f32>();
      if (kn + kb < u_K() && n0 + nq * 4u < u_N()) { v = B[(b0 + (kn + kb) * u_b_sk() + n0 + nq * 4u) / 4u]; }
      pb[i] = v;
    }` : `    for (var i = 0u; i < ${nB}u; i++) {
      let e = li + i * 256u;
      ${bIdx}
      pb[i] = load_b(kn + kb, n0 + nb, b0);
    }`;
  const stageB = words ? words.stage : vecB ? `    for (var i = 0u; i < ${nB}u; i++) {
      let e = li + i * 256u;
      Bs[(e / ${q}u) * ${q}u + e % ${q}u] = pb[i];
    }` : `    for (var i = 0u; i < ${nB}u; i++) {
      let e = li + i * 256u;
      ${bIdx}
      Bs[kb * ${q}u + nb / 4u][nb % 4u] = pb[i];
    }`;
  const comps = ['x', 'y', 'z', 'w'];
  const accs = [];
  for (const ha of halves) for (const c of comps) for (const hb of halves) accs.push({ha, c, hb, name: `acc${ha}${c}${hb}`});
  const declare = accs.map((a) => `  var ${a.name} = vec4<f32>();`).join('\n');
  const loadsA = halves.map((h) => `      let a${h} = As[kk * ${q}u + ${h * 16}u + ty];`).join('\n');
  const loadsB = halves.map((h) => `      let b${h} = Bs[kk * ${q}u + ${h * 16}u + tx];`).join('\n');
  const fmas = accs.map((a) => `      ${a.name} += a${a.ha}.${a.c} * b${a.hb};`).join('\n');
  // one of a slice's 16 multiply steps (kk): tiled128 writes them out, tiled loops
  const multiply = [loadsA, loadsB, fmas].join('\n');
  const range16 = [...Array(16).keys()];
  const stores = accs.map((a) => `  store_row(${a.name}, m0 + ${a.ha * 64}u + ty * 4u + ${comps.indexOf(a.c)}u, n0 + ${a.hb * 64}u + tx * 4u, y0);`).join('\n');
  const {origin, out} = tileOrigin(tile, split);
  shader.main(`${origin}
  let a0 = u_a_base() + ab_offset(batch);
  let b0 = u_b_base() + bb_offset(batch);
  let tx = li % 16u;
  let ty = li / 16u;
${declare}
${regA}
${words ? words.regs : regB}
${snInit}
  {
    let kn = k_lo;
${fetchA}
${fetchB}
  }
  for (var k0 = k_lo; k0 < k_hi; k0 += 16u) {
${stageA}
${stageB}
    workgroupBarrier();
    if (k0 + 16u < k_hi) {
      let kn = k0 + 16u;
${fetchA}
${fetchB}
    }
${wide ? range16.map((kk) => `    {
      let kk = ${kk}u;
${multiply}
    }`).join('\n') : `    for (var kk = 0u; kk < 16u; kk++) {
${multiply}
    }`}
    workgroupBarrier();
  }
  let y0 = ${out};
${stores}`, {workgroupSize: 256, guard: false});
  return shader;
}

/**
 * WGSL of a tiled kernel's entry up to its tile: the workgroup's batch, tile origin (m0, n0) and
 * K range (k_lo, k_hi; `split`: workgroup wg is split wg / (batches * tiles) of the tile it would
 * be unsplit, sk its index), returning early past the last batch or split; and `out`, the WGSL
 * expression of where its results start (Y's batch, or the split's partial sums).
 * @returns {{origin: string, out: string}}
 */
export function tileOrigin(tile, split) {
  const range = split ? `
  let per_split = u_batches() * per_batch;
  let sk = wg / per_split;
  if (sk >= u_split_k()) { return; }
  let wt = wg % per_split;
  let k_lo = sk * u_k_chunk();
  let k_hi = min(u_K(), k_lo + u_k_chunk());` : `
  let wt = wg;
  let k_lo = 0u;
  let k_hi = u_K();`;
  const origin = `
  let per_batch = u_tilesN() * u_tilesM();${range}
  let batch = wt / per_batch;
  if (batch >= u_batches()) { return; }
  // tiles in bands of ${BAND} tile rows, column by column within a band: workgroups that run
  // at the same time share rows of A and columns of B in the GPU's cache
  let t = wt % per_batch;
  let band = t / (${BAND}u * u_tilesN());
  let rows = min(${BAND}u, u_tilesM() - band * ${BAND}u);
  let tb = t % (${BAND}u * u_tilesN());
  let m0 = (band * ${BAND}u + tb % rows) * ${tile}u;
  let n0 = (tb / rows) * ${tile}u;`;
  return {origin, out: split ? '(sk * u_batches() + batch) * u_M() * u_N()' : 'u_y_base() + batch * u_y_bs()'};
}

/**
 * Packed B loaded a word at a time (`quant.words`, ops/packed_weights.js wordLoads: B contiguous
 * along K, one scale a word): invocation e of a slice's tile * 16 / per words (e < 256, or two
 * each for 8-bit 128-wide tiles) holds column e / (16 / per) and the word of k-offset
 * (e % (16 / per)) * per. The fetch issues the word's load with its scale and zero point (one
 * scale lookup for per elements); the stage unpacks it (packed_weights.js unpackWord) into the
 * tile, zeroing elements past K (a partial last word; the scale of a padded block may be
 * infinite).
 * @returns {{regs: string, init: string, fetch: string, stage: string}} WGSL fragments
 */
function wordFetch(quant, tile) {
  const per = 32 / quant.bits;
  const wpc = 16 / per; // words of a column in a 16-deep slice
  const total = tile * wpc;
  const n = Math.max(1, total / 256);
  const is = [...Array(n).keys()];
  const guard = total < 256 ? `if (li < ${total}u) ` : '';
  const q = tile / 4;
  const parts = (i) => unpackWord(quant, `pw[${i}]`, `po[${i}]`);
  const regs = `  var pw: array<u32, ${n}>;
  var ps: array<f32, ${n}>;
  var po: array<f32, ${n}>;`;
  const init = is.map((i) => `  let wcol${i} = n0 + (li + ${i * 256}u) / ${wpc}u;
  let wrow${i} = b0 + min(wcol${i}, u_N() - 1u) * u_b_sn();
  let wsn${i} = scale_n(min(wcol${i}, u_N() - 1u));
  let wk${i} = ((li + ${i * 256}u) % ${wpc}u) * ${per}u;`).join('\n');
  const fetch = is.map((i) => `    ${guard}{
      let k = kn + wk${i};
      pw[${i}] = 0u;
      ps[${i}] = 0.0;
      po[${i}] = 0.0;
      if (k < u_K() && wcol${i} < u_N()) {
        let si = scale_k(k) + wsn${i};
        pw[${i}] = B[(wrow${i} + k) / ${per}u];
        ps[${i}] = S[si];
        po[${i}] = q_offset(si);
      }
    }`).join('\n');
  const stores = (i) => [...Array(per).keys()].map((t) => `      Bs[(wk${i} + ${t}u) * ${q}u + nb / 4u][nb % 4u] = v${Math.floor(t / 4)}[${t % 4}];`).join('\n');
  const stage = is.map((i) => `    ${guard}{
      let nb = (li + ${i * 256}u) / ${wpc}u;
${parts(i).map((e, j) => `      var v${j} = ${e} * ps[${i}];`).join('\n')}
      let left = u_K() - min(u_K(), k0 + wk${i});
      if (left < ${per}u) {
${parts(i).map((_, j) => `        v${j} = select(vec4<f32>(), v${j}, vec4<u32>(${[0, 1, 2, 3].map((t) => `${4 * j + t}u`).join(', ')}) < vec4<u32>(left));`).join('\n')}
      }
${stores(i)}
    }`).join('\n');
  return {regs, init, fetch, stage};
}

/** The blocked shader: one invocation per 4x4 block of Y, operands read from storage. */
export function blockedShader({dataType, batchRank, hasC, quant}, declareCommon, storeY) {
  const T = wgslType(dataType);
  const shader = new Shader(`matmul_blocked${quantKey(quant)}`).read('A', T);
  declareB(shader, T, quant);
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, batchRank, hasC);
  shader.uniform('blocksN').uniform('blocksM');
  addStores(shader, dataType, cTerm, storeY);
  // Rows and columns past the edge read the last valid one (clamped, no branch) and are not stored.
  shader.main(`
  let nb = gi % u_blocksN();
  let mb = (gi / u_blocksN()) % u_blocksM();
  let batch = gi / (u_blocksN() * u_blocksM());
  let m = mb * 4u;
  let n = nb * 4u;
  let a0 = u_a_base() + ab_offset(batch);
  let b0 = u_b_base() + bb_offset(batch);
  let ar0 = a0 + min(m, u_M() - 1u) * u_a_sm();
  let ar1 = a0 + min(m + 1u, u_M() - 1u) * u_a_sm();
  let ar2 = a0 + min(m + 2u, u_M() - 1u) * u_a_sm();
  let ar3 = a0 + min(m + 3u, u_M() - 1u) * u_a_sm();
  let bc0 = b0 + min(n, u_N() - 1u) * u_b_sn();
  let bc1 = b0 + min(n + 1u, u_N() - 1u) * u_b_sn();
  let bc2 = b0 + min(n + 2u, u_N() - 1u) * u_b_sn();
  let bc3 = b0 + min(n + 3u, u_N() - 1u) * u_b_sn();
${quant ? [0, 1, 2, 3].map((j) => `  let sn${j} = scale_n(min(n + ${j}u, u_N() - 1u));\n`).join('') : ''}  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  for (var k = 0u; k < u_K(); k++) {
    let ka = k * u_a_sk();
    let kb = k * u_b_sk();
    ${quant ? 'let sk = scale_k(k);\n    ' : ''}let b = vec4<f32>(${[0, 1, 2, 3].map((j) => (quant ? bLoadAt(`bc${j} + kb`, `sk + sn${j}`) : bLoad(quant, `bc${j} + kb`, 'k', 'n'))).join(', ')});
    acc0 += f32(A[ar0 + ka]) * b;
    acc1 += f32(A[ar1 + ka]) * b;
    acc2 += f32(A[ar2 + ka]) * b;
    acc3 += f32(A[ar3 + ka]) * b;
  }
  let y0 = u_y_base() + batch * u_y_bs();
  store_row(acc0, m, n, y0);
  store_row(acc1, m + 1u, n, y0);
  store_row(acc2, m + 2u, n, y0);
  store_row(acc3, m + 3u, n, y0);`);
  return shader;
}
