/**
 * MLGraph (spec §MLGraph): a compiled plan bound to its MLContext.
 */
const SLOTS = new WeakMap();

/** @returns {object} internal slots */
export function graphSlots(graph) {
  return SLOTS.get(graph);
}

/** @returns {boolean} */
export function isGraph(value) {
  return SLOTS.has(value);
}

export class MLGraph {
  constructor() {
    throw new TypeError('Illegal constructor');
  }

  /**
   * Chromium 156 MLGraph.devices: the MLDeviceType values ("cpu" | "gpu" | "npu") the graph runs
   * on: ["gpu"], or ["cpu"] in the CPU context (one frozen array per graph). It names device kinds, not GPUDevices,
   * so a context's private device is never handed out.
   * @type {ReadonlyArray<string>}
   */
  get devices() {
    return SLOTS.get(this).devices;
  }

  /** Spec MLGraph.destroy(): frees the graph's buffers once queued work is done. Idempotent. */
  destroy() {
    destroyGraph(this);
  }

  get [Symbol.toStringTag]() { return 'MLGraph'; }
}

/**
 * MLGraph.destroy() (also used by context.js when the context is lost, so that a page replacing
 * MLGraph.prototype.destroy changes nothing). Idempotent.
 * @param {MLGraph} graph
 */
export function destroyGraph(graph) {
  const s = SLOTS.get(graph);
  if (s.destroyed) return;
  s.destroyed = true;
  s.ctx.graphs.delete(graph);
  s.plan.release(s.ctx);
}

/**
 * @param {object} context the MLContext
 * @param {object} ctx its slots
 * @param {object} plan the compiled Plan
 * @param {Map<string, object>} inputDescriptors name -> {dataType, shape}
 * @param {Map<string, object>} outputDescriptors
 * @param {string} [device] the MLDeviceType it runs on: 'gpu', or 'cpu' for the CPU context
 * @returns {MLGraph}
 */
export function createGraphObject(context, ctx, plan, inputDescriptors, outputDescriptors, device = 'gpu') {
  const graph = Object.create(MLGraph.prototype);
  SLOTS.set(graph, {context, ctx, devices: Object.freeze([device]), plan, inputDescriptors, outputDescriptors, destroyed: false});
  ctx.graphs.add(graph);
  return graph;
}
