/**
 * Fused attention: the builder graph
 *   Y = matmul(softmax(stages(matmul(Q, Kt)), last axis), V)
 * (stages: the element-wise chain the fusion pass folded into the first matmul: the 1/sqrt(d)
 * scale, an additive mask, ...) as one dispatch, found by compile/attention.js. Q [..., M, D],
 * Kt [..., D, S] and V [..., S, Dv] are read through strides (deferred transposes and reshapes of
 * the projections, compile/views.js), Y is written through strides (straight into a following
 * transpose's layout, as the matrix kernels do).
 *
 * Flash-style (one pass over the keys, online softmax): one workgroup of `rows * perRow`
 * invocations per (batch, block of `rows` query rows), a configuration (chooseAttentionConfig).
 * The block's Q rows sit in workgroup memory; the keys pass in tiles of `keys`: the tile of K
 * through workgroup memory, each of a row's `perRow` invocations computing keys / perRow scores
 * of it through the first matmul's epilogue (ops/epilogue.js: the stages' own semantics and
 * float16 rounding, `i` the score's row-major index in the scores' shape); the row's running
 * maximum m (NaN-propagating) and the tile's probabilities exp(s - m) follow; the running sum l
 * and the invocation's Dv / perRow output accumulators are scaled by exp(m_old - m) and the
 * tile of V (through the same workgroup memory) is added in. At the end Y = acc / l, all in f32.
 * NaN and ±Inf follow ops/softmax.js: a row whose maximum is NaN or ±Inf (a row of only -Inf
 * included) is NaN; a row's -Inf scores weigh 0. A float16 graph's scores are rounded to binary16
 * as the unfused first matmul stores them; its probabilities are not (the unfused softmax rounds
 * them), a difference within float16 rounding of a sum of weights that add to 1. Needs D <= 64
 * and Dv <= 64 (attentionFits); compile/attention.js leaves other shapes unfused. The default
 * configuration (16 rows, 8 invocations a row, tiles of 32 keys) takes 3,904 f32 of workgroup
 * memory (15.6 KB, within WebGPU's default 16 KB); on hardware adapters with a GPU of many cores
 * smaller blocks of rows with more invocations a row fill it better (chooseAttentionConfig).
 */
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {F16_ROUND, storeExpr, wgslType} from '../gpu/types.js';
import {addEpilogue} from './epilogue.js';
import {batchStridesOf, storeStrides} from '../shape/strides.js';
import {isSoftwareAdapter} from './adapter_kind.js';

/**
 * A kernel configuration: `rows` query rows a workgroup, `perRow` invocations a row (a power of
 * two; rows * perRow invocations), `keys` keys a tile (a power of two, a multiple of perRow).
 * @typedef {{rows: number, perRow: number, keys: number}} AttentionConfig
 */
/** The configuration where nothing else is chosen (and on software adapters). */
const DEFAULT_CONFIG = Object.freeze({rows: 16, perRow: 8, keys: 32});
/**
 * On hardware adapters, for head sizes of at least WIDE_HEAD (so that padding to 32 costs
 * little): 4 rows a workgroup, 32 invocations a row, each one score of a 32-key tile and Dv / 32
 * outputs. Four times the invocations of DEFAULT_CONFIG for the same work, for GPUs of many
 * cores (docs/design-notes.md, "Fused attention's configurations"). 2,728 f32 (10.9 KB) of
 * workgroup memory.
 */
const WIDE_CONFIG = Object.freeze({rows: 4, perRow: 32, keys: 32});
const WIDE_HEAD = 32;
/** The largest head size D (of Q and K) and Dv (of V) the workgroup memory takes. */
const MAX_D = 64;

/** Whether rows of `S` keys with head sizes `D` (Q, K) and `DV` (V) fit the kernel. */
export function attentionFits(S, D, DV) {
  return S >= 1 && D >= 1 && D <= MAX_D && DV >= 1 && DV <= MAX_D;
}

/** The smallest power of two >= max(n, least). */
function pow2(n, least) {
  let p = least;
  while (p < n) p *= 2;
  return p;
}

/** Head sizes padded for configuration `cfg`: DP >= D (Q, K) and VP >= Dv (V), powers of two. */
function paddedSizes(cfg, D, DV) {
  return {dp: pow2(D, Math.max(8, cfg.perRow)), vp: pow2(DV, cfg.perRow)};
}

/** Workgroup memory of configuration `cfg` for padded head sizes dp, vp, in bytes. */
function storageBytes(cfg, dp, vp) {
  const threads = cfg.rows * cfg.perRow;
  return 4 * (cfg.rows * (dp + 1) + cfg.keys * Math.max(dp + 1, vp) + cfg.rows * (cfg.keys + 1) + 2 * threads);
}

/** Whether `cfg` is a valid configuration (powers of two, keys a multiple of perRow, at most 256 invocations). */
function validConfig(cfg) {
  const p2 = (n) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
  return p2(cfg?.rows) && p2(cfg?.perRow) && p2(cfg?.keys) && cfg.keys >= cfg.perRow && cfg.rows * cfg.perRow <= 256;
}

/**
 * The configuration of the fused step for head sizes D (Q, K) and Dv (V), with those sizes
 * padded for it: the tuning switch `attentionConfig` (tuning.js) where set, else WIDE_CONFIG on hardware adapters for head sizes of WIDE_HEAD or more, else
 * DEFAULT_CONFIG; a configuration whose workgroup memory the device does not allow falls back
 * to DEFAULT_CONFIG (which fits WebGPU's default limits; every valid configuration has at most
 * the default 256 invocations).
 * @returns {{cfg: AttentionConfig, dp: number, vp: number}}
 */
export function chooseAttentionConfig(ctx, D, DV) {
  const want = ctx.tuning.attentionConfig;
  const wide = !isSoftwareAdapter(ctx) && D >= WIDE_HEAD && DV >= WIDE_HEAD;
  const cfg = want ? {rows: want.rows, perRow: want.perRow, keys: want.keys} : wide ? WIDE_CONFIG : DEFAULT_CONFIG;
  const padded = validConfig(cfg) ? paddedSizes(cfg, D, DV) : null;
  const limit = ctx.device?.limits?.maxComputeWorkgroupStorageSize ?? Infinity;
  if (padded && storageBytes(cfg, padded.dp, padded.vp) <= limit) return {cfg, ...padded};
  return {cfg: DEFAULT_CONFIG, ...paddedSizes(DEFAULT_CONFIG, D, DV)};
}

/**
 * The shader for head sizes padded to powers of two DP >= D (Q, K) and VP >= Dv (V): every
 * loop has a fixed trip count (tile loads of DP / 4 and VP / 4 elements an invocation, issued
 * together; DP multiply-adds a score; KB a tile's output update), so that the compiler unrolls
 * them and global loads overlap; padding is zeros (Q, K, V) and -Inf scores.
 */
function attentionShader(dataType, batchRank, dp, vp, cfg) {
  const T = wgslType(dataType);
  const {rows: TQ, perRow: PER_ROW, keys: KB} = cfg;
  const THREADS = TQ * PER_ROW;
  const cols = vp / PER_ROW;
  const shader = new Shader('attention').read('Q', T).read('K', T).read('V', T).write('Y', T);
  for (const n of ['M', 'S', 'D', 'DV', 'batches', 'blocks', 'kv_group', 'q_base', 'q_sm', 'q_sk', 'k_base', 'k_sk', 'k_sn',
    'v_base', 'v_sk', 'v_sn', 'y_base', 'y_sm', 'y_sn', 'y_bs']) shader.uniform(n);
  declareIndexer(shader, 'qb', batchRank);
  declareIndexer(shader, 'kb', batchRank);
  declareIndexer(shader, 'vb', batchRank);
  // Q rows (stride DP + 1), the K or V tile (K: KB x (DP + 1); V: KB x VP), the tile's
  // probabilities (stride KB + 1), the rows' partial maxima and sums
  shader.shared('qs', `array<f32, ${TQ * (dp + 1)}>`).shared('kv', `array<f32, ${KB * Math.max(dp + 1, vp)}>`)
    .shared('ps', `array<f32, ${TQ * (KB + 1)}>`).shared('rmax', `array<f32, ${THREADS}>`)
    .shared('rsum', `array<f32, ${THREADS}>`);
  const round = dataType === 'float16' ? (e) => `f16_round(${e})` : (e) => e;
  const per = KB / PER_ROW;
  const range = (n) => [...Array(n).keys()];
  const lg = (n) => Math.log2(n);
  // element e of a tile of `rows` x `width` (powers of two): e >> lg(width), e & (width - 1);
  // a fixed trip count, so that the loads can be issued together (a tile smaller than the
  // workgroup: one guarded load)
  const tileLoad = (name, rows, width, load, store) => `    for (var i = 0u; i < ${Math.max(1, rows * width / THREADS)}u; i++) {
      let e = li + i * ${THREADS}u;${rows * width < THREADS ? `
      if (e >= ${rows * width}u) { break; }` : ''}
      let ${name} = ${load(`(e >> ${lg(width)}u)`, `(e & ${width - 1}u)`)};
      ${store(`(e >> ${lg(width)}u)`, `(e & ${width - 1}u)`, name)};
    }`;
  const body = `
  let batch = wg / u_blocks();
  if (batch >= u_batches()) { return; }
  let r0 = (wg % u_blocks()) * ${TQ}u;
  let q0 = u_q_base() + qb_offset(batch);
  let k0 = u_k_base() + kb_offset(batch / u_kv_group());
  let v0 = u_v_base() + vb_offset(batch / u_kv_group());
  let s_n = u_S();
  let d_n = u_D();
  let dv_n = u_DV();
  let r = li / ${PER_ROW}u;
  let c = li % ${PER_ROW}u;
  let m = r0 + r;
  {
${tileLoad('qv', TQ, dp, (row, d) => `select(0.0, f32(Q[q0 + (r0 + ${row}) * u_q_sm() + (${d}) * u_q_sk()]), r0 + ${row} < u_M() && ${d} < d_n)`,
    (row, d, v) => `qs[(${row}) * ${dp + 1}u + ${d}] = ${v}`)}
  }
  var m_run = -inf_f();
  var l_run = 0.0;
${range(cols).map((j) => `  var o${j} = 0.0;`).join('\n')}
  for (var j0 = 0u; j0 < s_n; j0 += ${KB}u) {
    // the tile of K, loaded along d (Kt is [D, S], usually d-contiguous)
${tileLoad('kx', KB, dp, (key, d) => `select(0.0, f32(K[k0 + (${d}) * u_k_sk() + (j0 + ${key}) * u_k_sn()]), j0 + ${key} < s_n && ${d} < d_n)`,
    (key, d, v) => `kv[(${key}) * ${dp + 1}u + ${d}] = ${v}`)}
    workgroupBarrier();
${range(per).map((i) => `    var a${i} = 0.0;`).join('\n')}
    let qr = r * ${dp + 1}u;
    for (var d = 0u; d < ${dp}u; d++) {
      let qd = qs[qr + d];
${range(per).map((i) => `      a${i} += qd * kv[(c + ${i * PER_ROW}u) * ${dp + 1}u + d];`).join('\n')}
    }
${range(per).map((i) => `    let key${i} = j0 + c + ${i * PER_ROW}u;
    var s${i} = -inf_f();
    if (m < u_M() && key${i} < s_n) { s${i} = ${round(`epilogue(a${i}, (batch * u_M() + m) * s_n + key${i})`)}; }`).join('\n')}
    rmax[li] = ${range(per).slice(1).reduce((acc, i) => `max_nan_f(${acc}, s${i})`, 's0')};
    workgroupBarrier();
    var m_new = m_run;
    for (var x = 0u; x < ${PER_ROW}u; x++) { m_new = max_nan_f(m_new, rmax[r * ${PER_ROW}u + x]); }
    // a maximum of NaN or +Inf makes the row NaN (below); -Inf so far: nothing weighs yet
    let finite = is_finite_f(m_new);
    let alpha = select(0.0, exp_f(m_run - m_new), finite);
${range(per).map((i) => `    let p${i} = select(0.0, exp_f(s${i} - m_new), finite);
    ps[r * ${KB + 1}u + c + ${i * PER_ROW}u] = p${i};`).join('\n')}
    rsum[li] = ${range(per).map((i) => `p${i}`).join(' + ')};
    m_run = m_new;
    // the tile of V replaces K's (every score is computed: the barrier above)
${tileLoad('vx', KB, vp, (key, n) => `select(0.0, f32(V[v0 + (j0 + ${key}) * u_v_sk() + (${n}) * u_v_sn()]), j0 + ${key} < s_n && ${n} < dv_n)`,
    (key, n, v) => `kv[(${key}) * ${vp}u + ${n}] = ${v}`)}
    workgroupBarrier();
    var tsum = 0.0;
    for (var x = 0u; x < ${PER_ROW}u; x++) { tsum += rsum[r * ${PER_ROW}u + x]; }
    l_run = l_run * alpha + tsum;
${range(cols).map((j) => `    o${j} *= alpha;`).join('\n')}
    for (var k = 0u; k < ${KB}u; k++) {
      let p = ps[r * ${KB + 1}u + k];
${range(cols).map((j) => `      o${j} += p * kv[k * ${vp}u + c + ${j * PER_ROW}u];`).join('\n')}
    }
    workgroupBarrier();
  }
  if (m < u_M()) {
    let y0 = u_y_base() + batch * u_y_bs() + m * u_y_sm();
    let ok = is_finite_f(m_run);
${range(cols).map((j) => `    if (c + ${j * PER_ROW}u < dv_n) {
      Y[y0 + (c + ${j * PER_ROW}u) * u_y_sn()] = ${storeExpr(dataType, `select(nan_f(), o${j} / l_run, ok)`)};
    }`).join('\n')}
  }`;
  if (dataType === 'float16') shader.fn(F16_ROUND);
  return {shader, body};
}

/**
 * Appends the fused attention step (see the module docstring).
 * @param {import('../compile/lowering.js').Lowering} L
 * @param {{scores: object, softmax: object, context: object}} match the first matmul, the
 *   softmax and the second matmul nodes (compile/attention.js)
 * @param {{yStrides?: number[], yBatchStride?: number, y: object}} store where Y goes
 */
export function attentionStep(L, {scores, context, k, v, kvGroups = 1}, {y, yStrides, yBatchStride}) {
  const q = scores.inputs[0];
  const dataType = context.outputs[0].dataType;
  const shape = scores.outputs[0].shape;
  const rank = shape.length;
  const [M, S] = shape.slice(rank - 2);
  const D = q.shape[q.shape.length - 1];
  const DV = v.shape[v.shape.length - 1];
  const batchShape = shape.slice(0, rank - 2);
  const batches = batchShape.reduce((a, b) => a * b, 1);
  const vq = L.view(q);
  // grouped (kvGroups > 1): K is the cache [..., kvH, L, D] read as its transpose, V the cache
  const vk0 = L.view(k);
  const vk = kvGroups > 1 ? {...vk0, strides: [...vk0.strides.slice(0, -2), vk0.strides.at(-1), vk0.strides.at(-2)]} : vk0;
  const vv = L.view(v);
  const kvBatch = kvGroups > 1 ? [...shape.slice(0, rank - 3), shape[rank - 3] / kvGroups] : batchShape;
  const tail = (x) => x.strides.slice(x.strides.length - 2);
  const {cfg, dp, vp} = chooseAttentionConfig(L.ctx, D, DV);
  const blocks = Math.ceil(M / cfg.rows);
  const {shader, body} = attentionShader(dataType, batchShape.length, dp, vp, cfg);
  const ep = addEpilogue(shader, L, scores, {uses: body});
  shader.main(body, {workgroupSize: cfg.rows * cfg.perRow, guard: false});
  const [ysm, ysn] = yStrides ?? [DV, 1];
  const uniforms = {
    M, S, D, DV, batches, blocks, kv_group: kvGroups,
    q_base: vq.offset, q_sm: tail(vq)[0], q_sk: tail(vq)[1],
    k_base: vk.offset, k_sk: tail(vk)[0], k_sn: tail(vk)[1],
    v_base: vv.offset, v_sk: tail(vv)[0], v_sn: tail(vv)[1],
    y_base: 0, y_sm: ysm, y_sn: ysn, y_bs: yBatchStride ?? M * DV,
    qb_shape: batchShape, qb_strides: batchStridesOf(vq, batchShape),
    kb_shape: kvBatch, kb_strides: batchStridesOf(vk, kvBatch),
    vb_shape: kvBatch, vb_strides: batchStridesOf(vv, kvBatch),
    ...ep.uniforms,
  };
  L.step({shader, values: [vq.value, vk.value, vv.value, y, ...ep.values], uniforms, groups: batches * blocks,
    label: context.label, origins: [...vq.origins, ...vk.origins, ...vv.origins]});
}

/**
 * Lowers a fusedAttention node (compile/attention.js): the fused step, storing Y straight into
 * the layout of the transpose that follows it when there is one.
 */
function lowerFusedAttention(node, L) {
  const {scores, softmax, context, transpose, kvGroups} = node.attrs;
  const [, k, v] = node.inputs;
  const store = transpose ? storeStrides(context.outputs[0].shape, transpose.attrs.permutation) : {};
  attentionStep(L, {scores, softmax, context, k, v, kvGroups}, {y: L.result(transpose ?? context), ...store});
}

/** Internal operator table entries (see ops/internal.js). */
export const internalOperators = {
  fusedAttention: {lower: lowerFusedAttention},
};
