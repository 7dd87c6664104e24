/**
 * Matrix-product kernels shared by gemm, matmul and the recurrent operators:
 * Y[b] = alpha * A[b] x B[b] (+ beta * C), all addressed through strides held in uniforms, so a
 * transposed operand, a broadcast batch, a bias row or a slice of a larger buffer need no copy.
 *
 * Kernels, chosen by chooseMatmulKernel() (matmul_choice.js):
 *  - tiled / tiled128 / blocked (matmul_tiled.js): 64x64 or 128x128 tiles through workgroup
 *    memory with 4x4 or 8x8 register blocks per invocation; or, on CPU adapters, 4x4 blocks read
 *    straight from storage.
 *  - matrix / matrix128 (matmul_matrix_units.js): the same tiles on the GPU's f16 matrix units,
 *    for float16 products (and float32 ones under productPrecision 'float16') where the device
 *    has them.
 *  - gemv (matmul_gemv.js; M <= 4, or N <= 4 by computing the transposed product): four output
 *    elements per workgroup splitting K across 64 invocations each when B is contiguous along K,
 *    else one invocation per column with K split four ways; partial sums meet in workgroup memory.
 * On hardware adapters a tiled product of few tiles (float: under 64 workgroups, or 96-127) is split
 * along K (matmul_choice.js splitCount()): one dispatch of partial products, one that adds them and stores
 * Y; where only a normalization reads Y (compile/split_norm.js), that normalization's step adds them instead
 * (addSplitRead) and the reduce step is not emitted.
 * Accumulation is in f32; results go through storeExpr so float16 outputs round to binary16.
 */
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {blockedShader, tiledShader} from './matmul_tiled.js';
import {gemvColShader, gemvDotShader} from './matmul_gemv.js';
import {isSoftwareAdapter} from './adapter_kind.js';
import {addEpilogue} from './epilogue.js';
import {addMathHelpers} from '../gpu/math.js';
import {scaleMapUniforms, wordLoads} from './packed_weights.js';
import {chooseGemvConfig, normFits, gemvWorkgroups, quantizedGemvLayout, quantizedGemvShader} from './quantized_gemv.js';
import {matrixFits, matrixShader, matrixUnitsFor} from './matmul_matrix_units.js';
import {GEMV_ROWS, chooseMatmulKernel, packedWide, splitCount} from './matmul_choice.js';

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

/**
 * WGSL `fn store_y(v, m, n, y0)`: element (m, n) of the product whose batch starts at y0, scaled,
 * C term added, through the epilogue (ops/epilogue.js) to Y.
 */
function storeY(dataType, cTerm) {
  return `
fn store_y(v: f32, m: u32, n: u32, y0: u32) {
  let yi = y0 + m * u_y_sm() + n * u_y_sn();
  Y[yi] = ${storeExpr(dataType, yValue('v', cTerm))};
}`;
}

/**
 * The WGSL value every matrix kernel stores (before its data type's rounding) for the raw sum
 * `v` of element (m, n) at Y index yi (variables of that name in scope): scaled by alpha, C term
 * added, through the epilogue. One text for store_y and the split reduce (split_value).
 */
function yValue(v, cTerm) {
  return `epilogue(u_alpha() * ${v}${cTerm}, yi)`;
}

/**
 * Declares what adding up a split product of `splits` partial products needs: bindings P (the
 * partial sums, f32, [split][batch][m][n]) and C (when `hasC`), the common uniforms, and
 *   fn split_value(gi: u32, m: u32, n: u32, yi: u32) -> f32
 * the value the product stores at Y index yi for its element gi = (batch, m, n) (row-major over
 * [batches, M, N]): the partial sums added in split order, then alpha, C and the epilogue
 * exactly as store_y applies them (before the data type's rounding). The shader adds
 * `epilogue` (ops/epilogue.js) and the store helpers itself. The additions are written out, one
 * per split (the count is the plan's, fixed at build): all loads are issued at once, where a
 * loop to a uniform count waits for each.
 */
function declareSplitValue(shader, dataType, batchRank, hasC, splits) {
  if (!Number.isInteger(splits) || splits < 1) throw new TypeError(`split_value: ${splits} partial products`);
  shader.read('P', 'f32');
  if (hasC) shader.read('C', wgslType(dataType));
  const cTerm = declareCommon(shader, batchRank, hasC);
  const adds = Array.from({length: splits}, (_, k) => `  s += P[${k ? `${k}u * stride + ` : ''}gi];`).join('\n');
  shader.fn(`
fn split_sum(gi: u32) -> f32 {
  let stride = u_batches() * u_M() * u_N();
  var s = 0.0;
${adds}
  return s;
}
fn split_value(gi: u32, m: u32, n: u32, yi: u32) -> f32 {
  let s = split_sum(gi);
  return ${yValue('s', cTerm)};
}`);
}

/**
 * The reduce step of a split product: one invocation per element of Y, adding the `splits`
 * partial sums of P ([split][batch][m][n], f32) in split order and storing through the epilogue.
 * `pair` (a gated pair's product, compile/gated_pairs.js): P's columns 2j and 2j + 1 are the two
 * products' column j; Y has N / 2 columns, each the epilogue of the first with `pair_value` the
 * second's stored value.
 */
function splitReduceShader(dataType, batchRank, hasC, splits, pair = false) {
  const shader = new Shader(pair ? 'matmul_pair_reduce' : 'matmul_split_reduce');
  declareSplitValue(shader, dataType, batchRank, hasC, splits);
  shader.write('Y', wgslType(dataType));
  shader.fn(storeHelpers(dataType));
  shader.main(pair ? `
  let no = u_N() / 2u;
  let row = gi / no;
  let j = gi % no;
  let batch = row / u_M();
  let m = row % u_M();
  let yi = u_y_base() + batch * u_y_bs() + m * u_y_sm() + j * u_y_sn();
  let pi = row * u_N() + 2u * j;
  pair_value = ${storeExpr(dataType, 'u_alpha() * split_sum(pi + 1u)')};
  Y[yi] = ${storeExpr(dataType, 'split_value(pi, m, 2u * j, yi)')};` : `
  let mn = u_M() * u_N();
  let batch = gi / mn;
  let m = (gi % mn) / u_N();
  let n = gi % u_N();
  let yi = u_y_base() + batch * u_y_bs() + m * u_y_sm() + n * u_y_sn();
  Y[yi] = ${storeExpr(dataType, 'split_value(gi, m, n, yi)')};`);
  return shader;
}

/**
 * Adds to `shader` the reading of a split product's result without its reduce step (`read`,
 * from Lowering.splitRead: the product stores row-major from offset 0, so element o of Y is
 * element o of the partial sums): the bindings and uniforms of declareSplitValue and
 *   fn split_x(o: u32) -> f32
 * the value the reduce step would have stored at Y[o], float16 rounding included, so a kernel
 * reading it instead of Y[o] computes bit for bit what it computes after the reduce step. The
 * caller declares its own bindings next, then the product's epilogue with
 * addEpilogue(shader, L, read.node), and binds read.values first, its own values, then the
 * epilogue's, with read.uniforms among its uniforms.
 * @param {import('../gpu/wgsl.js').Shader} shader with no binding declared yet
 * @param {{dataType: string, batchRank: number, hasC: boolean, splits: number}} read
 */
export function addSplitRead(shader, {dataType, batchRank, hasC, splits}) {
  declareSplitValue(shader, dataType, batchRank, hasC, splits);
  shader.fn(`
fn split_x(o: u32) -> f32 {
  let mn = u_M() * u_N();
  return ${storeExpr(dataType, 'split_value(o, (o % mn) / u_N(), o % u_N(), o)')};
}`);
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
 * @param {string} [p.kernel] the kernel to use ('blocked' | 'tiled' | 'tiled128' | 'gemv')
 *   instead of chooseMatmulKernel()'s
 * @param {object} [p.node] the node the product is for: its fused element-wise stages
 *   (attrs.epilogue) run in the epilogue; Y must then be the node's whole output (y offset 0); with
 *   attrs.splitNorm a split product's reduce is left to that normalization (compile/split_norm.js)
 * @param {boolean} [p.pair] a gated pair (compile/gated_pairs.js): B's columns 2j and 2j + 1 are two
 *   products' column j, Y (strides p.yStrides, p.yBatchStride) has N / 2 columns: the node's
 *   epilogue of the first, its pair stage reading the second. The quantized matrix-vector kernel
 *   stores pairs itself; other kernels store the raw product (split or not) for a reduce step
 *   that pairs
 * @param {object[]} [p.origins] builder operators the steps add to the node's (the views read)
 * @param {object} [p.quant] B is packed quantized weights (ops/packed_weights.js): {bits, signed,
 *   zeroBits, zeroSigned, hasZp, scale: Value, zero: Value | null, scaleMap}; B's offset and
 *   strides count its elements; no batch. The kernel 'qgemv' (the quantized matrix-vector
 *   kernel) is taken where its layout fits, else the kernel given or chosen as for float B
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
  const quant = p.quant ?? null;
  // A skinny product Y = A x B with few columns is computed as Y^T = B^T x A^T (not with packed B).
  if (N <= GEMV_ROWS && M > GEMV_ROWS && !quant && !p.pair) {
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
  if (quant) Object.assign(uniforms, scaleMapUniforms(quant.scaleMap));
  // one row of a packed product (an LLM's decode step): the quantized matrix-vector kernel where
  // B's layout allows (below), unless the tuning switch `matmul` forces a kernel; a gated pair
  // takes the tile its halves would (its twice as many columns would otherwise cross WIDE_TILES
  // into tiles whose split partial sums take four times the memory, docs/performance.md)
  const choiceN = p.pair ? N / 2 : N;
  let kernel = p.kernel ?? (quant && M === 1 && !L.ctx.tuning.matmul ? 'qgemv'
    : chooseMatmulKernel(L.ctx, M, choiceN, batches, dataType, quant ? K : 0));
  // the matrix units: float B of a data type that may use them (float32 only under productPrecision
  // 'float16', even where the tuning forces the kernel), on a device that has them and holds the
  // kernel (a device made with the default limits may not hold the wide tiles); else the tiled
  // kernel of that size
  let units = kernel.startsWith('matrix') && !quant ? matrixUnitsFor(L.ctx, dataType) : null;
  const limits = L.ctx.device.limits;
  if (units && kernel === 'matrix128' && !matrixFits(128, units, limits)) kernel = 'matrix';
  if (units && !matrixFits(64, units, limits)) units = null;
  if (kernel.startsWith('matrix') && !units) kernel = kernel === 'matrix128' ? 'tiled128' : 'tiled';
  const variant = {dataType, batchRank: rank, hasC, aKContiguous: aStrides[1] === 1, bNContiguous: bStrides[1] === 1};
  // vec4 loads: the contiguous axis holds whole, aligned vec4s
  const aligned = (...xs) => xs.every((x) => x % 4 === 0);
  variant.vecA = aStrides[1] === 1 && aligned(K, offsets.a, aStrides[0], ...aBatchStrides);
  variant.vecB = !quant && bStrides[1] === 1 && aligned(N, offsets.b, bStrides[0], ...bBatchStrides);
  let shader;
  let groups;
  let threads;
  // packed B: its scale and zero point bindings follow B
  const bValues = quant ? [b, quant.scale, ...(quant.hasZp ? [quant.zero] : [])] : [b];
  if (quant) {
    variant.quant = {bits: quant.bits, signed: quant.signed, zeroBits: quant.zeroBits, zeroSigned: quant.zeroSigned, hasZp: quant.hasZp,
      zeroFloat: Boolean(quant.zeroFloat)};
    const layout = kernel === 'qgemv' ? quantizedGemvLayout(quant, uniforms) : null;
    if (layout) {
      // CPU adapters: one invocation a column, no barrier (ops/packed_weights.js); the context
      // the tuning switch qgemvSerial (true / false) decides instead where set (tests)
      const serial = L.ctx.tuning.qgemvSerial ?? isSoftwareAdapter(L.ctx);
      const pair = Boolean(p.pair);
      const config = serial ? null : chooseGemvConfig(L.ctx, N, K, quant.bits, pair);
      // A the result of a deferred one-row normalization (compile/norm_prologue.js): the kernel normalizes it
      let norm = L.normRead(a);
      if (norm && (offsets.a !== 0 || aStrides[1] !== 1 || norm.n !== K
        || !normFits(config, K, L.ctx.device.limits.maxComputeWorkgroupStorageSize))) norm = null;
      shader = quantizedGemvShader({...variant, ...layout, serial, config, pair, vecA: variant.vecA && offsets.a % 4 === 0,
        norm: norm && {formula: norm.formula, hasScale: Boolean(norm.scale), K, dataType: norm.dataType}}, declareCommon, storeY, storeHelpers);
      if (norm) uniforms.eps = norm.epsilon;
      // the step is the normalization's too: its operators follow the product's
      const q = norm ? {...p, origins: [...(p.origins ?? []), ...norm.operators]} : p;
      return storeStep(L, q, shader, [norm ? norm.x : a, ...bValues, ...(hasC ? [c] : []), ...(norm?.scale ? [norm.scale] : []), y],
        uniforms, {groups: gemvWorkgroups(serial && pair ? N / 2 : N, serial, config)}, undefined, Boolean(norm));
    }
    if (kernel === 'qgemv') kernel = chooseMatmulKernel(L.ctx, M, choiceN, batches, undefined, K);
  }
  if (kernel === 'gemv' && bStrides[0] === 1 && K > 1) {
    shader = gemvDotShader(variant, declareCommon, storeY);
    groups = Math.ceil(batches * M * N / 4);
  } else if (kernel === 'gemv') {
    shader = gemvColShader(variant, declareCommon, storeY);
    uniforms.tilesN = Math.ceil(N / 64);
    groups = batches * M * uniforms.tilesN;
  } else if (kernel === 'blocked') {
    shader = blockedShader(variant, declareCommon, storeY);
    uniforms.blocksN = Math.ceil(N / 4);
    uniforms.blocksM = Math.ceil(M / 4);
    threads = batches * uniforms.blocksN * uniforms.blocksM;
  } else {
    const tile = kernel.endsWith('128') ? 128 : 64;
    uniforms.tilesN = Math.ceil(N / tile);
    uniforms.tilesM = Math.ceil(M / tile);
    groups = batches * uniforms.tilesN * uniforms.tilesM;
    if (variant.quant && L.ctx.tuning.packedWords) variant.quant.words = wordLoads(variant.quant, uniforms, bBatchStrides);
    // the kernel's shader for a (split) variant; the matrix units stage K units.depth deep, tiled 16
    const make = units ? (v) => matrixShader({...v, wide: tile === 128, units}, declareCommon, storeY)
      : (v) => tiledShader({...v, wide: tile === 128}, declareCommon, storeY);
    const depth = units ? units.depth : 16;
    // packed products on the 128x128 tiles of packedWide split to fewer workgroups
    const wide = Boolean(variant.quant) && tile === 128 && packedWide(L.ctx, M, choiceN, batches, K);
    const splits = splitCount(L.ctx, groups, K, Boolean(variant.quant), wide);
    if (splits > 1 || p.pair) return splitStep(L, p, {variant, make, depth, uniforms, groups, splits, values: [a, bValues, c, y]});
    shader = make(variant);
  }
  if (p.pair) return pairedStep(L, p, shader, [a, ...bValues], uniforms, {groups, threads});
  storeStep(L, p, shader, [a, ...bValues, ...(hasC ? [c] : []), y], uniforms, {groups, threads});
}

/**
 * Appends the step of `shader`, the one that stores Y: the node's fused stages go into its
 * epilogue, whose bindings follow `values` and whose uniforms join `uniforms`. `operators`: the
 * step's own (a deferred reduce step's, see splitStep), else the node's and p.origins; `math`:
 * the kernel's own code calls gpu/math.js helpers (added once the epilogue's are in).
 */
function storeStep(L, p, shader, values, uniforms, size, operators, math = false) {
  const ep = addEpilogue(shader, L, p.node ?? null);
  // the math library's helpers the kernel's own code uses beyond the epilogue's
  if (math) addMathHelpers(shader);
  L.step({shader, values: [...values, ...ep.values], uniforms: {...uniforms, ...ep.uniforms}, ...size, label: p.label,
    origins: p.origins, operators});
}

/**
 * A tiled product split into `splits` ranges of K (each a multiple of the kernel's slice
 * `depth`): the partial products (`make`: the kernel's shader of a variant) into a scratch
 * Value, then the reduce step (alpha, C, epilogue) into Y.
 */
function splitStep(L, p, {variant, make, depth, uniforms, groups, splits, values: [a, bValues, c, y]}) {
  const {dataType, label} = p;
  const {M, N, K, batches} = uniforms;
  const hasC = Boolean(c);
  const kChunk = Math.ceil(K / splits / depth) * depth;
  const splitK = Math.ceil(K / kChunk);
  const partial = L.temp(splitK * batches * M * N * 4, `${label}:split`);
  const shader = make({...variant, split: true});
  const operators = [...L.operators, ...(p.origins ?? [])];
  L.step({shader, values: [a, ...bValues, partial], uniforms: {...uniforms, split_k: splitK, k_chunk: kChunk},
    groups: groups * splitK, label, operators});
  // emitted now or, deferred, while another node is lowered: the product's operators either way
  const reduce = () => storeStep(L, p, splitReduceShader(dataType, variant.batchRank, hasC, splitK, p.pair),
    hasC ? [partial, c, y] : [partial, y], uniforms, {threads: batches * M * N / (p.pair ? 2 : 1)}, operators);
  // a normalization reading only Y (compile/split_norm.js) adds the partial sums itself; Y must
  // then be row-major from 0, its element o the partial sums' element o of each split
  const rowMajor = uniforms.y_base === 0 && uniforms.y_sm === N && uniforms.y_sn === 1 && uniforms.y_bs === M * N;
  if (p.node?.attrs.splitNorm && rowMajor) {
    L.deferSplitRead(y, {node: p.node, dataType, batchRank: variant.batchRank, hasC, splits: splitK,
      values: hasC ? [partial, c] : [partial], uniforms, operators, reduce, keep: Boolean(p.node.attrs.splitNormKeep)});
  } else {
    reduce();
  }
}

/**
 * A gated pair's product on a kernel without a split variant (gemv, blocked): `shader` stores the
 * raw product row-major into a scratch Value, then the pair's reduce step (one "split") stores Y.
 */
function pairedStep(L, p, shader, values, uniforms, size) {
  const {M, N, batches} = uniforms;
  const raw = L.temp(batches * M * N * 4, `${p.label}:pairs`);
  const rawUniforms = {...uniforms, y_base: 0, y_sm: N, y_sn: 1, y_bs: M * N};
  const operators = [...L.operators, ...(p.origins ?? [])];
  storeStep(L, {...p, node: null}, shader, [...values, raw], rawUniforms, size, operators);
  storeStep(L, p, splitReduceShader(p.dataType, p.batchShape?.length ?? 0, false, 1, true), [raw, p.y], uniforms,
    {threads: batches * M * N / 2}, operators);
}
