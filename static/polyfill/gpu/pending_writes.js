/**
 * writeTensor() uploads held back until the context next puts work on its queue: one
 * PendingWrites per WebGPU MLContext (the context slot `pendingWrites`).
 *
 * Why: Blink hands a page's WebGPU calls to the GPU process in batches, one per microtask
 * checkpoint (DawnControlClientHolder::EnsureFlush enqueues a microtask that flushes). Our own
 * builder code calls writeTensor, dispatch and readTensor in one synchronous run, so the input's
 * writeBuffer, the graph's submit and the read's copy and mapAsync reach the GPU process as one
 * batch. ORT-web's WebNN EP calls writeTensor, then awaits its own promises (into its wasm
 * OrtRun and out again) before dispatch, and again before readTensor (docs/ort-webnn-latency.md
 * shows the sequence): the upload is flushed alone, a batch ahead of the work that reads it. On
 * the H200 (Chromium 156) the same graph's dispatch + read measured 8.8 ms without the upload in
 * its batch against 5.1 ms with it (BERT-base; 26.6 against 15.5 ms at sequence 512,
 * tools/bench_anatomy.py), about the gap ORT's WebNN EP showed against our builder path there
 * (13.5 against 6.8 ms; 34.5 against 15.6). Holding the bytes (a copy: writeTensor's data may
 * change once it returns) and writing them right before the next dispatch's submit gives every
 * client the builder path's upload-with-the-graph batch.
 *
 * Order is kept: every call that puts work on the queue and may read a tensor (dispatch,
 * readTensor, exportToGPU) flushes first, so the writes reach the queue before it, in call order;
 * so does a writeTensor that writes at once (holding turned off meanwhile, e.g. by
 * configureContext's fastReadback: false), so that an older held copy cannot replace its data.
 * A later write of the same tensor replaces a pending one (nothing could have read the older
 * one). A write no later call flushes goes out in a task of its own (setTimeout 0), after the
 * calling code's microtasks. Writes to tensors destroyed meanwhile are dropped, and so is all of it
 * when the context is lost.
 *
 * Only where queue waits are nudged (gpu/completion.js `active`: hardware adapters, fastReadback
 * on): on SwiftShader the batches are the CPU's own work and the copy would only cost time. The
 * context slot `deferWrites` (true / false; undefined: follow `active`) overrides it (tests, tools).
 */

export class PendingWrites {
  /** @param {GPUDevice} device */
  constructor(device) {
    this.device = device;
    /** @type {{t: object, bytes: Uint8Array}[]} tensor slots and their padded bytes, in call order */
    this.writes = [];
    this.timer = null;
    this.dropped = false;
    /** @type {WeakMap<object, Uint8Array>} per tensor, the buffer its copies are kept in */
    this.scratch = new WeakMap();
  }

  /** @returns {number} writes waiting */
  get size() { return this.writes.length; }

  /**
   * Holds a copy of `bytes` for the whole of tensor `t`'s buffer. The copy goes into a buffer
   * kept per tensor (allocating 1.5 MB afresh took 0.6 ms on a 2-core VM, copying into a kept one
   * 0.04 ms): by the next write of the tensor the last copy has been written (flush) or replaced.
   * @param {object} t tensor slots (`buffer`, `destroyed`)
   * @param {Uint8Array} bytes the tensor's bytes (copied here, padded to a multiple of 4)
   */
  add(t, bytes) {
    if (this.dropped) return;
    const padded = Math.max(4, Math.ceil(bytes.byteLength / 4) * 4);
    let copy = this.scratch.get(t);
    if (!copy || copy.byteLength !== padded) {
      copy = new Uint8Array(padded);
      this.scratch.set(t, copy);
    }
    copy.set(bytes);
    const i = this.writes.findIndex((w) => w.t === t);
    if (i >= 0) this.writes.splice(i, 1);
    this.writes.push({t, bytes: copy});
    if (this.timer === null) this.timer = setTimeout(() => { this.timer = null; this.flush(); }, 0);
  }

  /** Issues the held writes (queue.writeBuffer, in call order); skips destroyed tensors. */
  flush() {
    if (!this.writes.length) return;
    const writes = this.writes;
    this.writes = [];
    for (const {t, bytes} of writes) {
      if (!t.destroyed) this.device.queue.writeBuffer(t.buffer, 0, bytes.buffer, 0, bytes.byteLength);
    }
  }

  /** Drops every held write for good (the context is lost). */
  drop() {
    this.dropped = true;
    this.writes = [];
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
