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
 * Largest buffer one kernel can bind on this device, in bytes.
 * @param {GPUDevice} device
 */
export function maxBindingBytes(device) {
  return Math.min(device.limits.maxBufferSize, device.limits.maxStorageBufferBindingSize);
}

/**
 * maxTensorByteLength: the largest tensor (tensor layout bytes) that works for every data type.
 * The compute layout widens int8/uint8 four times and float16 twice (dtypes.js), so this is a
 * quarter of the binding limit. It is the one size limit: every operand a builder makes and
 * every tensor a context creates must fit it (shape/common.js checkTensorSize).
 * @param {GPUDevice} device
 */
export function maxTensorByteLength(device) {
  return Math.floor(maxBindingBytes(device) / 4);
}

/**
 * @param {object} ctx context slots
 * @returns {object} MLOpSupportLimits
 */
export function opSupportLimits(ctx) {
  const limits = {
    preferredInputLayout: 'nchw',
    maxTensorByteLength: maxTensorByteLength(ctx.device),
    input: tensorLimits(IO_TYPES),
    constant: tensorLimits(IO_TYPES),
    output: tensorLimits(IO_TYPES),
  };
  for (const [name, def] of Object.entries(OPERATORS)) limits[name] = def.limits(ctx);
  return limits;
}
