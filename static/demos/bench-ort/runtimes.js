/**
 * The runtimes the benchmark compares, each behind one interface:
 *   {name, setupMs, run(input: Float32Array) -> Promise<Float32Array>,
 *    runBatch(input, n) -> Promise<number> (ms for n back-to-back runs and one read back),
 *    release()}
 * - `builder`: our own MLGraphBuilder code, from the model manifest (graph_json.js addToBuilder);
 *   `builder-fp16`: the same graph in float16 (float32 constants, input and output as float16;
 *   the page converts the input and the output), whose products run on the GPU's f16 matrix
 *   units where the device has them (ops/matmul_matrix_units.js);
 * - `webnn-ep`: ONNX Runtime Web's WebNN execution provider, i.e. ORT as a WebNN client of
 *   whatever `navigator.ml` is (this polyfill), no CPU fallback allowed;
 * - `jsep`: ORT-web's JSEP WebGPU EP (ort.min.mjs); `webgpu`: ORT-web's native WebGPU EP
 *   (ort.webgpu.min.mjs). The ORT files live in ./vendor/ (python -m tools.bench_ort --install).
 * - `cpu`: our builder code on the polyfill's CPU context (createContext({deviceType: 'cpu'}):
 *   ONNX Runtime's wasm EP under the polyfill); `wasm`: ORT-web's wasm EP on model.onnx, from the
 *   same files (/polyfill/vendor/ort/ort.wasm.min.mjs, another module instance). Both use
 *   THREADS threads (?threads=N; default min(4, cores) when the page is cross-origin isolated
 *   (?coi=1), else 1).
 * One `run` = upload the input from the CPU + inference + read the output back to the CPU.
 * `runBatch` = n times (upload + inference) with the output left on the device, then one read.
 */
import {addToBuilder} from '/harness/graph_json.js';
import {constantView} from '/demos/image-classification/model.js';

const VENDOR = new URL('./vendor/', import.meta.url).href;
/** ORT module per runtime: the WebNN EP is in both ORT builds; it is taken from the JSEP one. */
const ORT_MODULE = {'webnn-ep': 'ort.min.mjs', jsep: 'ort.min.mjs', webgpu: 'ort.webgpu.min.mjs'};
export const RUNTIMES = ['builder', 'builder-fp16', 'webnn-ep', 'jsep', 'webgpu', 'cpu', 'wasm'];
const WASM_ORT = '/polyfill/vendor/ort/ort.wasm.min.mjs';
const params = new URLSearchParams(globalThis.location?.search ?? '');
/** Threads of the CPU runtimes ('cpu' and 'wasm'). */
export const THREADS = Number(params.get('threads')) || (globalThis.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency) : 1);

const ortModules = new Map();

/** The ORT module of `runtime` (imported once per page; single-threaded wasm, no isolation here). */
export async function ortFor(runtime) {
  if (runtime === 'wasm') {
    if (!ortModules.has(WASM_ORT)) {
      ortModules.set(WASM_ORT, import(WASM_ORT).then((ort) => {
        ort.env.wasm.numThreads = THREADS;
        ort.env.wasm.wasmPaths = new URL('/polyfill/vendor/ort/', location.href).href;
        return ort;
      }));
    }
    return ortModules.get(WASM_ORT);
  }
  const file = ORT_MODULE[runtime];
  if (!ortModules.has(file)) {
    ortModules.set(file, import(VENDOR + file).then((ort) => {
      ort.env.wasm.numThreads = 1;
      ort.env.webgpu.powerPreference = 'high-performance';
      return ort;
    }));
  }
  return ortModules.get(file);
}

/** The ORT version string of the ORT module of `runtime` ('unknown' when it does not say). */
export async function ortVersion(runtime = 'jsep') {
  const ort = await ortFor(runtime);
  return ort.env.versions?.web ?? ort.env.versions?.common ?? 'unknown';
}

/**
 * Wraps MLGraphBuilder.prototype.build and MLContext.prototype.dispatch (once per page) to count
 * calls and time the dispatches; call it after the polyfill is ready and before ORT loads.
 * @returns {{builds: number, dispatches: number, dispatchStarts: number[], inDispatchMs: number}}
 *   live counters: dispatchStarts the performance.now() (ms) of every dispatch call, inDispatchMs
 *   the total time spent inside dispatch()
 */
export function countWebNNCalls() {
  if (globalThis.__webnnCallCounts) return globalThis.__webnnCallCounts;
  const counts = {builds: 0, dispatches: 0, dispatchStarts: [], inDispatchMs: 0};
  const build = MLGraphBuilder.prototype.build;
  const dispatch = MLContext.prototype.dispatch;
  MLGraphBuilder.prototype.build = function (...args) { counts.builds++; return build.apply(this, args); };
  MLContext.prototype.dispatch = function (...args) {
    counts.dispatches++;
    const t = performance.now();
    counts.dispatchStarts.push(t);
    try {
      return dispatch.apply(this, args);
    } finally {
      counts.inDispatchMs += performance.now() - t;
    }
  };
  globalThis.__webnnCallCounts = counts;
  return counts;
}

/**
 * Our own builder path: the manifest's MLGraphBuilder calls on a high-performance context.
 * @param {object} manifest JSON graph description (one input, one output)
 * @param {ArrayBuffer} weights the manifest's weights.bin
 * @param {MLContextOptions} [contextOptions] extra createContext options (e.g. polyfill profiling)
 */
export async function setUpBuilder(manifest, weights, contextOptions = {}, name = 'builder', dataType = 'float32') {
  const context = await navigator.ml.createContext({powerPreference: 'high-performance', deviceType: 'gpu', ...contextOptions});
  const t0 = performance.now();
  const builder = new MLGraphBuilder(context);
  const half = dataType === 'float16';
  const description = half ? inFloat16(manifest) : manifest;
  const operands = addToBuilder(builder, description, (name, spec) => (half && spec.dataType === 'float16'
    ? new Float16Array(constantView(weights, manifest.constants[name])) : constantView(weights, spec)));
  const [inputName] = Object.keys(manifest.inputs);
  const outputName = manifest.outputs[0];
  const output = operands.get(outputName);
  const graph = await builder.build({[outputName]: output});
  const setupMs = performance.now() - t0;
  const inputTensor = await context.createTensor({dataType, shape: manifest.inputs[inputName].shape, writable: true});
  const outputTensor = await context.createTensor({dataType, shape: output.shape, readable: true});
  // float16: the page's input converted once (the benchmark feeds the same array every run); the
  // output's conversion back stays in each run
  let given = null;
  let converted = null;
  const toHalf = (input) => {
    if (input !== given) [given, converted] = [input, new Float16Array(input)];
    return converted;
  };
  const dispatch = (input) => {
    context.writeTensor(inputTensor, half ? toHalf(input) : input);
    context.dispatch(graph, {[inputName]: inputTensor}, {[outputName]: outputTensor});
  };
  return {
    name, setupMs, graph, context, matrixUnits: await matrixUnitsOf(context),
    async run(input) {
      dispatch(input);
      const bytes = await context.readTensor(outputTensor);
      return half ? Float32Array.from(new Float16Array(bytes)) : new Float32Array(bytes);
    },
    async runBatch(input, n) {
      const t = performance.now();
      for (let i = 0; i < n; i++) dispatch(input);
      await context.readTensor(outputTensor);
      return performance.now() - t;
    },
    release() { graph.destroy(); inputTensor.destroy(); outputTensor.destroy(); context.destroy(); },
  };
}

/** The polyfill's matrix units of `context` (contextInfo), null without them, undefined under native WebNN. */
async function matrixUnitsOf(context) {
  try {
    const {contextInfo} = await import('/polyfill/options.js');
    return contextInfo(context).matrixUnits;
  } catch {
    return undefined;
  }
}

/** The description with its float32 inputs and constants declared float16 (the operators as they are). */
function inFloat16(description) {
  const retype = (specs) => Object.fromEntries(Object.entries(specs ?? {}).map(([name, spec]) =>
    [name, spec.dataType === 'float32' ? {...spec, dataType: 'float16'} : spec]));
  return {...description, inputs: retype(description.inputs), constants: retype(description.constants)};
}

/**
 * The session options of an ORT runtime. The WebNN EP asks navigator.ml for a 'gpu' context and
 * may not hand any node to ORT's CPU EP (session.disable_cpu_ep_fallback); outputs stay on the
 * device ('ml-tensor' / 'gpu-buffer') until getData() reads them back.
 */
export function ortSessionOptions(runtime, manifest, weights) {
  const common = {externalData: [{path: manifest.weights, data: new Uint8Array(weights)}]};
  if (runtime === 'webnn-ep') {
    return {...common, executionProviders: [{name: 'webnn', deviceType: 'gpu'}],
      extra: {session: {disable_cpu_ep_fallback: '1'}}, preferredOutputLocation: 'ml-tensor'};
  }
  // MatMulScaleFusion reads a scalar initializer from the external data file, which ORT-web
  // cannot (the encoder's session fails): that one fusion is off for the wasm runtime
  if (runtime === 'wasm') {
    return {...common, executionProviders: ['wasm'], graphOptimizationLevel: 'all',
      extra: {optimization: {disable_specified_optimizers: 'MatMulScaleFusion'}}};
  }
  return {...common, executionProviders: ['webgpu'], preferredOutputLocation: 'gpu-buffer'};
}

/**
 * One ORT runtime ('webnn-ep', 'jsep' or 'webgpu') on the manifest's model.onnx.
 * @param {Uint8Array} modelBytes model.onnx (external data in weights.bin)
 */
export async function setUpOrt(runtime, manifest, weights, modelBytes) {
  const ort = await ortFor(runtime);
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(modelBytes, ortSessionOptions(runtime, manifest, weights));
  const setupMs = performance.now() - t0;
  const [inputName] = Object.keys(manifest.inputs);
  const shape = manifest.inputs[inputName].shape;
  const outputName = manifest.outputs[0];
  const infer = async (input) => (await session.run({[inputName]: new ort.Tensor('float32', input, shape)}))[outputName];
  return {
    name: runtime, setupMs,
    async run(input) {
      const out = await infer(input);
      const data = await out.getData(true);  // reads back and releases the device buffer
      return data instanceof Float32Array ? data : new Float32Array(data);
    },
    async runBatch(input, n) {
      const t = performance.now();
      let out;
      for (let i = 0; i < n; i++) {
        if (runtime !== 'wasm') out?.dispose();
        out = await infer(input);
      }
      if (runtime !== 'wasm') await out.getData(true);
      return performance.now() - t;
    },
    release() { return session.release(); },
  };
}

/** Sets up `runtime` on the model (see setUpBuilder / setUpOrt). */
export function setUp(runtime, manifest, weights, modelBytes) {
  if (runtime === 'builder') return setUpBuilder(manifest, weights);
  if (runtime === 'builder-fp16') return setUpBuilder(manifest, weights, {}, runtime, 'float16');
  if (runtime === 'cpu') return setUpBuilder(manifest, weights, {deviceType: 'cpu', polyfill: {threads: THREADS}}, 'cpu');
  return setUpOrt(runtime, manifest, weights, modelBytes);
}
