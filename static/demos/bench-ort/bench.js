/**
 * EfficientNet-Lite0 through the WebNN polyfill and through ONNX Runtime Web (WebGPU EP), timed
 * alike on one random input. Sets `window.lastRun` = {webnn: {medianMs, minMs, maxMs, timesMs,
 * buildMs}, ort: {...same, sessionMs}, maxAbsDiff, tolerance, agree, adapter, config, implementation,
 * ortVersion}, or `window.lastError` = {name, message}.
 *
 * One timed run = write the 1x3x224x224 float32 input + run + read the 1x1000 output back:
 * WebNN: writeTensor + dispatch + readTensor; ORT: session.run() with a CPU input tensor and a
 * CPU output (ORT uploads and downloads itself). The two runtimes alternate run by run after
 * `warmup` untimed runs of each. Parameters: ?runs=20&warmup=5&ort=jsep|webgpu&seed=1.
 */
import {ready} from '/polyfill/webnn.js';
import {addToBuilder} from '/harness/graph_json.js';
import {constantView, median} from '/demos/image-classification/model.js';

const MODEL = '/models/efficientnet-lite0/';
/** ORT build per `ort` parameter: the module in vendor/ (see tools/bench_ort.py --install). */
const ORT_BUILDS = {jsep: './vendor/ort.min.mjs', webgpu: './vendor/ort.webgpu.min.mjs'};
const TOLERANCE = 1e-3;

/** Uniform [-1, 1) float32 values from a 32-bit LCG (deterministic per seed). */
function randomInput(count, seed) {
  const data = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = s / 2 ** 31 - 1;
  }
  return data;
}

/** {medianMs, minMs, maxMs, timesMs} of a list of milliseconds. */
function stats(timesMs) {
  return {medianMs: median(timesMs), minMs: Math.min(...timesMs), maxMs: Math.max(...timesMs), timesMs};
}

/** The high-performance WebGPU adapter, asking up to 3 times (null happens on some hosts). */
async function highPerformanceAdapter() {
  for (let attempt = 0; attempt < 3; attempt++) {
    const adapter = await navigator.gpu?.requestAdapter({powerPreference: 'high-performance'});
    if (adapter) return adapter;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('no WebGPU adapter');
}

/** Builds the manifest's graph; returns {buildMs, run(input) -> Promise<Float32Array>}. */
async function setUpWebNN(manifest, weights) {
  const context = await navigator.ml.createContext({powerPreference: 'high-performance'});
  const t0 = performance.now();
  const builder = new MLGraphBuilder(context);
  const operands = addToBuilder(builder, manifest, (name, spec) => constantView(weights, spec));
  const [inputName] = Object.keys(manifest.inputs);
  const outputName = manifest.outputs[0];
  const output = operands.get(outputName);
  const graph = await builder.build({[outputName]: output});
  const buildMs = performance.now() - t0;
  const inputSpec = manifest.inputs[inputName];
  const inputTensor = await context.createTensor({dataType: 'float32', shape: inputSpec.shape, writable: true});
  const outputTensor = await context.createTensor({dataType: 'float32', shape: output.shape, readable: true});
  return {
    context,
    buildMs,
    async run(input) {
      context.writeTensor(inputTensor, input);
      context.dispatch(graph, {[inputName]: inputTensor}, {[outputName]: outputTensor});
      return new Float32Array(await context.readTensor(outputTensor));
    },
  };
}

/** Creates the ORT session (webgpu EP, weights.bin as external data); returns {sessionMs, run, version}. */
async function setUpOrt(build, manifest, weights, adapter) {
  const ort = await import(ORT_BUILDS[build]);
  ort.env.wasm.numThreads = 1;  // no cross-origin isolation here, so no SharedArrayBuffer threads
  ort.env.webgpu.powerPreference = 'high-performance';
  try { ort.env.webgpu.adapter = adapter; } catch { /* read-only in some builds */ }
  const modelBytes = new Uint8Array(await (await fetch(MODEL + 'model.onnx')).arrayBuffer());
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(modelBytes, {
    executionProviders: ['webgpu'],
    externalData: [{path: manifest.weights, data: new Uint8Array(weights)}],
  });
  const sessionMs = performance.now() - t0;
  const [inputName] = Object.keys(manifest.inputs);
  const shape = manifest.inputs[inputName].shape;
  const outputName = manifest.outputs[0];
  return {
    version: ort.env.versions?.web ?? ort.env.versions?.common ?? 'unknown',
    sessionMs,
    async run(input) {
      const feeds = {[inputName]: new ort.Tensor('float32', input, shape)};
      const results = await session.run(feeds);
      return await results[outputName].getData(true);
    },
  };
}

async function main() {
  const params = new URLSearchParams(location.search);
  const runs = Math.max(1, Number(params.get('runs') ?? 20));
  const warmup = Math.max(0, Number(params.get('warmup') ?? 5));
  const build = params.get('ort') ?? 'jsep';
  const seed = Number(params.get('seed') ?? 1);
  if (!ORT_BUILDS[build]) throw new TypeError(`ort must be one of ${Object.keys(ORT_BUILDS).join(', ')}`);
  const {implementation} = await ready;
  const adapter = await highPerformanceAdapter();
  const info = adapter.info ?? {};
  const adapterInfo = {};
  for (const k of ['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter']) {
    if (info[k] !== undefined) adapterInfo[k] = info[k];
  }

  const [manifest, weights] = await Promise.all([
    fetch(MODEL + 'manifest.json').then((r) => r.json()),
    fetch(MODEL + 'weights.bin').then((r) => r.arrayBuffer()),
  ]);
  const input = randomInput(manifest.inputs[Object.keys(manifest.inputs)[0]].shape.reduce((a, b) => a * b, 1), seed);
  const webnn = await setUpWebNN(manifest, weights);
  const ort = await setUpOrt(build, manifest, weights, adapter);

  let webnnOut;
  let ortOut;
  for (let i = 0; i < warmup; i++) {
    webnnOut = await webnn.run(input);
    ortOut = await ort.run(input);
  }
  const webnnTimes = [];
  const ortTimes = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    webnnOut = await webnn.run(input);
    webnnTimes.push(performance.now() - t0);
    t0 = performance.now();
    ortOut = await ort.run(input);
    ortTimes.push(performance.now() - t0);
  }
  let maxAbsDiff = 0;
  for (let i = 0; i < webnnOut.length; i++) maxAbsDiff = Math.max(maxAbsDiff, Math.abs(webnnOut[i] - ortOut[i]));
  if (webnnOut.length !== ortOut.length) maxAbsDiff = Infinity;
  const argmax = (a) => a.reduce((best, v, i) => (v > a[best] ? i : best), 0);
  return {
    webnn: {...stats(webnnTimes), buildMs: webnn.buildMs},
    ort: {...stats(ortTimes), sessionMs: ort.sessionMs},
    maxAbsDiff,
    tolerance: TOLERANCE,
    agree: maxAbsDiff <= TOLERANCE,
    top1: {webnn: argmax(webnnOut), ort: argmax(ortOut)},
    adapter: adapterInfo,
    implementation,
    ortBuild: build,
    ortVersion: ort.version,
    config: {runs, warmup, seed, model: manifest.name, inputShape: manifest.inputs[Object.keys(manifest.inputs)[0]].shape},
  };
}

const out = document.getElementById('out');
main().then((run) => {
  out.textContent = JSON.stringify({...run, webnn: {...run.webnn, timesMs: undefined}, ort: {...run.ort, timesMs: undefined}}, null, 2);
  window.lastRun = run;
}, (error) => {
  out.textContent = `error: ${error?.name}: ${error?.message}`;
  window.lastError = {name: error?.name ?? 'Error', message: String(error?.message ?? error)};
});
