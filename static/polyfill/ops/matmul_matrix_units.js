/**
 * The matrix-unit product kernel ('matrix' / 'matrix128' of matmul_kernels.js): the GPU's f16
 * matrix units (tensor cores) through `chromium-experimental-subgroup-matrix`, for float16
 * products, and for float32 ones where the context's `productPrecision` is 'float16'.
 *
 * A workgroup of subgroups (GRID: 2 x 2) computes a 64x64 ('matrix') or 128x128 ('matrix128')
 * tile of Y, each subgroup its part of it as a grid of the configuration's M x N result matrices. A and B
 * pass through workgroup memory as f16 in slices of K (`depth` deep; the compute layout holds f32,
 * so the stage converts: exact for float16 values, rounding for float32 ones); the next slice's
 * global loads are issued before the current one is multiplied. With two `stages` the slices
 * alternate between two copies of the workgroup tiles, so one barrier a slice separates a stage
 * from the multiplies that read it (with one copy, a second barrier keeps the next stage from
 * overwriting a slice still being read). Sums are f32 (the configuration's result type). The
 * result matrices then go through workgroup memory, `storeBatch` of a subgroup at a time (into
 * `storeHalves` alternating copies), so that their elements reach store_y (alpha, C, the
 * epilogue, float16 rounding) one by one, and edges past M and N are cut there; loads past M, N or
 * K stage zeros. Tiles are taken in the tiled kernels' order, and the split variant (few tiles, a
 * long K) stores raw sums into P as theirs does (matmul_tiled.js tileOrigin); with `direct`, a
 * split tile wholly inside M x N stores its result matrices straight into P.
 *
 * The subgroup of an invocation is li / subgroup size: the feature makes Dawn launch full
 * subgroups, and the kernel is chosen only where the adapter's subgroup size is fixed
 * (matrixUnits below). Offsets derived from it are uniform in each subgroup, which WGSL's
 * workgroup-level analysis cannot prove: the module turns its subgroup-matrix uniformity
 * diagnostic off.
 */
import {Shader} from '../gpu/wgsl.js';
import {storeHelpers, wgslType} from '../gpu/types.js';
import {tileOrigin} from './matmul_tiled.js';

/** Subgroups of a workgroup over its tile, rows x columns (the tuning switch `matrixGrid` replaces it). */
const GRID = Object.freeze({rows: 2, cols: 2});
/**
 * The kernel's shape (the tuning switch `matrixKernel` replaces members): depth of a staged slice
 * of K (a multiple of every f16 configuration's K), copies of the workgroup tiles, result
 * matrices a subgroup passes through workgroup memory at a time, copies of those (2: alternating,
 * one barrier a batch instead of two), and whether split tiles inside M x N store their sums
 * directly. The defaults are the shape measured in docs/float16-nvidia.md; the others are there
 * to be timed against it.
 */
export const MATRIX_KERNEL = Object.freeze({depth: 32, stages: 1, storeBatch: 1, storeHalves: 1, direct: false});
/** f16 elements added to a staged row, so that rows start in different memory banks. */
const PAD = 8;

/**
 * The f16 -> f32 subgroup-matrix configuration the context's device can run, or null: it needs
 * the features `shader-f16`, `subgroups` and `chromium-experimental-subgroup-matrix`, an
 * adapter whose subgroup size is fixed, and an f16 configuration with f32 results. The tuning
 * switch `matrixConfig` ('MxNxK') picks among them; else the first listed whose M and N are
 * at most 16 (Vulkan lists the driver's preferred ones first). `grid`: the subgroups of a
 * workgroup over its tile (GRID, or the tuning switch `matrixGrid`); depth, stages, storeBatch,
 * storeHalves, direct: MATRIX_KERNEL with the tuning switch `matrixKernel`'s members.
 * @param {object} ctx context slots
 * @returns {?{M: number, N: number, K: number, subgroupSize: number, grid: {rows: number, cols: number},
 *   depth: number, stages: number, storeBatch: number, storeHalves: number, direct: boolean}}
 */
export function matrixUnits(ctx) {
  const features = ctx.device?.features;
  if (!features || !['shader-f16', 'subgroups', 'chromium-experimental-subgroup-matrix'].every((f) => features.has(f))) return null;
  const info = ctx.adapterInfo;
  const size = info?.subgroupMaxSize;
  if (!size || info.subgroupMinSize !== size) return null;
  const configs = [...(info.subgroupMatrixConfigs ?? [])]
    .filter((c) => c.componentType === 'f16' && c.resultComponentType === 'f32' && c.M <= 16 && c.N <= 16);
  const shape = {...MATRIX_KERNEL, ...Object.fromEntries(Object.entries(ctx.tuning.matrixKernel ?? {}).filter(([, v]) => v !== undefined))};
  const wanted = ctx.tuning.matrixConfig;
  const pick = wanted ? configs.find((c) => `${c.M}x${c.N}x${c.K}` === wanted) : configs[0];
  const [rows, cols] = (ctx.tuning.matrixGrid ?? `${GRID.rows}x${GRID.cols}`).split('x').map(Number);
  return pick && shape.depth % pick.K === 0 ? {M: pick.M, N: pick.N, K: pick.K, subgroupSize: size, grid: {rows, cols}, ...shape} : null;
}

/** Bytes of workgroup memory the kernel of `tile` (64 or 128) declares for configuration `units`. */
function matrixStorageBytes(tile, {M, N, grid, depth, stages, storeBatch, storeHalves}) {
  return stages * 2 * (tile * (depth + PAD) + depth * (tile + PAD)) + 4 * grid.rows * grid.cols * storeHalves * storeBatch * M * N;
}

/**
 * Whether the kernel of `tile` (64 or 128) exists for `units` within the device `limits`: each
 * subgroup's part of the tile holds whole result matrices (whole batches of them), every
 * invocation stages whole vec4s of a slice, and the invocations and workgroup memory fit the limits.
 * @param {number} tile
 * @param {{M: number, N: number, subgroupSize: number, grid: {rows: number, cols: number}}} units
 * @param {{maxComputeInvocationsPerWorkgroup: number, maxComputeWorkgroupSizeX: number,
 *   maxComputeWorkgroupStorageSize: number}} limits GPUSupportedLimits
 */
export function matrixFits(tile, units, limits) {
  const {M, N, subgroupSize, grid, depth, storeBatch} = units;
  const threads = grid.rows * grid.cols * subgroupSize;
  const perSubgroup = (tile / (grid.rows * M)) * (tile / (grid.cols * N));
  return tile % (grid.rows * M) === 0 && tile % (grid.cols * N) === 0 && (tile * depth) % (threads * 4) === 0
    && perSubgroup % storeBatch === 0
    && threads <= limits.maxComputeInvocationsPerWorkgroup && threads <= limits.maxComputeWorkgroupSizeX
    && matrixStorageBytes(tile, units) <= limits.maxComputeWorkgroupStorageSize;
}

/**
 * The matrix units (matrixUnits) a product of `dataType` runs on, or null: float16 ones wherever
 * the device has them, float32 ones where the context's productPrecision is 'float16'.
 */
export function matrixUnitsFor(ctx, dataType) {
  if (dataType !== 'float16' && !(dataType === 'float32' && ctx.productPrecision === 'float16')) return null;
  return matrixUnits(ctx);
}

/**
 * The shader. `variant` as for tiledShader (dataType, batchRank, hasC, aKContiguous,
 * bNContiguous, vecA, vecB, split) plus `wide` (128x128 tiles) and `units` (matrixUnits()).
 * @param {function} declareCommon (shader, batchRank, hasC) -> cTerm, from matmul_kernels.js
 * @param {function} storeY (dataType, cTerm) -> WGSL of store_y
 */
export function matrixShader({dataType, batchRank, hasC, aKContiguous, bNContiguous, vecA, vecB, split, wide, units}, declareCommon, storeY) {
  const {M: CM, N: CN, K: CK, subgroupSize: SG, grid, depth: D, stages, storeBatch, storeHalves: halves, direct} = units;
  const T = wgslType(dataType);
  const tile = wide ? 128 : 64;
  const unlimited = {maxComputeInvocationsPerWorkgroup: Infinity, maxComputeWorkgroupSizeX: Infinity, maxComputeWorkgroupStorageSize: Infinity};
  if (!matrixFits(tile, units, unlimited)) throw new RangeError(`matrixShader: no ${tile}-wide kernel for ${JSON.stringify(units)}`);
  const subM = tile / grid.rows; // each subgroup's part of the tile: subM x subN
  const subN = tile / grid.cols;
  const rows = subM / CM;
  const cols = subN / CN;
  const AS = D + PAD; // staged A: [tile rows][AS], k along a row
  const BS = tile + PAD; // staged B: [D][BS], n along a row
  const aSize = tile * AS; // one copy of each staged tile
  const bSize = D * BS;
  const subgroups = grid.rows * grid.cols;
  const threads = subgroups * SG;
  const gridKey = grid.rows === GRID.rows && grid.cols === GRID.cols ? '' : `_g${grid.rows}x${grid.cols}`;
  const shapeKey = ['depth', 'stages', 'storeBatch', 'storeHalves', 'direct'].filter((k) => units[k] !== MATRIX_KERNEL[k])
    .map((k) => `_${k[0]}${Number(units[k])}`).join('');
  const name = `matmul_matrix${wide ? '128' : ''}${split ? '_split' : ''}_${CM}x${CN}x${CK}${gridKey}${shapeKey}`;
  const shader = new Shader(name).read('A', vecA ? 'vec4<f32>' : T).read('B', vecB ? 'vec4<f32>' : T);
  shader.enable('f16').enable('subgroups').enable('chromium_experimental_subgroup_matrix')
    .diagnostic('off', 'chromium.subgroup_matrix_uniformity');
  if (hasC && !split) shader.read('C', T);
  shader.write(split ? 'P' : 'Y', split ? 'f32' : T);
  const cTerm = declareCommon(shader, batchRank, hasC && !split);
  shader.uniform('tilesN').uniform('tilesM');
  if (split) shader.uniform('split_k').uniform('k_chunk');
  const csSize = halves * storeBatch * CM * CN; // a subgroup's part of Cs
  shader.shared('As', `array<f16, ${stages * aSize}>`).shared('Bs', `array<f16, ${stages * bSize}>`)
    .shared('Cs', `array<f32, ${subgroups * csSize}>`);
  if (split) shader.fn('fn store_y(v: f32, m: u32, n: u32, p0: u32) { P[p0 + m * u_N() + n] = v; }');
  else shader.fn(storeHelpers(dataType)).fn(storeY(dataType, cTerm));
  if (!vecA) {
    shader.fn(`fn load_a(m: u32, k: u32, a0: u32) -> f32 {
  if (m < u_M() && k < u_K()) { return f32(A[a0 + m * u_a_sm() + k * u_a_sk()]); }
  return 0.0;
}`);
  }
  if (!vecB) {
    shader.fn(`fn load_b(k: u32, n: u32, b0: u32) -> f32 {
  if (k < u_K() && n < u_N()) { return f32(B[b0 + k * u_b_sk() + n * u_b_sn()]); }
  return 0.0;
}`);
  }
  // A's slice is a tile x D block of the staged As (k along its rows), B's a D x tile block of Bs
  // (n along its rows), at copy `buf` of each
  const a = stagedOperand({buf: 'A', reg: 'pa', tileVar: 'As', R: tile, C: D, S: AS, vec: vecA, cFast: aKContiguous,
    origin: ['m0', 'kn'], bounds: ['u_M()', 'u_K()'], base: 'a0', rowStride: 'u_a_sm()', load: 'load_a', threads, at: 'sa'});
  const b = stagedOperand({buf: 'B', reg: 'pb', tileVar: 'Bs', R: D, C: tile, S: BS, vec: vecB, cFast: bNContiguous,
    origin: ['kn', 'n0'], bounds: ['u_K()', 'u_N()'], base: 'b0', rowStride: 'u_b_sk()', load: 'load_b', threads, at: 'sb'});
  const left = `subgroup_matrix_left<f16, ${CK}, ${CM}>`;
  const right = `subgroup_matrix_right<f16, ${CN}, ${CK}>`;
  const result = `subgroup_matrix_result<f32, ${CN}, ${CM}>`;
  const I = [...Array(rows).keys()];
  const J = [...Array(cols).keys()];
  const accs = I.flatMap((i) => J.map((j) => `  var c${i}_${j} = ${result}();`)).join('\n');
  const steps = [...Array(D / CK).keys()].map((s) => `    {
${I.map((i) => `      let l${i} = subgroupMatrixLoad<${left}>(&As, sa + (sm + ${i * CM}u) * ${AS}u + ${s * CK}u, false, ${AS}u);`).join('\n')}
${J.map((j) => `      let r${j} = subgroupMatrixLoad<${right}>(&Bs, sb + ${s * CK * BS}u + sn + ${j * CN}u, false, ${BS}u);`).join('\n')}
${I.flatMap((i) => J.map((j) => `      c${i}_${j} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, c${i}_${j});`)).join('\n')}
    }`).join('\n');
  // the result matrices, storeBatch at a time into the subgroup's part of Cs, the elements of each
  // through store_y: with two halves alternating (a half is written again two batches later,
  // after a barrier its readers have passed), else followed by a barrier before the next batch
  const matrices = I.flatMap((i) => J.map((j) => [i, j]));
  const batches = [...Array(matrices.length / storeBatch).keys()].map((r) => matrices.slice(r * storeBatch, (r + 1) * storeBatch));
  const staged = batches.map((batch, r) => {
    const at = (q) => `cs + ${((r % halves) * storeBatch + q) * CM * CN}u`;
    return `${batch.map(([i, j], q) => `  subgroupMatrixStore(&Cs, ${at(q)}, c${i}_${j}, false, ${CN}u);`).join('\n')}
  workgroupBarrier();
${batch.map(([i, j], q) => `  store_part(${at(q)}, m0 + sm + ${i * CM}u, n0 + sn + ${j * CN}u, y0, lane);`).join('\n')}${
  halves === 1 && r < batches.length - 1 ? '\n  workgroupBarrier();' : ''}`;
  }).join('\n');
  shader.fn(`fn store_part(cs: u32, m: u32, n: u32, y0: u32, lane: u32) {
  for (var e = lane; e < ${CM * CN}u; e += ${SG}u) {
    let r = m + e / ${CN}u;
    let c = n + e % ${CN}u;
    if (r < u_M() && c < u_N()) { store_y(Cs[cs + e], r, c, y0); }
  }
}`);
  // a split tile inside M x N (a condition of the workgroup): raw sums straight into P
  const stores = split && direct ? `  if (m0 + ${tile}u <= u_M() && n0 + ${tile}u <= u_N()) {
${matrices.map(([i, j]) => `    subgroupMatrixStore(&P, y0 + (m0 + sm + ${i * CM}u) * u_N() + n0 + sn + ${j * CN}u, c${i}_${j}, false, u_N());`).join('\n')}
    return;
  }
${staged}` : staged;
  // slice s is staged into copy s % stages; with one copy the multiplies end in a barrier
  const slice = stages > 1 ? `    let buf = ((k0 - k_lo) / ${D}u) % ${stages}u;
    let sa = buf * ${aSize}u;
    let sb = buf * ${bSize}u;` : `    let sa = 0u;
    let sb = 0u;`;
  const {origin, out} = tileOrigin(tile, split);
  shader.main(`${origin}
  let a0 = u_a_base() + ab_offset(batch);
  let b0 = u_b_base() + bb_offset(batch);
  let sg = li / ${SG}u;
  let lane = li % ${SG}u;
  let sm = (sg / ${grid.cols}u) * ${subM}u;
  let sn = (sg % ${grid.cols}u) * ${subN}u;
  let cs = sg * ${csSize}u;
${accs}
${a.regs}
${b.regs}
  {
    let kn = k_lo;
${a.fetch}
${b.fetch}
  }
  for (var k0 = k_lo; k0 < k_hi; k0 += ${D}u) {
${slice}
${a.stage}
${b.stage}
    workgroupBarrier();
    if (k0 + ${D}u < k_hi) {
      let kn = k0 + ${D}u;
${a.fetch}
${b.fetch}
    }
${steps}${stages > 1 ? '' : '\n    workgroupBarrier();'}
  }
  let y0 = ${out};
${stores}`, {workgroupSize: threads, guard: false});
  return shader;
}

/**
 * WGSL of one operand's slice: `regs` declares the registers, `fetch` loads the slice of rows
 * `origin[0]`.. and columns `origin[1]`.. into them (zeros past `bounds`), `stage` stores them as
 * f16 into the workgroup tile `tileVar` (R x C, row-major, row stride S). Where `vec`, each load
 * is a vec4 along the operand's contiguous axis, which runs along the tile's rows (buffer element
 * base + row * rowStride + column); else scalars through `load`(row, column, base), neighbouring
 * invocations on neighbouring columns (`cFast`: the operand is contiguous along them) or rows.
 * `at`: the WGSL offset of the tile's copy in `tileVar`.
 */
function stagedOperand({buf, reg, tileVar, R, C, S, vec, cFast, origin: [r0, c0], bounds: [rb, cb], base, rowStride, load, threads, at: copy}) {
  const n = (R * C) / threads / (vec ? 4 : 1);
  const loop = (body) => `    for (var i = 0u; i < ${n}u; i++) {
      let e = li + i * ${threads}u;
${body}
    }`;
  const at = cFast ? `let c = e % ${C}u; let r = e / ${C}u;` : `let r = e % ${R}u; let c = e / ${R}u;`;
  const regs = `  var ${reg}: array<${vec ? 'vec4<f32>' : 'f32'}, ${n}>;`;
  if (!vec) {
    return {regs, fetch: loop(`      ${at}\n      ${reg}[i] = ${load}(${r0} + r, ${c0} + c, ${base});`),
      stage: loop(`      ${at}\n      ${tileVar}[${copy} + r * ${S}u + c] = f16(${reg}[i]);`)};
  }
  return {regs,
    fetch: loop(`      let r = e / ${C / 4}u;
      let q = (e % ${C / 4}u) * 4u;
      var v = vec4<f32>();
      if (${r0} + r < ${rb} && ${c0} + q < ${cb}) { v = ${buf}[(${base} + (${r0} + r) * ${rowStride} + ${c0} + q) / 4u]; }
      ${reg}[i] = v;`),
    stage: loop(`      let at = ${copy} + (e / ${C / 4}u) * ${S}u + (e % ${C / 4}u) * 4u;
      let v = vec4<f16>(${reg}[i]);
      ${tileVar}[at] = v.x; ${tileVar}[at + 1u] = v.y; ${tileVar}[at + 2u] = v.z; ${tileVar}[at + 3u] = v.w;`)};
}
