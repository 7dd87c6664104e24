/**
 * The building blocks of opSupportLimits() (spec §opSupportLimits) that operator modules use for
 * their own `limits()`: MLRankRange, MLTensorLimits, the graph I/O data types. The assembly of
 * the whole dictionary is ops/support_limits.js, which op modules do not import (no cycle).
 */
import {MAX_RANK} from '../dtypes.js';

/** MLRankRange {min, max}. */
export function rankRange(min = 0, max = MAX_RANK) {
  return {min, max};
}

/** MLTensorLimits {dataTypes, rankRange}. */
export function tensorLimits(dataTypes, range = rankRange()) {
  return {dataTypes: [...dataTypes], rankRange: {...range}};
}

/**
 * Data types graphs accept as inputs, constants and outputs: all of them, the 4-bit types as
 * Chromium does (float16, int8, uint8, int4 and uint4 are converted between their packed tensor
 * layout and the compute layout at the graph boundaries, compile/boundary.js).
 */
export const IO_TYPES = ['float32', 'float16', 'int32', 'uint32', 'int64', 'uint64', 'int8', 'uint8', 'int4', 'uint4'];
