/**
 * Whether an EP's outputs (runner.js runOn's result) match a case's expected outputs (case.json),
 * by the rule of tools/onnx_node_tests.py `compare`: float32 within 1e-4 + 1e-3·|want|, float16
 * within 1e-3 + 1e-2·|want| (or the case's own rtol/atol where larger), integers and bools exactly;
 * NaN equals NaN, ±Inf only itself.
 */
import {fromBase64} from '/harness/graph_json.js';

const TOLERANCE = {float32: [1e-4, 1e-3], float16: [1e-3, 1e-2]};
const INTEGER = {int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array};

/** The values of encoded little-endian bytes of `type` as numbers (float16 decoded; 64-bit as BigInt). */
function values(type, base64) {
  const bytes = fromBase64(base64);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  if (type === 'float32') return new Float32Array(buffer);
  if (type === 'float16') return Array.from(new Uint16Array(buffer), halfToNumber);
  return new INTEGER[type](buffer);
}

function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/**
 * One output against its expected value.
 * @returns {{agree: boolean, maxDiff: number, why?: string}}
 */
function compareOutput(got, want, meta) {
  if (got.dims.length !== want.shape.length || got.dims.some((d, i) => d !== want.shape[i])) {
    return {agree: false, maxDiff: Infinity, why: `shape [${got.dims}] instead of [${want.shape}]`};
  }
  const g = values(got.type, got.bytes);
  const w = values(want.type, want.bytes);
  const tolerance = TOLERANCE[want.type];
  let bad = 0;
  let maxDiff = 0;
  for (let i = 0; i < w.length; i++) {
    if (!tolerance) {
      const diff = Math.abs(Number(g[i]) - Number(w[i]));
      maxDiff = Math.max(maxDiff, diff);
      if (g[i] !== w[i]) bad++;
      continue;
    }
    const a = Math.max(tolerance[0], meta.atol ?? 0);
    const r = Math.max(tolerance[1], meta.rtol ?? 0);
    const same = (Number.isNaN(g[i]) && Number.isNaN(w[i])) || (!Number.isFinite(w[i]) && g[i] === w[i]);
    const diff = same ? 0 : Number.isNaN(g[i] - w[i]) ? Infinity : Math.abs(g[i] - w[i]);
    maxDiff = Math.max(maxDiff, diff);
    if (diff > a + r * (Number.isFinite(w[i]) ? Math.abs(w[i]) : 0)) bad++;
  }
  return bad ? {agree: false, maxDiff, why: `${bad} of ${w.length} values off`} : {agree: true, maxDiff};
}

/**
 * An EP's result on every data set of a case.
 * @param {{outputs?: object[][], error?: string, stage?: string}} result runOn's result
 * @param {{datasets: {outputs: object[]}[], rtol?: number, atol?: number}} meta case.json
 * @returns {{verdict: 'agrees' | 'differs' | 'refused' | 'failed', maxDiff?: number, why?: string}}
 */
export function agreement(result, meta) {
  if (!result) return {verdict: 'failed', why: 'not run'};
  if (result.error) return {verdict: result.stage === 'session' ? 'refused' : 'failed', why: result.error};
  let maxDiff = 0;
  for (const [s, set] of meta.datasets.entries()) {
    for (const [o, want] of set.outputs.entries()) {
      const r = compareOutput(result.outputs[s][o], want, meta);
      maxDiff = Math.max(maxDiff, r.maxDiff);
      if (!r.agree) return {verdict: 'differs', maxDiff, why: `${want.name}: ${r.why}`};
    }
  }
  return {verdict: 'agrees', maxDiff};
}
