/**
 * The matrix-vector shaders of matmul_kernels.js ('gemv', products of at most 4 rows):
 *  - dot: four output elements a workgroup of 256, 64 invocations each splitting K (B contiguous
 *    in K), their partial sums meeting in workgroup memory in two levels;
 *  - col: 64 columns a workgroup of 256, K split four ways (B contiguous in N).
 * `declareCommon` and `storeY` are matmul_kernels.js's (the common uniforms, store_y).
 */
import {Shader} from '../gpu/wgsl.js';
import {storeHelpers, wgslType} from '../gpu/types.js';
import {bLoad, declareB, quantKey} from './packed_weights.js';

/**
 * What both gemv shaders start with: bindings A, B, (C), Y of `dataType`, the common uniforms,
 * 256 f32 of workgroup memory `part` for the partial sums, and store_y.
 */
function gemvBase(name, dataType, batchRank, hasC, quant, declareCommon, storeY) {
  const T = wgslType(dataType);
  const shader = new Shader(`${name}${quantKey(quant)}`).read('A', T);
  declareB(shader, T, quant);
  if (hasC) shader.read('C', T);
  shader.write('Y', T);
  const cTerm = declareCommon(shader, batchRank, hasC);
  shader.shared('part', 'array<f32, 256>');
  return shader.fn(storeHelpers(dataType)).fn(storeY(dataType, cTerm));
}

/**
 * Four output elements per workgroup of 256, 64 invocations each splitting K (B contiguous in K);
 * partial sums meet in workgroup memory in two levels (8 x 8).
 */
export function gemvDotShader({dataType, batchRank, hasC, quant}, declareCommon, storeY) {
  const shader = gemvBase('matmul_gemv_dot', dataType, batchRank, hasC, quant, declareCommon, storeY);
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
      s += f32(A[a0 + k * u_a_sk()]) * ${bLoad(quant, 'b0 + k * u_b_sk()', 'k', 'n')};
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
export function gemvColShader({dataType, batchRank, hasC, quant}, declareCommon, storeY) {
  const shader = gemvBase('matmul_gemv_col', dataType, batchRank, hasC, quant, declareCommon, storeY);
  shader.uniform('tilesN');
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
      s += f32(A[a0 + k * u_a_sk()]) * ${bLoad(quant, 'b0 + k * u_b_sk()', 'k', 'n')};
    }
  }
  part[li] = s;
  workgroupBarrier();
  if (li < 64u && n < u_N()) {
    store_y((part[li] + part[li + 64u]) + (part[li + 128u] + part[li + 192u]), m, n, u_y_base() + batch * u_y_bs());
  }`, {workgroupSize: 256, guard: false});
  return shader;
}

