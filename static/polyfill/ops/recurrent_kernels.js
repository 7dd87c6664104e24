/**
 * Element-wise gate kernels of the recurrent operators (ops/recurrent.js). The matrix products
 * (input x weight^T, hidden x recurrentWeight^T, biases folded in as C) are matmulStep()s; these
 * kernels combine their rows into the gates and the new states, one invocation per
 * (batch, hidden) element. Gate positions are column offsets (uniforms); activations are WGSL
 * fragments in the shader text (a variant, like a data type): the float expressions of the
 * relu / sigmoid / tanh operators (ops/activations.js, over gpu/math.js), so a gate computes
 * exactly what the standalone operator does, NaN propagation included.
 */
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {addMathHelpers} from '../gpu/math.js';
import {ACTIVATIONS} from './activations.js';

/**
 * WGSL `fn act<k>(x: f32) -> f32` for each MLRecurrentNetworkActivation of `names` (in order),
 * computing in f32 for float32 and float16 alike (gate values are rounded once, when stored).
 * @param {string[]} names 'relu' | 'sigmoid' | 'tanh' (validated by the builder method)
 */
function activationFns(names) {
  return names.map((n, k) => `fn act${k}(x: f32) -> f32 { return ${ACTIVATIONS[n].f}; }`).join('\n');
}

/** A step writing zeros to `count` elements of Value `y`. */
export function fillZero(L, y, count, dataType, label) {
  const shader = new Shader('fill_zero').write('Y', wgslType(dataType)).main('  Y[gi] = 0.0;');
  L.step({shader, values: [y], threads: count, label});
}

function gateShader(name, dataType, activations, reads, writes, uniforms) {
  const T = wgslType(dataType);
  const shader = new Shader(name);
  reads.forEach((r) => shader.read(r, T));
  writes.forEach((w) => shader.write(w, T));
  uniforms.forEach((u) => shader.uniform(u));
  shader.fn(storeHelpers(dataType)).fn(activationFns(activations));
  return shader;
}

/** Adds the gpu/math.js helpers the finished gate shader calls, then emits its step. */
function gateStep(L, shader, step) {
  addMathHelpers(shader);
  L.step({shader, ...step});
}

const ROW = ['hidden', 'xw_base', 'xw_row', 'hr_base', 'hr_row'];

/**
 * GRU gates with the reset gate applied after the recurrent product (resetAfter = true):
 *   z = act0(XW_z + HR_z), r = act0(XW_r + HR_r), n = act1(XW_n + r * HR_n),
 *   h' = z * h + (1 - z) * n
 * XW rows: input projections incl. bias; HR rows: recurrent projections incl. recurrentBias.
 * `u` holds the uniforms (ROW, h_base, y_base, s_base, zo, ro, no: column offsets).
 * `seq` also writes h' into S (the returned sequence).
 */
export function gruGatesStep(L, {dataType, activations, xw, hr, h, y, s, u, threads, label}) {
  const writes = s ? ['Y', 'S'] : ['Y'];
  const shader = gateShader('gru_gates', dataType, activations, ['XW', 'HR', 'H'], writes, [...ROW, 'h_base', 'y_base', 's_base', 'zo', 'ro', 'no']);
  shader.main(`  let j = gi % u_hidden();
  let b = gi / u_hidden();
  let xr = u_xw_base() + b * u_xw_row() + j;
  let hr = u_hr_base() + b * u_hr_row() + j;
  let z = act0(XW[xr + u_zo()] + HR[hr + u_zo()]);
  let r = act0(XW[xr + u_ro()] + HR[hr + u_ro()]);
  let n = act1(XW[xr + u_no()] + r * HR[hr + u_no()]);
  let hp = H[u_h_base() + gi];
  let hn = ${storeExpr(dataType, 'z * hp + (1.0 - z) * n')};
  Y[u_y_base() + gi] = hn;
${s ? '  S[u_s_base() + gi] = hn;\n' : ''}`);
  gateStep(L, shader, {values: [xw, hr, h, y, ...(s ? [s] : [])], uniforms: u, threads, label});
}

/**
 * GRU with the reset gate applied before the recurrent product (resetAfter = false), first
 * half: r = act0(XW_r + HR_r), RH = r * h (RH then goes through the n rows of recurrentWeight).
 */
export function gruResetStep(L, {dataType, activations, xw, hr, h, rh, u, threads, label}) {
  const shader = gateShader('gru_reset', dataType, activations, ['XW', 'HR', 'H'], ['RH'], [...ROW, 'h_base', 'ro', 'hro']);
  shader.main(`  let j = gi % u_hidden();
  let b = gi / u_hidden();
  let r = act0(XW[u_xw_base() + b * u_xw_row() + j + u_ro()] + HR[u_hr_base() + b * u_hr_row() + j + u_hro()]);
  RH[gi] = ${storeExpr(dataType, 'r * H[u_h_base() + gi]')};`);
  gateStep(L, shader, {values: [xw, hr, h, rh], uniforms: u, threads, label});
}

/**
 * Second half (resetAfter = false): z = act0(XW_z + HR_z), n = act1(XW_n + HN),
 * h' = z * h + (1 - z) * n, HN = (r * h) x R_n^T + recurrentBias_n.
 */
export function gruUpdateStep(L, {dataType, activations, xw, hr, hn, h, y, s, u, threads, label}) {
  const writes = s ? ['Y', 'S'] : ['Y'];
  const shader = gateShader('gru_update', dataType, activations, ['XW', 'HR', 'HN', 'H'], writes, [...ROW, 'h_base', 'y_base', 's_base', 'zo', 'hzo', 'no']);
  shader.main(`  let j = gi % u_hidden();
  let b = gi / u_hidden();
  let xr = u_xw_base() + b * u_xw_row() + j;
  let z = act0(XW[xr + u_zo()] + HR[u_hr_base() + b * u_hr_row() + j + u_hzo()]);
  let n = act1(XW[xr + u_no()] + HN[gi]);
  let hp = H[u_h_base() + gi];
  let hn = ${storeExpr(dataType, 'z * hp + (1.0 - z) * n')};
  Y[u_y_base() + gi] = hn;
${s ? '  S[u_s_base() + gi] = hn;\n' : ''}`);
  gateStep(L, shader, {values: [xw, hr, hn, h, y, ...(s ? [s] : [])], uniforms: u, threads, label});
}

/**
 * LSTM gates (spec lstmCell): with G = XW + HR per gate column and peepholes p (i, o, f order)
 * on the previous cell state c:
 *   i = act0(G_i + c p_i), f = act0(G_f + c p_f), g = act1(G_g), o = act0(G_o + c p_o),
 *   c' = f c + i g, h' = o act2(c')
 * Writes h' to YH, c' to YC and, for the returned sequence, h' to S.
 */
export function lstmGatesStep(L, {dataType, activations, xw, hr, c, p, yh, yc, s, u, threads, label}) {
  const reads = p ? ['XW', 'HR', 'C', 'P'] : ['XW', 'HR', 'C'];
  const writes = s ? ['YH', 'YC', 'S'] : ['YH', 'YC'];
  const shader = gateShader('lstm_gates', dataType, activations, reads, writes, [...ROW, 'c_base', 'p_base', 'y_base', 's_base', 'io', 'fo', 'go', 'oo']);
  const peep = (k) => (p ? ` + cp * P[u_p_base() + ${k} * u_hidden() + j]` : '');
  shader.main(`  let j = gi % u_hidden();
  let b = gi / u_hidden();
  let xr = u_xw_base() + b * u_xw_row() + j;
  let hr = u_hr_base() + b * u_hr_row() + j;
  let cp = C[u_c_base() + gi];
  let i = act0(XW[xr + u_io()] + HR[hr + u_io()]${peep(0)});
  let f = act0(XW[xr + u_fo()] + HR[hr + u_fo()]${peep(2)});
  let g = act1(XW[xr + u_go()] + HR[hr + u_go()]);
  let o = act0(XW[xr + u_oo()] + HR[hr + u_oo()]${peep(1)});
  let cn = ${storeExpr(dataType, 'f * cp + i * g')};
  let hn = ${storeExpr(dataType, 'o * act2(cn)')};
  YH[u_y_base() + gi] = hn;
  YC[u_y_base() + gi] = cn;
${s ? '  S[u_s_base() + gi] = hn;\n' : ''}`);
  gateStep(L, shader, {values: [xw, hr, c, ...(p ? [p] : []), yh, yc, ...(s ? [s] : [])], uniforms: u, threads, label});
}
