/**
 * WGSL helpers for 64-bit integers in the compute layout: a `vec2<u32>(lo, hi)` per element,
 * two's complement for int64. Every operation is exact (wrap-around modulo 2^64 where the result
 * does not fit), so values beyond 2^53 survive arithmetic, comparisons and casts.
 *
 * Names: `i64_*` treat the operands as signed, `u64_*` as unsigned; add/sub/mul/neg wrap and
 * are the same for both. Conversions to f32 round to nearest even; from f32 truncate toward zero
 * and saturate (NaN -> 0). Division truncates toward zero; x / 0 = x and INT64_MIN / -1 =
 * INT64_MIN (the same choices WGSL makes for i32/u32).
 *
 * Use: `collectHelpers(INT64, helpersUsedIn(INT64, expr))` (gpu/wgsl_lib.js).
 */

/** @type {Record<string, {deps?: string[], code: string}>} */
export const INT64 = {
  i64_from_i32: {code: `fn i64_from_i32(x: i32) -> vec2<u32> { return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0)); }`},
  u64_from_u32: {code: `fn u64_from_u32(x: u32) -> vec2<u32> { return vec2<u32>(x, 0u); }`},
  i64_is_neg: {code: `fn i64_is_neg(a: vec2<u32>) -> bool { return (a.y & 0x80000000u) != 0u; }`},
  i64_is_zero: {code: `fn i64_is_zero(a: vec2<u32>) -> bool { return (a.x | a.y) == 0u; }`},
  i64_eq: {code: `fn i64_eq(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }`},
  i64_add: {code: `fn i64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}`},
  i64_sub: {code: `fn i64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}`},
  i64_neg: {deps: ['i64_sub'], code: `fn i64_neg(a: vec2<u32>) -> vec2<u32> { return i64_sub(vec2<u32>(0u, 0u), a); }`},
  i64_abs: {deps: ['i64_neg', 'i64_is_neg'], code: `fn i64_abs(a: vec2<u32>) -> vec2<u32> { return select(a, i64_neg(a), i64_is_neg(a)); }`},
  i64_lt: {code: `fn i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  let ah = bitcast<i32>(a.y);
  let bh = bitcast<i32>(b.y);
  return ah < bh || (ah == bh && a.x < b.x);
}`},
  u64_lt: {code: `fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }`},
  i64_min: {deps: ['i64_lt'], code: `fn i64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(b, a, i64_lt(a, b)); }`},
  i64_max: {deps: ['i64_lt'], code: `fn i64_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(b, a, i64_lt(b, a)); }`},
  u64_min: {deps: ['u64_lt'], code: `fn u64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(b, a, u64_lt(a, b)); }`},
  u64_max: {deps: ['u64_lt'], code: `fn u64_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(b, a, u64_lt(b, a)); }`},
  i64_sign: {deps: ['i64_is_neg', 'i64_is_zero'], code: `fn i64_sign(a: vec2<u32>) -> vec2<u32> {
  if (i64_is_neg(a)) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  return vec2<u32>(select(1u, 0u, i64_is_zero(a)), 0u);
}`},
  u32_mul_wide: {code: `fn u32_mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u;
  let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}`},
  i64_mul: {deps: ['u32_mul_wide'], code: `fn i64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = u32_mul_wide(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}`},
  u64_div: {deps: ['u64_lt', 'i64_sub'], code: `fn u64_div(n: vec2<u32>, d: vec2<u32>) -> vec2<u32> {
  if ((d.x | d.y) == 0u) { return n; }
  if (u64_lt(n, d)) { return vec2<u32>(0u, 0u); }
  if ((n.y | d.y) == 0u) { return vec2<u32>(n.x / d.x, 0u); }
  if (d.y >= 0x80000000u) { return vec2<u32>(1u, 0u); }
  var q = vec2<u32>(0u, 0u);
  var r = vec2<u32>(0u, 0u);
  let top = select(31u - countLeadingZeros(n.x), 63u - countLeadingZeros(n.y), n.y != 0u);
  for (var i = i32(top); i >= 0; i--) {
    let word = select(n.x, n.y, i >= 32);
    let bit = (word >> (u32(i) & 31u)) & 1u;
    r = vec2<u32>((r.x << 1u) | bit, (r.y << 1u) | (r.x >> 31u));
    if (!u64_lt(r, d)) {
      r = i64_sub(r, d);
      if (i >= 32) { q.y |= 1u << (u32(i) & 31u); } else { q.x |= 1u << u32(i); }
    }
  }
  return q;
}`},
  i64_div: {deps: ['u64_div', 'i64_abs', 'i64_neg', 'i64_is_neg'], code: `fn i64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if ((b.x | b.y) == 0u) { return a; }
  let q = u64_div(i64_abs(a), i64_abs(b));
  return select(q, i64_neg(q), i64_is_neg(a) != i64_is_neg(b));
}`},
  u64_pow: {deps: ['i64_mul'], code: `fn u64_pow(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  var r = vec2<u32>(1u, 0u);
  var base = a;
  var e = b;
  for (var i = 0u; i < 64u && (e.x | e.y) != 0u; i++) {
    if ((e.x & 1u) == 1u) { r = i64_mul(r, base); }
    base = i64_mul(base, base);
    e = vec2<u32>((e.x >> 1u) | (e.y << 31u), e.y >> 1u);
  }
  return r;
}`},
  i64_pow: {deps: ['u64_pow', 'i64_is_neg', 'i64_eq'], code: `fn i64_pow(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (i64_is_neg(b)) {
    // a^b for b < 0 truncated toward zero: 1 for a = 1, ±1 for a = -1, else 0 (a = 0 included)
    if (i64_eq(a, vec2<u32>(1u, 0u))) { return a; }
    if (i64_eq(a, vec2<u32>(0xffffffffu, 0xffffffffu))) { return select(vec2<u32>(1u, 0u), a, (b.x & 1u) == 1u); }
    return vec2<u32>(0u, 0u);
  }
  return u64_pow(a, b);
}`},
  // i32 products wrap modulo 2^32 like u32 ones, so b >= 0 is u32_pow on the same bits.
  i32_pow: {deps: ['u32_pow'], code: `fn i32_pow(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, (b & 1) == 1); }
    return 0;
  }
  return bitcast<i32>(u32_pow(bitcast<u32>(a), u32(b)));
}`},
  u32_pow: {code: `fn u32_pow(a: u32, b: u32) -> u32 {
  var r = 1u;
  var base = a;
  var e = b;
  for (var i = 0u; i < 32u && e != 0u; i++) {
    if ((e & 1u) == 1u) { r = r * base; }
    base = base * base;
    e = e >> 1u;
  }
  return r;
}`},
  u32_to_f32: {code: `fn u32_to_f32(x: u32) -> f32 {
  if (x < 0x1000000u) { return f32(x); }
  let shift = 8u - countLeadingZeros(x);
  var m = x >> shift;
  let rem = x & ((1u << shift) - 1u);
  let half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (m & 1u) == 1u)) { m = m + 1u; }
  return f32(m) * bitcast<f32>((127u + shift) << 23u);
}`},
  i32_to_f32: {deps: ['u32_to_f32'], code: `fn i32_to_f32(x: i32) -> f32 {
  let m = u32_to_f32(select(bitcast<u32>(x), 0u - bitcast<u32>(x), x < 0));
  return select(m, -m, x < 0);
}`},
  u64_to_f32: {deps: ['u32_to_f32'], code: `fn u64_to_f32(a: vec2<u32>) -> f32 {
  if (a.y == 0u) { return u32_to_f32(a.x); }
  let lz = countLeadingZeros(a.y);
  let hi = select((a.y << lz) | (a.x >> ((32u - lz) & 31u)), a.y, lz == 0u);
  let lo = a.x << lz;
  var m = hi >> 8u;
  let rem = hi & 0xffu;
  if (rem > 0x80u || (rem == 0x80u && (lo != 0u || (m & 1u) == 1u))) { m = m + 1u; }
  return f32(m) * bitcast<f32>((167u - lz) << 23u);
}`},
  i64_to_f32: {deps: ['u64_to_f32', 'i64_abs', 'i64_is_neg'], code: `fn i64_to_f32(a: vec2<u32>) -> f32 {
  let m = u64_to_f32(i64_abs(a));
  return select(m, -m, i64_is_neg(a));
}`},
  f32_to_u64_mag: {code: `fn f32_to_u64_mag(t: f32) -> vec2<u32> {
  if (t < 4294967296.0) { return vec2<u32>(u32(t), 0u); }
  let hi = floor(t * 2.3283064365386963e-10);
  return vec2<u32>(u32(t - hi * 4294967296.0), u32(hi));
}`},
  f32_to_i64: {deps: ['f32_to_u64_mag', 'i64_neg'], code: `fn f32_to_i64(x: f32) -> vec2<u32> {
  let bits = bitcast<u32>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) { return vec2<u32>(0u, 0u); }
  if (x >= 9223372036854775808.0) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  if (x <= -9223372036854775808.0) { return vec2<u32>(0u, 0x80000000u); }
  let m = f32_to_u64_mag(trunc(abs(x)));
  return select(m, i64_neg(m), x < 0.0);
}`},
  f32_to_u64: {deps: ['f32_to_u64_mag'], code: `fn f32_to_u64(x: f32) -> vec2<u32> {
  let bits = bitcast<u32>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u || x < 1.0) { return vec2<u32>(0u, 0u); }
  if (x >= 18446744073709551616.0) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  return f32_to_u64_mag(trunc(x));
}`},
  f32_to_i32: {code: `fn f32_to_i32(x: f32) -> i32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x <= -2147483648.0) { return -2147483647 - 1; }
  return i32(trunc(x));
}`},
  f32_to_u32: {code: `fn f32_to_u32(x: f32) -> u32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u || x < 1.0) { return 0u; }
  if (x >= 4294967296.0) { return 0xffffffffu; }
  return u32(trunc(x));
}`},
};
