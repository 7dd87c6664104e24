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
 * Spec opSupportLimits().maxTensorByteLength: the largest tensor one binding holds, in the
 * compute layout's bytes (dtypes.js COMPUTE_ELEMENT_BYTES), so that every operand and tensor a
 * context accepts fits one storage binding as the kernels read it. float32, int32, uint32,
 * int64 and uint64 take their own size there, so a tensor of those types may fill the binding
 * limit; float16 takes twice its size, int8/uint8 four times and int4/uint4 eight times, so a
 * tensor of those may take that fraction of the limit (shape/common.js checkTensorSize, the one
 * size check). The capacity is the binding limit rounded down to a multiple of 8 bytes (the
 * widest element); the value reported is one byte less, as Chromium 156 reports INT32_MAX
 * (2^31 - 1, `tensor_byte_length_limit` in its ORT and TFLite backends' context properties)
 * rather than a power of two. So the limit is never a multiple of an element size, and a shape
 * of floor((limit + 1) / size) elements (the form the web-platform-tests use) is always over it,
 * as is one of floor(limit / size) + 1.
 * @param {GPUDevice} device
 * @returns {number} bytes, 8k - 1 for some k
 */
export function maxTensorByteLength(device) {
  const capacity = maxBindingBytes(device);
  return capacity - (capacity % 8) - 1;
}
