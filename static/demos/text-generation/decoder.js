/**
 * A GenAI-style decoder (tools/llm_model.py's layout) run by ONNX Runtime Web's WebNN EP on
 * whatever `navigator.ml` is, with its KV cache kept on the device.
 *
 * Sessions of the model's graph files share one MLContext: decode (model-<maxLength>.onnx,
 * sequence_length = 1) and prefill (sequence_length = the graph's length, the prompt padded;
 * causal attention leaves the padding unseen) through model-<maxLength>.onnx, or for a shorter
 * prompt through the shortest graph file that holds it (genai_config's max_lengths and
 * prefill_lengths), built when first used, writing the same maxLength-row cache.
 * Both are created with static shapes (freeDimensionOverrides); the graph file's
 * total_sequence_length is the literal maxLength, as ORT's WebNN EP requires for GroupQueryAttention.
 *
 * The cache: two MLTensors per past input (2 x layers x {key, value}, each
 * [1, kv_heads, maxLength, head_dim]) bound through ORT's IO binding (ort.Tensor.fromMLTensor)
 * as the step's past inputs and present outputs, swapped after every step. The WebNN spec's
 * dispatch() refuses one MLTensor bound as both an input and an output (a TypeError), so the
 * cache ping-pongs between the pair instead of being updated in place. Only the logits of the
 * step's last row ([1, 1, vocab]) come back to the CPU.
 *
 * The decoder records which token ids the cache holds (`cachedIds`, rows 0 .. n - 1), so that
 * `extend(ids)` can compute only what a new prompt adds to them: a chat turn's conversation
 * repeats the previous turn's prompt and reply. ORT's WebNN EP runs GroupQueryAttention's prefill
 * only from row 0 (sequence_length equal to the literal total_sequence_length) or one row at a
 * time, so the uncached suffix goes either through decode steps from the shared prefix on or
 * through a full prefill, whichever the measured costs say is cheaper (`cheaperPath`).
 */

/** float32 elements of a tensor shape */
const count = (shape) => shape.reduce((a, b) => a * b, 1);

/** Before both costs are measured: a suffix of at most this many tokens goes through decode steps. */
export const STEPS_PRIOR = 8;

/**
 * How to compute an uncached suffix of `suffix` tokens: 'steps' (one decode step a token) when they
 * are expected to cost no more than the full prefill, else 'prefill'. `stepMs`: a decode step's
 * measured ms, `prefillMs`: the prefill's expected ms (null: not measured; then STEPS_PRIOR decides).
 * @returns {'steps'|'prefill'}
 */
export function cheaperPath(suffix, stepMs, prefillMs) {
  if (stepMs === null || prefillMs === null) return suffix <= STEPS_PRIOR ? 'steps' : 'prefill';
  return suffix * stepMs <= prefillMs ? 'steps' : 'prefill';
}

/**
 * Fetch `url` as bytes, reporting progress (received, total bytes; total 0 when unknown).
 * @returns {Promise<Uint8Array>}
 */
export async function fetchBytes(url, onProgress = () => {}) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get('content-length')) || 0;
  if (!response.body || !total) return new Uint8Array(await response.arrayBuffer());
  const out = new Uint8Array(total);
  let received = 0;
  for await (const chunk of response.body) {
    out.set(chunk, received);
    received += chunk.length;
    onProgress(received, total);
  }
  return out;
}

export class Decoder {
  /**
   * @param {object} ort the onnxruntime-web module (a build with the WebNN EP: ort.min.mjs)
   * @param {string} baseUrl the model folder (genai_config.json, model-<maxLength>.onnx, model.onnx.data)
   * @param {{maxLength?: number, deviceType?: string, onProgress?: Function, context?: MLContext}} options
   *   onProgress(stage, fraction): 'download' then 'build'
   */
  static async load(ort, baseUrl, {maxLength = 256, deviceType = 'gpu', onProgress = () => {}, context} = {}) {
    const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
    const meta = await (await fetch(base + 'genai_config.json')).json();
    if (!meta.max_lengths.includes(maxLength)) {
      throw new RangeError(`the model has graphs for the maximum contexts ${meta.max_lengths.join(', ')}; not ${maxLength}`);
    }
    const [model, data] = await Promise.all([
      fetchBytes(`${base}model-${maxLength}.onnx`),
      fetchBytes(base + 'model.onnx.data', (got, total) => onProgress('download', got / total)),
    ]);
    onProgress('download', 1);
    context ??= await navigator.ml.createContext({deviceType});
    const t0 = performance.now();
    const options = (sequenceLength) => ({
      executionProviders: [{name: 'webnn', deviceType, context}],
      freeDimensionOverrides: {sequence_length: sequenceLength, max_length: maxLength},
      externalData: [{path: 'model.onnx.data', data}],
      preferredOutputLocation: 'ml-tensor',
      extra: {session: {disable_cpu_ep_fallback: '1'}},
      logSeverityLevel: 3,
    });
    onProgress('build', 0);
    const prefill = await ort.InferenceSession.create(model, options(maxLength));
    onProgress('build', 0.5);
    const decode = await ort.InferenceSession.create(model, options(1));
    onProgress('build', 1);
    // shorter prompts prefill through a shorter graph file (its total_sequence_length literal is
    // its length) into the same maxLength cache, built when first needed
    const shorter = [...new Set([...meta.max_lengths, ...(meta.prefill_lengths ?? [])])].filter((n) => n < maxLength).sort((a, b) => a - b);
    const createPrefill = async (rows) => {
      const file = await fetchBytes(`${base}model-${rows}.onnx`);
      return ort.InferenceSession.create(file, options(rows));
    };
    const decoder = new Decoder(ort, context, meta, maxLength, prefill, decode, {shorter, createPrefill});
    decoder.buildMs = performance.now() - t0;
    decoder.weightBytes = data.byteLength;
    await decoder.#allocate();
    return decoder;
  }

  #ort; #pairs = []; #flip = false; #shorter; #createPrefill; #prefills = new Map();
  /** the ids whose keys and values rows 0 .. n - 1 of the cache hold; emptied while a run is in flight */
  #cached = [];
  /** measured costs: a decode step's mean ms (the decode session's first run, which does one-off work, left out) */
  #stepMs = null; #stepsTimed = 0; #decodeRuns = 0;
  /** the last prefill's ms by graph rows (a graph's build left out) */
  #prefillMs = new Map();

  constructor(ort, context, meta, maxLength, prefill, decode, {shorter = [], createPrefill = null} = {}) {
    this.#ort = ort;
    this.#shorter = shorter;
    this.#createPrefill = createPrefill;
    this.#prefills.set(maxLength, prefill);
    this.context = context;
    this.config = meta.config;
    this.kv = meta.kv;
    this.maxLength = maxLength;
    this.sessions = {prefill, decode};
    this.kvShape = [1, meta.kv.kv_heads, maxLength, meta.kv.head_dim];
    /** the cache's (and the logits') float type: 'float32', or 'float16' in a q4f16 model */
    this.kvType = meta.kv.dataType ?? 'float32';
    /** past input names, one pair of MLTensors each */
    this.pastNames = [];
    for (let i = 0; i < meta.kv.layers; i++) {
      for (const kind of ['key', 'value']) this.pastNames.push(`past_key_values.${i}.${kind}`);
    }
  }

  /** bytes of the KV cache on the device (both halves of every pair) */
  get cacheBytes() { return 2 * this.pastNames.length * count(this.kvShape) * (this.kvType === 'float16' ? 2 : 4); }

  /**
   * The token ids whose keys and values the cache holds in rows 0 .. n - 1 (a copy). Rows after
   * them are stale: a run's attention stops at its seqlens_k.
   */
  get cachedIds() { return this.#cached.slice(); }

  /** The measured costs extend() chooses by: {stepMs (null before any), prefillMs: {rows: ms}}. */
  get costs() { return {stepMs: this.#stepMs, prefillMs: Object.fromEntries(this.#prefillMs)}; }

  async #allocate() {
    const desc = {dataType: this.kvType, shape: this.kvShape, readable: false, writable: true};
    for (const name of this.pastNames) {
      const pair = await Promise.all([this.context.createTensor(desc), this.context.createTensor(desc)]);
      this.#pairs.push({name, tensors: pair.map((t) => this.#ort.Tensor.fromMLTensor(t, {dataType: this.kvType, dims: this.kvShape}))});
    }
  }

  /**
   * One session run: `ids` at cache rows from `position` (prefill: the padded prompt from 0),
   * cache past -> present swapped afterwards. Returns the logits of row `logitsIndex` (Float32Array).
   */
  async #run(session, ids, seqlensK, logitsIndex) {
    const ort = this.#ort;
    const feeds = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      seqlens_k: new ort.Tensor('int32', Int32Array.of(seqlensK), [1]),
      logits_index: new ort.Tensor('int64', BigInt64Array.of(BigInt(logitsIndex)), [1]),
    };
    const fetches = {logits: null};
    const [past, present] = this.#flip ? [1, 0] : [0, 1];
    for (const {name, tensors} of this.#pairs) {
      feeds[name] = tensors[past];
      fetches[name.replace('past_key_values.', 'present.')] = tensors[present];
    }
    const out = await session.run(feeds, fetches);
    this.#flip = !this.#flip;
    const logits = await out.logits.getData(true);
    if (logits instanceof Float32Array) return logits;
    // float16 logits: binary16 bits (Uint16Array) where ORT-web has no Float16Array, else values
    return Float32Array.from(logits instanceof Uint16Array ? new Float16Array(logits.buffer, logits.byteOffset, logits.length) : logits);
  }

  /**
   * The rows a prompt of `length` tokens prefills through: the shortest graph that holds it (a
   * shorter graph may be filled to its last row: its cache rows go into the maxLength cache).
   */
  prefillRowsFor(length) {
    return this.#shorter.find((n) => n >= length) ?? this.maxLength;
  }

  /**
   * Prefill: the prompt (1 .. maxLength - 1 token ids) from cache row 0, padded to the rows of the
   * shortest graph that holds it (`prefillRows`); its last token's logits.
   */
  async prefill(ids) {
    this.#checkPrompt(ids);
    this.#cached = [];
    const rows = this.prefillRowsFor(ids.length);
    if (!this.#prefills.has(rows)) this.#prefills.set(rows, await this.#createPrefill(rows));
    this.prefillRows = rows;
    this.#flip = false;
    const padded = ids.concat(new Array(rows - ids.length).fill(0));
    const t0 = performance.now();
    const logits = await this.#run(this.#prefills.get(rows), padded, rows - 1, ids.length - 1);
    this.#prefillMs.set(rows, performance.now() - t0);
    this.#cached = ids.slice();
    return logits;
  }

  /**
   * Decode one token placed at cache row `position` (the cache holds `position` tokens). The cache
   * then holds the ids before `position` and `token`; a position past the recorded ids leaves the
   * record as it was (the row follows rows it does not know).
   */
  async step(token, position) {
    if (position >= this.maxLength) throw new RangeError(`the context is full (${this.maxLength} tokens)`);
    const held = position <= this.#cached.length ? [...this.#cached.slice(0, position), token] : this.#cached;
    this.#cached = [];
    const t0 = performance.now();
    const logits = await this.#run(this.sessions.decode, [token], position, 0);
    if (this.#decodeRuns++ > 0) {
      this.#stepMs = ((this.#stepMs ?? 0) * this.#stepsTimed + performance.now() - t0) / (this.#stepsTimed + 1);
      this.#stepsTimed++;
    }
    this.#cached = held;
    return logits;
  }

  /**
   * The logits of the last id of `ids` (1 .. maxLength - 1 ids), computing only what the cache
   * lacks. `ids` and the cached ids share a prefix of p ids (at most ids.length - 1: the last id's
   * logits are wanted); the rest either goes through decode steps from row p (mode 'steps',
   * reusedTokens p) or the whole of `ids` through a prefill from row 0 (mode 'prefill',
   * reusedTokens 0): ORT's WebNN EP prefills only from row 0. Afterwards the cache holds `ids`.
   * @param {number[]} ids
   * @param {{reuse?: 'auto'|'always'|'never'}} options 'auto' (default): steps when the measured
   *   costs expect them to be cheaper (cheaperPath); 'always': steps whenever a prefix is shared;
   *   'never': always the full prefill. Nothing shared: the full prefill.
   * @returns {Promise<{logits: Float32Array, reusedTokens: number, mode: 'steps'|'prefill'}>}
   */
  async extend(ids, {reuse = 'auto'} = {}) {
    if (!['auto', 'always', 'never'].includes(reuse)) throw new TypeError(`reuse: 'auto', 'always' or 'never'; not ${reuse}`);
    this.#checkPrompt(ids);
    const cached = this.#cached;
    const limit = Math.min(cached.length, ids.length - 1);
    let shared = 0;
    while (shared < limit && cached[shared] === ids[shared]) shared++;
    const cheaper = () => cheaperPath(ids.length - shared, this.#stepMs, this.#prefillEstimate(ids.length));
    const steps = shared > 0 && (reuse === 'always' || (reuse === 'auto' && cheaper() === 'steps'));
    if (!steps) return {logits: await this.prefill(ids), reusedTokens: 0, mode: 'prefill'};
    let logits;
    for (let i = shared; i < ids.length; i++) logits = await this.step(ids[i], i);
    return {logits, reusedTokens: shared, mode: 'steps'};
  }

  /**
   * The expected ms of prefilling `length` ids: the last prefill through the graph that takes them,
   * else the nearest measured graph's scaled by rows; null before any prefill.
   */
  #prefillEstimate(length) {
    const rows = this.prefillRowsFor(length);
    if (this.#prefillMs.has(rows)) return this.#prefillMs.get(rows);
    let nearest = null;
    for (const measured of this.#prefillMs.keys()) {
      if (nearest === null || Math.abs(measured - rows) < Math.abs(nearest - rows)) nearest = measured;
    }
    return nearest === null ? null : this.#prefillMs.get(nearest) * rows / nearest;
  }

  #checkPrompt(ids) {
    if (ids.length < 1 || ids.length >= this.maxLength) {
      throw new RangeError(`the prompt takes 1 .. ${this.maxLength - 1} tokens; got ${ids.length}`);
    }
  }

  async release() {
    for (const session of this.#prefills.values()) await session.release();
    await this.sessions.decode.release();
    for (const {tensors} of this.#pairs) for (const t of tensors) t.dispose();
    this.#pairs = [];
    this.#cached = [];
  }
}
