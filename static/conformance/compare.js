/**
 * Output comparison for the conformance suite, as tolerances.md defines it: ULP distance on bit
 * patterns (float32 as int32, float16 as uint16; +0 and -0 equal; NaN must meet NaN; ±Inf must
 * match exactly), absolute error, or exact equality (integers, 64-bit included).
 */

const VIEWS = {
  float32: Float32Array, float16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, int8: Int8Array, uint8: Uint8Array,
};

/** Typed array over raw little-endian bytes of a data type (float16 as raw uint16 bits). */
export function view(bytes, dataType) {
  const copy = bytes.slice();
  return new VIEWS[dataType](copy.buffer, 0, copy.byteLength / VIEWS[dataType].BYTES_PER_ELEMENT);
}

// Deliberately not imported from the polyfill (shape/cast.js has a twin): the comparator must not
// share code with the implementation it judges.
function f16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0x1f) return m ? NaN : sign * Infinity;
  if (e === 0) return sign * m * 2 ** -24;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** Maps float bits to a monotonically ordered integer (sign-magnitude -> two's complement line). */
function ordered(bits, width) {
  const signBit = width === 32 ? 0x80000000 : 0x8000;
  const mag = width === 32 ? bits & 0x7fffffff : bits & 0x7fff;
  return (bits & signBit) ? -mag : mag;
}

/** Float value and ordered bits of element i. */
function floatAt(arr, dataType, i) {
  if (dataType === 'float16') {
    const bits = arr[i];
    return {value: f16Value(bits), ord: ordered(bits, 16)};
  }
  const bits = new Uint32Array(new Float32Array([arr[i]]).buffer)[0];
  return {value: arr[i], ord: ordered(bits, 32)};
}

/**
 * Compares actual and expected outputs.
 * @param {Uint8Array} actualBytes
 * @param {Uint8Array} expectedBytes
 * @param {string} dataType
 * @param {{metric: 'ULP'|'ATOL'|'exact', value: number}} tolerance
 * @returns {{pass: boolean, worst: number, index: number, actual?: any, expected?: any}}
 *   worst: largest ULP distance (ULP), absolute error (ATOL) or integer difference (exact)
 */
export function compare(actualBytes, expectedBytes, dataType, tolerance) {
  if (actualBytes.byteLength !== expectedBytes.byteLength) {
    return {pass: false, worst: Infinity, index: -1, reason: `byte length ${actualBytes.byteLength} != ${expectedBytes.byteLength}`};
  }
  const a = view(actualBytes, dataType);
  const e = view(expectedBytes, dataType);
  const isFloat = dataType === 'float32' || dataType === 'float16';
  let worst = 0;
  let index = -1;
  let pass = true;
  for (let i = 0; i < a.length; i++) {
    let d;
    if (!isFloat) {
      d = a[i] === e[i] ? 0 : Number(typeof a[i] === 'bigint' ? (a[i] > e[i] ? a[i] - e[i] : e[i] - a[i]) : Math.abs(a[i] - e[i]));
      if (d === 0 && a[i] !== e[i]) d = 1;
    } else {
      const x = floatAt(a, dataType, i);
      const y = floatAt(e, dataType, i);
      if (Number.isNaN(y.value) || Number.isNaN(x.value)) d = Number.isNaN(x.value) && Number.isNaN(y.value) ? 0 : Infinity;
      else if (!Number.isFinite(y.value) || !Number.isFinite(x.value)) d = x.value === y.value ? 0 : Infinity;
      else if (tolerance.metric === 'ATOL') d = Math.abs(x.value - y.value);
      else d = Math.abs(x.ord - y.ord);
    }
    if (d > worst) { worst = d; index = i; }
    if (d > (tolerance.metric === 'exact' ? 0 : tolerance.value)) pass = false;
  }
  const result = {pass, worst, index};
  if (!pass && index >= 0) {
    result.actual = isFloat ? floatAt(a, dataType, index).value : String(a[index]);
    result.expected = isFloat ? floatAt(e, dataType, index).value : String(e[index]);
  }
  return result;
}
