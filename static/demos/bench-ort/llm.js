/**
 * The LLM benchmark (llm.html; python -m tools.bench_llm drives it headless): per model x runtime
 * (llm_runtimes.js) the time to first token of a prompt (prefill, the logits read back and their
 * argmax taken), prefill tokens/s, decode tokens/s over `new` greedy steps (each step's logits
 * read back, its argmax the next token), and the GPU buffer bytes the runtime holds.
 * URL parameters: models (comma list of folders under /models/, each a GenAI-style decoder of
 * tools/llm_model.py), runtimes (default webnn-ep,webgpu,wasm), prompt (prompt tokens, 16), new
 * (decode steps, 8), maxLength (the model-<maxLength>.onnx graph; default: the smallest the model
 * has above prompt + new), prefillRuns (timed prefills, the median kept; 1), warmup (1: an untimed
 * prefill and two steps first; 0: none), threads (wasm; see runtimes.js), profile (1: after the
 * timed runs, the GPU time of every step of the polyfill's prefill and decode graphs,
 * llm_profile.js, as each model's `profile`), tuning (JSON: the polyfill's tuning switches for
 * the webnn-ep runtime's context, tuning.js; a JSON array of such objects runs webnn-ep once for
 * each, in turn, in the same page, as `webnn-ep`, `webnn-ep#2`, … — a same-page comparison of
 * switches, which separate page runs on a GPU whose clock wanders cannot give; the profile takes
 * the first), interleave (rounds, default 0: after the runs above, every run's runtime loaded
 * together and warmed up with one prefill, then each round one timed prefill of each, the order
 * reversed every round (A B, B A, ...), so that the runtimes meet the GPU's clock alike: a fair
 * time to first token where back-to-back runs would give the later one a GPU the earlier one
 * warmed).
 * The prompt is fixed pseudo-random token ids. Runtimes run one after another, each released
 * before the next loads, so the GPU memory figures are each runtime's own.
 * Sets `window.lastRun` = {adapter, implementation, ortVersion, config, models: [{model,
 * config (the model's shape), maxLength, prompt, runtimes: {<runtime>: {loadMs, ttftMs,
 * ttftTimesMs, prefillRows, prefillTokensPerS, decodeMs, decodeTokensPerS, tokens (greedy: the
 * prefill's then one per step), weightFileBytes, cacheBytes?, gpuBytesAfterLoad,
 * gpuBytesPrefillSession? (webnn-ep: after its first session), gpuLargestAfterLoad (the 12 largest
 * buffers, {bytes, usage, label}: the label the runtime gave createBuffer), gpuPeakBytes,
 * contextCalls? (webnn-ep: the polyfill's dispatch / readTensor / writeTensor host ms and calls
 * per prefill and per decode step, llm_profile.js), interleaved? {ttftMs (the median),
 * ttftTimesMs, tokens (each prefill's argmax)}} | {error}}, interleavedOrder? (the runs' keys in the
 * order their prefills were timed), interleavedError?}]} or `window.lastError` = {name, message}.
 */
import {ready} from '/polyfill/webnn.js';
import {DEFAULT_TUNING, withTuning} from '/polyfill/tuning.js';
import {median} from '/demos/image-classification/model.js';
import {argmax} from '/demos/text-generation/sampler.js';
import {profileWebnnEp, timeContextCalls} from './llm_profile.js';
import {LLM_RUNTIMES, gpuMemory, loadRuntime} from './llm_runtimes.js';
import {ortVersion} from './runtimes.js';

const out = document.getElementById('out');
const errorText = (error) => `${error?.name ?? 'Error'}: ${error?.message ?? error}`;

/** Shows where the run is and lets the page paint it (a hidden page gets no animation frames). */
async function progress(text) {
  out.textContent = text;
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => { clearTimeout(timer); setTimeout(resolve, 0); });
  });
}

/** The high-performance adapter's info (asked up to 3 times), or null without one. */
async function adapterInfo() {
  for (let attempt = 0; attempt < 3; attempt++) {
    const adapter = await navigator.gpu?.requestAdapter({powerPreference: 'high-performance'});
    if (adapter) {
      return Object.fromEntries(['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter']
        .filter((k) => adapter.info?.[k] !== undefined).map((k) => [k, adapter.info[k]]));
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return null;
}

async function benchRuntime({key, runtime, tuning}, base, maxLength, prompt, config, where) {
  const memory = gpuMemory();
  memory.startWindow();
  await progress(`${where}, ${key}: loading…`);
  let t = performance.now();
  const r = await loadRuntime(runtime, base, maxLength, tuning);
  try {
    const result = {loadMs: performance.now() - t, weightFileBytes: r.weightBytes, gpuBytesAfterLoad: memory.live};
    if (r.cacheBytes !== undefined) result.cacheBytes = r.cacheBytes;
    if (r.firstSessionBytes !== undefined) result.gpuBytesPrefillSession = r.firstSessionBytes;
    result.gpuLargestAfterLoad = memory.largest(12);
    if (config.warmup) {
      await progress(`${where}, ${key}: warm-up…`);
      const first = argmax(await r.prefill(prompt));
      await r.step(first, prompt.length);
      await r.step(first, prompt.length + 1);
    }
    const ttft = [];
    let token;
    // the polyfill's context calls during the timed runs (webnn-ep): where the host time goes
    const polyfillCalls = runtime === 'webnn-ep' && globalThis.MLContext;
    let calls = polyfillCalls ? timeContextCalls() : null;
    for (let i = 0; i < config.prefillRuns; i++) {
      await progress(`${where}, ${key}: prefill ${i + 1} of ${config.prefillRuns} (${prompt.length} tokens)…`);
      t = performance.now();
      token = argmax(await r.prefill(prompt));
      ttft.push(performance.now() - t);
    }
    const prefillCalls = calls?.stop(config.prefillRuns);
    await progress(`${where}, ${key}: ${config.new} decode steps…`);
    const tokens = [token];
    calls = polyfillCalls ? timeContextCalls() : null;
    t = performance.now();
    for (let i = 0; i < config.new; i++) tokens.push(argmax(await r.step(tokens.at(-1), prompt.length + i)));
    const decodeMs = performance.now() - t;
    if (calls) result.contextCalls = {prefill: prefillCalls, decodeStep: calls.stop(config.new)};
    const ttftMs = median(ttft);
    return {...result, ttftMs, ttftTimesMs: ttft, prefillRows: r.prefillRows(prompt.length),
      prefillTokensPerS: 1000 * prompt.length / ttftMs, decodeMs, decodeTokensPerS: 1000 * config.new / decodeMs,
      tokens, gpuPeakBytes: memory.peak};
  } finally {
    await r.release();
  }
}

async function benchModel(name, config, where) {
  const base = `/models/${name}/`;
  const response = await fetch(base + 'genai_config.json');
  if (!response.ok) throw new Error(`${base}genai_config.json: HTTP ${response.status}`);
  const meta = await response.json();
  const needed = config.prompt + config.new;
  const maxLength = config.maxLength ?? meta.max_lengths.find((l) => l >= needed);
  if (!maxLength || needed > maxLength) {
    throw new RangeError(`${name}: ${config.prompt} + ${config.new} tokens need a graph for a context of ${needed}; the model has ${meta.max_lengths.join(', ')}`);
  }
  const prompt = Array.from({length: config.prompt}, (_, i) => (i * 7919 + 11) % meta.config.vocab);
  const runtimes = {};
  for (const run of runList(config)) {
    try {
      runtimes[run.key] = await benchRuntime(run, base, maxLength, prompt, config, `${where}: ${name}`);
    } catch (error) {
      runtimes[run.key] = {error: errorText(error)};
    }
    if (run.runtime === 'webnn-ep' && config.tunings.length > 1) runtimes[run.key].tuning = run.tuning;
  }
  const result = {model: name, config: meta.config, maxLength, prompt, runtimes};
  const ran = runList(config).filter((run) => !runtimes[run.key].error);
  if (config.interleave && ran.length) {
    try {
      result.interleavedOrder = await interleaved(ran, runtimes, base, maxLength, prompt, config, `${where}: ${name}`);
    } catch (error) {
      result.interleavedError = errorText(error);
    }
  }
  if (config.profile) {
    await progress(`${where}: ${name}, profiling the polyfill's graphs…`);
    try {
      result.profile = await profileWebnnEp(base, maxLength, prompt, {tuning: config.tunings[0]});
    } catch (error) {
      result.profile = {error: errorText(error)};
    }
  }
  return result;
}

/**
 * The interleaved prefills (module comment, `interleave`): sets runtimes[key].interleaved of each
 * run and returns the keys in the order their prefills were timed.
 */
async function interleaved(runs, runtimes, base, maxLength, prompt, config, where) {
  const loaded = [];
  const order = [];
  try {
    for (const run of runs) {
      await progress(`${where}, interleaved: loading ${run.key}…`);
      loaded.push({key: run.key, r: await loadRuntime(run.runtime, base, maxLength, run.tuning), times: [], tokens: []});
    }
    if (config.warmup) {
      for (const l of loaded) {
        await progress(`${where}, interleaved: warm-up of ${l.key}…`);
        await l.r.prefill(prompt);
      }
    }
    for (let i = 0; i < config.interleave; i++) {
      for (const l of i % 2 ? [...loaded].reverse() : loaded) {
        await progress(`${where}, interleaved round ${i + 1} of ${config.interleave}: ${l.key}…`);
        const t = performance.now();
        l.tokens.push(argmax(await l.r.prefill(prompt)));
        l.times.push(performance.now() - t);
        order.push(l.key);
      }
    }
  } finally {
    for (const l of loaded) await l.r.release();
  }
  for (const l of loaded) runtimes[l.key].interleaved = {ttftMs: median(l.times), ttftTimesMs: l.times, tokens: l.tokens};
  return order;
}

/**
 * The runs of a model in order: each runtime once, webnn-ep once a tuning object (keys
 * `webnn-ep`, `webnn-ep#2`, …).
 * @returns {{key: string, runtime: string, tuning: object|null}[]}
 */
function runList(config) {
  return config.runtimes.flatMap((runtime) => (runtime === 'webnn-ep'
    ? config.tunings.map((tuning, i) => ({key: i ? `${runtime}#${i + 1}` : runtime, runtime, tuning}))
    : [{key: runtime, runtime, tuning: null}]));
}

async function main() {
  const params = new URLSearchParams(location.search);
  const count = (key, fallback, min) => {
    const v = Number(params.get(key) ?? fallback);
    if (!Number.isInteger(v) || v < min) throw new TypeError(`${key} must be an integer >= ${min}`);
    return v;
  };
  const runtimes = (params.get('runtimes') ?? LLM_RUNTIMES.join(',')).split(',').filter(Boolean);
  const unknown = runtimes.filter((r) => !LLM_RUNTIMES.includes(r));
  if (unknown.length) throw new TypeError(`runtimes: unknown ${unknown.join(', ')}; known: ${LLM_RUNTIMES.join(', ')}`);
  const models = (params.get('models') ?? '').split(',').filter(Boolean);
  if (!models.length) throw new TypeError('models: name at least one model folder under /models/');
  const config = {models, runtimes, prompt: count('prompt', 16, 1), new: count('new', 8, 1),
    maxLength: params.has('maxLength') ? count('maxLength', 0, 2) : undefined,
    prefillRuns: count('prefillRuns', 1, 1), warmup: count('warmup', 1, 0) > 0, profile: params.get('profile') === '1',
    interleave: count('interleave', 0, 0),
    tunings: params.has('tuning') ? [JSON.parse(params.get('tuning'))].flat() : [null]};
  if (!config.tunings.length) throw new TypeError('tuning: a JSON object of tuning switches, or a non-empty array of them');
  // every set checked before the first run, so a typo in the last fails at once
  config.tunings.forEach((t, i) => {
    if (Array.isArray(t)) throw new TypeError(`tuning ${i + 1}: an object of tuning switches, not an array`);
    withTuning(DEFAULT_TUNING, t, `tuning ${i + 1}`);
  });
  const {implementation} = await ready;
  gpuMemory();  // before any runtime creates a buffer
  const adapter = await adapterInfo();
  if (!adapter && runtimes.some((r) => r !== 'wasm')) throw new Error('no WebGPU adapter');
  const results = [];
  for (const [i, name] of models.entries()) results.push(await benchModel(name, config, `model ${i + 1} of ${models.length}`));
  return {adapter, implementation, ortVersion: await ortVersion(runtimes.includes('wasm') && runtimes.length === 1 ? 'wasm' : 'webnn-ep'),
    config, models: results};
}

/** One line per model x runtime. */
function summary(run) {
  const lines = [`${run.implementation} WebNN; adapter: ${run.adapter ? [run.adapter.vendor, run.adapter.architecture, run.adapter.description].filter(Boolean).join(' ') : 'none'}; ORT-web ${run.ortVersion}`];
  for (const m of run.models) {
    lines.push('', `${m.model} (max length ${m.maxLength}, prompt ${run.config.prompt}, ${run.config.new} decode steps)`);
    for (const [name, r] of Object.entries(m.runtimes)) {
      lines.push(r.error ? `  ${name}: failed: ${r.error}`
        : `  ${name}: TTFT ${r.ttftMs.toFixed(1)} ms, prefill ${r.prefillTokensPerS.toFixed(1)} tokens/s, ` +
          `decode ${r.decodeTokensPerS.toFixed(2)} tokens/s, GPU ${(r.gpuBytesAfterLoad / 1e6).toFixed(1)} MB after load`);
    }
  }
  return lines.join('\n');
}

main().then((run) => {
  out.textContent = `${summary(run)}\n\nAll of it (window.lastRun):\n${JSON.stringify(run, (k, v) => (k === 'prompt' || k === 'ttftTimesMs' ? undefined : v), 2)}`;
  window.lastRun = run;
}, (error) => {
  out.textContent = `error: ${error?.name}: ${error?.message}`;
  window.lastError = {name: error?.name ?? 'Error', message: String(error?.message ?? error)};
});
