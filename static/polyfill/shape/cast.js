/**
 * Spec §Casting: cast(x, dataType) for MLNumber values, and float16 bit conversions.
 *
 * Decision: the spec's table casts "uint32" with ConvertToInt(x, 32, "signed"), which would clamp
 * to 2^31-1; we treat it as unsigned (the evident intent, matching uint8/uint64).
 */

/** Rounds to the nearest integer, ties to even, +0 rather than -0. */
export function roundEven(x) {
  const f = Math.floor(x);
  const d = x - f;
  let r;
  if (d > 0.5) r = f + 1;
  else if (d < 0.5) r = f;
  else r = f % 2 === 0 ? f : f + 1;
  return r === 0 ? 0 : r;
}

/**
 * IEEE binary16 bits of a number, rounded to nearest even (spec ConvertToFloat(x, 16)):
 * NaN -> 0x7e00, overflow -> ±Inf, subnormals kept, -0 kept.
 * @param {number} x
 * @returns {number} 16-bit pattern
 */
export function float16Bits(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // rounds to 2^16 or beyond -> Inf
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24); // subnormal (may round up to the smallest normal)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  if (2 ** (e + 1) <= a) e += 1;
  let m = roundEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) { m = 0; e += 1; }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

/** The number a binary16 bit pattern stands for. */
export function float16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0x1f) return m ? NaN : sign * Infinity;
  if (e === 0) return sign * m * 2 ** -24;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

const INT_RANGES = {
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int8: [-128, 127],
  uint8: [0, 255],
};

/**
 * Spec cast(x, dataType) for an MLNumber (number or bigint).
 * @returns {number|bigint} a value exactly representable in dataType (bigint for 64-bit integers)
 */
export function castNumber(x, dataType) {
  if (dataType === 'float32') return Math.fround(Number(x));
  if (dataType === 'float16') return float16Value(float16Bits(Number(x)));
  const [lo, hi] = INT_RANGES[dataType];
  if (typeof lo === 'bigint') {
    if (typeof x === 'bigint') return x < lo ? lo : x > hi ? hi : x;
    if (Number.isNaN(x)) return 0n;
    if (x === Infinity) return hi;
    if (x === -Infinity) return lo;
    const r = BigInt(roundEven(x));
    return r < lo ? lo : r > hi ? hi : r;
  }
  const n = Number(x);
  if (Number.isNaN(n)) return 0;
  return roundEven(Math.min(Math.max(n, lo), hi));
}

/**
 * Little-endian bytes of `value` cast to `dataType`, one element.
 * @returns {Uint8Array}
 */
export function scalarBytes(value, dataType) {
  const v = castNumber(value, dataType);
  const out = new DataView(new ArrayBuffer(8));
  switch (dataType) {
    case 'float32': out.setFloat32(0, v, true); return new Uint8Array(out.buffer, 0, 4);
    case 'float16': out.setUint16(0, float16Bits(v), true); return new Uint8Array(out.buffer, 0, 2);
    case 'int32': out.setInt32(0, v, true); return new Uint8Array(out.buffer, 0, 4);
    case 'uint32': out.setUint32(0, v, true); return new Uint8Array(out.buffer, 0, 4);
    case 'int64': out.setBigInt64(0, v, true); return new Uint8Array(out.buffer, 0, 8);
    case 'uint64': out.setBigUint64(0, v, true); return new Uint8Array(out.buffer, 0, 8);
    case 'int8': out.setInt8(0, v); return new Uint8Array(out.buffer, 0, 1);
    case 'uint8': out.setUint8(0, v); return new Uint8Array(out.buffer, 0, 1);
    default: throw new TypeError(`unknown data type ${dataType}`);
  }
}
