/**
 * A call tracer for WebNN clients: wraps every method of navigator.ml's ML, MLContext, MLTensor,
 * MLGraphBuilder and MLGraph prototypes (and, with `gpu: true`, the WebGPU methods the polyfill
 * calls underneath: GPUDevice, GPUQueue, GPUBuffer, GPUCommandEncoder) with a logger, so that a
 * page can see what a client (our builder code, ORT-web's WebNN EP) calls per inference and what
 * the implementation does for each call. Measuring aid for docs/ort-webnn-latency.md and
 * tools/trace_webnn.py; not part of the polyfill.
 *
 * Each entry: {seq, t (performance.now() at the call), layer: 'webnn'|'gpu', name ('MLContext.readTensor'), args (a short text:
 * tensors as `float32[1,128,768]#id`, buffers by byte length), syncMs (time inside the call),
 * settleMs (promises: call to settlement, else undefined), rejected, depth (0: called by the
 * client; 1+: called while another traced call ran synchronously, e.g. the polyfill's GPU calls
 * inside readTensor)}. `mark(label)` appends {mark: label, t} so that runs can be told apart.
 *
 * Usage:
 *   const tracer = installTracer({gpu: true});   // once, before the client loads
 *   tracer.mark('run 1'); await client.run(x); const entries = tracer.take();
 *   tracer.uninstall();
 */

const WEBNN_CLASSES = ['ML', 'MLContext', 'MLTensor', 'MLGraphBuilder', 'MLGraph'];
/** WebGPU classes and the methods worth seeing (the rest, e.g. compute-pass encoding, would drown them). */
const GPU_METHODS = {
  GPUDevice: ['createBuffer', 'createCommandEncoder', 'createBindGroup', 'pushErrorScope', 'popErrorScope',
    'createComputePipeline', 'createComputePipelineAsync', 'createShaderModule'],
  GPUQueue: ['submit', 'writeBuffer', 'onSubmittedWorkDone'],
  GPUBuffer: ['mapAsync', 'getMappedRange', 'unmap', 'destroy'],
  GPUCommandEncoder: ['copyBufferToBuffer', 'beginComputePass', 'clearBuffer', 'resolveQuerySet'],
};

/** A short text for one argument. */
function describe(value, depth = 0) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'function') return 'fn';
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag === 'MLTensor') return `MLTensor(${value.dataType}[${value.shape}]${idOf(value)})`;
  if (tag === 'MLOperand') return `MLOperand(${value.dataType}[${value.shape}])`;
  if (tag === 'GPUBuffer') return `GPUBuffer(${value.size}B)`;
  if (value instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && value instanceof SharedArrayBuffer)) return `${tag}(${value.byteLength}B)`;
  if (ArrayBuffer.isView(value)) {
    const whole = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength;
    return `${tag}(${value.byteLength}B${whole ? '' : ` of ${value.buffer.byteLength}B @${value.byteOffset}`})`;
  }
  if (Array.isArray(value)) {
    if (depth > 1) return `[${value.length}]`;
    return value.length > 8 ? `[${value.slice(0, 8).map((v) => describe(v, depth + 1)).join(',')},...${value.length}]` : `[${value.map((v) => describe(v, depth + 1)).join(',')}]`;
  }
  if (typeof value === 'object') {
    if (depth > 1 || !(Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)) return tag;
    const entries = Object.entries(value);
    return `{${entries.slice(0, 8).map(([k, v]) => `${k}:${describe(v, depth + 1)}`).join(',')}${entries.length > 8 ? ',...' : ''}}`;
  }
  return tag;
}

const ids = new WeakMap();
let nextId = 1;
/** `#n`: a stable number per traced object (tensors), so reuse across runs is visible. */
function idOf(object) {
  if (!ids.has(object)) ids.set(object, nextId++);
  return `#${ids.get(object)}`;
}

/**
 * Wraps the methods and installs the tracer.
 * @param {{gpu?: boolean}} [options] gpu: also trace the WebGPU calls listed in GPU_METHODS
 * @returns {{entries: object[], mark(label: string): void, take(): object[], uninstall(): void}}
 */
export function installTracer({gpu = false} = {}) {
  const entries = [];
  const restore = [];
  let depth = 0;
  let seq = 0;
  const wrap = (proto, className, name, layer) => {
    const desc = Object.getOwnPropertyDescriptor(proto, name);
    if (!desc || typeof desc.value !== 'function' || name === 'constructor') return;
    const original = desc.value;
    const traced = function (...args) {
      const t0 = performance.now();
      const entry = {seq: seq++, layer, name: `${className}.${name}`, args: args.map((a) => describe(a)).join(', '), depth, t: t0};
      entries.push(entry);
      depth++;
      let result;
      try {
        result = original.apply(this, args);
      } catch (error) {
        entry.threw = `${error?.name}: ${error?.message}`;
        throw error;
      } finally {
        depth--;
        entry.syncMs = performance.now() - t0;
      }
      if (result && typeof result.then === 'function') {
        result.then((v) => {
          entry.settleMs = performance.now() - t0;
          if (v !== undefined) entry.result = describe(v);
        }, (e) => {
          entry.settleMs = performance.now() - t0;
          entry.rejected = `${e?.name}: ${e?.message}`;
        });
      } else if (result !== undefined && layer === 'webnn') {
        entry.result = describe(result);
      }
      return result;
    };
    Object.defineProperty(proto, name, {...desc, value: traced});
    restore.push(() => Object.defineProperty(proto, name, desc));
  };
  for (const className of WEBNN_CLASSES) {
    const cls = globalThis[className];
    if (!cls?.prototype) continue;
    for (const name of Object.getOwnPropertyNames(cls.prototype)) wrap(cls.prototype, className, name, 'webnn');
  }
  if (gpu) {
    for (const [className, names] of Object.entries(GPU_METHODS)) {
      const cls = globalThis[className];
      if (!cls?.prototype) continue;
      for (const name of names) wrap(cls.prototype, className, name, 'gpu');
    }
  }
  return {
    entries,
    mark(label) { entries.push({seq: seq++, mark: label, t: performance.now()}); },
    /** The entries so far (removed from the log). */
    take() { return entries.splice(0, entries.length); },
    uninstall() { for (const r of restore.reverse()) r(); restore.length = 0; },
  };
}

/**
 * A per-run summary of traced entries: the WebNN calls in order with their timings, and the
 * count of each WebGPU call (nudges included) per run.
 * @param {object[]} entries from take()
 * @returns {{webnn: object[], gpuCounts: Object<string, number>, gpu: object[]}}
 */
export function summarize(entries) {
  const webnn = entries.filter((e) => e.layer === 'webnn');
  const gpuEntries = entries.filter((e) => e.layer === 'gpu');
  const gpuCounts = {};
  for (const e of gpuEntries) gpuCounts[e.name] = (gpuCounts[e.name] ?? 0) + 1;
  return {webnn, gpuCounts, gpu: gpuEntries};
}
