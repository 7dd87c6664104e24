/**
 * Fused attention: the builder graph
 *   Y = matmul(softmax(stages(matmul(Q, Kt)), last axis), V)
 * (stages: the element-wise chain the fusion pass folded into the first matmul: the 1/sqrt(d)
 * scale, an additive mask, ...) as one dispatch, found by compile/attention.js. Q [..., M, D],
 * Kt [..., D, S] and V [..., S, Dv] are read through strides (deferred transposes and reshapes of
 * the projections, compile/views.js), Y is written through strides (straight into a following
 * transpose's layout, as the matrix kernels do).
 *
 * One workgroup of 256 invocations per (batch, block of TQ query rows): K passes through workgroup
 * memory in tiles of KT keys (loaded along the head dimension, so neighbouring invocations read
 * neighbouring addresses of the d-contiguous K^T views), the TQ x S scores go to
 * workgroup memory, each through the first matmul's epilogue (ops/epilogue.js: the stages' own
 * semantics and float16 rounding, `i` the score's row-major index in the scores' shape); the
 * row's max and sum are reduced by 256 / TQ invocations each; the probabilities replace the scores
 * (rounded to float16 for a float16 graph, as the unfused softmax stores them); then each
 * invocation accumulates outputs over S in f32. NaN and ±Inf follow ops/softmax.js: a row whose
 * max is NaN or ±Inf is NaN. Needs S * TQ <= SCORES floats of workgroup memory (S <= 2048) and
 * D < K_TILE (attentionFits); compile/attention.js leaves other shapes unfused.
 */
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {F16_ROUND, storeExpr, wgslType} from '../gpu/types.js';
import {addEpilogue} from './epilogue.js';
import {batchStridesOf} from '../compile/views.js';

/** f32 scores (and then probabilities) kept in workgroup memory per workgroup. */
export const SCORES = 2048;
const THREADS = 256;

/** Query rows per workgroup for rows of `S` keys: a power of two, at most 16, TQ * S <= SCORES. */
export function rowsPerGroup(S) {
  let tq = 16;
  while (tq > 1 && tq * S > SCORES) tq /= 2;
  return tq * S <= SCORES ? tq : 0;
}

/** f32 of workgroup memory for the staged tile of K (KT keys x (D + 1), padded against bank conflicts). */
const K_TILE = 1792;

/** Whether rows of `S` keys with head size `D` fit the kernel's workgroup memory. */
export function attentionFits(S, D) {
  return rowsPerGroup(S) > 0 && D + 1 <= K_TILE;
}

/** Keys per staged tile of K for head size `D` (1 to 32). */
export function keysPerTile(D) {
  return Math.max(1, Math.min(32, Math.floor(K_TILE / (D + 1))));
}

function attentionShader(dataType, batchRank, tq, kt) {
  const T = wgslType(dataType);
  const g = THREADS / tq;
  const shader = new Shader('attention').read('Q', T).read('K', T).read('V', T).write('Y', T);
  for (const n of ['M', 'S', 'D', 'DV', 'batches', 'blocks', 'q_base', 'q_sm', 'q_sk', 'k_base', 'k_sk', 'k_sn',
    'v_base', 'v_sk', 'v_sn', 'y_base', 'y_sm', 'y_sn', 'y_bs']) shader.uniform(n);
  declareIndexer(shader, 'qb', batchRank);
  declareIndexer(shader, 'kb', batchRank);
  declareIndexer(shader, 'vb', batchRank);
  shader.shared('sc', `array<f32, ${SCORES}>`).shared('red', `array<f32, ${THREADS}>`)
    .shared('kt', `array<f32, ${K_TILE}>`);
  const roundP = dataType === 'float16' ? (e) => `f16_round(${e})` : (e) => e;
  const reduce = (op) => `
  for (var h = ${g / 2}u; h > 0u; h /= 2u) {
    if (t < h) { red[li] = ${op}; }
    workgroupBarrier();
  }`;
  const body = `
  let batch = wg / u_blocks();
  if (batch >= u_batches()) { return; }
  let r0 = (wg % u_blocks()) * ${tq}u;
  let q0 = u_q_base() + qb_offset(batch);
  let k0 = u_k_base() + kb_offset(batch);
  let v0 = u_v_base() + vb_offset(batch);
  let s_n = u_S();
  // K in tiles of KT keys through workgroup memory (loaded along d: Kt is [D, S], usually d-contiguous)
  for (var j0 = 0u; j0 < s_n; j0 += ${kt}u) {
    for (var e = li; e < ${kt}u * u_D(); e += ${THREADS}u) {
      let key = e / u_D();
      let d = e % u_D();
      var kv = 0.0;
      if (j0 + key < s_n) { kv = f32(K[k0 + d * u_k_sk() + (j0 + key) * u_k_sn()]); }
      kt[key * (u_D() + 1u) + d] = kv;
    }
    workgroupBarrier();
    for (var e = li; e < ${tq * kt}u; e += ${THREADS}u) {
      let m = r0 + e / ${kt}u;
      let jj = e % ${kt}u;
      let j = j0 + jj;
      if (m < u_M() && j < s_n) {
        let qr = q0 + m * u_q_sm();
        let kr = jj * (u_D() + 1u);
        let qs = u_q_sk();
        var a0 = 0.0;
        var a1 = 0.0;
        var d = 0u;
        for (; d + 2u <= u_D(); d += 2u) {
          a0 += f32(Q[qr + d * qs]) * kt[kr + d];
          a1 += f32(Q[qr + (d + 1u) * qs]) * kt[kr + d + 1u];
        }
        if (d < u_D()) { a0 += f32(Q[qr + d * qs]) * kt[kr + d]; }
        let acc = a0 + a1;
        sc[(e / ${kt}u) * s_n + j] = ${roundP('epilogue(acc, (batch * u_M() + m) * s_n + j)')};
      }
    }
    workgroupBarrier();
  }
  let r = li / ${g}u;
  let t = li % ${g}u;
  let row = r * s_n;
  var mx = -inf_f();
  for (var j = t; j < s_n; j += ${g}u) { mx = max_nan_f(mx, sc[row + j]); }
  red[li] = mx;
  workgroupBarrier();${reduce('max_nan_f(red[li], red[li + h])')}
  let rmax = red[r * ${g}u];
  workgroupBarrier();
  var sum = 0.0;
  for (var j = t; j < s_n; j += ${g}u) { sum += exp_f(sc[row + j] - rmax); }
  red[li] = sum;
  workgroupBarrier();${reduce('red[li] + red[li + h]')}
  let rsum = red[r * ${g}u];
  for (var j = t; j < s_n; j += ${g}u) {
    sc[row + j] = ${roundP('select(nan_f(), exp_f(sc[row + j] - rmax) / rsum, is_finite_f(rmax))')};
  }
  workgroupBarrier();
  let y0 = u_y_base() + batch * u_y_bs();
  for (var e = li; e < ${tq}u * u_DV(); e += ${THREADS}u) {
    let rr = e / u_DV();
    let n = e % u_DV();
    let m = r0 + rr;
    if (m < u_M()) {
      // four independent sums: four loads of V in flight per invocation
      let vc = v0 + n * u_v_sn();
      let vs = u_v_sk();
      let pr = rr * s_n;
      var a0 = 0.0;
      var a1 = 0.0;
      var a2 = 0.0;
      var a3 = 0.0;
      var j = 0u;
      for (; j + 4u <= s_n; j += 4u) {
        a0 += sc[pr + j] * f32(V[vc + j * vs]);
        a1 += sc[pr + j + 1u] * f32(V[vc + (j + 1u) * vs]);
        a2 += sc[pr + j + 2u] * f32(V[vc + (j + 2u) * vs]);
        a3 += sc[pr + j + 3u] * f32(V[vc + (j + 3u) * vs]);
      }
      for (; j < s_n; j++) { a0 += sc[pr + j] * f32(V[vc + j * vs]); }
      let acc = (a0 + a1) + (a2 + a3);
      Y[y0 + m * u_y_sm() + n * u_y_sn()] = ${storeExpr(dataType, 'acc')};
    }
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
  const tq = rowsPerGroup(S);
  const blocks = Math.ceil(M / tq);
  const {shader, body} = attentionShader(dataType, batchShape.length, tq, keysPerTile(D));
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
