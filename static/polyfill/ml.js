/**
 * ML (spec §ML): navigator.ml. createContext(options) asks WebGPU for an adapter and device of
 * its own; createContext(gpuDevice) runs on the application's device and queue.
 */
import {domError} from './errors.js';
import {createContextObject} from './context.js';
import {checkDeviceAlive} from './interop.js';
import {polyfillOptions} from './options.js';

/** Device limits we ask for when the adapter offers more than the defaults. */
const WANTED_LIMITS = ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage', 'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX'];

export class ML {
  /**
   * Spec createContext(options) and createContext(gpuDevice).
   *
   * With a GPUDevice, the context records its work on that device and submits it to its queue
   * (ordered with the application's own submissions); it never destroys the device. When the
   * application destroys the device (or it is lost), the context is lost: `lost` resolves, its
   * graphs and tensors are destroyed, and later calls throw InvalidStateError. Tensors from
   * createExportableTensor() can then be shared with the device without copies (interop.js).
   * @param {MLContextOptions|GPUDevice} [options] {powerPreference: 'default'|'high-performance'|'low-power',
   *   accelerated, polyfill}; unknown members such as deviceType are ignored. `polyfill` holds
   *   this polyfill's own options (native WebNN ignores it): {fastReadback = true} keeps queue
   *   waits prompt on hardware adapters (gpu/completion.js; false turns it off), {profiling =
   *   false} records GPU time per graph step where the adapter has "timestamp-query"
   *   (profiling.js). A GPUDevice gets the defaults (options.js configureContext() changes them).
   * @returns {Promise<MLContext>}
   * @throws (rejects) NotSupportedError when WebGPU offers no adapter or device;
   *   TypeError for an invalid powerPreference; InvalidStateError for a GPUDevice already lost
   */
  async createContext(options = {}) {
    if (typeof GPUDevice !== 'undefined' && options instanceof GPUDevice) {
      await checkDeviceAlive(options);
      return createContextObject(options, {ownsDevice: false, adapterInfo: options.adapterInfo, powerPreference: 'default'});
    }
    const powerPreference = options?.powerPreference ?? 'default';
    if (!['default', 'high-performance', 'low-power'].includes(powerPreference)) {
      throw new TypeError(`createContext: invalid powerPreference "${String(powerPreference)}"`);
    }
    const polyfill = polyfillOptions(options);
    if (!globalThis.navigator?.gpu) throw domError('NotSupportedError', 'WebGPU is not available in this browser', 'createContext');
    // Some GPU hosts answer null at first, and more often without a powerPreference: retry,
    // then ask for 'high-performance' before giving up.
    const requests = [powerPreference === 'default' ? {} : {powerPreference}, {powerPreference: 'high-performance'}];
    let adapter = null;
    for (let attempt = 0; attempt < 4 && !adapter; attempt++) {
      adapter = await navigator.gpu.requestAdapter(requests[Math.min(attempt >> 1, 1)]);
      if (!adapter && attempt < 3) await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
    if (!adapter) throw domError('NotSupportedError', 'no WebGPU adapter is available', 'createContext');
    const requiredLimits = {};
    for (const name of WANTED_LIMITS) {
      if (adapter.limits[name] !== undefined) requiredLimits[name] = adapter.limits[name];
    }
    const requiredFeatures = ['shader-f16', 'timestamp-query'].filter((f) => adapter.features.has(f));
    let device;
    try {
      device = await adapter.requestDevice({requiredLimits, requiredFeatures, label: 'webnn'});
    } catch (e) {
      throw domError('NotSupportedError', `requestDevice failed: ${e.message}`, 'createContext');
    }
    return createContextObject(device, {ownsDevice: true, adapterInfo: adapter.info, powerPreference, polyfill});
  }

  get [Symbol.toStringTag]() { return 'ML'; }
}

