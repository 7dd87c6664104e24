/**
 * The WebGPU backend of an MLContext (context.js createContextObject): tensors are GPU buffers of
 * one GPUDevice, graphs compile to a Plan of compute steps (compile/plan.js). It owns the
 * context's WebGPU state, kept in the context's slots for the compiler and the kernels:
 * `device`, `pool` (gpu/buffer_pool.js), `constants` (gpu/constant_store.js: constant buffers
 * shared by the context's graphs), `pipelines` (gpu/pipeline_cache.js), `completion`
 * (gpu/completion.js), `pendingWrites` (gpu/pending_writes.js), `adapterInfo`, `profiling`.
 * Each context has its own; nothing is shared between contexts.
 */
import {domError, typeError} from './errors.js';
import {COMPUTE_ELEMENT_BYTES, byteLength, bytesOf} from './dtypes.js';
import {BufferPool} from './gpu/buffer_pool.js';
import {ConstantStore} from './gpu/constant_store.js';
import {Completion} from './gpu/completion.js';
import {PendingWrites} from './gpu/pending_writes.js';
import {PipelineCache} from './gpu/pipeline_cache.js';
import {captureErrors} from './gpu/error_scope.js';
import {maxTensorByteLength} from './gpu/device_limits.js';
import {opSupportLimits} from './ops/support_limits.js';
import {compileGraph} from './compile/plan.js';
import {isDetached} from './context_checks.js';
import {FAULT_IN_BYTES, touchPages} from './host_memory.js';
import {createContextObject, loseContext, paddedLength} from './context.js';
import {DEFAULT_TUNING} from './tuning.js';

const TENSOR_USAGE = globalThis.GPUBufferUsage ? GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST : 0;

/** See the module comment; the methods are the backend interface of context.js createContextObject. */
class WebGpuBackend {
  constructor(device, ownsDevice) {
    this.device = device;
    this.ownsDevice = ownsDevice;
    // shape/common.js TensorLimit: the binding limit, for tensors in the compute layout
    this.tensorLimit = Object.freeze({maxTensorByteLength: maxTensorByteLength(device), elementBytes: COMPUTE_ELEMENT_BYTES});
    this.s = null;
  }

  get accelerated() { return true; }

  /** Binds the backend to its context's slots (context.js createContextObject). */
  attach(context, s) {
    this.s = s;
    // A device of our own is destroyed only by loseContext() itself; the application's device
    // (createContext(gpuDevice)) may be destroyed by the application, which loses the context.
    this.device.lost.then((info) => {
      if (info.reason !== 'destroyed' || !this.ownsDevice) loseContext(context, `the GPUDevice was ${info.reason === 'destroyed' ? 'destroyed' : 'lost'}: ${info.message}`);
    });
  }

  /**
   * A zero-filled buffer for a tensor of `desc` (WebGPU zero-fills, as the spec requires).
   * @returns {Promise<{buffer: GPUBuffer}>}
   * @throws (rejects) UnknownError when the size exceeds maxBufferSize or the GPU cannot allocate
   *   it; InvalidStateError when the context is lost meanwhile
   */
  async allocate(desc) {
    const {device} = this;
    const size = paddedLength(byteLength(desc));
    if (size > device.limits.maxBufferSize) {
      throw domError('UnknownError', `a tensor of ${size} bytes exceeds the device's maxBufferSize (${device.limits.maxBufferSize})`, 'createTensor');
    }
    const {result: buffer, error} = captureErrors(device, () => device.createBuffer({
      size, usage: TENSOR_USAGE, label: `webnn:tensor[${desc.dataType} ${desc.shape}]`}));
    const failure = await error;
    if (failure || this.s.lostInfo) {
      buffer.destroy();
      if (this.s.lostInfo) throw domError('InvalidStateError', 'the context was lost while the tensor was created', 'createTensor');
      throw domError('UnknownError', `the GPU could not allocate ${size} bytes for the tensor: ${failure.message}`, 'createTensor');
    }
    return {buffer};
  }

  /** createConstantTensor(): the data goes to the GPU now. */
  writeConstant(t, bytes) {
    this.upload(t.buffer, bytes);
  }

  /**
   * writeTensor(): held until the next dispatch/read where the tuning says so (gpu/pending_writes.js),
   * else written now.
   */
  write(t, bytes) {
    const s = this.s;
    if (s.tuning.deferWrites ?? s.completion.active) {
      // a write into the tensor's upload buffer goes out at once (gpu/pending_writes.js)
      const staged = s.pendingWrites.add(t, bytes, s.tuning.stageWrites);
      if (staged && !s.tuning.holdStagedWrites) s.pendingWrites.flush();
    } else {
      // writes held while holding was on (configureContext may turn fastReadback off) go out
      // first: flushed later, an older copy would replace this newer data
      s.pendingWrites.flush();
      this.upload(t.buffer, bytes);
    }
  }

  /**
   * readTensor(): copies into a pooled staging buffer and maps it.
   * @returns {Promise<ArrayBuffer|undefined>}
   */
  read(t, outputData) {
    const s = this.s;
    this.flush();
    const size = byteLength(t.desc);
    const padded = paddedLength(size);
    // the result, allocated before anything is queued; its pages are faulted in while the GPU
    // works (host_memory.js; the tuning switch `faultInReads` false turns that off)
    const result = outputData === undefined ? new ArrayBuffer(size) : null;
    const staging = s.pool.acquire(padded, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'webnn:readTensor');
    const encoder = s.device.createCommandEncoder({label: 'webnn:readTensor'});
    encoder.copyBufferToBuffer(t.buffer, 0, staging, 0, padded);
    s.device.queue.submit([encoder.finish()]);
    let settle;
    const pending = new Promise((resolve, reject) => { settle = {resolve, reject}; });
    t.pending.add(settle);
    if (result && size >= FAULT_IN_BYTES && s.tuning.faultInReads) queueMicrotask(() => touchPages(result));
    s.completion.wait(staging.mapAsync(GPUMapMode.READ, 0, padded)).then(() => {
      if (!t.pending.has(settle)) return;
      t.pending.delete(settle);
      const bytes = new Uint8Array(staging.getMappedRange(0, padded), 0, size);
      if (result) {
        new Uint8Array(result).set(bytes);
        settle.resolve(result);
      } else if (isDetached(outputData)) {
        settle.reject(typeError('readTensor', 'outputData was detached while the read was pending'));
      } else {
        bytesOf(outputData).set(bytes);
        settle.resolve(undefined);
      }
    }, async (e) => {
      if (!t.pending.delete(settle)) return;
      // The staging buffer is ours and stays alive until the map settles, so an AbortError means
      // the device destroyed it. Otherwise give the device's `lost` promise, which settles in a
      // later task (later still on a loaded machine), up to a second before calling it unknown.
      const lost = Boolean(s.lostInfo) || e.name === 'AbortError' || await Promise.race([
        s.device.lost.then(() => true), new Promise((r) => setTimeout(() => r(false), 1000))]);
      settle.reject(lost ? domError('InvalidStateError', 'the context is lost', 'readTensor')
        : domError('UnknownError', `reading the tensor failed: ${e.message}`, 'readTensor'));
    }).finally(() => {
      if (staging.mapState === 'mapped') staging.unmap();
      s.pool.release([staging]);
    });
    return pending;
  }

  /** Sends held writes to the queue (before anything that may read them). */
  flush() {
    this.s.pendingWrites.flush();
  }

  /** dispatch(): held writes first, then the plan's steps; then the nudged wait for them. */
  dispatch(plan, inputs, outputs) {
    this.flush();
    plan.dispatch(this.s, inputs, outputs);
    this.s.completion.afterSubmit();
  }

  /** build(): the graph compiled into a Plan (compile/plan.js). */
  compile(context, entries) {
    return compileGraph(context, entries);
  }

  opSupportLimits() {
    return opSupportLimits(this.s);
  }

  /** The context is lost: held writes dropped, pooled buffers freed, a device of our own destroyed. */
  destroy() {
    const s = this.s;
    s.pendingWrites.drop();
    s.pool.destroy();
    s.constants.destroy();
    s.completion.destroy();
    if (this.ownsDevice) this.device.destroy();
  }

  /** Queues a write of `bytes` to the start of `buffer` (padded to a multiple of 4 bytes). */
  upload(buffer, bytes) {
    if (bytes.byteLength % 4 === 0) {
      this.device.queue.writeBuffer(buffer, 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } else {
      const padded = new Uint8Array(paddedLength(bytes.byteLength));
      padded.set(bytes);
      this.device.queue.writeBuffer(buffer, 0, padded);
    }
  }
}

/**
 * Creates an MLContext on `device`.
 * @param {GPUDevice} device
 * @param {{ownsDevice: boolean, adapterInfo?: object, powerPreference: string,
 *   polyfill?: {fastReadback?: boolean, profiling?: boolean, productPrecision?: string, tuning?: object}}} options polyfill: this
 *   polyfill's own context options (options.js polyfillOptions; tuning: a frozen tuning.js object)
 * @returns {MLContext}
 */
export function createWebGpuContext(device, {ownsDevice, adapterInfo, powerPreference, polyfill = {}}) {
  const tuning = polyfill.tuning ?? DEFAULT_TUNING;
  const completion = new Completion(device, {adapterInfo, enabled: polyfill.fastReadback !== false, tuning});
  return createContextObject(new WebGpuBackend(device, ownsDevice), {powerPreference, tuning, slots: {
    device,
    ownsDevice,
    adapterInfo,
    completion,
    pendingWrites: new PendingWrites(device),
    profilingRequested: Boolean(polyfill.profiling),
    profiling: Boolean(polyfill.profiling) && device.features.has('timestamp-query'),
    productPrecision: polyfill.productPrecision ?? 'float32',
    pool: new BufferPool(device, completion),
    constants: new ConstantStore(device, TENSOR_USAGE),
    pipelines: new PipelineCache(device),
  }});
}
