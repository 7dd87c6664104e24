/**
 * This polyfill's own context options (native WebNN has none and ignores the `polyfill` member
 * of MLContextOptions): `fastReadback` (default true; gpu/completion.js), `profiling`
 * (default false; profiling.js), `productPrecision` (default 'float32'; 'float16': float32
 * matrix products run on the GPU's f16 matrix units where it has them, operands rounded to
 * binary16 and sums in f32; ops/matmul_matrix_units.js) and `tuning` (the switches of tuning.js,
 * for tests and benchmarks; default: the adapter decides).
 *
 *   navigator.ml.createContext({powerPreference, polyfill: {fastReadback: false, profiling: true}})
 *   navigator.ml.createContext({polyfill: {productPrecision: 'float16'}})
 *   navigator.ml.createContext({polyfill: {tuning: {matmul: 'tiled', splitK: 2}}})
 *
 * A context made by createContext(gpuDevice) starts with the defaults; configureContext() sets
 * them on any context of this polyfill, and contextInfo() reads them back with the adapter's info.
 */
import {contextSlots} from './context.js';
import {DEFAULT_TUNING, withTuning} from './tuning.js';
import {matrixUnits} from './ops/matmul_matrix_units.js';

/**
 * Reads `options.polyfill`: anything but an object counts as none (native WebNN ignores the
 * member); fastReadback and profiling convert to booleans.
 * @param {object} [options] MLContextOptions
 * @returns {{fastReadback: boolean, profiling: boolean, productPrecision: string, tuning: object}} tuning: a frozen tuning.js object
 * @throws {TypeError} `polyfill` has a member other than CREATE_OPTIONS, `polyfill.tuning` names
 *   an unknown switch or a value of the wrong kind, or `polyfill.productPrecision` is neither
 *   'float32' nor 'float16'
 */
export function polyfillOptions(options) {
  const given = options?.polyfill;
  const p = given !== null && (typeof given === 'object' || typeof given === 'function') ? given : {};
  knownNames(p, CREATE_OPTIONS, 'createContext', 'polyfill option');
  return {fastReadback: p.fastReadback === undefined ? true : Boolean(p.fastReadback), profiling: Boolean(p.profiling),
    productPrecision: productPrecision(p.productPrecision, 'createContext', 'polyfill.productPrecision') ?? 'float32',
    tuning: withTuning(DEFAULT_TUNING, p.tuning, 'createContext')};
}

/** The members of `polyfill` createContext reads (ortBaseUrl and threads: the CPU context's, cpu/backend.js). */
const CREATE_OPTIONS = ['fastReadback', 'profiling', 'productPrecision', 'tuning', 'ortBaseUrl', 'threads'];
/** The members configureContext reads. */
const CONFIGURE_OPTIONS = ['fastReadback', 'profiling', 'productPrecision', 'tuning'];

/**
 * Throws a TypeError naming a member of `given` that is not in `known`: a misspelt option fails
 * where it is given instead of leaving the default in force unnoticed (as tuning switches do).
 */
function knownNames(given, known, label, what) {
  const unknown = Object.keys(given).find((name) => !known.includes(name));
  if (unknown !== undefined) throw new TypeError(`${label}: unknown ${what} "${unknown}" (known: ${known.join(', ')})`);
}

/**
 * A productPrecision value checked: undefined stays undefined (no change), null is the default
 * 'float32' (as a tuning member's null is its default), else 'float32' or 'float16'.
 */
function productPrecision(value, label, name) {
  if (value === null) return 'float32';
  if (value === undefined || value === 'float32' || value === 'float16') return value;
  throw new TypeError(`${label}: ${name} must be 'float32' or 'float16'`);
}

/**
 * Sets this polyfill's options on a context, e.g. one made by createContext(gpuDevice).
 * `fastReadback` applies to waits from now on; `profiling` to graphs built from now on (it needs
 * a device with "timestamp-query": for createContext(gpuDevice), request that feature when
 * creating the device); `productPrecision` to graphs built from now on; `tuning` (tuning.js) to
 * graphs built, and tensors written, read and
 * dispatched, from now on: the members given replace the current ones (undefined or null: back to
 * the default), the others keep their value. Members left undefined keep their value.
 * @param {MLContext} context a context of this polyfill
 * @param {{fastReadback?: boolean, profiling?: boolean, productPrecision?: string, tuning?: object}} options
 * @returns {{fastReadback: boolean, profiling: boolean, productPrecision: string, tuning: object}} the
 *   settings now in force (profiling: whether graphs built now are profiled; tuning: the frozen switches)
 * @throws {TypeError} `context` is not an MLContext of this polyfill, `options` has a member
 *   other than CONFIGURE_OPTIONS, `tuning` names an unknown switch or a value of the wrong kind,
 *   or `productPrecision` is neither 'float32' nor 'float16'
 */
export function configureContext(context, options) {
  const s = contextSlots(context);
  if (!s) throw new TypeError('configureContext: argument is not an MLContext of this polyfill');
  knownNames(options ?? {}, CONFIGURE_OPTIONS, 'configureContext', 'option');
  const {fastReadback, profiling, productPrecision: precision, tuning} = options ?? {};
  const checked = productPrecision(precision, 'configureContext', 'productPrecision');
  s.tuning = withTuning(s.tuning, tuning, 'configureContext');
  if (!s.backend.accelerated) return {fastReadback: false, profiling: false, productPrecision: 'float32', tuning: s.tuning}; // the CPU context has none of them
  if (checked) s.productPrecision = checked;
  s.completion.tune(s.tuning);
  if (fastReadback !== undefined) s.completion.enabled = Boolean(fastReadback);
  if (profiling !== undefined) {
    s.profilingRequested = Boolean(profiling);
    s.profiling = Boolean(profiling) && s.device.features.has('timestamp-query');
  }
  return {fastReadback: s.completion.enabled, profiling: s.profiling, productPrecision: s.productPrecision, tuning: s.tuning};
}

/**
 * What a context of this polyfill runs on and with, for pages and tools that report it.
 * @param {MLContext} context
 * @returns {{accelerated: boolean, adapterInfo: ?object, fastReadback: boolean, profiling: boolean,
 *   productPrecision: string, matrixUnits: ?object, tuning: object}} adapterInfo: the WebGPU
 *   adapter's info (vendor, architecture, device, description, isFallbackAdapter), null for the
 *   CPU context; productPrecision: as set (it changes products only where matrixUnits is not
 *   null; the CPU context reports 'float32'); matrixUnits: the f16 subgroup-matrix configuration
 *   products run on ({M, N, K, subgroupSize, grid}), null where the device has none
 * @throws {TypeError} `context` is not an MLContext of this polyfill
 */
export function contextInfo(context) {
  const s = contextSlots(context);
  if (!s) throw new TypeError('contextInfo: argument is not an MLContext of this polyfill');
  if (!s.backend.accelerated) {
    return {accelerated: false, adapterInfo: null, fastReadback: false, profiling: false, productPrecision: 'float32', matrixUnits: null, tuning: s.tuning};
  }
  const info = s.adapterInfo;
  const adapterInfo = info ? Object.fromEntries(['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter']
    .filter((k) => info[k] !== undefined).map((k) => [k, info[k]])) : null;
  return {accelerated: true, adapterInfo, fastReadback: s.completion.enabled, profiling: s.profiling, productPrecision: s.productPrecision,
    matrixUnits: matrixUnits(s), tuning: s.tuning};
}
