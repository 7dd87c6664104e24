/**
 * One benchmark for every model x runtime, in one page, the runtimes alternating run by run.
 * URL parameters: models (comma list; default efficientnet-lite0,mobilenetv2,bert-encoder, the
 * models `make setup` writes; also bert-base, bert-base-512, bert-base-opset14, whose 340 MB of
 * weights `python -m tools.bench_models --model bert-base` or `make bench` writes on request),
 * runtimes (default builder,builder-fp16,webnn-ep,jsep,webgpu,cpu,wasm; see runtimes.js), runs (timed runs, 3),
 * warmup (1), batch (back-to-back runs for the throughput figure, 4), profile (1: every GPU step
 * of our builder paths, float32 and float16 where those runtimes run, with its mean ms, through
 * /polyfill/profiling.js when that module exists), submitSteps (a
 * measuring knob: every context the page or ORT creates gets this submitSteps slot, a number or
 * 'doubling', see /polyfill/compile/plan.js; polyfill only), kernelOverrides (JSON, merged into
 * the kernelOverrides slot of every such context, e.g. {"attention":false}; polyfill only),
 * completion (JSON, assigned to the settings of every such context's completion slot,
 * /polyfill/gpu/completion.js, e.g. {"enabled":false}; polyfill only), slots (JSON, assigned to
 * the slots of every such GPU context, e.g. {"faultInReads":false}; polyfill only).
 * Each model folder /models/<name>/ holds manifest.json, weights.bin, model.onnx and input.bin
 * (tools/bench_models.py). The page says which model x runtime it is at while it runs.
 * Sets `window.lastRun` = {adapter, implementation,
 * ortVersion, config, models: [{model, inputShape, outputShape, runtimes: {<runtime>: {setupMs,
 * latency: {medianMs, minMs, maxMs, timesMs}, batch: {n, totalMs, perInferenceMs, inferencesPerS,
 * dispatchIntervalMs, inDispatchMs (WebNN runtimes)},
 * calls: {builds, dispatchesPerRun, gpuSteps (GPU graphs of the polyfill: GPU dispatches per run,
 * the steps of the graphs built; none for CPU-context graphs)}, output: base64 float32} | {error}},
 * profiles: {builder?, builder-fp16?: {runs, totalMs, steps} | {skipped}}}]}; adapter (null when only cpu/wasm ran without one) includes its features and, where
 * the adapter has them, its subgroup-matrix configurations,
 * or `window.lastError` = {name, message}. A runtime that fails records {error} and the others go on.
 */
import {ready} from '/polyfill/webnn.js';
import {toBase64} from '/harness/graph_json.js';
import {median} from '/demos/image-classification/model.js';
import {RUNTIMES, THREADS, countWebNNCalls, ortVersion, setUp, setUpBuilder} from './runtimes.js';

/** Every model the page knows; DEFAULT_MODELS are the ones `make setup` writes. */
const MODELS = ['efficientnet-lite0', 'mobilenetv2', 'bert-encoder', 'bert-base', 'bert-base-512', 'bert-base-opset14'];
const DEFAULT_MODELS = ['efficientnet-lite0', 'mobilenetv2', 'bert-encoder'];
const PROFILE_RUNS = 3;

/** {medianMs, minMs, maxMs, timesMs} of a list of milliseconds. */
function stats(timesMs) {
  return {medianMs: median(timesMs), minMs: Math.min(...timesMs), maxMs: Math.max(...timesMs), timesMs};
}

/** The high-performance WebGPU adapter's info, asking up to 3 times (null happens on some hosts). */
async function adapterInfo() {
  for (let attempt = 0; attempt < 3; attempt++) {
    const adapter = await navigator.gpu?.requestAdapter({powerPreference: 'high-performance'});
    if (adapter) {
      const info = {};
      for (const k of ['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter', 'subgroupMinSize', 'subgroupMaxSize']) {
        if (adapter.info?.[k] !== undefined) info[k] = adapter.info[k];
      }
      info.features = [...adapter.features].sort();
      const configs = adapter.info?.subgroupMatrixConfigs;
      if (configs) info.subgroupMatrixConfigs = [...configs].map((c) => ({...Object.fromEntries(Object.keys(Object.getPrototypeOf(c)).map((k) => [k, c[k]]))}));
      return info;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('no WebGPU adapter');
}

/**
 * Every GPU step of our builder path (`runtime` 'builder' or 'builder-fp16'), in execution order
 * (readProfile of /polyfill/profiling.js), or {skipped}.
 */
async function profileBuilder(manifest, weights, input, runtime) {
  let readProfile;
  try {
    ({readProfile} = await import('/polyfill/profiling.js'));
  } catch (error) {
    return {skipped: `no /polyfill/profiling.js (${error?.message ?? error})`};
  }
  const profiled = await setUpBuilder(manifest, weights, {deviceType: 'gpu', polyfill: {profiling: true}}, runtime,
    runtime === 'builder-fp16' ? 'float16' : 'float32');
  try {
    for (let i = 0; i < PROFILE_RUNS; i++) await profiled.run(input);
    const profile = await readProfile(profiled.graph);
    return {runs: profile.runs, totalMs: profile.totalMs, steps: profile.steps};
  } finally {
    profiled.release();
  }
}

/** Graphs built on the page (polyfill: their plans' step counts are the GPU dispatches per run). */
const builtGraphs = [];

/** GPU dispatches per run of the polyfill's WebGPU graphs among `graphs` (CPU-context graphs have none). */
async function gpuSteps(graphs) {
  const gpu = graphs.filter((g) => g.devices?.includes('gpu'));
  if (!gpu.length) return undefined;
  const {describeGraph} = await import('/polyfill/inspect.js');
  return gpu.reduce((n, g) => n + describeGraph(g).steps.length, 0);
}

const out = document.getElementById('out');
/** Shows where the run is (model, runtime, phase) and lets the page paint it. */
async function progress(text) {
  out.textContent = text;
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);  // a hidden page gets no animation frames
    requestAnimationFrame(() => { clearTimeout(timer); setTimeout(resolve, 0); });
  });
}

const errorText = (error) => `${error?.name ?? 'Error'}: ${error?.message ?? error}`;

async function benchModel(name, runtimes, config, counts, where) {
  const base = `/models/${name}/`;
  const get = (file) => fetch(base + file).then((r) => {
    if (!r.ok) throw new Error(`${base}${file}: HTTP ${r.status}`);
    return file.endsWith('.json') ? r.json() : r.arrayBuffer();
  });
  await progress(`${where}: ${name}, loading its files…`);
  const [manifest, weights, model, inputBytes] = await Promise.all(
    ['manifest.json', 'weights.bin', 'model.onnx', 'input.bin'].map(get));
  const input = new Float32Array(inputBytes);
  const results = {};
  const live = [];
  for (const runtime of runtimes) {
    await progress(`${where}: ${name}, setting up ${runtime}…`);
    const builds = counts.builds;
    const graphs = builtGraphs.length;
    try {
      const r = await setUp(runtime, manifest, weights, new Uint8Array(model));
      live.push(r);
      results[runtime] = {setupMs: r.setupMs, calls: {builds: counts.builds - builds}};
      if (r.matrixUnits !== undefined) results[runtime].matrixUnits = r.matrixUnits;
      const steps = await gpuSteps(builtGraphs.slice(graphs));
      if (steps !== undefined) results[runtime].calls.gpuSteps = steps;
    } catch (error) {
      results[runtime] = {error: errorText(error)};
    }
  }
  /** Drops a runtime that failed mid-run: its error is its result, the others go on. */
  const fail = async (r, error) => {
    results[r.name] = {error: errorText(error)};
    live.splice(live.indexOf(r), 1);
    try { await r.release(); } catch { /* already broken */ }
  };
  const outputs = new Map();
  const times = new Map(live.map((r) => [r, []]));
  const dispatches = new Map(live.map((r) => [r, []]));
  const total = config.warmup + config.runs;
  for (let i = 0; i < total; i++) {
    for (const r of [...live]) {
      await progress(`${where}: ${name}, ${r.name}, ${i < config.warmup ? 'warm-up' : 'timed'} run ${i + 1} of ${total}…`);
      const before = counts.dispatches;
      const t0 = performance.now();
      try {
        outputs.set(r, await r.run(input));
      } catch (error) {
        await fail(r, error);
        continue;
      }
      const ms = performance.now() - t0;
      if (i >= config.warmup) {
        times.get(r).push(ms);
        dispatches.get(r).push(counts.dispatches - before);
      }
    }
  }
  for (const r of [...live]) {
    await progress(`${where}: ${name}, ${r.name}, ${config.batch} back-to-back runs…`);
    const starts = counts.dispatchStarts.length;
    const inDispatch = counts.inDispatchMs;
    let totalMs;
    try {
      totalMs = await r.runBatch(input, config.batch);
    } catch (error) {
      await fail(r, error);
      continue;
    }
    const res = results[r.name];
    res.latency = stats(times.get(r));
    res.batch = {n: config.batch, totalMs, perInferenceMs: totalMs / config.batch,
      inferencesPerS: 1000 * config.batch / totalMs};
    // WebNN runtimes: how fast the page issued the batch (mean ms from one dispatch call to the
    // next, over the batch's span: single intervals are below the page clock's 0.1 ms grain
    // unless it is cross-origin isolated) and the mean ms spent inside one dispatch()
    const issued = counts.dispatchStarts.slice(starts);
    if (issued.length > 1) {
      res.batch.dispatchIntervalMs = (issued[issued.length - 1] - issued[0]) / (issued.length - 1);
      res.batch.inDispatchMs = (counts.inDispatchMs - inDispatch) / issued.length;
    }
    res.calls.dispatchesPerRun = Math.max(...dispatches.get(r));
    const output = outputs.get(r);
    res.output = toBase64(new Uint8Array(output.buffer, output.byteOffset, output.byteLength));
  }
  for (const r of live) await r.release();
  const profiles = {};
  for (const runtime of config.profile ? ['builder', 'builder-fp16'].filter((r) => runtimes.includes(r)) : []) {
    await progress(`${where}: ${name}, profiling ${runtime}…`);
    profiles[runtime] = await profileBuilder(manifest, weights, input, runtime);
  }
  return {model: name, inputShape: Object.values(manifest.inputs)[0].shape, outputShape: manifest.output?.shape,
    operators: manifest.operators.length, runtimes: results, profiles};
}

async function main() {
  const params = new URLSearchParams(location.search);
  const list = (key, all, fallback = all) => {
    const value = (params.get(key) ?? fallback.join(',')).split(',').filter(Boolean);
    const unknown = value.filter((v) => !all.includes(v));
    if (unknown.length) throw new TypeError(`${key}: unknown ${unknown.join(', ')}; known: ${all.join(', ')}`);
    return value;
  };
  const count = (key, fallback, min) => {
    const v = Number(params.get(key) ?? fallback);
    if (!Number.isInteger(v) || v < min) throw new TypeError(`${key} must be an integer >= ${min}`);
    return v;
  };
  const config = {models: list('models', MODELS, DEFAULT_MODELS), runtimes: list('runtimes', RUNTIMES), runs: count('runs', 3, 1),
    warmup: count('warmup', 1, 0), batch: count('batch', 4, 1), profile: params.get('profile') === '1',
    threads: THREADS, crossOriginIsolated: Boolean(globalThis.crossOriginIsolated)};
  const {implementation} = await ready;
  const submitSteps = params.get('submitSteps');
  const kernelOverrides = params.get('kernelOverrides');
  const completion = params.get('completion');
  if (submitSteps) config.submitSteps = submitSteps;
  if (kernelOverrides) config.kernelOverrides = JSON.parse(kernelOverrides);
  if (completion) config.completion = JSON.parse(completion);
  const contextSlotValues = params.get('slots');
  if (contextSlotValues) config.slots = JSON.parse(contextSlotValues);
  if (submitSteps || kernelOverrides || completion || contextSlotValues) {
    // every parameter is a set of tuning switches (/polyfill/tuning.js); `completion` keeps the
    // names of gpu/completion.js's settings
    const {configureContext} = await import('/polyfill/options.js');
    const COMPLETION = {hardware: 'nudgeQueue', nudge: 'nudge', intervalMs: 'nudgeIntervalMs', capMs: 'nudgeCapMs'};
    const tuning = {...config.kernelOverrides, ...config.slots};
    if (submitSteps) tuning.submitSteps = submitSteps === 'doubling' ? submitSteps : Number(submitSteps);
    let fastReadback;
    for (const [key, value] of Object.entries(config.completion ?? {})) {
      if (key === 'enabled') fastReadback = value;
      else tuning[COMPLETION[key] ?? key] = value;
    }
    const create = navigator.ml.createContext.bind(navigator.ml);
    navigator.ml.createContext = async (...args) => {
      const context = await create(...args);
      if (context.accelerated) configureContext(context, {tuning, fastReadback});  // CPU contexts: no GPU to tune
      return context;
    };
  }
  // the CPU runtimes need no adapter (a --disable-gpu browser has none): null then
  const cpuOnly = config.runtimes.every((r) => r === 'cpu' || r === 'wasm');
  const adapter = cpuOnly ? await adapterInfo().catch(() => null) : await adapterInfo();
  const counts = countWebNNCalls();  // before ORT loads: its WebNN EP calls the wrapped methods
  if (implementation === 'polyfill') {
    const build = MLGraphBuilder.prototype.build;
    MLGraphBuilder.prototype.build = async function (...args) {
      const graph = await build.apply(this, args);
      builtGraphs.push(graph);
      return graph;
    };
  }
  const models = [];
  for (const [i, name] of config.models.entries()) {
    models.push(await benchModel(name, config.runtimes, config, counts, `model ${i + 1} of ${config.models.length}`));
  }
  // ORT's version from the build its runtimes loaded (none for our builder code alone, which needs no ORT)
  const ours = (r) => r.startsWith('builder');
  const ort = config.runtimes.some((r) => !['cpu', 'wasm'].includes(r) && !ours(r)) ? 'jsep' : config.runtimes.some((r) => !ours(r)) ? 'wasm' : null;
  return {adapter, implementation, ortVersion: ort ? await ortVersion(ort) : null, config, models};
}

/** A plain-text table per model: a row per runtime (median latency, back to back, setup, steps) or its error. */
function summary(run) {
  const pad = (text, n) => String(text).padEnd(n);
  const lines = [`${run.implementation} WebNN; adapter: ${run.adapter ? [run.adapter.vendor, run.adapter.architecture, run.adapter.description].filter(Boolean).join(' ') || 'unnamed' : 'none'}` +
    `${run.adapter?.isFallbackAdapter ? ' (fallback)' : ''}; ORT-web ${run.ortVersion ?? 'not loaded'}; ` +
    `${run.config.runs} timed runs after ${run.config.warmup} warm-up, batch ${run.config.batch}`];
  for (const m of run.models) {
    lines.push('', `${m.model} (input ${m.inputShape.join('x')}, ${m.operators} operators)`,
      `  ${pad('runtime', 10)}${pad('median ms', 12)}${pad('min–max ms', 18)}${pad('batch ms/inf', 14)}${pad('setup ms', 10)}graphs, dispatches/run (GPU steps)`);
    for (const [name, r] of Object.entries(m.runtimes)) {
      if (r.error) { lines.push(`  ${pad(name, 10)}failed: ${r.error}`); continue; }
      const calls = ['builder', 'builder-fp16', 'webnn-ep', 'cpu'].includes(name)
        ? `${r.calls.builds}, ${r.calls.dispatchesPerRun}${r.calls.gpuSteps ? ` (${r.calls.gpuSteps})` : ''}` : '—';
      lines.push(`  ${pad(name, 10)}${pad(r.latency.medianMs.toFixed(1), 12)}` +
        `${pad(`${r.latency.minMs.toFixed(1)}–${r.latency.maxMs.toFixed(1)}`, 18)}${pad(r.batch.perInferenceMs.toFixed(1), 14)}` +
        `${pad(r.setupMs.toFixed(0), 10)}${calls}`);
    }
  }
  return lines.join('\n');
}

main().then((run) => {
  out.textContent = `${summary(run)}\n\nAll of it (window.lastRun):\n` +
    JSON.stringify(run, (k, v) => (k === 'output' || k === 'timesMs' ? undefined : v), 2);
  window.lastRun = run;
}, (error) => {
  out.textContent = `error: ${error?.name}: ${error?.message}`;
  window.lastError = {name: error?.name ?? 'Error', message: String(error?.message ?? error)};
});
