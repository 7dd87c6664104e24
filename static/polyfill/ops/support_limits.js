/**
 * opSupportLimits() (spec §opSupportLimits): assembled from each operator's own `limits()` so
 * that it lists exactly what the kernels implement. Kept apart from ops/limits.js because it
 * imports every operator (ops/index.js), which in turn import ops/limits.js.
 */
import {OPERATORS} from './index.js';
import {IO_TYPES, tensorLimits} from './limits.js';

/**
 * @param {object} ctx context slots
 * @returns {object} MLOpSupportLimits
 */
export function opSupportLimits(ctx) {
  const limits = {
    preferredInputLayout: 'nchw',
    maxTensorByteLength: ctx.tensorLimit.maxTensorByteLength,
    input: tensorLimits(IO_TYPES),
    constant: tensorLimits(IO_TYPES),
    output: tensorLimits(IO_TYPES),
  };
  for (const [name, def] of Object.entries(OPERATORS)) limits[name] = def.limits(ctx);
  return limits;
}
