/**
 * writeTensor() uploads: copies held back until the context next puts work on its queue, or
 * written into a mapped upload buffer per tensor and sent at once (STAGE_BYTES or more, below):
 * one PendingWrites per WebGPU MLContext (the context slot `pendingWrites`).
 *
 * Why: Blink hands a page's WebGPU calls to the GPU process in batches, one per microtask
 * checkpoint. Our own builder code calls writeTensor, dispatch and readTensor in one synchronous
 * run, so the input's writeBuffer, the graph's submit and the read reach the GPU process as one
 * batch; ORT-web's WebNN EP awaits its own promises between them (docs/ort-webnn-latency.md), so
 * its upload is flushed alone, a batch ahead of the work that reads it, which costs latency.
 * Holding the bytes (a copy: writeTensor's data may change once it returns) and writing them
 * right before the next dispatch's submit gives every client the one-batch path.
 *
 * Order is kept: every call that puts work on the queue and may read a tensor (dispatch,
 * readTensor, exportToGPU) flushes first, so the writes reach the queue before it, in call order;
 * so does a writeTensor that writes at once (holding turned off meanwhile, e.g. by
 * configureContext's fastReadback: false), so that an older held copy cannot replace its data.
 * A later write of the same tensor replaces a pending one (nothing could have read the older
 * one). A write no later call flushes goes out in a task of its own (setTimeout 0), after the
 * calling code's microtasks. Writes to tensors destroyed meanwhile are dropped, and so is all of
 * it when the context is lost.
 *
 * Only where queue waits are nudged (gpu/completion.js `active`: hardware adapters, fastReadback
 * on): on SwiftShader the batches are the CPU's own work and the copy would only cost time. The
 * tuning switch `deferWrites` overrides it.
 *
 * Where the copy is kept: writes of at least STAGE_BYTES go straight into an upload buffer of
 * the tensor's own (MAP_WRITE | COPY_SRC, mapped while idle, the tensor slot `uploadStaging`),
 * which the flush unmaps and copies into the tensor, mapping it again for the next write once the
 * copy has run; smaller writes, and a write while the upload buffer is not mapped again yet,
 * keep a copy in a host buffer per tensor that the flush hands to queue.writeBuffer. A mapped
 * buffer's pages are shared with the GPU process, where writeBuffer's bytes are copied once more
 * (tuning switch `stageWrites` false: no upload buffers). A write into the upload buffer is not
 * held: writeTensor flushes at once, so its unmap and copy overlap the client's awaits before
 * dispatch (switch `holdStagedWrites` true: held like the host copies). docs/design-notes.md has
 * the measurements.
 */

/** Writes of at least this many bytes go through the tensor's mapped upload buffer. */
export const STAGE_BYTES = 65536;

const STAGE_USAGE = globalThis.GPUBufferUsage ? GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC : 0;

export class PendingWrites {
  /** @param {GPUDevice} device */
  constructor(device) {
    this.device = device;
    /**
     * @type {{t: object, bytes?: Uint8Array, staged?: object}[]} tensor slots and either their
     *   padded bytes (host copy) or their filled upload buffer, in call order
     */
    this.writes = [];
    this.timer = null;
    this.dropped = false;
    /** @type {WeakMap<object, Uint8Array>} per tensor, the host buffer its copies are kept in */
    this.scratch = new WeakMap();
  }

  /** @returns {number} writes waiting */
  get size() { return this.writes.length; }

  /**
   * Holds a copy of `bytes` for the whole of tensor `t`'s buffer: in the tensor's mapped upload
   * buffer (STAGE_BYTES or more, when it is mapped; made on the first such write), else in a host
   * buffer kept per tensor (allocating one afresh costs far more than copying into a kept one).
   * By the next write of the tensor the last copy has been written (flush) or
   * replaced.
   * @param {object} t tensor slots (`buffer`, `destroyed`; `uploadStaging` is set here: a GPU
   *   buffer of the tensor's size, kept until the tensor is destroyed)
   * @param {Uint8Array} bytes the tensor's bytes (copied here, padded to a multiple of 4)
   * @param {boolean} [stage=true] false: keep the copy in the host buffer whatever the size
   * @returns {boolean} whether the copy went into the upload buffer
   */
  add(t, bytes, stage = true) {
    if (this.dropped) return;
    const padded = Math.max(4, Math.ceil(bytes.byteLength / 4) * 4);
    const i = this.writes.findIndex((w) => w.t === t);
    if (i >= 0) {
      const old = this.writes.splice(i, 1)[0];
      // a replaced write's upload buffer is still mapped: this write may fill it again
      if (old.staged) old.staged.filled = false;
    }
    const staged = stage && padded >= STAGE_BYTES ? this.uploadBuffer(t, padded) : null;
    if (staged) {
      staged.range.set(bytes);
      staged.range.fill(0, bytes.byteLength);
      staged.filled = true;
      this.writes.push({t, staged});
    } else {
      let copy = this.scratch.get(t);
      if (!copy || copy.byteLength !== padded) {
        copy = new Uint8Array(padded);
        this.scratch.set(t, copy);
      }
      copy.set(bytes);
      this.writes.push({t, bytes: copy});
    }
    if (this.timer === null) this.timer = setTimeout(() => { this.timer = null; this.flush(); }, 0);
    return Boolean(staged);
  }

  /**
   * The tensor's upload buffer when it is mapped and not holding a write, else null (the caller
   * keeps a host copy instead): made, mapped, on the first call; null also when it cannot be made
   * (nothing is kept then, and the next write tries again) or its mapping was detached (the
   * application destroyed the device before the context noticed the loss).
   * @param {object} t tensor slots (`uploadStaging` is set here)
   * @param {number} padded the tensor's byte length rounded up to a multiple of 4
   * @returns {{buffer: GPUBuffer, range: Uint8Array, filled: boolean}|null}
   */
  uploadBuffer(t, padded) {
    let st = t.uploadStaging;
    if (!st) {
      let buffer = null;
      try {
        buffer = this.device.createBuffer({size: padded, usage: STAGE_USAGE, mappedAtCreation: true, label: 'webnn:upload'});
        st = t.uploadStaging = {buffer, range: new Uint8Array(buffer.getMappedRange()), filled: false};
      } catch {
        buffer?.destroy();
        return null;
      }
    }
    const mapped = st.range && st.range.byteLength === padded && st.buffer.mapState === 'mapped';
    return mapped && !st.filled ? st : null;
  }

  /**
   * Issues the held writes in call order: host copies through queue.writeBuffer, upload buffers
   * unmapped and copied (one command buffer after the writeBuffers: each tensor has at most one
   * write held, so their order does not matter), then mapped again. Skips destroyed tensors.
   */
  flush() {
    if (!this.writes.length) return;
    const writes = this.writes;
    this.writes = [];
    let encoder = null;
    const staged = [];
    for (const {t, bytes, staged: st} of writes) {
      if (t.destroyed) continue;
      if (bytes) {
        this.device.queue.writeBuffer(t.buffer, 0, bytes.buffer, 0, bytes.byteLength);
        continue;
      }
      st.buffer.unmap();
      st.range = null;
      st.filled = false;
      encoder ??= this.device.createCommandEncoder({label: 'webnn:upload'});
      encoder.copyBufferToBuffer(st.buffer, 0, t.buffer, 0, st.buffer.size);
      staged.push({t, st});
    }
    if (!encoder) return;
    this.device.queue.submit([encoder.finish()]);
    for (const {t, st} of staged) {
      st.buffer.mapAsync(GPUMapMode.WRITE).then(() => {
        if (t.destroyed || this.dropped) return;
        st.range = new Uint8Array(st.buffer.getMappedRange());
      }).catch(() => {});  // destroyed meanwhile (tensor, context, device): the buffer is done with
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
