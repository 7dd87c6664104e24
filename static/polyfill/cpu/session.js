/**
 * Loading ONNX Runtime Web's wasm build for the CPU context, and one InferenceSession per graph.
 *
 * The engine is `ort.wasm.min.mjs` (onnxruntime-web, pinned in tools/bench_ort.py, copied by
 * `make setup` into static/polyfill/vendor/ort/): it registers the wasm EP only, so it can never
 * call back into this polyfill as ORT's WebNN EP would. It is imported lazily, by the first CPU
 * context, with a query string of its own, so the page's own copy of ORT (if any) is another
 * module instance with its own `env` and wasm heap.
 */
import {domError} from '../errors.js';

/** The version of onnxruntime-web this polyfill is tested with (tools/bench_ort.py ORT_VERSION). */
export const ORT_VERSION = '1.30.0';

/**
 * Default folder of the ORT files: static/polyfill/vendor/ort/ next to this module's folder.
 * @returns {string} absolute URL ending in '/'
 */
export function defaultOrtBase() {
  return new URL('../vendor/ort/', import.meta.url).href;
}

/**
 * The folder URL `base` names, absolute and ending in '/': a relative URL resolves against the
 * page (as the page's own URLs do, not against this module), and a folder given without its
 * trailing slash still names that folder.
 * @param {string} base
 * @returns {string}
 * @throws TypeError when `base` is not a URL
 */
export function folderUrl(base) {
  const url = new URL(String(base), globalThis.location?.href ?? import.meta.url);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}

/**
 * Threads ORT may use: several only in a cross-origin isolated page (SharedArrayBuffer), at
 * most 4 (Chromium's TFLite CPU backend uses min(4, (cores + 1) / 2)), else 1.
 * @returns {number}
 */
export function defaultThreads() {
  if (!globalThis.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(4, globalThis.navigator?.hardwareConcurrency ?? 1));
}

/**
 * Imports ORT's wasm build from `base` and configures it (first import only: ORT reads `env`
 * when it first initialises).
 * @param {string} folder folder URL holding ort.wasm.min.mjs, ort-wasm-simd-threaded.mjs and .wasm
 *   (see folderUrl: relative to the page, trailing slash optional)
 * @param {number} threads env.wasm.numThreads
 * @returns {Promise<object>} the ORT module namespace
 * @throws (rejects) NotSupportedError when the files cannot be loaded
 */
export async function loadOrt(folder, threads) {
  let ort, base;
  try {
    base = folderUrl(folder);
    ort = await import(`${base}ort.wasm.min.mjs?webnn-polyfill-cpu`);
  } catch (e) {
    throw domError('NotSupportedError', `the CPU context needs onnxruntime-web ${ORT_VERSION} at ${base ?? folder} (make setup copies it there): ${e?.message ?? e}`, 'createContext');
  }
  if (!ort.env.wasm.webnnPolyfillConfigured) {
    ort.env.wasm.wasmPaths = base;
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = 'fatal'; // failures reach the caller as DOMExceptions, not the console
    Object.defineProperty(ort.env.wasm, 'webnnPolyfillConfigured', {value: true});
  }
  return ort;
}

/**
 * Creates a session for an ONNX model on the wasm EP.
 * @param {object} ort the module from loadOrt()
 * @param {Uint8Array} model ModelProto bytes
 * @returns {Promise<object>} the InferenceSession
 * @throws (rejects) NotSupportedError when ORT has no kernel for a node (NOT_IMPLEMENTED) or
 *   rejects the model otherwise (the message is ORT's)
 */
export async function createSession(ort, model) {
  try {
    return await ort.InferenceSession.create(model, {
      executionProviders: ['wasm'], graphOptimizationLevel: 'all', enableMemPattern: true, enableCpuMemArena: true, logSeverityLevel: 4,
    });
  } catch (e) {
    throw domError('NotSupportedError', `ONNX Runtime (wasm) cannot run the graph: ${e?.message ?? e}`, 'build');
  }
}
