/**
 * Per-step GPU time of compiled graphs (an extension of this polyfill; native WebNN has none).
 *
 * Opt in when creating the context:
 *   const context = await navigator.ml.createContext({polyfill: {profiling: true}});
 * (native WebNN ignores the unknown `polyfill` member). It works where the adapter offers the
 * WebGPU feature "timestamp-query"; the context then requests it and every graph built on it
 * records, per dispatch, the GPU time of each of its steps. A profiled dispatch encodes one
 * compute pass per step (timestamps can only be taken at pass boundaries) where an unprofiled
 * one encodes a single pass, and reads the timestamps back: profiling itself costs time, so
 * compare profiles with profiles. Without the option nothing is recorded and plans write no
 * timestamps.
 */
import {graphSlots, isGraph} from './graph.js';

/**
 * The GPU time of each step of `graph`, averaged over the dispatches since the graph was built
 * (or since the last reset). Waits until every dispatch submitted so far has been read back.
 *
 * A step is one compute dispatch of the compiled plan; `steps.length` is the number of GPU
 * steps the graph takes per dispatch. Each step names the builder operators it came from
 * (`type` = the MLGraphBuilder method, `label` = the `label` option given to it, '' when none);
 * steps converting float16/int8/uint8 graph inputs list none, and an output's copy or packing
 * step lists the operator that produced the output. `workgroups` ([x, y, z]) and
 * `workgroupSize` say how large the step's dispatch is (x * y * z workgroups of workgroupSize
 * invocations), to tell a step that occupies a few of the GPU's cores from one that fills it.
 *
 * @param {MLGraph} graph a graph whose context was created with {polyfill: {profiling: true}}
 * @param {{reset?: boolean}} [options] reset: start the sums afresh after reading
 * @returns {Promise<{runs: number, totalMs: number, steps: {index: number, name: string,
 *   kernel: string, operators: {type: string, label: string}[], workgroups: number[],
 *   workgroupSize: number, ms: number}[]}>}
 *   runs: dispatches measured; totalMs: the sum of the steps' ms; ms: mean GPU milliseconds of
 *   the step per dispatch (0 when runs is 0); steps in execution order
 * @throws {TypeError} (rejects) `graph` is not an MLGraph, or its context has profiling off
 *   (not requested, the adapter lacks "timestamp-query", or it is the CPU context)
 */
export async function readProfile(graph, {reset = false} = {}) {
  if (!isGraph(graph)) throw new TypeError('readProfile: argument is not an MLGraph');
  const {ctx, plan} = graphSlots(graph);
  if (!plan.timer) {
    const why = !ctx.backend.accelerated ? 'the CPU context runs no GPU steps to time'
      : ctx.profiling === false && ctx.profilingRequested
        ? 'the adapter does not offer "timestamp-query"'
        : 'create the context with navigator.ml.createContext({polyfill: {profiling: true}})';
    throw new TypeError(`readProfile: profiling is off for this graph's MLContext (${why})`);
  }
  const {runs, ms} = await plan.timer.read(reset);
  const steps = plan.describeSteps().map((step, i) => ({...step, ms: ms[i]}));
  return {runs, totalMs: ms.reduce((a, b) => a + b, 0), steps};
}
