/**
 * opSupportLimits() (spec §opSupportLimits): assembled from each operator's own `limits()` so
 * that it lists exactly what the kernels implement.
 */
import {MAX_RANK} from '../dtypes.js';
import {OPERATORS} from './index.js';

/** MLRankRange {min, max}. */
export function rankRange(min = 0, max = MAX_RANK) {
  return {min, max};
}

/** MLTensorLimits {dataTypes, rankRange}. */
export function tensorLimits(dataTypes, range = rankRange()) {
  return {dataTypes: [...dataTypes], rankRange: {...range}};
}

/**
 * Data types graphs accept as inputs, constants and outputs: all of them (float16, int8 and
 * uint8 are converted between their packed tensor layout and the compute layout at the graph
 * boundaries, compile/boundary.js).
 */
export const IO_TYPES = ['float32', 'float16', 'int32', 'uint32', 'int64', 'uint64', 'int8', 'uint8'];

/**
 * @param {object} ctx context slots
 * @returns {object} MLOpSupportLimits
 */
export function opSupportLimits(ctx) {
  const limits = {
    preferredInputLayout: 'nchw',
    maxTensorByteLength: Math.min(ctx.device.limits.maxBufferSize, ctx.device.limits.maxStorageBufferBindingSize),
    input: tensorLimits(IO_TYPES),
    constant: tensorLimits(IO_TYPES),
    output: tensorLimits(IO_TYPES),
  };
  for (const [name, def] of Object.entries(OPERATORS)) limits[name] = def.limits(ctx);
  return limits;
}
