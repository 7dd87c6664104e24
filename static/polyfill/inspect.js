/**
 * Read-only introspection of this polyfill's graphs and contexts, and the queue hooks its
 * benchmark tools time their own GPU work with (an extension; native WebNN has none). Tests,
 * tools and demos use these instead of the private slots of context.js and graph.js.
 *
 *   describeGraph(graph)          the compiled plan: its steps (kernel, builder operators, launch
 *                                 size), descriptors, constant buffer sizes
 *   queueState(context)           the context's queue-wait tracking (gpu/completion.js) and held
 *                                 writes (gpu/pending_writes.js), as counters
 *   sharedConstants(context)      the constant buffers its graphs share (count, bytes)
 *   queueHooks(context)           the context's GPUDevice, and its prompt wait on a promise of the
 *                                 queue, for timing work encoded by hand
 *   encodeSteps(graph, pass, k)   encodes a graph's first k steps into a compute pass, bound to the
 *                                 tensors of its first dispatch (a benchmark's partial plans)
 *   tensorState(tensor)           a WebGPU context's MLTensor: its GPUBuffer, and its upload buffer
 *                                 for held writes (gpu/pending_writes.js), for benchmarks that copy
 *                                 into or out of it by hand
 *
 * docs/profiling.md describes them; readProfile (profiling.js) adds per-step GPU time.
 */
import {contextSlots} from './context.js';
import {graphSlots, isGraph} from './graph.js';
import {isTensor, tensorSlots} from './tensor.js';

function planOf(graph, name) {
  if (!isGraph(graph)) throw new TypeError(`${name}: argument is not an MLGraph`);
  return graphSlots(graph);
}

function gpuSlots(context, name) {
  const s = contextSlots(context);
  if (!s) throw new TypeError(`${name}: argument is not an MLContext of this polyfill`);
  return s.backend.accelerated ? s : null;
}

/**
 * What `graph` compiled into.
 * @param {MLGraph} graph
 * @param {{source?: boolean}} [options] source: each step also carries `source`, its WGSL text
 * @returns {{steps: {index: number, name: string, kernel: string, operators: {type: string, label: string}[],
 *   workgroups: number[], workgroupSize: number}[], inputs: Record<string, {dataType: string, shape: number[]}>,
 *   outputs: Record<string, {dataType: string, shape: number[]}>, constantBytes: number[], profiled: boolean}}
 *   steps: the GPU dispatches in execution order (compile/plan.js describeSteps; [] in the CPU
 *   context); constantBytes: the size of each constant buffer the plan uploaded, ascending;
 *   profiled: whether its dispatches record GPU time (profiling.js)
 * @throws {TypeError} `graph` is not an MLGraph of this polyfill
 */
export function describeGraph(graph, {source = false} = {}) {
  const g = planOf(graph, 'describeGraph');
  const plan = g.plan;
  const gpu = typeof plan?.describeSteps === 'function';
  const descriptors = (m) => Object.fromEntries([...(m ?? [])].map(([k, d]) => [k, {dataType: d.dataType, shape: [...d.shape]}]));
  return {
    steps: !gpu ? [] : plan.describeSteps().map((st, i) => (source ? {...st, source: plan.steps[i].shader.source()} : st)),
    inputs: descriptors(g.inputDescriptors),
    outputs: descriptors(g.outputDescriptors),
    constantBytes: gpu ? plan.values.filter((v) => v.kind === 'constant').map((v) => v.bytes).sort((a, b) => a - b) : [],
    profiled: Boolean(gpu && plan.timer),
  };
}

/**
 * The queue-wait tracking of `context` (gpu/completion.js) and its held writes.
 * @param {MLContext} context
 * @returns {{enabled: boolean, hardware: boolean, active: boolean, running: boolean, tracking: boolean,
 *   outstanding: number, nudges: number, intervalMs: number, heldWrites: number}|null} enabled:
 *   fastReadback; hardware: the adapter counts as hardware (or the tuning switch nudgeQueue says
 *   so); active: nudging applies; running: the nudge loop runs now; tracking: a dispatch's
 *   completion is being waited for; outstanding: waits not settled; nudges: sent so far;
 *   intervalMs: least time between nudges; heldWrites: writeTensor uploads not yet sent. null
 *   for the CPU context
 * @throws {TypeError} `context` is not an MLContext of this polyfill
 */
export function queueState(context) {
  const s = gpuSlots(context, 'queueState');
  if (!s) return null;
  const c = s.completion;
  return {enabled: c.enabled, hardware: c.hardware, active: c.active, running: c.running, tracking: c.tracking,
    outstanding: c.outstanding, nudges: c.nudges, intervalMs: c.intervalMs, heldWrites: s.pendingWrites.size};
}

/**
 * The constant buffers `context`'s graphs share (gpu/constant_store.js: equal constants of 64 KiB
 * or more are one buffer for every graph of the context).
 * @param {MLContext} context
 * @returns {{buffers: number, bytes: number}|null} null for the CPU context
 * @throws {TypeError} `context` is not an MLContext of this polyfill
 */
export function sharedConstants(context) {
  const s = gpuSlots(context, 'sharedConstants');
  if (!s) return null;
  return {buffers: s.constants.shared.size, bytes: s.constants.bytes};
}

/**
 * For benchmarks that encode GPU work themselves on the context's device.
 * @param {MLContext} context a WebGPU context of this polyfill
 * @returns {{device: GPUDevice, wait: function(Promise): Promise, afterSubmit: function(): void}}
 *   wait(p): p, settled as promptly as the context's own reads (gpu/completion.js wait);
 *   afterSubmit(): register work just submitted by hand, as dispatch() does
 * @throws {TypeError} `context` is not a WebGPU MLContext of this polyfill
 */
export function queueHooks(context) {
  const s = gpuSlots(context, 'queueHooks');
  if (!s) throw new TypeError('queueHooks: the CPU context has no GPU queue');
  return {device: s.device, wait: (p) => s.completion.wait(p), afterSubmit: () => s.completion.afterSubmit()};
}

/**
 * Encodes steps [from, to) of `graph` into `pass`, bound to the tensors of the graph's first
 * dispatch (its bind groups are cached per tensor combination: dispatch it once first).
 * @param {MLGraph} graph
 * @param {GPUComputePassEncoder} pass
 * @param {number} [to] default: every step
 * @param {number} [from=0]
 * @returns {number} the graph's step count
 * @throws {TypeError} `graph` is not a WebGPU MLGraph, or was never dispatched
 */
export function encodeSteps(graph, pass, to = Infinity, from = 0) {
  const {plan} = planOf(graph, 'encodeSteps');
  const groups = plan?.bindCache ? [...plan.bindCache.values()][0] : null;
  if (!groups) throw new TypeError('encodeSteps: the graph has not been dispatched on a WebGPU context');
  for (let i = from; i < Math.min(to, plan.steps.length); i++) {
    const st = plan.steps[i];
    pass.setPipeline(st.pipeline);
    pass.setBindGroup(0, groups[i]);
    pass.dispatchWorkgroups(...st.workgroups);
  }
  return plan.steps.length;
}

/**
 * The GPU side of an MLTensor of a WebGPU context.
 * @param {MLTensor} tensor
 * @returns {{buffer: GPUBuffer|null, uploadBuffer: GPUBuffer|null, destroyed: boolean}} buffer: the
 *   tensor's storage (null in the CPU context); uploadBuffer: the mapped upload buffer its large
 *   held writes go through (gpu/pending_writes.js), null when it has none
 * @throws {TypeError} `tensor` is not an MLTensor of this polyfill
 */
export function tensorState(tensor) {
  if (!isTensor(tensor)) throw new TypeError('tensorState: argument is not an MLTensor of this polyfill');
  const t = tensorSlots(tensor);
  const buffer = typeof GPUBuffer !== 'undefined' && t.buffer instanceof GPUBuffer ? t.buffer : null;
  return {buffer, uploadBuffer: t.uploadStaging?.buffer ?? null, destroyed: Boolean(t.destroyed)};
}
