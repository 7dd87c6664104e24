/**
 * Size limits that follow from the GPUDevice a context runs on (WebGPU limits, in bytes).
 * Imports nothing, so compile/, builder_state.js and ops/ can all use it.
 */

/**
 * Largest buffer one kernel can bind on this device, in bytes:
 * min(maxBufferSize, maxStorageBufferBindingSize).
 * @param {GPUDevice} device
 * @returns {number} bytes
 */
export function maxBindingBytes(device) {
  return Math.min(device.limits.maxBufferSize, device.limits.maxStorageBufferBindingSize);
}

/**
 * Spec opSupportLimits().maxTensorByteLength: the largest tensor (tensor layout bytes) that works
 * for every data type. The compute layout widens int8/uint8 four times and float16 twice
 * (dtypes.js), so this is a quarter of the binding limit. It is the one size limit: every operand
 * a builder makes and every tensor a context creates must fit it (shape/common.js checkTensorSize).
 * @param {GPUDevice} device
 * @returns {number} bytes
 */
export function maxTensorByteLength(device) {
  return Math.floor(maxBindingBytes(device) / 4);
}
