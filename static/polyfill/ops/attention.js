/**
 * Fused attention: the builder graph
 *   Y = matmul(softmax(stages(matmul(Q, Kt)), last axis), V)
 * (stages: the element-wise chain the fusion pass folded into the first matmul: the 1/sqrt(d)
 * scale, an additive mask, ...) as one dispatch, found by compile/attention.js. Q [..., M, D],
 * Kt [..., D, S] and V [..., S, Dv] are read through strides (deferred transposes and reshapes of
 * the projections, compile/views.js), Y is written through strides (straight into a following
 * transpose's layout, as the matrix kernels do).
 *
 * Flash-style (one pass over the keys, online softmax): one workgroup of 128 invocations per
 * (batch, block of TQ = 16 query rows). The block's Q rows sit in workgroup memory; the keys pass
 * in tiles of KB = 32: the tile of K through workgroup memory, each invocation computing 4
 * scores of one row (8 invocations a row) through the first matmul's epilogue (ops/epilogue.js:
 * the stages' own semantics and float16 rounding, `i` the score's row-major index in the scores'
 * shape); the row's running maximum m (NaN-propagating) and the tile's probabilities
 * exp(s - m) follow; the running sum l and the invocation's Dv / 8 output accumulators are scaled
 * by exp(m_old - m) and the tile of V (through the same workgroup memory) is added in. At the end
 * Y = acc / l, all in f32. NaN and ±Inf follow ops/softmax.js: a row whose maximum is NaN or
 * ±Inf (a row of only -Inf included) is NaN; a row's -Inf scores weigh 0. A float16 graph's
 * scores are rounded to binary16 as the unfused first matmul stores them; its probabilities are
 * not (the unfused softmax rounds them), a difference within float16 rounding of a sum of
 * weights that add to 1. Needs D <= 64 and Dv <= 64 (attentionFits); compile/attention.js
 * leaves other shapes unfused. Workgroup memory: 3,904 f32 (15.6 KB, within WebGPU's default
 * 16 KB).
 */
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {F16_ROUND, storeExpr, wgslType} from '../gpu/types.js';
import {addEpilogue} from './epilogue.js';
import {batchStridesOf} from '../compile/views.js';

/** Invocations per workgroup. */
const THREADS = 128;
/** Query rows per workgroup. */
const TQ = 16;
/** Keys per tile; each of a row's THREADS / TQ = 8 invocations holds KB / 8 of its scores. */
const KB = 32;
const PER_ROW = THREADS / TQ;
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

/**
 * The shader for head sizes padded to powers of two DP >= D (Q, K) and VP >= Dv (V): every
 * loop has a fixed trip count (tile loads of DP / 4 and VP / 4 elements an invocation, issued
 * together; DP multiply-adds a score; KB a tile's output update), so that the compiler unrolls
 * them and global loads overlap; padding is zeros (Q, K, V) and -Inf scores.
 */
function attentionShader(dataType, batchRank, dp, vp) {
  const T = wgslType(dataType);
  const cols = vp / PER_ROW;
  const shader = new Shader('attention').read('Q', T).read('K', T).read('V', T).write('Y', T);
  for (const n of ['M', 'S', 'D', 'DV', 'batches', 'blocks', 'q_base', 'q_sm', 'q_sk', 'k_base', 'k_sk', 'k_sn',
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
  // element e of a tile of `rows` x `width` (a power of two): e >> lg(width), e & (width - 1)
  // element e of a tile of `rows` x `width` (a power of two): e >> lg(width), e & (width - 1);
  // a fixed trip count, so that the loads can be issued together
  const tileLoad = (name, rows, width, load, store) => `    for (var i = 0u; i < ${rows * width / THREADS}u; i++) {
      let e = li + i * ${THREADS}u;
      let ${name} = ${load(`(e >> ${lg(width)}u)`, `(e & ${width - 1}u)`)};
      ${store(`(e >> ${lg(width)}u)`, `(e & ${width - 1}u)`, name)};
    }`;
  const body = `
  let batch = wg / u_blocks();
  if (batch >= u_batches()) { return; }
  let r0 = (wg % u_blocks()) * ${TQ}u;
  let q0 = u_q_base() + qb_offset(batch);
  let k0 = u_k_base() + kb_offset(batch);
  let v0 = u_v_base() + vb_offset(batch);
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
export function attentionStep(L, {scores, context}, {y, yStrides, yBatchStride}) {
  const [q, kt] = scores.inputs;
  const v = context.inputs[1];
  const dataType = context.outputs[0].dataType;
  const shape = scores.outputs[0].shape;
  const rank = shape.length;
  const [M, S] = shape.slice(rank - 2);
  const D = q.shape[q.shape.length - 1];
  const DV = v.shape[v.shape.length - 1];
  const batchShape = shape.slice(0, rank - 2);
  const batches = batchShape.reduce((a, b) => a * b, 1);
  const vq = L.view(q);
  const vk = L.view(kt);
  const vv = L.view(v);
  const tail = (x) => x.strides.slice(x.strides.length - 2);
  const blocks = Math.ceil(M / TQ);
  const {shader, body} = attentionShader(dataType, batchShape.length, pow2(D, 8), pow2(DV, PER_ROW));
  const ep = addEpilogue(shader, L, scores, {uses: body});
  shader.main(body, {workgroupSize: THREADS, guard: false});
  const [ysm, ysn] = yStrides ?? [DV, 1];
  const uniforms = {
    M, S, D, DV, batches, blocks,
    q_base: vq.offset, q_sm: tail(vq)[0], q_sk: tail(vq)[1],
    k_base: vk.offset, k_sk: tail(vk)[0], k_sn: tail(vk)[1],
    v_base: vv.offset, v_sk: tail(vv)[0], v_sn: tail(vv)[1],
    y_base: 0, y_sm: ysm, y_sn: ysn, y_bs: yBatchStride ?? M * DV,
    qb_shape: batchShape, qb_strides: batchStridesOf(vq, batchShape),
    kb_shape: batchShape, kb_strides: batchStridesOf(vk, batchShape),
    vb_shape: batchShape, vb_strides: batchStridesOf(vv, batchShape),
    ...ep.uniforms,
  };
  L.origin = [...L.origin, ...vq.origins, ...vk.origins, ...vv.origins];
  L.step({shader, values: [vq.value, vk.value, vv.value, y, ...ep.values], uniforms, groups: batches * blocks,
    label: context.label});
}
