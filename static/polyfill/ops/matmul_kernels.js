/**
 * Matrix-product kernels shared by gemm, matmul and the recurrent operators:
 * Y[b] = alpha * A[b] x B[b] (+ beta * C), all addressed through strides held in uniforms, so a
 * transposed operand, a broadcast batch, a bias row or a slice of a larger buffer need no copy.
 *
 * Two kernels, chosen by shape:
 *  - tiled: a workgroup of 16x16 invocations computes a 64x64 tile of Y, each invocation a 4x4
 *    register block; A and B go through workgroup memory in 16-deep slices of K, loaded so that
 *    neighbouring invocations read neighbouring addresses for either memory order of A and B.
 *  - gemv (M <= 4, or N <= 4 by computing the transposed product): one workgroup per output
 *    element splitting K across 64 invocations when B is contiguous along K, else one invocation
 *    per column with K split four ways; partial sums meet in workgroup memory.
 * Accumulation is in f32; results go through storeExpr so float16 outputs round to binary16.
 */
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';

const TILE = 64;
const GEMV_ROWS = 4;

/** Uniforms every matrix kernel declares, in this order. */
function declareCommon(shader, batchRank, hasC) {
  for (const n of ['M', 'N', 'K', 'batches', 'a_base', 'a_sm', 'a_sk', 'b_base', 'b_sk', 'b_sn',
    'c_base', 'c_sm', 'c_sn', 'y_base', 'y_sm', 'y_sn', 'y_bs']) shader.uniform(n);
  shader.uniform('alpha', 'f32').uniform('beta', 'f32');
  declareIndexer(shader, 'ab', batchRank);
  declareIndexer(shader, 'bb', batchRank);
  const cTerm = hasC ? ' + u_beta() * f32(C[u_c_base() + m * u_c_sm() + n * u_c_sn()])' : '';
  return cTerm;
}

function epilogue(dataType, cTerm) {
  return `
fn store_y(v: f32, m: u32, n: u32, y0: u32) {
  Y[y0 + m * u_y_sm() + n * u_y_sn()] = ${storeExpr(dataType, `u_alpha() * v${cTerm}`)};
}`;
}

function tiledShader(dataType, batchRank, hasC, aKContiguous, bNContiguous) {
  const T = wgslType(dataType);
  const shader = new Shader('matmul_tiled').read('A', T).read('B', T);
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, batchRank, hasC);
  shader.uniform('tilesN').uniform('tilesM');
  shader.shared('As', 'array<vec4<f32>, 256>').shared('Bs', 'array<vec4<f32>, 256>');
  shader.fn(storeHelpers(dataType)).fn(epilogue(dataType, cTerm)).fn(`
fn load_a(m: u32, k: u32, a0: u32) -> f32 {
  if (m < u_M() && k < u_K()) { return f32(A[a0 + m * u_a_sm() + k * u_a_sk()]); }
  return 0.0;
}
fn load_b(k: u32, n: u32, b0: u32) -> f32 {
  if (k < u_K() && n < u_N()) { return f32(B[b0 + k * u_b_sk() + n * u_b_sn()]); }
  return 0.0;
}
fn store_row(v: vec4<f32>, m: u32, n: u32, y0: u32) {
  if (m >= u_M()) { return; }
  for (var j = 0u; j < 4u; j++) {
    if (n + j < u_N()) { store_y(v[j], m, n + j, y0); }
  }
}`);
  // A tile: 64 rows (m) x 16 (k); B tile: 16 (k) x 64 columns (n); 4 elements per invocation.
  const aIdx = aKContiguous ? 'let ka = e % 16u; let ma = e / 16u;' : 'let ma = e % 64u; let ka = e / 64u;';
  const bIdx = bNContiguous ? 'let nb = e % 64u; let kb = e / 64u;' : 'let kb = e % 16u; let nb = e / 16u;';
  shader.main(`
  let per_batch = u_tilesN() * u_tilesM();
  let batch = wg / per_batch;
  if (batch >= u_batches()) { return; }
  let t = wg % per_batch;
  let m0 = (t / u_tilesN()) * 64u;
  let n0 = (t % u_tilesN()) * 64u;
  let a0 = u_a_base() + ab_offset(batch);
  let b0 = u_b_base() + bb_offset(batch);
  let tx = li % 16u;
  let ty = li / 16u;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  for (var k0 = 0u; k0 < u_K(); k0 += 16u) {
    for (var i = 0u; i < 4u; i++) {
      let e = li + i * 256u;
      ${aIdx}
      As[ka * 16u + ma / 4u][ma % 4u] = load_a(m0 + ma, k0 + ka, a0);
      ${bIdx}
      Bs[kb * 16u + nb / 4u][nb % 4u] = load_b(k0 + kb, n0 + nb, b0);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk++) {
      let a = As[kk * 16u + ty];
      let b = Bs[kk * 16u + tx];
      acc0 += a.x * b;
      acc1 += a.y * b;
      acc2 += a.z * b;
      acc3 += a.w * b;
    }
    workgroupBarrier();
  }
  let y0 = u_y_base() + batch * u_y_bs();
  let m = m0 + ty * 4u;
  let n = n0 + tx * 4u;
  store_row(acc0, m, n, y0);
  store_row(acc1, m + 1u, n, y0);
  store_row(acc2, m + 2u, n, y0);
  store_row(acc3, m + 3u, n, y0);`, {workgroupSize: 256, guard: false});
  return shader;
}

/**
 * Four output elements per workgroup of 256, 64 invocations each splitting K (B contiguous in K);
 * partial sums meet in workgroup memory in two levels (8 x 8).
 */
function gemvDotShader(dataType, batchRank, hasC) {
  const T = wgslType(dataType);
  const shader = new Shader('matmul_gemv_dot').read('A', T).read('B', T);
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, batchRank, hasC);
  shader.shared('part', 'array<f32, 256>');
  shader.fn(storeHelpers(dataType)).fn(epilogue(dataType, cTerm));
  shader.main(`
  let mn = u_M() * u_N();
  if (wg * 4u >= u_batches() * mn) { return; }
  let o = wg * 4u + li / 64u;
  let lane = li % 64u;
  let valid = o < u_batches() * mn;
  let batch = o / mn;
  let m = (o % mn) / u_N();
  let n = o % u_N();
  var s = 0.0;
  if (valid) {
    let a0 = u_a_base() + ab_offset(batch) + m * u_a_sm();
    let b0 = u_b_base() + bb_offset(batch) + n * u_b_sn();
    for (var k = lane; k < u_K(); k += 64u) {
      s += f32(A[a0 + k * u_a_sk()]) * f32(B[b0 + k * u_b_sk()]);
    }
  }
  part[li] = s;
  workgroupBarrier();
  if (lane < 8u) {
    var t = 0.0;
    for (var j = 0u; j < 8u; j++) { t += part[li + j * 8u]; }
    part[li] = t;
  }
  workgroupBarrier();
  if (lane == 0u && valid) {
    var t = 0.0;
    for (var j = 0u; j < 8u; j++) { t += part[li + j]; }
    store_y(t, m, n, u_y_base() + batch * u_y_bs());
  }`, {workgroupSize: 256, guard: false});
  return shader;
}

/** 64 columns per workgroup of 256, K split four ways (B contiguous in N). */
function gemvColShader(dataType, batchRank, hasC) {
  const T = wgslType(dataType);
  const shader = new Shader('matmul_gemv_col').read('A', T).read('B', T);
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, batchRank, hasC);
  shader.uniform('tilesN');
  shader.shared('part', 'array<f32, 256>');
  shader.fn(storeHelpers(dataType)).fn(epilogue(dataType, cTerm));
  shader.main(`
  let per_batch = u_M() * u_tilesN();
  let batch = wg / per_batch;
  if (batch >= u_batches()) { return; }
  let m = (wg % per_batch) / u_tilesN();
  let n = (wg % u_tilesN()) * 64u + li % 64u;
  let a0 = u_a_base() + ab_offset(batch) + m * u_a_sm();
  let b0 = u_b_base() + bb_offset(batch) + n * u_b_sn();
  var s = 0.0;
  if (n < u_N()) {
    for (var k = li / 64u; k < u_K(); k += 4u) {
      s += f32(A[a0 + k * u_a_sk()]) * f32(B[b0 + k * u_b_sk()]);
    }
  }
  part[li] = s;
  workgroupBarrier();
  if (li < 64u && n < u_N()) {
    store_y((part[li] + part[li + 64u]) + (part[li + 128u] + part[li + 192u]), m, n, u_y_base() + batch * u_y_bs());
  }`, {workgroupSize: 256, guard: false});
  return shader;
}

/**
 * Appends the dispatch computing, for every batch index b of `batchShape`,
 *   Y[b][m, n] = alpha * sum_k A[b][m, k] * B[b][k, n] (+ beta * C[m, n])
 * where X[b][i, j] = X[xOffset + xBatchOffset(b) + i * xStrides[0] + j * xStrides[1]] (element
 * units, compute layout) and Y's batch b starts at yOffset + b * yBatchStride.
 *
 * @param {import('../compile/lowering.js').Lowering} L
 * @param {object} p
 * @param {string} p.dataType 'float32' | 'float16' (of A, B, C and Y)
 * @param {object} p.a Value of A   @param {object} p.b Value of B   @param {object} p.y Value of Y
 * @param {object} [p.c] Value of C (added after scaling by beta)
 * @param {number} p.M @param {number} p.N @param {number} p.K
 * @param {[number, number]} p.aStrides [m, k] @param {[number, number]} p.bStrides [k, n]
 * @param {[number, number]} [p.cStrides] [m, n] (0 = broadcast)  @param {[number, number]} [p.yStrides] default [N, 1]
 * @param {{a?: number, b?: number, c?: number, y?: number}} [p.offsets] element offsets
 * @param {number[]} [p.batchShape] output batch dimensions (default none)
 * @param {number[]} [p.aBatchStrides] per batch dimension (0 = broadcast)  @param {number[]} [p.bBatchStrides]
 * @param {number} [p.yBatchStride] default M * N
 * @param {number} [p.alpha=1] @param {number} [p.beta=1]
 * @param {string} p.label
 */
export function matmulStep(L, p) {
  let {M, N, a, b, aStrides, bStrides} = p;
  let {aBatchStrides = [], bBatchStrides = []} = p;
  const {K, c, y, label, dataType, batchShape = []} = p;
  const offsets = {a: 0, b: 0, c: 0, y: 0, ...p.offsets};
  let cStrides = p.cStrides ?? [0, 0];
  let yStrides = p.yStrides ?? [N, 1];
  const yBatchStride = p.yBatchStride ?? M * N;
  // A skinny product Y = A x B with few columns is computed as Y^T = B^T x A^T.
  if (N <= GEMV_ROWS && M > GEMV_ROWS) {
    [M, N] = [N, M];
    [a, b] = [b, a];
    [aStrides, bStrides] = [[bStrides[1], bStrides[0]], [aStrides[1], aStrides[0]]];
    [aBatchStrides, bBatchStrides] = [bBatchStrides, aBatchStrides];
    [offsets.a, offsets.b] = [offsets.b, offsets.a];
    cStrides = [cStrides[1], cStrides[0]];
    yStrides = [yStrides[1], yStrides[0]];
  }
  const batches = batchShape.reduce((x, d) => x * d, 1);
  const rank = batchShape.length;
  const hasC = Boolean(c);
  const uniforms = {
    M, N, K, batches,
    a_base: offsets.a, a_sm: aStrides[0], a_sk: aStrides[1],
    b_base: offsets.b, b_sk: bStrides[0], b_sn: bStrides[1],
    c_base: offsets.c, c_sm: cStrides[0], c_sn: cStrides[1],
    y_base: offsets.y, y_sm: yStrides[0], y_sn: yStrides[1], y_bs: yBatchStride,
    alpha: p.alpha ?? 1, beta: p.beta ?? 1,
    ab_shape: batchShape, ab_strides: aBatchStrides, bb_shape: batchShape, bb_strides: bBatchStrides,
  };
  let shader;
  let groups;
  if (M <= GEMV_ROWS && bStrides[0] === 1 && K > 1) {
    shader = gemvDotShader(dataType, rank, hasC);
    groups = Math.ceil(batches * M * N / 4);
  } else if (M <= GEMV_ROWS) {
    shader = gemvColShader(dataType, rank, hasC);
    uniforms.tilesN = Math.ceil(N / 64);
    groups = batches * M * uniforms.tilesN;
  } else {
    shader = tiledShader(dataType, rank, hasC, aStrides[1] === 1, bStrides[1] === 1);
    uniforms.tilesN = Math.ceil(N / TILE);
    uniforms.tilesM = Math.ceil(M / TILE);
    groups = batches * uniforms.tilesN * uniforms.tilesM;
  }
  const values = hasC ? [a, b, c, y] : [a, b, y];
  L.step({shader, values, uniforms, groups, label});
}
