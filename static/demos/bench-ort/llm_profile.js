/**
 * The LLM benchmark's GPU profile of the polyfill (llm.html?profile=1): the WebNN EP's decoder
 * on a context created with {polyfill: {profiling: true}}, every graph ORT builds on it caught
 * at MLGraphBuilder.prototype.build, then per graph (a prefill graph of its rows, the decode
 * graph of one) the GPU time of each step from /polyfill/profiling.js. A profiled dispatch
 * encodes one compute pass per step, so its total is above an unprofiled dispatch's time: read
 * the shares, not the sum, against the timed run.
 */
import {Decoder} from '/demos/text-generation/decoder.js';
import {argmax} from '/demos/text-generation/sampler.js';
import {ortFor} from './runtimes.js';

const TOP = 12;

/**
 * Host-side time of the polyfill's MLContext calls while it runs: `dispatch` (the JavaScript that
 * encodes and submits a graph), `readTensor` (from the call until its promise settles: the wait for
 * the GPU and the copy back) and `writeTensor`, summed with their counts. `stop()` restores the
 * methods and returns the sums, each divided by `per` (the runs timed).
 */
export function timeContextCalls() {
  const names = ['dispatch', 'readTensor', 'writeTensor'];
  const saved = Object.fromEntries(names.map((n) => [n, MLContext.prototype[n]]));
  const sums = Object.fromEntries(names.map((n) => [n, {ms: 0, calls: 0}]));
  for (const n of names) {
    MLContext.prototype[n] = function (...args) {
      const t0 = performance.now();
      const result = saved[n].apply(this, args);
      const done = () => { sums[n].ms += performance.now() - t0; sums[n].calls++; };
      if (result instanceof Promise) return result.finally(done);
      done();
      return result;
    };
  }
  return {
    stop(per = 1) {
      Object.assign(MLContext.prototype, saved);
      return Object.fromEntries(names.map((n) => [n, {ms: sums[n].ms / per, calls: sums[n].calls / per}]));
    },
  };
}

/** Steps summed by kernel and by the first operator's type, largest first, {name, ms, steps}. */
function totalsBy(steps, key) {
  const sums = new Map();
  for (const s of steps) {
    const k = key(s);
    const t = sums.get(k) ?? {name: k, ms: 0, steps: 0};
    t.ms += s.ms;
    t.steps += 1;
    sums.set(k, t);
  }
  return [...sums.values()].sort((a, b) => b.ms - a.ms);
}

/**
 * One graph's profile in short: its rows, steps, mean GPU ms per dispatch, the TOP slowest steps,
 * and every kernel's and first operator's total.
 */
function summarize(rows, profile) {
  const slowest = [...profile.steps].sort((a, b) => b.ms - a.ms).slice(0, TOP).map((s) => ({
    index: s.index, ms: s.ms, kernel: s.kernel, workgroups: s.workgroups, workgroupSize: s.workgroupSize,
    operators: s.operators.map((o) => o.type),
  }));
  return {rows, runs: profile.runs, steps: profile.steps.length, totalMs: profile.totalMs, slowest,
    byKernel: totalsBy(profile.steps, (s) => s.kernel),
    byOperator: totalsBy(profile.steps, (s) => s.operators[0]?.type ?? '(input)')};
}

/**
 * Profiles the polyfill's prefill of `prompt` and `steps` decode steps on model folder `base`
 * (`tuning`: the context's tuning switches, or null).
 * @returns {Promise<{graphs: object[]} | {skipped: string}>} one summary per graph ORT built
 *   (prefill graphs first by rows, then the decode graph), each after `runs` dispatches
 */
export async function profileWebnnEp(base, maxLength, prompt, {runs = 3, steps = 8, tuning = null} = {}) {
  let readProfile, describeGraph;
  try {
    ({readProfile} = await import('/polyfill/profiling.js'));
    ({describeGraph} = await import('/polyfill/inspect.js'));
  } catch (error) {
    return {skipped: `no /polyfill/profiling.js (${error?.message ?? error})`};
  }
  const context = await navigator.ml.createContext({deviceType: 'gpu', powerPreference: 'high-performance',
    polyfill: {profiling: true, ...(tuning ? {tuning} : {})}});
  const graphs = [];
  const build = MLGraphBuilder.prototype.build;
  MLGraphBuilder.prototype.build = async function (...args) {
    const graph = await build.apply(this, args);
    graphs.push(graph);
    return graph;
  };
  let decoder;
  try {
    const ort = await ortFor('webnn-ep');
    decoder = await Decoder.load(ort, base, {maxLength, context});
    // the first prefill and steps build what is built lazily and warm the pipelines; then reset
    let token = argmax(await decoder.prefill(prompt));
    await decoder.step(token, prompt.length);
    for (const g of graphs) await readProfile(g, {reset: true});
    for (let i = 0; i < runs; i++) token = argmax(await decoder.prefill(prompt));
    for (let i = 0; i < steps; i++) token = argmax(await decoder.step(token, prompt.length + i));
    const out = [];
    for (const g of graphs) {
      const profile = await readProfile(g);
      if (!profile.runs) continue;
      const ids = Object.entries(describeGraph(g).inputs).find(([name]) => name === 'input_ids');
      out.push(summarize(ids ? ids[1].shape.at(-1) : null, profile));
    }
    return {graphs: out.sort((a, b) => b.rows - a.rows)};
  } finally {
    MLGraphBuilder.prototype.build = build;
    await decoder?.release();
    context.destroy();
  }
}
