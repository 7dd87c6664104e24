/**
 * WGSL f32 math library with known accuracy, independent of the driver's builtins (whose
 * precision Vulkan leaves loose: exp/log/pow are "3 + 2|x| ULP", sin/cos absolute 2^-11 only on
 * [-pi, pi], division 2.5 ULP and undefined for huge divisors, sqrt via inversesqrt).
 * Everything here uses only +, -, *, / (corrected where it matters), floor/round/trunc and bit
 * operations; NaN and Inf are detected from the bits (WGSL lets compilers assume `x != x` false).
 *
 * Compilers may also rewrite float algebra as if it were exact: SwiftShader folds (1 + u) - 1 to
 * u and inf * 0 to 0. Every error-free transformation (two-sum, Cody-Waite reduction, residuals)
 * therefore passes its rounded intermediate through `opaque_f`, a no-op the optimiser cannot see
 * through (an OR with a zero derived from the `total` uniform every Shader declares). NaN/Inf
 * constants come from a `var` because a const-expression bitcast to them is a WGSL error.
 *
 * Worst errors measured against float64 (tests/test_ops_elementwise.py, SwiftShader; float16:
 * every finite input): div_f/reciprocal 0 ULP, sqrt_f 1, exp_f 1, pow_f 3 (results near the float32
 * range ends), log_f 1 ULP (float16 via log_ff: exact), sin/cos 6e-8 absolute on [-2000, 2000],
 * tan 8e-6 (|tan| < 100), erf 2e-7, tanh/sigmoid/elu/softplus 2 ULP, gelu 6 ULP.
 *
 * This is the one WGSL math library of the polyfill: element-wise kernels (ops/elementwise_kernel.js),
 * row kernels (softmax, reductions, normalizations, argMin/argMax), pooling and the recurrent gate
 * kernels all call these helpers by name; no other module defines NaN tests, exp, log, sqrt or the
 * activations (tests/test_math_library.py checks). NaN semantics, everywhere: every float helper
 * returns NaN for a NaN operand (max_nan_f, min_nan_f and clamp_nan_f included, unlike WGSL's
 * max/min/clamp), and ±Inf give the IEEE / C99 results (exp_f(-Inf) = 0, log_f(0) = -Inf,
 * log_f(-1) = NaN, tanh_f(±Inf) = ±1, sigmoid_f(-Inf) = 0).
 *
 * Use: `collectHelpers(MATH, helpersUsedIn(MATH, expr))` (gpu/wgsl_lib.js), or
 * addMathHelpers(shader) once a kernel's text is complete.
 */
import {addLibraryHelpers} from './wgsl_lib.js';

const f = (x) => {
  const s = Math.fround(x).toPrecision(9);
  return s.includes('.') || s.includes('e') ? s : `${s}.0`;
};

// Taylor coefficients 1/n! as f32 literals
const INV_FACT = Array.from({length: 12}, (_, n) => {
  let p = 1;
  for (let k = 2; k <= n; k++) p *= k;
  return f(1 / p);
});

/** @type {Record<string, {deps?: string[], code: string}>} */
export const MATH = {
  is_nan_f: {code: 'fn is_nan_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }'},
  is_inf_f: {code: 'fn is_inf_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }'},
  is_finite_f: {code: 'fn is_finite_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }'},
  // max(a, b) and min(a, b), NaN when either is (WGSL leaves max/min of NaN unspecified); used
  // by reduceMax/reduceMin and the row max of softmax and reduceLogSumExp
  max_nan_f: {deps: ['is_nan_f', 'nan_f'], code: 'fn max_nan_f(a: f32, b: f32) -> f32 { return select(max(a, b), nan_f(), is_nan_f(a) || is_nan_f(b)); }'},
  min_nan_f: {deps: ['is_nan_f', 'nan_f'], code: 'fn min_nan_f(a: f32, b: f32) -> f32 { return select(min(a, b), nan_f(), is_nan_f(a) || is_nan_f(b)); }'},
  // cast(cast(x, 'int32'), 'float32') (ops/cast.js): truncated toward zero, saturated to int32's
  // range (whose largest value is 2^31 as f32), NaN -> 0, -0 -> +0; the fusion pass's stage for
  // that pair (ORT's MatMulInteger output read back as float)
  trunc_i32_f: {deps: ['is_nan_f'], code: `fn trunc_i32_f(x: f32) -> f32 {
  let t = select(clamp(trunc(x), -2147483648.0, 2147483648.0), 0.0, is_nan_f(x));
  return select(t, 0.0, t == 0.0);
}`},
  // x, hidden from algebraic simplification (u_total() < 2^31, so the OR adds nothing)
  opaque_f: {code: 'fn opaque_f(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | (u_total() >> 31u)); }'},
  // error of the sum s = fl(a + b): a + b = s + two_sum_err(a, b, s) exactly (Knuth)
  two_sum_err: {deps: ['opaque_f'], code: `fn two_sum_err(a: f32, b: f32, s0: f32) -> f32 {
  let s = opaque_f(s0);
  let bb = opaque_f(s - a);
  return (a - (s - bb)) + (b - bb);
}`},
  nan_f: {code: 'fn nan_f() -> f32 { var bits = 0x7fc00000u; return bitcast<f32>(bits); }'},
  inf_f: {code: 'fn inf_f() -> f32 { var bits = 0x7f800000u; return bitcast<f32>(bits); }'},
  // error of the product p = fl(a*b): a*b = p + two_prod_err(a, b, p) exactly (Dekker; the
  // halves come from masking the bits, so every partial product is exact and contraction into
  // fma cannot change the result)
  two_prod_err: {code: `fn two_prod_err(a: f32, b: f32, p: f32) -> f32 {
  let ah = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
  let al = a - ah;
  let bh = bitcast<f32>(bitcast<u32>(b) & 0xfffff000u);
  let bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}`},
  // a * b + c with ~0.5 ULP error (exact product and sum errors added back once)
  mul_add_f: {deps: ['two_prod_err', 'two_sum_err', 'opaque_f'], code: `fn mul_add_f(a: f32, b: f32, c: f32) -> f32 {
  let p = opaque_f(a * b);
  let s = opaque_f(p + c);
  if ((bitcast<u32>(s) & 0x7fffffffu) >= 0x7f800000u || (bitcast<u32>(p) & 0x7fffffffu) >= 0x7e800000u) { return s; }
  return s + (two_sum_err(p, c, s) + two_prod_err(a, b, p));
}`},
  // x * 2^k for k in [-252, 254] with a single rounding
  ldexp_f: {code: `fn ldexp_f(x: f32, k: i32) -> f32 {
  if (k > 127) { return x * bitcast<f32>(u32(min(k - 127, 127) + 127) << 23u) * 1.70141183e38; }
  if (k < -126) { return x * bitcast<f32>(u32(max(k + 126, -126) + 127) << 23u) * 1.17549435e-38; }
  return x * bitcast<f32>(u32(k + 127) << 23u);
}`},
  // a / b correctly rounded (up to results in the subnormal range): the quotient of the two
  // mantissas (in [1, 2), so nothing over- or underflows) gets one exact-residual correction, then
  // the exponent difference is applied exactly; zeros, infinities and NaN take the IEEE quotient
  div_f: {deps: ['two_prod_err', 'is_finite_f', 'opaque_f', 'ldexp_f'], code: `fn div_f(a: f32, b: f32) -> f32 {
  if (!is_finite_f(a) || !is_finite_f(b) || a == 0.0 || b == 0.0) { return a / b; }
  var ua = bitcast<u32>(a);
  var ub = bitcast<u32>(b);
  var k = 0;
  if ((ua & 0x7f800000u) == 0u) { ua = bitcast<u32>(a * 16777216.0); k = k - 24; }
  if ((ub & 0x7f800000u) == 0u) { ub = bitcast<u32>(b * 16777216.0); k = k + 24; }
  k = k + i32((ua >> 23u) & 0xffu) - i32((ub >> 23u) & 0xffu);
  let ma = bitcast<f32>((ua & 0x807fffffu) | 0x3f800000u);
  let mb = bitcast<f32>((ub & 0x807fffffu) | 0x3f800000u);
  let q = opaque_f(ma / mb);
  let p = opaque_f(q * mb);
  let r = (ma - p) - two_prod_err(q, mb, p);
  return ldexp_f(q + r / mb, k);
}`},
  // sqrt(x) correctly rounded: x = m * 4^k with m in [1, 4), one exact-residual correction of sqrt(m)
  sqrt_f: {deps: ['two_prod_err', 'opaque_f', 'is_finite_f', 'ldexp_f'], code: `fn sqrt_f(x: f32) -> f32 {
  if (!(x > 0.0) || !is_finite_f(x)) { return sqrt(x); }
  var u = bitcast<u32>(x);
  var e = -127;
  if ((u & 0x7f800000u) == 0u) { u = bitcast<u32>(x * 16777216.0); e = e - 24; }
  e = e + i32(u >> 23u);
  let odd = (e & 1) != 0;
  let m = bitcast<f32>((u & 0x007fffffu) | select(0x3f800000u, 0x40000000u, odd));
  let s = opaque_f(sqrt(m));
  let p = opaque_f(s * s);
  let r = (m - p) - two_prod_err(s, s, p);
  return ldexp_f(s + r / (2.0 * s), (e - select(0, 1, odd)) / 2);
}`},
  // exp(hi + lo), |lo| << |hi|; Cody-Waite reduction by ln2 (hi part exact times k), Taylor degree 7
  exp_ff: {deps: ['is_nan_f', 'inf_f', 'ldexp_f', 'opaque_f'], code: `fn exp_ff(hi: f32, lo: f32) -> f32 {
  if (is_nan_f(hi)) { return hi; }
  if (hi > 88.7228394) { return inf_f(); }
  if (hi < -103.972084) { return 0.0; }
  let k = round(hi * 1.44269502);
  let r = (opaque_f(hi - k * 0.693145752) - k * 1.42860677e-6) + lo;
  let p = 1.0 + r * (1.0 + r * (${INV_FACT[2]} + r * (${INV_FACT[3]} + r * (${INV_FACT[4]} + r * (${INV_FACT[5]} + r * (${INV_FACT[6]} + r * ${INV_FACT[7]}))))));
  return ldexp_f(p, i32(k));
}`},
  exp_f: {deps: ['exp_ff'], code: 'fn exp_f(x: f32) -> f32 { return exp_ff(x, 0.0); }'},
  expm1_f: {deps: ['exp_f'], code: `fn expm1_f(x: f32) -> f32 {
  if (abs(x) < 0.35) {
    return x + x * x * (${INV_FACT[2]} + x * (${INV_FACT[3]} + x * (${INV_FACT[4]} + x * (${INV_FACT[5]} + x * (${INV_FACT[6]} + x * (${INV_FACT[7]} + x * (${INV_FACT[8]} + x * ${INV_FACT[9]})))))));
  }
  return exp_f(x) - 1.0;
}`},
  // log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] (fdlibm): f - (hfsq - s*(hfsq + R)), s = f/(2+f)
  log1p_core_f: {code: `fn log1p_core_f(fm: f32) -> f32 {
  let s = fm / (2.0 + fm);
  let z = s * s;
  let R = z * (${f(2 / 3)} + z * (${f(2 / 5)} + z * (${f(2 / 7)} + z * (${f(2 / 9)} + z * ${f(2 / 11)}))));
  let hfsq = 0.5 * fm * fm;
  return fm - (hfsq - s * (hfsq + R));
}`},
  // log(x): x = m * 2^e, m in [sqrt(1/2), sqrt(2)), log(m) by log1p_core_f(m - 1) (m - 1 exact)
  log_f: {deps: ['is_nan_f', 'nan_f', 'inf_f', 'log1p_core_f'], code: `fn log_f(x: f32) -> f32 {
  if (is_nan_f(x)) { return x; }
  if (x < 0.0) { return nan_f(); }
  if (x == 0.0) { return -inf_f(); }
  if (bitcast<u32>(x) == 0x7f800000u) { return x; }
  var b = bitcast<u32>(x);
  var e = 0;
  if (b < 0x00800000u) { b = bitcast<u32>(x * 16777216.0); e = -24; }
  e = e + i32(b >> 23u) - 127;
  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421354) { m = m * 0.5; e = e + 1; }
  let fe = f32(e);
  return fe * 0.693145752 + (fe * 1.42860677e-6 + log1p_core_f(m - 1.0));
}`},
  // log(1 + u) for u > -1: the core directly where 1 + u would round
  log1p_f: {deps: ['log_f', 'log1p_core_f'], code: `fn log1p_f(u: f32) -> f32 {
  if (u > -0.292893231 && u < 0.414213538) { return log1p_core_f(u); }
  return log_f(1.0 + u);
}`},
  // log(a) = hi + lo (double-f32, ~2^-30 relative) for a > 0 finite: s = fm / (2 + fm) carried
  // as sh + sl, log(m) = 2 s + 2 s^3 / 3 + ..., plus e * ln2 with its high part exact
  log_ff: {deps: ['two_prod_err', 'opaque_f'], code: `fn log_ff(a: f32) -> vec2<f32> {
  var bits = bitcast<u32>(a);
  var e = 0;
  if (bits < 0x00800000u) { bits = bitcast<u32>(a * 16777216.0); e = -24; }
  e = e + i32(bits >> 23u) - 127;
  var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421354) { m = m * 0.5; e = e + 1; }
  let fm = m - 1.0;
  let dh = opaque_f(2.0 + fm);
  let dl = (2.0 - dh) + fm;
  let sh = opaque_f(fm / dh);
  let p = opaque_f(sh * dh);
  let sl = (((fm - p) - two_prod_err(sh, dh, p)) - sh * dl) / dh;
  let z = sh * sh;
  let t = sh * z * (${f(2 / 3)} + z * (${f(2 / 5)} + z * (${f(2 / 7)} + z * (${f(2 / 9)} + z * (${f(2 / 11)} + z * ${f(2 / 13)})))));
  let l1 = 2.0 * sh;
  let l2 = 2.0 * sl + t;
  let fe = f32(e);
  let eh = fe * 0.693145752;
  let h = opaque_f(eh + l1);
  let herr = select((l1 - (h - eh)), (eh - (h - l1)), abs(l1) > abs(eh));
  let c = herr + l2 + fe * 1.42860677e-6;
  let lh = opaque_f(h + c);
  return vec2<f32>(lh, (h - lh) + c);
}`},
  // hi + lo as one f32 whose binary16 rounding is that of the exact sum: when the f32 sum lands
  // exactly on a binary16 tie, it moves one f32 ULP toward the residual so the tie is decided by it
  f16_sticky_f: {deps: ['opaque_f'], code: `fn f16_sticky_f(hi: f32, lo: f32) -> f32 {
  let h = opaque_f(hi + lo);
  let r = (hi - h) + lo;
  let b = bitcast<u32>(h);
  let a = b & 0x7fffffffu;
  if (r == 0.0 || a == 0u || a >= 0x477ff000u) { return h; }
  var tie = (a & 0x1fffu) == 0x1000u;
  if (a < 0x38800000u) { let q = bitcast<f32>(a) * 16777216.0; tie = q - floor(q) == 0.5; }
  if (!tie) { return h; }
  return bitcast<f32>(select(b - 1u, b + 1u, (r > 0.0) == (h > 0.0)));
}`},
  // log(x) for a float16 result: log_ff rounded once to binary16 (an f32 log rounded to f32 and
  // then to f16 can land on an f16 tie and round the wrong way)
  log_f16: {deps: ['log_f', 'log_ff', 'f16_sticky_f', 'is_finite_f'], code: `fn log_f16(x: f32) -> f32 {
  if (!(x > 0.0) || !is_finite_f(x)) { return log_f(x); }
  let d = log_ff(x);
  return f16_sticky_f(d.x, d.y);
}`},
  // pow(a, b) for a > 0 finite, b finite: exp(b * log(a)) with log(a) in double-f32 precision
  pow_pos_f: {deps: ['two_prod_err', 'exp_ff', 'inf_f', 'opaque_f', 'log_ff'], code: `fn pow_pos_f(a: f32, b: f32) -> f32 {
  let l = log_ff(a);
  let yh = opaque_f(b * l.x);
  if (yh > 88.8) { return inf_f(); }
  if (yh < -104.0) { return 0.0; }
  let yl = two_prod_err(b, l.x, yh) + b * l.y;
  return exp_ff(yh, yl);
}`},
  pow_f: {deps: ['pow_pos_f', 'is_nan_f', 'is_inf_f', 'nan_f', 'inf_f'], code: `fn pow_f(a: f32, b: f32) -> f32 {
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (is_nan_f(a) || is_nan_f(b)) { return nan_f(); }
  let aa = abs(a);
  if (is_inf_f(b)) {
    if (aa == 1.0) { return 1.0; }
    return select(0.0, inf_f(), (aa > 1.0) == (b > 0.0));
  }
  let isInt = floor(b) == b;
  let half = b * 0.5;
  let odd = isInt && floor(half) != half;
  let neg = a < 0.0 || (a == 0.0 && (bitcast<u32>(a) & 0x80000000u) != 0u);
  if (a == 0.0 || is_inf_f(a)) {
    let big = (a == 0.0) == (b < 0.0);
    let m = select(0.0, inf_f(), big);
    return select(m, -m, neg && odd);
  }
  if (a < 0.0 && !isInt) { return nan_f(); }
  let m = pow_pos_f(aa, b);
  return select(m, -m, neg && odd);
}`},
  // (sin x, cos x): Cody-Waite reduction by pi/4 in three parts (exact for |x| < ~6400), Taylor on [-pi/4, pi/4]
  sincos_f: {deps: ['is_finite_f', 'nan_f', 'opaque_f'], code: `fn sincos_f(x: f32) -> vec2<f32> {
  if (!is_finite_f(x)) { return vec2<f32>(nan_f(), nan_f()); }
  let ax = abs(x);
  var j = floor(ax * 1.27323954);
  j = j + (j - 2.0 * floor(j * 0.5));
  let y = opaque_f(opaque_f(ax - j * 0.78515625) - j * 2.41875648e-4) - j * 3.77489506e-8;
  let z = y * y;
  let s = y + y * z * (${f(-1 / 6)} + z * (${f(1 / 120)} + z * (${f(-1 / 5040)} + z * ${f(1 / 362880)})));
  let c = 1.0 - 0.5 * z + z * z * (${f(1 / 24)} + z * (${f(-1 / 720)} + z * (${f(1 / 40320)} + z * ${f(-1 / 3628800)})));
  let oct = u32(j - 8.0 * floor(j * 0.125));
  var r: vec2<f32>;
  if (oct == 0u) { r = vec2<f32>(s, c); }
  else if (oct == 2u) { r = vec2<f32>(c, -s); }
  else if (oct == 4u) { r = vec2<f32>(-s, -c); }
  else { r = vec2<f32>(-c, s); }
  return vec2<f32>(select(r.x, -r.x, x < 0.0), r.y);
}`},
  sin_f: {deps: ['sincos_f'], code: 'fn sin_f(x: f32) -> f32 { return sincos_f(x).x; }'},
  cos_f: {deps: ['sincos_f'], code: 'fn cos_f(x: f32) -> f32 { return sincos_f(x).y; }'},
  tan_f: {deps: ['sincos_f', 'div_f'], code: 'fn tan_f(x: f32) -> f32 { let sc = sincos_f(x); return div_f(sc.x, sc.y); }'},
  tanh_f: {deps: ['expm1_f', 'is_nan_f'], code: `fn tanh_f(x: f32) -> f32 {
  if (is_nan_f(x)) { return x; }
  let ax = abs(x);
  if (ax > 9.1) { return select(1.0, -1.0, x < 0.0); }
  let e = expm1_f(2.0 * ax);
  let t = e / (e + 2.0);
  return select(t, -t, x < 0.0);
}`},
  sigmoid_f: {deps: ['exp_f', 'is_nan_f'], code: `fn sigmoid_f(x: f32) -> f32 {
  if (is_nan_f(x)) { return x; }
  if (x >= 0.0) { return 1.0 / (1.0 + exp_f(-x)); }
  let e = exp_f(x);
  return e / (1.0 + e);
}`},
  // exp(-c * x * x) for c a power of two, with x*x split exactly: xh*xh exact, remainder small
  exp_neg_sq_f: {deps: ['exp_f'], code: `fn exp_neg_sq_f(x: f32, c: f32) -> f32 {
  let xh = bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
  let xl = x - xh;
  return exp_f(-c * (xh * xh)) * exp_f(-c * (xl * (x + xh)));
}`},
  // erfc(z) * exp(z*z) for z >= 0 (Numerical Recipes erfcc, fractional error < 1.2e-7)
  erfcx_f: {deps: ['exp_f'], code: `fn erfcx_f(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.5 * z);
  return t * exp_f(-1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
}`},
  erf_f: {deps: ['erfcx_f', 'exp_neg_sq_f', 'is_nan_f'], code: `fn erf_f(x: f32) -> f32 {
  if (is_nan_f(x)) { return x; }
  let ax = abs(x);
  if (ax < 0.5) {
    let z = x * x;
    return x * ${f(2 / Math.sqrt(Math.PI))} * (1.0 + z * (${f(-1 / 3)} + z * (${f(1 / 10)} + z * (${f(-1 / 42)} + z * (${f(1 / 216)} + z * (${f(-1 / 1320)} + z * ${f(1 / 9360)}))))));
  }
  if (ax > 10.0) { return select(1.0, -1.0, x < 0.0); }
  let r = 1.0 - erfcx_f(ax) * exp_neg_sq_f(ax, 1.0);
  return select(r, -r, x < 0.0);
}`},
  // gelu(x) = 0.5 x erfc(-x / sqrt 2); exp(-x*x/2) computed from x itself so no rounding of x/sqrt2 is amplified
  // (-Inf gives NaN, as the spec's 0.5 * x * (1 + erf(x / sqrt 2)) does: -Inf * 0)
  gelu_f: {deps: ['erfcx_f', 'exp_neg_sq_f', 'is_nan_f', 'is_inf_f', 'nan_f'], code: `fn gelu_f(x: f32) -> f32 {
  if (is_nan_f(x)) { return x; }
  if (x > 14.0) { return x; }
  if (x < -20.0) { return select(-0.0, nan_f(), is_inf_f(x)); }
  let ec = erfcx_f(abs(x) * ${f(Math.SQRT1_2)}) * exp_neg_sq_f(x, 0.5);
  return select(0.5 * x * ec, x - 0.5 * x * ec, x > 0.0);
}`},
  // clamp(x, lo, hi) keeping NaN (WGSL's clamp/min/max leave NaN unspecified)
  // (explicitly: NVIDIA's compiler turns the select chain into min/max, which drop NaN)
  clamp_nan_f: {deps: ['is_nan_f'], code: 'fn clamp_nan_f(x: f32, lo: f32, hi: f32) -> f32 { return select(select(select(x, lo, x < lo), hi, x > hi), x, is_nan_f(x)); }'},
  round_even_f: {deps: [], code: `fn round_even_f(x: f32) -> f32 {
  let ax = abs(x);
  if (!(ax < 8388608.0)) { return x; }
  let fl = floor(ax);
  let d = ax - fl;
  var r = fl;
  if (d > 0.5 || (d == 0.5 && (u32(fl) & 1u) == 1u)) { r = fl + 1.0; }
  return select(r, -r, x < 0.0 || (x == 0.0 && (bitcast<u32>(x) & 0x80000000u) != 0u));
}`},
};

/**
 * Adds to `shader` (gpu/wgsl.js) the MATH helpers its WGSL calls, with their dependencies, each
 * once; call it after the kernel's functions and main() are set. Row, pooling and recurrent
 * kernels use this; element-wise kernels collect from their expression.
 * @param {import('./wgsl.js').Shader} shader
 */
export function addMathHelpers(shader) {
  addLibraryHelpers(shader, MATH);
}
