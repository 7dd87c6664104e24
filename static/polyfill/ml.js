/**
 * ML (spec §ML): navigator.ml. createContext(options) picks the WebGPU context (an adapter and
 * device of its own) or the CPU context (cpu/backend.js: ONNX Runtime Web's wasm EP, loaded on
 * first use); createContext(gpuDevice) runs on the application's device and queue.
 *
 * Which one (chooseDevice below): `deviceType: 'cpu'` (Chromium 156's MLContextOptions member)
 * or `accelerated: false` (the spec's) asks for the CPU; `deviceType: 'gpu'` or `'npu'` for
 * WebGPU, whatever the adapter. Otherwise the page default `globalThis.webnnPolyfillOptions =
 * {deviceType}` (set before the first createContext(); the test suite sets 'gpu') applies, and
 * without one: WebGPU on a hardware adapter, the CPU context when there is no adapter or only a
 * fallback / software one (SwiftShader), and WebGPU on that software adapter after all when ONNX
 * Runtime's files cannot be loaded.
 */
import {domError} from './errors.js';
import {createWebGpuContext} from './webgpu_backend.js';
import {checkDeviceAlive} from './interop.js';
import {polyfillOptions} from './options.js';
import {isSoftwareAdapter} from './ops/adapter_kind.js';
import {enumValue} from './shape/common.js';

/** MLPowerPreference values. */
const POWER_PREFERENCES = ['default', 'high-performance', 'low-power'];
/** Chromium 156's MLDeviceType (the spec has none: it chooses by `accelerated`). */
const DEVICE_TYPES = ['cpu', 'gpu', 'npu'];

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
   *   accelerated, deviceType: 'cpu'|'gpu'|'npu', polyfill} (see the module comment for the
   *   choice between the WebGPU and the CPU context). `polyfill` holds
   *   this polyfill's own options (native WebNN ignores it): {fastReadback = true} keeps queue
   *   waits prompt on hardware adapters (gpu/completion.js; false turns it off), {profiling =
   *   false} records GPU time per graph step where the adapter has "timestamp-query"
   *   (profiling.js), {ortBaseUrl} where the CPU context loads ONNX Runtime from (default
   *   /polyfill/vendor/ort/ next to this module), {threads} ORT's thread count (default 1, or
   *   min(4, cores) when the page is cross-origin isolated), {tuning} the switches of tuning.js
   *   (tests and benchmarks). A GPUDevice gets the defaults
   *   (options.js configureContext() changes them).
   * @returns {Promise<MLContext>}
   * @throws (rejects) NotSupportedError when WebGPU offers no adapter or device for a GPU
   *   request, or ONNX Runtime cannot be loaded for a CPU one (and there is no adapter);
   *   TypeError for an invalid powerPreference or deviceType; InvalidStateError for a GPUDevice already lost
   */
  async createContext(options = {}) {
    if (typeof GPUDevice !== 'undefined' && options instanceof GPUDevice) {
      await checkDeviceAlive(options);
      return createWebGpuContext(options, {ownsDevice: false, adapterInfo: options.adapterInfo, powerPreference: 'default'});
    }
    // WebIDL: the enum member is converted by ToString (a String object or toString() counts)
    const powerPreference = enumValue(options?.powerPreference, POWER_PREFERENCES, 'default', 'createContext', 'powerPreference');
    const polyfill = polyfillOptions(options);
    const wanted = chooseDevice(options);
    if (wanted === 'cpu') return cpuContext(options, powerPreference, polyfill);
    if (!globalThis.navigator?.gpu) {
      if (wanted === 'auto') return cpuContext(options, powerPreference, polyfill);
      throw domError('NotSupportedError', 'WebGPU is not available in this browser', 'createContext');
    }
    // Some GPU hosts answer null at first, and more often without a powerPreference: retry,
    // then ask for 'high-performance' before giving up.
    const requests = [powerPreference === 'default' ? {} : {powerPreference}, {powerPreference: 'high-performance'}];
    let adapter = null;
    for (let attempt = 0; attempt < 4 && !adapter; attempt++) {
      adapter = await navigator.gpu.requestAdapter(requests[Math.min(attempt >> 1, 1)]);
      if (!adapter && attempt < 3) await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
    if (!adapter && wanted === 'auto') return cpuContext(options, powerPreference, polyfill);
    if (!adapter) throw domError('NotSupportedError', 'no WebGPU adapter is available', 'createContext');
    if (wanted === 'auto' && isSoftwareAdapter({adapterInfo: {architecture: adapter.info?.architecture, description: adapter.info?.description,
      isFallbackAdapter: adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter}})) {
      try {
        return await cpuContext(options, powerPreference, polyfill);
      } catch (e) {
        if (e?.name !== 'NotSupportedError') throw e; // no ONNX Runtime files: the software adapter it is
      }
    }
    const requiredLimits = {};
    for (const name of WANTED_LIMITS) {
      if (adapter.limits[name] !== undefined) requiredLimits[name] = adapter.limits[name];
    }
    // subgroups: the packed matrix-vector kernel's reduction (ops/quantized_gemv.js)
    const requiredFeatures = ['shader-f16', 'timestamp-query', 'subgroups'].filter((f) => adapter.features.has(f));
    // the f16 matrix units (ops/matmul_matrix_units.js): subgroup matrices, which need subgroups
    const matrix = ['shader-f16', 'subgroups', 'chromium-experimental-subgroup-matrix'];
    if (matrix.every((f) => adapter.features.has(f))) requiredFeatures.push(matrix[2]);
    let device;
    try {
      device = await adapter.requestDevice({requiredLimits, requiredFeatures, label: 'webnn'});
    } catch (e) {
      throw domError('NotSupportedError', `requestDevice failed: ${e.message}`, 'createContext');
    }
    return createWebGpuContext(device, {ownsDevice: true, adapterInfo: adapter.info, powerPreference, polyfill});
  }

  get [Symbol.toStringTag]() { return 'ML'; }
}

/**
 * Which context `options` asks for: 'cpu', 'gpu', or 'auto' (the adapter decides).
 * @param {object} options MLContextOptions
 * @returns {'cpu'|'gpu'|'auto'}
 */
function chooseDevice(options) {
  const explicit = deviceOf(options);
  if (explicit) return explicit;
  return deviceOf(globalThis.webnnPolyfillOptions) ?? 'auto';
}

function deviceOf(options) {
  if (options === null || typeof options !== 'object') return null;
  // WebIDL: `boolean accelerated` converts by ToBoolean (0, '' and null are false); the enum
  // deviceType by ToString, a value outside it a TypeError (as Chromium's MLDeviceType)
  const deviceType = enumValue(options.deviceType, DEVICE_TYPES, null, 'createContext', 'deviceType');
  if ((options.accelerated !== undefined && !options.accelerated) || deviceType === 'cpu') return 'cpu';
  if (deviceType === 'gpu' || deviceType === 'npu') return 'gpu';
  return null;
}

/** The CPU context, its module loaded on first use (a WebGPU-only page never fetches it). */
async function cpuContext(options, powerPreference, polyfill) {
  const {createCpuContext} = await import('./cpu/backend.js');
  const p = options?.polyfill;
  return createCpuContext({powerPreference, ortBaseUrl: p?.ortBaseUrl, threads: p?.threads, tuning: polyfill.tuning});
}

