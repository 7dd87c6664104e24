/**
 * The LLM benchmark's runtimes (llm.html), each a decoder over one GenAI-style model folder
 * (tools/llm_model.py's layout) with one interface:
 *   {prefill(ids) -> Promise<Float32Array> (the last prompt token's logits),
 *    step(token, position) -> Promise<Float32Array>, prefillRows(promptLength), release()}
 * - `webnn-ep`: ONNX Runtime Web's WebNN EP on this polyfill, through the text-generation page's
 *   Decoder (/demos/text-generation/decoder.js): prefill and decode sessions, the KV cache as
 *   MLTensors bound through IO binding. Its prefill runs the rows of the shortest graph file
 *   that holds the prompt (the prompt padded; the model's max_lengths and prefill_lengths),
 *   because ORT's WebNN EP takes GroupQueryAttention only with sequence_length equal to the
 *   literal total_sequence_length; a graph is built at its first prefill (the warm-up's).
 * - `webgpu`: ORT-web's native WebGPU EP (ort.webgpu.min.mjs, with its own MatMulNBits and
 *   GroupQueryAttention kernels) on the same files; the KV cache is one GPU buffer per past
 *   input, bound through IO binding as that step's past input and present output alike (ONNX
 *   Runtime GenAI's shared past/present buffers: GroupQueryAttention appends in place).
 * - `wasm`: ORT-web's wasm EP (its CPU kernels) on the same files.
 * The two ORT loops run the prompt's own rows (sequence_length = prompt length, seqlens_k =
 * prompt length - 1), as a GenAI runtime does.
 *
 * GPU memory: `gpuMemory()` wraps GPUDevice.prototype.createBuffer and GPUBuffer.prototype.destroy
 * once per page and counts the bytes of GPU buffers created and not destroyed, whoever creates
 * them (the polyfill or ORT's WebGPU EP); buffers dropped without destroy() stay counted.
 */
import {fetchBytes, Decoder} from '/demos/text-generation/decoder.js';
import {ortFor} from './runtimes.js';

export const LLM_RUNTIMES = ['webnn-ep', 'webgpu', 'wasm'];

/**
 * Bytes of GPU buffers (see the module comment) created since the last `startWindow()` and not
 * destroyed since (`live`), and the most of that at any time (`peak`): buffers of an earlier
 * window that are destroyed later do not count against the current one. `largest(n)`: the n
 * largest live buffers of the window, {bytes, usage} (GPUBufferUsage flags).
 */
export function gpuMemory() {
  if (globalThis.__llmGpuMemory) return globalThis.__llmGpuMemory;
  const buffers = new Map();  // the window's live buffers -> {bytes, usage}
  const memory = {
    live: 0, peak: 0, window: 0,
    startWindow() { this.window++; this.live = this.peak = 0; buffers.clear(); },
    largest(n) { return [...buffers.values()].sort((a, b) => b.bytes - a.bytes).slice(0, n); },
  };
  globalThis.__llmGpuMemory = memory;
  if (!globalThis.GPUDevice) return memory;
  const create = GPUDevice.prototype.createBuffer;
  const destroy = GPUBuffer.prototype.destroy;
  GPUDevice.prototype.createBuffer = function (descriptor) {
    const buffer = create.call(this, descriptor);
    buffers.set(buffer, {bytes: descriptor.size, usage: descriptor.usage, label: descriptor.label ?? ''});
    memory.live += descriptor.size;
    memory.peak = Math.max(memory.peak, memory.live);
    return buffer;
  };
  GPUBuffer.prototype.destroy = function () {
    const entry = buffers.get(this);
    if (entry) {
      buffers.delete(this);
      memory.live -= entry.bytes;
    }
    return destroy.call(this);
  };
  return memory;
}

/** The model folder's genai_config.json, model-<maxLength>.onnx and model.onnx.data. */
async function modelFiles(base, maxLength) {
  const meta = await (await fetch(base + 'genai_config.json')).json();
  if (!meta.max_lengths.includes(maxLength)) {
    throw new RangeError(`${base} has graphs for the maximum contexts ${meta.max_lengths.join(', ')}; not ${maxLength}`);
  }
  const [model, data] = await Promise.all([fetchBytes(`${base}model-${maxLength}.onnx`), fetchBytes(base + 'model.onnx.data')]);
  return {meta, model, data};
}

/** ORT-web's WebGPU or wasm EP running the prefill + decode loop itself (see the module comment). */
class OrtLoop {
  static async load(runtime, base, maxLength) {
    const ort = await ortFor(runtime);
    const {meta, model, data} = await modelFiles(base, maxLength);
    const names = [];
    for (let i = 0; i < meta.kv.layers; i++) for (const kind of ['key', 'value']) names.push(i + '.' + kind);
    const options = {executionProviders: [runtime], externalData: [{path: 'model.onnx.data', data}],
      graphOptimizationLevel: 'all', logSeverityLevel: 3};
    const session = await ort.InferenceSession.create(model, options);
    const loop = new OrtLoop(ort, runtime, session, meta, maxLength, names, data.byteLength);
    if (runtime === 'webgpu') loop.#allocate(await ort.env.webgpu.device);
    return loop;
  }

  #past = null;
  #buffers = [];

  constructor(ort, runtime, session, meta, maxLength, names, weightBytes) {
    Object.assign(this, {ort, runtime, session, meta, maxLength, names, weightBytes});
    this.kvShape = [1, meta.kv.kv_heads, maxLength, meta.kv.head_dim];
  }

  /**
   * WebGPU: one GPU buffer per past input on ORT's device, bound as both the past input and the
   * present output of every step, as ONNX Runtime GenAI binds them (GroupQueryAttention then
   * appends the step's rows in place: past and present share the buffer).
   */
  #allocate(device) {
    const bytes = this.kvShape.reduce((a, b) => a * b, 4);
    this.#past = {};
    for (const n of this.names) {
      const buffer = device.createBuffer({size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST});
      this.#buffers.push(buffer);
      this.#past[n] = this.ort.Tensor.fromGpuBuffer(buffer, {dataType: 'float32', dims: this.kvShape});
    }
    this.cacheBytes = bytes * this.names.length;
  }

  prefillRows(promptLength) { return promptLength; }

  async #run(ids, seqlensK, logitsIndex) {
    const ort = this.ort;
    const feeds = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      seqlens_k: new ort.Tensor('int32', Int32Array.of(seqlensK), [1]),
      logits_index: new ort.Tensor('int64', BigInt64Array.of(BigInt(logitsIndex)), [1]),
    };
    const fetches = {logits: null};
    for (const n of this.names) {
      feeds['past_key_values.' + n] = this.#past[n];
      if (this.#buffers.length) fetches['present.' + n] = this.#past[n];
    }
    const out = await this.session.run(feeds, this.#buffers.length ? fetches : undefined);
    if (!this.#buffers.length) this.#past = Object.fromEntries(this.names.map((n) => [n, out['present.' + n]]));
    const logits = await out.logits.getData();
    return logits instanceof Float32Array ? logits : new Float32Array(logits);
  }

  prefill(ids) {
    if (ids.length < 1 || ids.length >= this.maxLength) throw new RangeError(`the prompt takes 1 .. ${this.maxLength - 1} tokens`);
    if (!this.#buffers.length) {  // wasm: a zero cache on the CPU, then each step's present as the next past
      const zeros = new Float32Array(this.kvShape.reduce((a, b) => a * b, 1));
      this.#past = Object.fromEntries(this.names.map((n) => [n, new this.ort.Tensor('float32', zeros, this.kvShape)]));
    }
    return this.#run(ids, ids.length - 1, ids.length - 1);
  }

  step(token, position) {
    if (position >= this.maxLength) throw new RangeError(`the context is full (${this.maxLength} tokens)`);
    return this.#run([token], position, 0);
  }

  async release() {
    await this.session.release();
    for (const b of this.#buffers) b.destroy();
    this.#buffers = [];
    this.#past = null;
  }
}

/** The WebNN EP's Decoder on this polyfill, on a context of its own (destroyed on release). */
async function loadWebnnEp(base, maxLength, tuning) {
  const ort = await ortFor('webnn-ep');
  const context = await navigator.ml.createContext({deviceType: 'gpu', powerPreference: 'high-performance',
    ...(tuning ? {polyfill: {tuning}} : {})});
  const memory = gpuMemory();
  let firstSessionBytes;
  const onProgress = (stage, fraction) => {
    if (stage === 'build' && fraction === 0.5) firstSessionBytes = memory.live;
  };
  const decoder = await Decoder.load(ort, base, {maxLength, context, onProgress});
  return {
    weightBytes: decoder.weightBytes, cacheBytes: decoder.cacheBytes, firstSessionBytes,
    prefillRows: (promptLength) => decoder.prefillRowsFor(promptLength),
    prefill: (ids) => decoder.prefill(ids),
    step: (token, position) => decoder.step(token, position),
    async release() { await decoder.release(); context.destroy(); },
  };
}

/**
 * Loads `runtime` (one of LLM_RUNTIMES) on the model folder `base` for contexts up to `maxLength`;
 * `tuning`: the polyfill's tuning switches (tuning.js) for the webnn-ep runtime's context, or null.
 */
export function loadRuntime(runtime, base, maxLength, tuning = null) {
  if (runtime === 'webnn-ep') return loadWebnnEp(base, maxLength, tuning);
  if (runtime === 'webgpu' || runtime === 'wasm') return OrtLoop.load(runtime, base, maxLength);
  throw new TypeError(`unknown LLM runtime ${runtime}; known: ${LLM_RUNTIMES.join(', ')}`);
}
