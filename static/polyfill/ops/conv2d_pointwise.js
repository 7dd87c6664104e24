/**
 * Pointwise conv2d (1x1 filter, stride 1, dilation 1, no padding, groups 1) as a tiled matrix
 * product, per batch: Y[o, p] = sum_c W[o, c] * X[c, p] (+ bias[o]), p = h * width + w.
 *
 * Both layouts fit because the spatial positions of one channel are equally spaced in memory
 * (nchw: stride 1, nhwc: stride C): A = filter (M = outputChannels x K = inputChannels),
 * B = input (K x N = height*width), every operand addressed through (row, column) strides.
 *
 * Two kernels, both computing a 4x4 block of Y per invocation:
 *  - tiled: a workgroup of 16x16 invocations computes a 64x64 tile of Y, stepping through K in
 *    slices of 16 staged in workgroup memory as vec4 rows; the load pattern (which index runs
 *    fastest across invocations) follows the operand's contiguous axis so global reads coalesce
 *    (variant flags of the shader text; sizes are uniforms). 8x8 workgroups with 32x32 tiles,
 *    for more workgroups on small products, measured no faster on the H200 and were dropped.
 *  - blocked: no workgroup memory, each invocation reads its 4 filter rows and 4 input columns
 *    straight from storage.
 * Selection, from tools/bench_conv.py on EfficientNet-Lite0's 33 pointwise layers:
 *  - SwiftShader (CPU): always blocked; barriers and workgroup memory make the tiled kernel
 *    3-10x slower there (1x16x112x112 -> 96 channels: 45 ms vs 485 ms).
 *  - hardware GPUs: tiled when M (output channels) >= 32, else blocked. On an NVIDIA H200 tiled
 *    is 2-3x faster for the K >= 144 projections (1x1152x7x7 -> 320: 0.81 ms vs 0.36 ms per
 *    dispatch) and as fast for the rest, while 16-24 output channels waste most of a tile
 *    (1x32x112x112 -> 16: blocked 0.08 ms, tiled 0.14 ms).
 * For tests, the context slot `kernelOverrides.pointwise` ('tiled' | 'blocked') forces one.
 */
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';

/** Invocations per side of a tiled workgroup, rows/columns of its tile, K slice staged at once. */
const S = 16;
const TILE = 4 * S;
const TK = 16;

/**
 * WGSL staging a TK x S tile of vec4 in workgroup memory: each invocation loads entries
 * li, li + S*S, ... of it; entry i is k-row `k` and 4-group `q`, `kFast` putting k on the
 * fastest-varying part of i (matching the operand's contiguous axis).
 */
function tileLoad(kFast, target, source, rows, rowStride, kStride, base, limit) {
  const [k, q] = kFast ? [`i % ${TK}u`, `i / ${TK}u`] : [`i / ${S}u`, `i % ${S}u`];
  return `  for (var i = li; i < ${TK * S}u; i += ${S * S}u) {
    let k = ${k};
    let q = ${q};
    let gk = k0 + k;
    let r = ${rows} + q * 4u;
    var v = vec4<f32>(0.0);
    if (gk < u_k()) {
      let at = ${base} + gk * ${kStride} + r * ${rowStride};
      if (r < ${limit}) { v.x = ${source}[at]; }
      if (r + 1u < ${limit}) { v.y = ${source}[at + ${rowStride}]; }
      if (r + 2u < ${limit}) { v.z = ${source}[at + 2u * ${rowStride}]; }
      if (r + 3u < ${limit}) { v.w = ${source}[at + 3u * ${rowStride}]; }
    }
    ${target}[k * ${S}u + q] = v;
  }`;
}

/**
 * Whether the tiled kernel should run for M output channels (see the file header), unless the
 * context's `kernelOverrides.pointwise` says otherwise.
 */
function preferTiles(ctx, M) {
  const override = ctx.kernelOverrides?.pointwise;
  if (override) return override === 'tiled';
  const info = ctx.adapterInfo;
  const software = Boolean(info && (info.isFallbackAdapter || info.architecture === 'swiftshader'));
  return !software && M >= 32;
}

/**
 * Emits the pointwise conv2d dispatch.
 * @param {object} node the conv2d node (attrs.hasBias)
 * @param {object} L Lowering (L.ctx: the context slots)
 * @param {object} g geometry from convGeometry(): sizes x/f/y, strides in nchw / oihw order
 * @param {object[]} values [X, W, (B), Y] Values
 */
export function lowerPointwise(node, L, g, values) {
  return preferTiles(L.ctx, g.f.o) ? lowerTiled(node, L, g, values) : lowerBlocked(node, L, g, values);
}

/**
 * What both kernels start from: the product's sizes (M output channels, K input channels,
 * N = height * width positions), the output data type, and a shader named `name` reading X, W
 * (and B when the node has a bias) and writing Y, with the store helpers of that data type.
 * @returns {{dt: string, hasBias: boolean, M: number, K: number, N: number, shader: Shader}}
 */
function productShader(name, node, g) {
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const {hasBias} = node.attrs;
  const shader = new Shader(name).read('X', T).read('W', T);
  if (hasBias) shader.read('B', T);
  shader.write('Y', T).fn(storeHelpers(dt));
  return {dt, hasBias, M: g.f.o, K: g.f.i, N: g.x.h * g.x.w, shader};
}

/** The tiled kernel (workgroup memory), see the file header. */
function lowerTiled(node, L, g, values) {
  const {dt, hasBias, M, K, N, shader} = productShader('conv2d_pointwise_tiled', node, g);
  // (row, k) strides: A rows are output channels, B rows are positions.
  const aRow = g.fStrides[0];
  const aK = g.fStrides[1];
  const bRow = g.xStrides[3];
  const bK = g.xStrides[1];
  shader.uniform('m').uniform('n').uniform('k').uniform('tiles_m').uniform('tiles_n').uniform('batches')
    .uniform('a_strides', 'u32', 2).uniform('b_strides', 'u32', 2).uniform('y_strides', 'u32', 2)
    .uniform('x_batch').uniform('y_batch');
  shader.shared('As', `array<vec4<f32>, ${TK * S}>`).shared('Bs', `array<vec4<f32>, ${TK * S}>`);
  const rows = (i) => `  if (m0 + ${i}u < u_m()) {
    let row = ybase + (m0 + ${i}u) * u_y_strides(0u);
    let a = acc${i}${hasBias ? ` + B[m0 + ${i}u]` : ''};
    if (n0 < u_n()) { Y[row + n0 * u_y_strides(1u)] = ${storeExpr(dt, 'a.x')}; }
    if (n0 + 1u < u_n()) { Y[row + (n0 + 1u) * u_y_strides(1u)] = ${storeExpr(dt, 'a.y')}; }
    if (n0 + 2u < u_n()) { Y[row + (n0 + 2u) * u_y_strides(1u)] = ${storeExpr(dt, 'a.z')}; }
    if (n0 + 3u < u_n()) { Y[row + (n0 + 3u) * u_y_strides(1u)] = ${storeExpr(dt, 'a.w')}; }
  }`;
  shader.main(`
  let tn = wg % u_tiles_n();
  let rest = wg / u_tiles_n();
  let tm = rest % u_tiles_m();
  let batch = rest / u_tiles_m();
  if (batch >= u_batches()) { return; }
  let xbase = batch * u_x_batch();
  let ybase = batch * u_y_batch();
  let tx = li % ${S}u;
  let ty = li / ${S}u;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < u_k(); k0 += ${TK}u) {
${tileLoad(aK === 1, 'As', 'W', `tm * ${TILE}u`, 'u_a_strides(0u)', 'u_a_strides(1u)', '0u', 'u_m()')}
${tileLoad(bK === 1, 'Bs', 'X', `tn * ${TILE}u`, 'u_b_strides(0u)', 'u_b_strides(1u)', 'xbase', 'u_n()')}
    workgroupBarrier();
    for (var kk = 0u; kk < ${TK}u; kk++) {
      let a = As[kk * ${S}u + ty];
      let b = Bs[kk * ${S}u + tx];
      acc0 += a.x * b;
      acc1 += a.y * b;
      acc2 += a.z * b;
      acc3 += a.w * b;
    }
    workgroupBarrier();
  }
  let m0 = tm * ${TILE}u + ty * 4u;
  let n0 = tn * ${TILE}u + tx * 4u;
${[0, 1, 2, 3].map(rows).join('\n')}`, {workgroupSize: S * S, guard: false});
  const tilesM = Math.ceil(M / TILE);
  const tilesN = Math.ceil(N / TILE);
  const uniforms = {
    m: M, n: N, k: K, tiles_m: tilesM, tiles_n: tilesN, batches: g.x.n,
    a_strides: [aRow, aK], b_strides: [bRow, bK], y_strides: [g.yStrides[1], g.yStrides[3]],
    x_batch: g.xStrides[0], y_batch: g.yStrides[0],
  };
  L.step({shader, values, uniforms, groups: tilesM * tilesN * g.x.n, label: node.label});
}

/**
 * The blocked kernel: invocation (batch, block of 4 output channels, block of 4 positions), the
 * position blocks fastest so neighbouring invocations read neighbouring input columns.
 */
function lowerBlocked(node, L, g, values) {
  const {dt, hasBias, M, K, N, shader} = productShader('conv2d_pointwise_blocked', node, g);
  shader.uniform('m').uniform('n').uniform('k').uniform('blocks_m').uniform('blocks_n')
    .uniform('a_strides', 'u32', 2).uniform('b_strides', 'u32', 2).uniform('y_strides', 'u32', 2)
    .uniform('x_batch').uniform('y_batch');
  const lanes = [0, 1, 2, 3];
  shader.main(`
  let bn = gi % u_blocks_n();
  let rest = gi / u_blocks_n();
  let bm = rest % u_blocks_m();
  let batch = rest / u_blocks_m();
  let m0 = bm * 4u;
  let n0 = bn * 4u;
  let ml = vec4<u32>(m0, min(m0 + 1u, u_m() - 1u), min(m0 + 2u, u_m() - 1u), min(m0 + 3u, u_m() - 1u)) * u_a_strides(0u);
${lanes.map((j) => `  let nl${j} = batch * u_x_batch() + min(n0 + ${j}u, u_n() - 1u) * u_b_strides(0u);`).join('\n')}
${lanes.map((j) => `  var acc${j} = vec4<f32>(0.0);`).join('\n')}
  for (var k = 0u; k < u_k(); k++) {
    let ka = k * u_a_strides(1u);
    let kb = k * u_b_strides(1u);
    let a = vec4<f32>(W[ml.x + ka], W[ml.y + ka], W[ml.z + ka], W[ml.w + ka]);
${lanes.map((j) => `    acc${j} += a * X[nl${j} + kb];`).join('\n')}
  }
${lanes.map((j) => `  if (n0 + ${j}u < u_n()) {
    let a = acc${j}${hasBias ? ' + vec4<f32>(B[m0], B[min(m0 + 1u, u_m() - 1u)], B[min(m0 + 2u, u_m() - 1u)], B[min(m0 + 3u, u_m() - 1u)])' : ''};
    let yb = batch * u_y_batch() + (n0 + ${j}u) * u_y_strides(1u) + m0 * u_y_strides(0u);
    Y[yb] = ${storeExpr(dt, 'a.x')};
    if (m0 + 1u < u_m()) { Y[yb + u_y_strides(0u)] = ${storeExpr(dt, 'a.y')}; }
    if (m0 + 2u < u_m()) { Y[yb + 2u * u_y_strides(0u)] = ${storeExpr(dt, 'a.z')}; }
    if (m0 + 3u < u_m()) { Y[yb + 3u * u_y_strides(0u)] = ${storeExpr(dt, 'a.w')}; }
  }`).join('\n')}`);
  const blocksM = Math.ceil(M / 4);
  const blocksN = Math.ceil(N / 4);
  const uniforms = {
    m: M, n: N, k: K, blocks_m: blocksM, blocks_n: blocksN,
    a_strides: [g.fStrides[0], g.fStrides[1]], b_strides: [g.xStrides[3], g.xStrides[1]], y_strides: [g.yStrides[1], g.yStrides[3]],
    x_batch: g.xStrides[0], y_batch: g.yStrides[0],
  };
  L.step({shader, values, uniforms, threads: blocksM * blocksN * g.x.n, label: node.label});
}
