/**
 * WebGPU reports allocation failures and invalid calls asynchronously, through error scopes.
 * `captureErrors` runs a synchronous block of GPU calls inside 'out-of-memory' and 'validation'
 * scopes (pushed and popped around that block only, so concurrent work elsewhere on the device
 * cannot land in them) and resolves to the first error, or null.
 */

/**
 * @param {GPUDevice} device
 * @param {() => T} block synchronous GPU calls
 * @returns {{result: T, error: Promise<GPUError|null>}}
 * @template T
 */
export function captureErrors(device, block) {
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  let result;
  try {
    result = block();
  } finally {
    const outOfMemory = device.popErrorScope();
    const validation = device.popErrorScope();
    // eslint-disable-next-line no-var
    var error = Promise.all([outOfMemory, validation]).then(([o, v]) => o ?? v, () => null);
  }
  return {result, error};
}
