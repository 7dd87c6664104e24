/**
 * This polyfill's own context options (native WebNN has none and ignores the `polyfill` member
 * of MLContextOptions): `fastReadback` (default true; gpu/completion.js) and `profiling`
 * (default false; profiling.js).
 *
 *   navigator.ml.createContext({powerPreference, polyfill: {fastReadback: false, profiling: true}})
 *
 * A context made by createContext(gpuDevice) starts with the defaults; configureContext() sets
 * them on any context of this polyfill.
 */
import {contextSlots} from './context.js';

/**
 * Reads `options.polyfill`: anything but an object counts as none (native WebNN ignores the
 * member, so this never throws); members convert to booleans.
 * @param {object} [options] MLContextOptions
 * @returns {{fastReadback: boolean, profiling: boolean}}
 */
export function polyfillOptions(options) {
  const given = options?.polyfill;
  const p = given !== null && (typeof given === 'object' || typeof given === 'function') ? given : {};
  return {fastReadback: p.fastReadback === undefined ? true : Boolean(p.fastReadback), profiling: Boolean(p.profiling)};
}

/**
 * Sets this polyfill's options on a context, e.g. one made by createContext(gpuDevice).
 * `fastReadback` applies to waits from now on; `profiling` to graphs built from now on (it needs
 * a device with "timestamp-query": for createContext(gpuDevice), request that feature when
 * creating the device). Members left undefined keep their value.
 * @param {MLContext} context a context of this polyfill
 * @param {{fastReadback?: boolean, profiling?: boolean}} options
 * @returns {{fastReadback: boolean, profiling: boolean}} the settings now in force (profiling:
 *   whether graphs built now are profiled)
 * @throws {TypeError} `context` is not an MLContext of this polyfill
 */
export function configureContext(context, {fastReadback, profiling} = {}) {
  const s = contextSlots(context);
  if (!s) throw new TypeError('configureContext: argument is not an MLContext of this polyfill');
  if (s.cpu) return {fastReadback: false, profiling: false}; // the CPU context has neither
  if (fastReadback !== undefined) s.completion.enabled = Boolean(fastReadback);
  if (profiling !== undefined) {
    s.profilingRequested = Boolean(profiling);
    s.profiling = Boolean(profiling) && s.device.features.has('timestamp-query');
  }
  return {fastReadback: s.completion.enabled, profiling: s.profiling};
}
