/**
 * Which WebNN implementation and which GPU adapter the demo runs on.
 */
/** GPUAdapterInfo members we show (absent members are left out). */
const INFO_FIELDS = ['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter'];

/**
 * Describes the adapter behind `context`.
 * With the polyfill, the adapter is the one the MLContext asked WebGPU for (its internal slots);
 * with a native WebNN, the page cannot see it, so the default WebGPU adapter is reported instead
 * (`source: 'navigator.gpu'`).
 * @param {MLContext} context
 * @param {'polyfill'|'native'} implementation from `ready` of /polyfill/webnn.js
 * @returns {Promise<{implementation: string, source: string, vendor?: string, architecture?: string,
 *   device?: string, description?: string, isFallbackAdapter?: boolean, cpu?: true}>} plain,
 *   JSON-serialisable; `cpu` for a context with `accelerated` false (no adapter to describe)
 */
export async function describeAdapter(context, implementation) {
  // the polyfill's CPU context (?device=cpu, or a machine with no hardware adapter)
  if (context.accelerated === false) return {implementation, source: 'MLContext', cpu: true};
  let info = null;
  let source = 'unknown';
  if (implementation === 'polyfill') {
    const {contextInfo} = await import('/polyfill/options.js');
    info = contextInfo(context).adapterInfo;
    source = 'MLContext';
  }
  if (!info && globalThis.navigator?.gpu) {
    const adapter = await navigator.gpu.requestAdapter();
    info = adapter?.info ?? null;
    source = 'navigator.gpu';
  }
  const described = {implementation, source};
  for (const field of INFO_FIELDS) {
    if (info && info[field] !== undefined) described[field] = info[field];
  }
  return described;
}

/**
 * One line for people: "polyfill on swiftshader (google, fallback adapter)".
 * @param {{implementation: string, source: string, vendor?: string, architecture?: string,
 *   device?: string, description?: string, isFallbackAdapter?: boolean}} adapter from describeAdapter()
 * @returns {string}
 */
export function adapterText(adapter) {
  if (adapter.cpu) return `${adapter.implementation} WebNN on the CPU (no GPU; ONNX Runtime Web's wasm engine)`;
  const name = [adapter.vendor, adapter.architecture, adapter.device].filter(Boolean).join(' / ') || 'unknown adapter';
  const notes = [];
  if (adapter.description) notes.push(adapter.description);
  if (adapter.isFallbackAdapter) notes.push('fallback adapter');
  if (adapter.source === 'navigator.gpu') notes.push('default WebGPU adapter');
  return `${adapter.implementation} WebNN on ${name}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}
