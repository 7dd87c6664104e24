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
 * (dtypes.js), so the capacity is a quarter of the binding limit, rounded down to a multiple of 8
 * bytes (the widest element); the value reported is one byte less than that capacity, as
 * Chromium 156 reports INT32_MAX (2^31 - 1, `tensor_byte_length_limit` in its ORT and TFLite
 * backends' context properties) rather than a power of two. So the limit is never a
 * multiple of an element size, and a shape of floor((limit + 1) / size) elements (the form the
 * web-platform-tests use) is always over it, as is one of floor(limit / size) + 1. It is the one
 * size limit: every operand a builder makes and every tensor a context creates must fit it
 * (shape/common.js checkTensorSize).
 * @param {GPUDevice} device
 * @returns {number} bytes, 8k - 1 for some k
 */
export function maxTensorByteLength(device) {
  const capacity = Math.floor(maxBindingBytes(device) / 4);
  return capacity - (capacity % 8) - 1;
}
