/**
 * The CPU context: MLContext with `accelerated` false, whose graphs run on ONNX
 * Runtime Web's wasm EP (cpu/session.js) and whose MLTensors are ArrayBuffer-backed.
 *
 * The builder, validation, shape inference and errors are the WebGPU context's (context.js,
 * graph_builder.js, ops/); only build() (cpu/compile.js: the graph lowered to one ONNX model and
 * one InferenceSession) and the tensor memory differ.
 *
 * Ordering is a queue's, as on WebGPU: writeTensor() copies its data at call time, dispatch()
 * binds the tensors' memory at call time, and each runs after the work queued before it;
 * readTensor() resolves with the contents after everything queued before it. MLTensor.destroy()
 * rejects pending reads (tensor.js); work already queued keeps the memory it was given.
 */
import {domError, typeError} from '../errors.js';
import {DATA_TYPES, byteLength} from '../dtypes.js';
import {createContextObject} from '../context.js';
import {isDetached} from '../context_checks.js';
import {compileCpuGraph, cpuSupportLimits} from './compile.js';
import {createSession, defaultOrtBase, defaultThreads, loadOrt} from './session.js';

/**
 * The CPU context's size limit (shape/common.js TensorLimit). ORT's wasm heap is 32-bit (4 GiB,
 * shared by every tensor of every session on the page), and where ORT has no kernel for a type
 * the lowering computes in a wider one (cpu/onnx_graph.js CARRIER: int8/uint8 in int32, float16
 * in float32, 32-bit integers in int64), so an L-byte int8 tensor takes 4L inside ORT besides its
 * own input and output copies (docs/cpu-context.md has the case that ran out of heap), and an ORT
 * instance that ran out stays broken for the page. maxTensorByteLength 256 MiB keeps the
 * widest case (1 GiB widened plus the copies) within the heap; one byte less, as on WebGPU
 * (gpu/device_limits.js) and as Chromium reports INT32_MAX, so the limit is 8k - 1. The budget
 * already allows for the carriers, so every type counts at its own size, except int4/uint4: they
 * leave their packed form one element a byte (a 4-bit output leaves the session as int8/uint8,
 * cpu/compile.js UNPACKED_OUTPUT), so a 4-bit tensor counts a byte an element and may take half
 * the limit in packed bytes; widened to 32 bits from there (a cast, an element-wise dequantize)
 * it is no larger than the widest 8-bit case.
 */
const TENSOR_LIMIT = Object.freeze({
  maxTensorByteLength: 2 ** 28 - 1,
  elementBytes: Object.freeze(Object.fromEntries(Object.entries(DATA_TYPES).map(([type, info]) => [type, Math.max(1, info.bytes)]))),
});

/** Resolves or rejects one queued readTensor with the tensor's bytes (`source`). */
function settleRead(t, settle, source, outputData, isDetached) {
  if (t.failure) {
    const failure = t.failure;
    t.failure = null;
    settle.reject(domError('UnknownError', `the dispatch writing this tensor failed: ${failure}`, 'readTensor'));
  } else if (outputData === undefined) {
    settle.resolve(source.slice().buffer);
  } else if (isDetached(outputData)) {
    settle.reject(typeError('readTensor', 'outputData was detached while the read was pending'));
  } else {
    const view = ArrayBuffer.isView(outputData)
      ? new Uint8Array(outputData.buffer, outputData.byteOffset, outputData.byteLength) : new Uint8Array(outputData);
    view.set(source);
    settle.resolve(undefined);
  }
}

/**
 * One CPU context's engine and work queue: the backend interface of context.js
 * createContextObject for ArrayBuffer-backed tensors (the tensor slot `bytes`).
 */
class CpuBackend {
  constructor(ort) {
    this.ort = ort;
    this.tensorLimit = TENSOR_LIMIT;
    this.tail = Promise.resolve();
    this.queued = 0;
    this.destroyed = false;
  }

  get accelerated() { return false; }

  attach() {}

  /** @returns {Promise<{bytes: Uint8Array}>} zero-filled memory for a tensor of `desc` */
  async allocate(desc) {
    return {bytes: new Uint8Array(byteLength(desc))};
  }

  /** createConstantTensor(): the context keeps the bytes as the tensor's memory. */
  writeConstant() {}

  /** Nothing is held: writes are queued in order already. */
  flush() {}

  /** dispatch(): one session.run() queued after the work before it (cpu/compile.js CpuPlan). */
  dispatch(plan, inputs, outputs) {
    plan.dispatch(null, inputs, outputs);
  }

  /** Runs `work` (sync or async) after everything queued before it. @returns {Promise} */
  enqueue(work) {
    this.queued++;
    const run = this.tail.then(work).finally(() => { this.queued--; });
    this.tail = run.catch(() => {});
    return run;
  }

  /** writeTensor / createConstantTensor: `bytes` copied now, written in queue order. */
  write(t, bytes) {
    if (this.queued === 0) {
      t.bytes.set(bytes);
      return;
    }
    const copy = bytes.slice();
    const target = t.bytes;
    this.enqueue(() => target.set(copy));
  }

  /**
   * readTensor: the tensor's bytes once the work queued before is done.
   * @param {object} t tensor slots
   * @param {AllowSharedBufferSource} [outputData]
   * @returns {Promise<ArrayBuffer|undefined>}
   */
  read(t, outputData) {
    let settle;
    const pending = new Promise((resolve, reject) => { settle = {resolve, reject}; });
    t.pending.add(settle);
    const source = t.bytes;
    this.enqueue(() => {
      if (!t.pending.delete(settle)) return;
      try {
        settleRead(t, settle, source, outputData, isDetached);
      } catch (e) {
        settle.reject(domError('UnknownError', `reading the tensor failed: ${e?.message ?? e}`, 'readTensor'));
      }
    });
    return pending;
  }

  /** build(): see cpu/compile.js. */
  compile(context, entries) {
    return compileCpuGraph(context, entries, this);
  }

  /** @returns {Promise<object>} an InferenceSession for `model` bytes */
  session(model) {
    return createSession(this.ort, model);
  }

  opSupportLimits() {
    return cpuSupportLimits(this.tensorLimit.maxTensorByteLength);
  }

  destroy() {
    this.destroyed = true;
  }
}

/**
 * Creates a CPU context.
 * @param {{powerPreference: string, ortBaseUrl?: string, threads?: number, tuning?: object}} options ortBaseUrl:
 *   where ort.wasm.min.mjs and its wasm files are (default static/polyfill/vendor/ort/);
 *   threads: ORT's thread count (default 1, or min(4, cores) in a cross-origin isolated page);
 *   ORT reads it once per ortBaseUrl (one module instance each): the first CPU context sets it
 * @returns {Promise<MLContext>}
 * @throws (rejects) NotSupportedError when ONNX Runtime cannot be loaded
 */
export async function createCpuContext({powerPreference, ortBaseUrl, threads, tuning}) {
  const ort = await loadOrt(ortBaseUrl ?? defaultOrtBase(), threads ?? defaultThreads());
  return createContextObject(new CpuBackend(ort), {powerPreference, tuning, slots: {device: null}});
}
