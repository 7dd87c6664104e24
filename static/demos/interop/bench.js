/**
 * The buffer-sharing experiment: one conv2d (3x3, bias, padding 1) -> add -> relu fragment,
 * computed four ways on one GPUDevice from the same input:
 *   1. app:      everything as the application's WGSL (app_shaders.js);
 *   2. readback: WebNN conv2d -> readTensor() to an ArrayBuffer -> writeBuffer() -> app add, relu;
 *   3. export:   WebNN conv2d -> exportToGPU() (zero copy) -> app add, relu -> destroy() the buffer;
 *   4. graph:    conv2d, add and relu in one WebNN graph.
 * WebNN runs on the application's device (navigator.ml.createContext(device)), so every variant
 * shares one queue. One iteration ends when the queue has finished its work
 * (queue.onSubmittedWorkDone()); outputs are read back only after timing.
 *
 * Shapes: input [N, C, H, W] float32, filter [O, C, 3, 3], bias [O], added tensor and output
 * [N, O, H, W]. Data: a fixed-seed uniform generator, so every run and variant sees the same input.
 */
import {AppKernels} from './app_shaders.js';
import {PRESETS, checkConfig} from './params.js';

export {PRESETS};

/** The four variants, in the order of the experiment. */
export const VARIANTS = Object.freeze([
  {id: 'app', name: '1 app WGSL: conv2d, add, relu'},
  {id: 'readback', name: '2 WebNN conv2d -> readTensor -> writeBuffer -> app add, relu'},
  {id: 'export', name: '3 WebNN conv2d -> exportToGPU -> app add, relu'},
  {id: 'graph', name: '4 WebNN graph: conv2d, add, relu'},
]);

const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/**
 * The application's adapter and device: high-performance, retrying a null adapter (some GPU hosts
 * return null from a fresh browser at first), with the adapter's buffer-size limits.
 * @returns {Promise<{adapter: GPUAdapter, device: GPUDevice}>}
 * @throws {Error} no WebGPU, or no adapter after `attempts` tries
 */
export async function requestDevice({attempts = 4} = {}) {
  if (!navigator.gpu) throw new Error('WebGPU is not available in this browser');
  let adapter = null;
  for (let i = 0; i < attempts && !adapter; i++) {
    adapter = await navigator.gpu.requestAdapter({powerPreference: 'high-performance'});
    if (!adapter) await new Promise((r) => setTimeout(r, 100 * (i + 1)));
  }
  if (!adapter) throw new Error(`no WebGPU adapter after ${attempts} requestAdapter() calls`);
  const requiredLimits = {};
  for (const name of ['maxStorageBufferBindingSize', 'maxBufferSize']) requiredLimits[name] = adapter.limits[name];
  const device = await adapter.requestDevice({requiredLimits, label: 'interop-demo'});
  return {adapter, device};
}

/** {vendor, architecture, device, description, isFallbackAdapter} of a GPUAdapter. */
export function adapterSummary(adapter) {
  const info = adapter.info ?? {};
  return {
    vendor: info.vendor ?? '', architecture: info.architecture ?? '', device: info.device ?? '',
    description: info.description ?? '', isFallbackAdapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter),
  };
}

/** Uniform floats in [lo, hi) from a 32-bit seed (mulberry32). */
function uniformArray(length, seed, lo, hi) {
  const out = new Float32Array(length);
  let a = seed >>> 0;
  for (let i = 0; i < length; i++) {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = lo + (hi - lo) * (((t ^ (t >>> 14)) >>> 0) / 4294967296);
  }
  return out;
}

/**
 * The experiment's data: x in [-1, 1), filter scaled by 1/sqrt(9C), bias in [-0.5, 0.5), r (the
 * tensor added after the convolution) in [-1, 1).
 * @param {{shape: number[], filters: number}} config
 * @returns {{x: Float32Array, w: Float32Array, b: Float32Array, r: Float32Array}}
 */
export function makeData({shape: [n, c, h, w], filters: o}) {
  const scale = 1 / Math.sqrt(9 * c);
  return {
    x: uniformArray(n * c * h * w, 1, -1, 1),
    w: uniformArray(o * c * 9, 2, -scale, scale),
    b: uniformArray(o, 3, -0.5, 0.5),
    r: uniformArray(n * o * h * w, 4, -1, 1),
  };
}

/** {medianMs, minMs, maxMs, p25Ms, p75Ms, meanMs} of a list of milliseconds. */
export function summarize(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q) => {
    const pos = (s.length - 1) * q;
    const lo = Math.floor(pos);
    return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
  };
  return {medianMs: at(0.5), minMs: s[0], maxMs: s[s.length - 1], p25Ms: at(0.25), p75Ms: at(0.75),
    meanMs: s.reduce((a, b) => a + b, 0) / s.length};
}

/**
 * Agreement of the four outputs: the largest pairwise |difference|, and the bound it must stay
 * within: twice the sum of the fragment's tolerances.md bounds (conv2d 2*9*C ULP + add 1 ULP +
 * relu 0), counted in ULPs of the largest output magnitude.
 * @param {Float32Array[]} outputs
 * @param {number} channels C
 * @returns {{maxAbsDiff: number, tolerance: number, maxAbs: number}}
 */
export function compareOutputs(outputs, channels) {
  let maxAbsDiff = 0;
  let maxAbs = 0;
  for (let i = 0; i < outputs.length; i++) {
    for (const v of outputs[i]) maxAbs = Math.max(maxAbs, Math.abs(v));
    for (let j = i + 1; j < outputs.length; j++) {
      const a = outputs[i];
      const b = outputs[j];
      for (let k = 0; k < a.length; k++) {
        const d = Math.abs(a[k] - b[k]);
        if (!(d <= maxAbsDiff)) maxAbsDiff = Number.isNaN(d) ? Infinity : d;
      }
    }
  }
  const ulp = 2 ** (Math.floor(Math.log2(Math.max(maxAbs, 2 ** -126))) - 23);
  return {maxAbsDiff, tolerance: 2 * (2 * 9 * channels + 1) * ulp, maxAbs};
}

/** One experiment: resources for all four variants on one device and one MLContext. */
export class Experiment {
  /**
   * Creates buffers, compiles the app pipelines and builds both WebNN graphs.
   * @param {GPUDevice} device the application's device
   * @param {{shape: number[], filters: number}} config
   * @returns {Promise<Experiment>}
   */
  static async create(device, config) {
    const e = new Experiment(device, config);
    await e.setup();
    return e;
  }

  constructor(device, {shape, filters}) {
    this.device = device;
    this.shape = shape.slice();
    this.filters = filters;
    const [n, , h, w] = shape;
    this.outShape = [n, filters, h, w];
    this.count = n * filters * h * w;
    this.data = makeData({shape, filters});
    this.owned = [];
  }

  buffer(label, source) {
    const size = typeof source === 'number' ? source : source.byteLength;
    const buffer = this.device.createBuffer({label: `app:${label}`, size, usage: STORAGE});
    if (typeof source !== 'number') this.device.queue.writeBuffer(buffer, 0, source);
    this.owned.push(buffer);
    return buffer;
  }

  async setup() {
    const {device, data, count} = this;
    const [n, c, h, w] = this.shape;
    const o = this.filters;
    const bytes = count * 4;
    const app = this.app = {
      x: this.buffer('x', data.x), w: this.buffer('w', data.w), b: this.buffer('b', data.b), r: this.buffer('r', data.r),
      y1: this.buffer('conv out (1)', bytes), y2: this.buffer('readback upload (2)', bytes), sum: this.buffer('add out', bytes),
      out: {app: this.buffer('out (1)', bytes), readback: this.buffer('out (2)', bytes), export: this.buffer('out (3)', bytes)},
    };
    const k = this.kernels = await AppKernels.create(device);
    this.appPass = [k.conv2d({x: app.x, w: app.w, b: app.b, y: app.y1}, {n, c, h, w, o}), k.add(app.y1, app.r, app.sum, count), k.relu(app.sum, app.out.app, count)];
    this.readbackPass = [k.add(app.y2, app.r, app.sum, count), k.relu(app.sum, app.out.readback, count)];
    this.exportAdd = k.add(app.y2, app.r, app.sum, count); // rebound to the exported buffer each time
    this.exportRelu = k.relu(app.sum, app.out.export, count);
    this.owned.push(...[...this.appPass, ...this.readbackPass, this.exportAdd, this.exportRelu].map((d) => d.params));

    const ml = this.ml = await navigator.ml.createContext(device);
    const f32 = (shape) => ({dataType: 'float32', shape});
    const fragment = (builder, withTail) => {
      const x = builder.input('x', f32(this.shape));
      const y = builder.conv2d(x, builder.constant(f32([o, c, 3, 3]), data.w),
        {bias: builder.constant(f32([o]), data.b), padding: [1, 1, 1, 1], label: 'conv'});
      return withTail ? builder.relu(builder.add(y, builder.input('r', f32(this.outShape)), {label: 'add'}), {label: 'relu'}) : y;
    };
    const build = (name, withTail) => {
      const builder = new MLGraphBuilder(ml);
      return builder.build({[name]: fragment(builder, withTail)});
    };
    this.convGraph = await build('y', false);
    this.fullGraph = await build('out', true);
    this.tensors = {
      x: await ml.createTensor({...f32(this.shape), writable: true}),
      r: await ml.createTensor({...f32(this.outShape), writable: true}),
      yRead: await ml.createTensor({...f32(this.outShape), readable: true}),
      yExport: await ml.createExportableTensor(f32(this.outShape), device),
      out: await ml.createTensor({...f32(this.outShape), readable: true, writable: true}),
    };
    ml.writeTensor(this.tensors.x, data.x);
    ml.writeTensor(this.tensors.r, data.r);
    await device.queue.onSubmittedWorkDone();
  }

  submit(dispatches, label) {
    const encoder = this.device.createCommandEncoder({label});
    AppKernels.encode(encoder, dispatches, label);
    this.device.queue.submit([encoder.finish()]);
  }

  /**
   * Runs one iteration of a variant; resolves when the device's queue has finished it.
   * @param {'app'|'readback'|'export'|'graph'} id
   */
  async step(id) {
    const {ml, tensors, device} = this;
    if (id === 'app') {
      this.submit(this.appPass, 'app fragment');
    } else if (id === 'readback') {
      ml.dispatch(this.convGraph, {x: tensors.x}, {y: tensors.yRead});
      const bytes = await ml.readTensor(tensors.yRead);
      device.queue.writeBuffer(this.app.y2, 0, bytes);
      this.submit(this.readbackPass, 'app add, relu (2)');
    } else if (id === 'export') {
      ml.dispatch(this.convGraph, {x: tensors.x}, {y: tensors.yExport});
      const shared = await ml.exportToGPU(tensors.yExport);
      this.submit([this.kernels.rebind(this.exportAdd, [shared, this.app.r, this.app.sum]), this.exportRelu], 'app add, relu (3)');
      shared.destroy(); // gives the tensor back to WebNN; the queue keeps the order
    } else if (id === 'graph') {
      ml.dispatch(this.fullGraph, {x: tensors.x, r: tensors.r}, {out: tensors.out});
    } else {
      throw new RangeError(`unknown variant ${id}`);
    }
    await device.queue.onSubmittedWorkDone();
  }

  /**
   * Runs one stage of the fragment alone (for the breakdown); resolves when the queue is done.
   * @param {'webnnConv2d'|'readbackUpload'|'appAddRelu'|'appConv2d'|'emptySubmit'} id
   */
  async part(id) {
    const {ml, tensors, device} = this;
    if (id === 'webnnConv2d') ml.dispatch(this.convGraph, {x: tensors.x}, {y: tensors.yRead});
    else if (id === 'readbackUpload') device.queue.writeBuffer(this.app.y2, 0, await ml.readTensor(tensors.yRead));
    else if (id === 'appAddRelu') this.submit(this.readbackPass, 'app add, relu');
    else if (id === 'appConv2d') this.submit(this.appPass.slice(0, 1), 'app conv2d');
    else if (id === 'emptySubmit') device.queue.submit([]);
    else throw new RangeError(`unknown part ${id}`);
    await device.queue.onSubmittedWorkDone();
  }

  /**
   * Median milliseconds of each stage run alone, `iterations` times after one warm-up.
   * @returns {Promise<Record<string, number>>}
   */
  async breakdown(iterations) {
    const result = {};
    for (const id of ['webnnConv2d', 'readbackUpload', 'appAddRelu', 'appConv2d', 'emptySubmit']) {
      await this.part(id);
      const ms = [];
      for (let i = 0; i < iterations; i++) {
        const t0 = performance.now();
        await this.part(id);
        ms.push(performance.now() - t0);
      }
      result[id] = summarize(ms).medianMs;
    }
    return result;
  }

  /**
   * Times every variant: `warmup` untimed runs each, then `iterations` rounds running each variant
   * once per round (interleaved, so drift affects all alike).
   * @param {{iterations: number, warmup: number, onProgress?: (done: number, total: number) => void}} options
   * @returns {Promise<Record<string, number[]>>} milliseconds per variant id
   */
  async measure({iterations, warmup, onProgress}) {
    const times = Object.fromEntries(VARIANTS.map((v) => [v.id, []]));
    for (const v of VARIANTS) for (let i = 0; i < warmup; i++) await this.step(v.id);
    for (let i = 0; i < iterations; i++) {
      for (const v of VARIANTS) {
        const t0 = performance.now();
        await this.step(v.id);
        times[v.id].push(performance.now() - t0);
      }
      onProgress?.(i + 1, iterations);
    }
    return times;
  }

  /**
   * Clears every output, runs each variant once more and reads the four results back.
   * @returns {Promise<Record<string, Float32Array>>} by variant id, [N, O, H, W] row-major
   */
  async outputs() {
    const {device, ml, count} = this;
    const encoder = device.createCommandEncoder({label: 'clear outputs'});
    for (const b of Object.values(this.app.out)) encoder.clearBuffer(b);
    device.queue.submit([encoder.finish()]);
    ml.writeTensor(this.tensors.out, new Float32Array(count));
    for (const v of VARIANTS) await this.step(v.id);
    const read = async (buffer) => {
      const staging = device.createBuffer({label: 'app:readback', size: count * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buffer, 0, staging, 0, count * 4);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const out = new Float32Array(staging.getMappedRange().slice(0));
      staging.destroy();
      return out;
    };
    return {
      app: await read(this.app.out.app),
      readback: await read(this.app.out.readback),
      export: await read(this.app.out.export),
      graph: new Float32Array(await ml.readTensor(this.tensors.out)),
    };
  }

  /** Frees the experiment's buffers, tensors and graphs (the device stays the application's). */
  destroy() {
    this.ml?.destroy();
    for (const b of this.owned) b.destroy();
  }
}

/**
 * One full run: set up, time, check agreement, free. The result is what the page stores in
 * window.lastRun.
 * @param {GPUDevice} device
 * @param {{shape: number[], filters: number, iterations: number, warmup: number, returnData?: boolean,
 *   onProgress?: Function}} options returnData adds `data` (inputs and the four outputs as Float32Arrays)
 * @returns {Promise<object>} {config, variants: [{id, name, medianMs, minMs, maxMs, p25Ms, p75Ms,
 *   meanMs, samplesMs}], breakdownMs: median ms of each stage alone (webnnConv2d, readbackUpload,
 *   appAddRelu, appConv2d, emptySubmit), maxAbsDiff, tolerance, agree, ratios: {readbackOverExport,
 *   exportOverGraph}, expectations: {exportWithin1_2xOfGraph, exportAtLeast2xFasterThanReadback}}
 * @throws (rejects) RangeError when shape, filters, iterations or warmup is outside params.js LIMITS,
 *   before any GPU object is created
 */
export async function runExperiment(device, {shape, filters, iterations, warmup, returnData = false, onProgress}) {
  checkConfig({shape, filters, iterations, warmup});
  const experiment = await Experiment.create(device, {shape, filters});
  try {
    const times = await experiment.measure({iterations, warmup, onProgress});
    const breakdownMs = await experiment.breakdown(Math.max(3, Math.min(iterations, 20)));
    const outputs = await experiment.outputs();
    const {maxAbsDiff, tolerance, maxAbs} = compareOutputs(VARIANTS.map((v) => outputs[v.id]), shape[1]);
    const variants = VARIANTS.map((v) => ({id: v.id, name: v.name, ...summarize(times[v.id]), samplesMs: times[v.id]}));
    const median = Object.fromEntries(variants.map((v) => [v.id, v.medianMs]));
    const ratios = {readbackOverExport: median.readback / median.export, exportOverGraph: median.export / median.graph};
    const run = {
      config: {shape, filters, iterations, warmup},
      variants, breakdownMs, maxAbsDiff, tolerance, maxAbs, agree: maxAbsDiff <= tolerance, ratios,
      expectations: {exportWithin1_2xOfGraph: ratios.exportOverGraph <= 1.2, exportAtLeast2xFasterThanReadback: ratios.readbackOverExport >= 2},
    };
    if (returnData) run.data = {...experiment.data, outputs};
    return run;
  } finally {
    experiment.destroy();
  }
}
