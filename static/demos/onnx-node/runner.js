/**
 * Runs ONNX node test cases (/models/onnx-node/<name>/: model.onnx, case.json, model_frozen.onnx;
 * tools/onnx_node_cases.py) through ONNX Runtime Web (../bench-ort/vendor/ort.min.mjs):
 * - `webnn`: the WebNN EP, `{name: 'webnn', deviceType: 'gpu'}`, with session option
 *   `disable_cpu_ep_fallback: '1'`, so a session exists only when every node runs on WebNN (here:
 *   this polyfill). When the session cannot be created and the case has attribute-like graph
 *   inputs (case.json `frozen`), it is created again from model_frozen.onnx, where those inputs
 *   are initializers, and they are left out of the feeds;
 * - `wasm`: ORT-web's wasm (CPU) EP on model.onnx, to tell ORT's own mistakes from ours.
 * Outputs stay undecoded: {type, dims, bytes (base64 of the little-endian data)}; the caller compares.
 */
import {fromBase64, toBase64} from '/harness/graph_json.js';
import {countWebNNCalls} from '/demos/bench-ort/runtimes.js';

const ORT_URL = new URL('../bench-ort/vendor/ort.min.mjs', import.meta.url).href;
const CASES = '/models/onnx-node/';
/** ORT-web tensor type -> typed array over the little-endian bytes */
const ARRAYS = {float32: Float32Array, float16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array};
/** Milliseconds one case may take (session creations and runs of both EPs). */
const CASE_TIMEOUT_MS = 60_000;

let ortModule;
/** ORT-web, imported once; single-threaded wasm; only its fatal messages reach the console. */
function ort() {
  ortModule ??= import(ORT_URL).then((o) => {
    o.env.wasm.numThreads = 1;
    o.env.logLevel = 'fatal';
    return o;
  });
  return ortModule;
}

const errorText = (e) => `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}`.slice(0, 600);

function tensorOf(o, t) {
  const bytes = fromBase64(t.bytes);
  return new o.Tensor(t.type, new ARRAYS[t.type](bytes.buffer, 0, bytes.byteLength / ARRAYS[t.type].BYTES_PER_ELEMENT), t.shape);
}

function encode(tensor) {
  const d = tensor.data;
  return {type: tensor.type, dims: [...tensor.dims], bytes: toBase64(new Uint8Array(d.buffer, d.byteOffset, d.byteLength))};
}

/** Session options per EP; ORT's own log (console.error, refused sessions included) only when fatal. */
const SESSION_OPTIONS = {
  webnn: {executionProviders: [{name: 'webnn', deviceType: 'gpu'}], extra: {session: {disable_cpu_ep_fallback: '1'}},
    logSeverityLevel: 4},
  wasm: {executionProviders: ['wasm'], logSeverityLevel: 4},
};

/**
 * One EP on one model over every data set.
 * @returns {{builds, outputs: [[encoded per output] per data set]} | {stage: 'session'|'run', error, builds?}}
 */
async function runOn(ep, model, meta, skip = new Set()) {
  const o = await ort();
  const counts = countWebNNCalls();
  const before = counts.builds;
  let session;
  try {
    session = await o.InferenceSession.create(model, SESSION_OPTIONS[ep]);
  } catch (e) {
    return {stage: 'session', error: errorText(e)};
  }
  const builds = counts.builds - before;
  try {
    const outputs = [];
    for (const set of meta.datasets) {
      const feeds = {};
      for (const t of set.inputs) if (!skip.has(t.name)) feeds[t.name] = tensorOf(o, t);
      const result = await session.run(feeds);
      outputs.push(meta.outputs.map((name) => encode(result[name])));
    }
    return {builds, outputs};
  } catch (e) {
    return {stage: 'run', error: errorText(e), builds};
  } finally {
    await session.release();
  }
}

const bytesOf = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());

/** One case: {name, webnn: {..., frozen?}, wasm?} (see runOn); `frozenFirst`: straight to model_frozen.onnx. */
async function runCase(name, {wasm, frozenFirst}) {
  const base = `${CASES}${name}/`;
  const meta = await (await fetch(base + 'case.json')).json();
  const result = {name};
  if (frozenFirst && meta.frozen.length) {
    result.webnn = {...await runOn('webnn', await bytesOf(base + 'model_frozen.onnx'), meta, new Set(meta.frozen)), frozen: true};
  } else {
    result.webnn = await runOn('webnn', await bytesOf(base + 'model.onnx'), meta);
  }
  if (result.webnn.stage === 'session' && meta.frozen.length && !result.webnn.frozen) {
    const retry = await runOn('webnn', await bytesOf(base + 'model_frozen.onnx'), meta, new Set(meta.frozen));
    result.webnn = retry.stage === 'session' ? {...result.webnn, frozenError: retry.error} : {...retry, frozen: true, firstError: result.webnn.error};
  }
  if (wasm) result.wasm = await runOn('wasm', await bytesOf(base + 'model.onnx'), meta);
  return result;
}

/**
 * Runs the cases one after another.
 * @param {string[]} names case folder names
 * @param {{wasm?: boolean, frozenFirst?: string[]}} [options] wasm: also run ORT's wasm EP (default
 *   true); frozenFirst: cases to create from model_frozen.onnx directly (known to need it)
 * @returns {Promise<object[]>} one result per case (runCase), {name, timeout: true} past 60 s
 */
export async function runCases(names, {wasm = true, frozenFirst = []} = {}) {
  const frozen = new Set(frozenFirst);
  const results = [];
  for (const name of names) {
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve({name, timeout: true}), CASE_TIMEOUT_MS); });
    try {
      results.push(await Promise.race([runCase(name, {wasm, frozenFirst: frozen.has(name)}), timeout]));
    } catch (e) {
      results.push({name, webnn: {stage: 'load', error: errorText(e)}});
    } finally {
      clearTimeout(timer);
    }
  }
  return results;
}
