/**
 * Conversions between the tensor layout and the compute layout (see dtypes.js) at graph
 * boundaries: graph inputs, outputs and constants of float16, int8, uint8, int4 and uint4.
 * float32, int32, uint32, int64 and uint64 need none.
 *
 * Inputs: one invocation per element reads its word of the packed buffer and widens its
 * element. Outputs: one invocation per *word* of the packed buffer gathers the 2 (float16), 4
 * (int8/uint8) or 8 (int4/uint4) elements that share it and writes the whole word, so no two invocations write the
 * same word (no races) and the padding bytes past an odd element count are zero.
 * Constants are widened on the CPU at build time, when a lowering asks for their Value
 * (Lowering.value); a lowering that reads the packed tensor-layout bytes itself (4-bit weights
 * read by a product kernel) takes Lowering.packedConstant() instead, and no widened copy is made
 * unless something else asks for one.
 */
import {computeByteLength, elementCount, isDirect} from '../dtypes.js';
import {Shader} from '../gpu/wgsl.js';
import {wgslType} from '../gpu/types.js';
import {F16_BITS, PACKED_BITS, packBitsExpr, unpackExpr, unpackOnCpu} from '../gpu/packing.js';

/**
 * Emits the step converting a raw input Value (tensor layout) to a new compute-layout Value.
 * @param {import('./lowering.js').Lowering} L
 * @param {object} raw the graph input's Value (packed bytes, bound to the MLTensor at dispatch)
 * @param {{dataType: string, shape: number[]}} desc float16 | int8 | uint8 | int4 | uint4
 * @returns {object} the compute Value (a temporary)
 */
export function lowerBoundaryIn(L, raw, desc) {
  const count = elementCount(desc.shape);
  const value = L.temp(computeByteLength(desc), `${raw.label} (compute layout)`);
  const shader = new Shader(`unpack_${desc.dataType}`).read('R', 'u32').write('Y', wgslType(desc.dataType));
  if (desc.dataType === 'float16') shader.fn(F16_BITS);
  shader.main(`  Y[gi] = ${unpackExpr(desc.dataType, 'R', 'gi')};`);
  L.step({shader, values: [raw, value], threads: count, label: `${raw.label}: unpack ${desc.dataType}`});
  return value;
}

/**
 * Emits the step converting compute Value `value` into the raw output Value `raw`.
 * @param {import('./lowering.js').Lowering} L
 * @param {object} value compute-layout Value holding the output
 * @param {object} raw the graph output's Value (packed bytes, bound to the MLTensor at dispatch)
 * @param {{dataType: string, shape: number[]}} desc float16 | int8 | uint8 | int4 | uint4
 */
export function lowerBoundaryOut(L, value, raw, desc) {
  const count = elementCount(desc.shape);
  const perWord = 32 / PACKED_BITS[desc.dataType];
  const bits = PACKED_BITS[desc.dataType];
  const shader = new Shader(`pack_${desc.dataType}`).read('X', wgslType(desc.dataType)).write('R', 'u32').uniform('count');
  if (desc.dataType === 'float16') shader.fn(F16_BITS);
  shader.main(`  let first = gi * ${perWord}u;
  var word = 0u;
  for (var k = 0u; k < ${perWord}u; k++) {
    if (first + k < u_count()) { word |= ${packBitsExpr(desc.dataType, 'X[first + k]')} << (k * ${bits}u); }
  }
  R[gi] = word;`);
  L.step({shader, values: [value, raw], uniforms: {count}, threads: Math.ceil(count / perWord), label: `${raw.label}: pack ${desc.dataType}`});
}

/**
 * Compute-layout bytes of a constant given its tensor-layout bytes (widened on the CPU).
 * @param {Uint8Array} bytes tensor-layout data
 * @param {{dataType: string, shape: number[]}} desc
 * @returns {Uint8Array} length a multiple of 4
 */
export function constantComputeBytes(bytes, desc) {
  if (!isDirect(desc.dataType)) {
    const words = unpackOnCpu(bytes, desc.dataType, elementCount(desc.shape));
    return new Uint8Array(words.buffer);
  }
  return wordBytes(bytes);
}

/**
 * `bytes` as they are, zero-padded to whole 32-bit words (at least one) when they are not.
 * @param {Uint8Array} bytes
 * @returns {Uint8Array} length a multiple of 4
 */
export function wordBytes(bytes) {
  if (bytes.byteLength % 4 === 0 && bytes.byteLength > 0 && bytes.byteOffset % 4 === 0) return bytes;
  const padded = new Uint8Array(Math.max(4, Math.ceil(bytes.byteLength / 4) * 4));
  padded.set(bytes);
  return padded;
}

