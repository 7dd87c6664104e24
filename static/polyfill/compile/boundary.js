/**
 * Conversions between the tensor layout and the compute layout (see dtypes.js) at graph
 * boundaries: graph inputs, outputs and constants of float16, int8 and uint8.
 * float32, int32, uint32, int64 and uint64 need none.
 */
import {domError} from '../errors.js';
import {isDirect} from '../dtypes.js';

/**
 * Emits the step converting a raw input Value (tensor layout) to a new compute-layout Value.
 * @returns {object} the compute Value
 */
export function lowerBoundaryIn(L, raw, desc) {
  throw domError('NotSupportedError', `graph inputs of type ${desc.dataType} are not supported yet`, 'build');
}

/**
 * Emits the step converting compute Value `value` into the raw output Value `raw`.
 */
export function lowerBoundaryOut(L, value, raw, desc) {
  throw domError('NotSupportedError', `graph outputs of type ${desc.dataType} are not supported yet`, 'build');
}

/**
 * Compute-layout bytes of a constant given its tensor-layout bytes.
 * @param {Uint8Array} bytes
 * @returns {Uint8Array} length a multiple of 4
 */
export function constantComputeBytes(bytes, desc) {
  if (!isDirect(desc.dataType)) {
    throw domError('NotSupportedError', `constants of type ${desc.dataType} are not supported yet`, 'build');
  }
  if (bytes.byteLength % 4 === 0) return bytes;
  const padded = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
  padded.set(bytes);
  return padded;
}
