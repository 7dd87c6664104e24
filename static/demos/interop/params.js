/**
 * The interop demo's parameters: the size presets, the accepted ranges, and their validation, for
 * the page's URL query and for window.interopDemo.run(options). No WebGPU here: the page checks its
 * URL with this module before it asks for an adapter, so a bad parameter is reported on the page
 * and creates no GPU object (and no WebGPU validation warning).
 */

/** Sizes: small finishes in seconds on SwiftShader; large is for real GPUs. */
export const PRESETS = Object.freeze({
  small: {shape: [1, 16, 48, 48], filters: 16, iterations: 20, warmup: 3},
  medium: {shape: [1, 32, 112, 112], filters: 32, iterations: 30, warmup: 5},
  large: {shape: [1, 64, 224, 224], filters: 64, iterations: 50, warmup: 5},
});

/** The size used when the URL names none. */
export const DEFAULT_SIZE = 'small';

/**
 * Accepted ranges, inclusive. `elements` caps each of the input [N, C, H, W] and the output
 * [N, filters, H, W] (2^24 float32 = 64 MiB per buffer, inside WebGPU's default 128 MiB
 * maxStorageBufferBindingSize; the experiment allocates about ten such buffers).
 */
export const LIMITS = Object.freeze({
  n: {min: 1, max: 64},
  c: {min: 1, max: 1024},
  h: {min: 1, max: 4096},
  w: {min: 1, max: 4096},
  filters: {min: 1, max: 1024},
  iterations: {min: 1, max: 1000},
  warmup: {min: 0, max: 100},
  elements: 2 ** 24,
});

/** The URL parameters the page reads, in the order of the documentation. */
export const URL_PARAMETERS = Object.freeze(['size', 'shape', 'filters', 'iterations', 'warmup', 'autorun']);

const DIMS = ['N', 'C', 'H', 'W'];
const DIM_LIMITS = [LIMITS.n, LIMITS.c, LIMITS.h, LIMITS.w];
const range = ({min, max}) => `${min} to ${max}`;
/** A URL value as quoted in a message (shortened: the message goes on the page). */
const quote = (text) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
const times = (shape) => shape.join('×');

/**
 * The accepted URL parameters and their ranges, for the page's documentation.
 * @returns {{name: string, syntax: string, text: string}[]}
 */
export function describeParameters() {
  const presets = Object.entries(PRESETS).map(([name, p]) => `${name} (${times(p.shape)}, ${p.filters} filters, ` +
    `${p.iterations} iterations after ${p.warmup} warm-up)`).join(', ');
  const dims = DIMS.map((d, i) => `${d} ${range(DIM_LIMITS[i])}`).join(', ');
  return [
    {name: 'size', syntax: Object.keys(PRESETS).join(' | '), text: `a preset: ${presets}. Default ${DEFAULT_SIZE}.`},
    {name: 'shape', syntax: 'N,C,H,W', text: `the input shape instead of the preset's: four integers, ${dims}; ` +
      `the input (N·C·H·W) and the output (N·filters·H·W) at most ${LIMITS.elements.toLocaleString('en-US')} ` +
      `(2^${Math.log2(LIMITS.elements)}) elements each.`},
    {name: 'filters', syntax: 'integer', text: `output channels O, ${range(LIMITS.filters)}. Default: the preset's.`},
    {name: 'iterations', syntax: 'integer', text: `timed rounds (each variant once per round), ${range(LIMITS.iterations)}. ` +
      `Default: the preset's.`},
    {name: 'warmup', syntax: 'integer', text: `untimed runs of each variant first, ${range(LIMITS.warmup)}. Default: the preset's.`},
    {name: 'autorun', syntax: '0 | 1', text: '0 waits for the Run button; 1 (the default) runs on load.'},
  ];
}

/**
 * Checks one integer against its range; pushes a message to `problems` when it fails.
 * @returns {boolean} whether it passed
 */
function checkInteger(problems, label, value, limits) {
  if (Number.isSafeInteger(value) && value >= limits.min && value <= limits.max) return true;
  problems.push(`${label} must be an integer from ${range(limits)}; got ${typeof value === 'string' ? quote(value) : String(value)}`);
  return false;
}

/** Parses a URL integer: decimal digits only (no sign, point, exponent or space); else the string. */
const parseInteger = (text) => (/^[0-9]+$/.test(text) ? Number(text) : text);

/**
 * Checks a run's configuration (already numbers): the ranges in LIMITS.
 * @param {{shape: number[], filters: number, iterations: number, warmup: number}} options
 * @returns {string[]} the problems found, empty when the configuration is accepted
 */
export function configProblems({shape, filters, iterations, warmup}) {
  const problems = [];
  let dimsOk = false;
  if (!Array.isArray(shape) || shape.length !== 4) {
    problems.push(`shape must be 4 integers N,C,H,W; got ${Array.isArray(shape) ? `${shape.length} values` : typeof shape}`);
  } else {
    dimsOk = DIMS.map((d, i) => checkInteger(problems, `shape ${d}`, shape[i], DIM_LIMITS[i])).every(Boolean);
  }
  const filtersOk = checkInteger(problems, 'filters', filters, LIMITS.filters);
  checkInteger(problems, 'iterations', iterations, LIMITS.iterations);
  checkInteger(problems, 'warmup', warmup, LIMITS.warmup);
  if (dimsOk) {
    const [n, c, h, w] = shape;
    const cap = LIMITS.elements.toLocaleString('en-US');
    if (n * c * h * w > LIMITS.elements) {
      problems.push(`shape ${times(shape)} has ${(n * c * h * w).toLocaleString('en-US')} elements, more than ${cap}`);
    }
    if (filtersOk && n * filters * h * w > LIMITS.elements) {
      problems.push(`the output ${times([n, filters, h, w])} has ${(n * filters * h * w).toLocaleString('en-US')} ` +
        `elements, more than ${cap}`);
    }
  }
  return problems;
}

/**
 * Throws when a run's configuration is outside LIMITS (checked before any GPU object is made).
 * @param {{shape: number[], filters: number, iterations: number, warmup: number}} options
 * @throws {RangeError} listing every problem
 */
export function checkConfig(options) {
  const problems = configProblems(options);
  if (problems.length) throw new RangeError(`invalid options: ${problems.join('; ')}`);
}

/**
 * Reads the page's URL query: every parameter is checked, unknown or repeated names included.
 * @param {URLSearchParams} params
 * @returns {{size: string, shape: number[], filters: number, iterations: number, warmup: number,
 *   autorun: boolean}} size is 'custom' when `shape` is given
 * @throws {RangeError} listing every problem, with the message the page shows
 */
export function parseUrlParameters(params) {
  const problems = [];
  const seen = new Map();
  for (const name of params.keys()) seen.set(name, (seen.get(name) ?? 0) + 1);
  for (const [name, count] of seen) {
    if (!URL_PARAMETERS.includes(name)) problems.push(`unknown parameter ${quote(name)} (accepted: ${URL_PARAMETERS.join(', ')})`);
    else if (count > 1) problems.push(`${name} is given ${count} times; give it once`);
  }
  const sizeText = params.get('size') ?? DEFAULT_SIZE;
  const preset = PRESETS[sizeText];
  if (!Object.hasOwn(PRESETS, sizeText)) problems.push(`size must be one of ${Object.keys(PRESETS).join(', ')}; got ${quote(sizeText)}`);
  const autorunText = params.get('autorun') ?? '1';
  if (autorunText !== '0' && autorunText !== '1') problems.push(`autorun must be 0 or 1; got ${quote(autorunText)}`);

  const base = preset ?? PRESETS[DEFAULT_SIZE];
  const shapeText = params.get('shape');
  let shape = base.shape.slice();
  if (shapeText !== null) {
    const parts = shapeText.split(',');
    if (parts.length === 4) shape = parts.map(parseInteger);
    else problems.push(`shape must be 4 comma-separated integers N,C,H,W; got ${quote(shapeText)}`);
  }
  const integer = (name) => (params.get(name) === null ? base[name] : parseInteger(params.get(name)));
  const options = {shape, filters: integer('filters'), iterations: integer('iterations'), warmup: integer('warmup')};
  problems.push(...configProblems(options));
  if (problems.length) throw new RangeError(`invalid URL parameters: ${problems.join('; ')}`);
  return {size: shapeText === null ? sizeText : 'custom', ...options, autorun: autorunText === '1'};
}
