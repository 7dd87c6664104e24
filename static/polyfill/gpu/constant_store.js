/**
 * One store of constant buffers per MLContext: graphs of one context whose constants hold the same
 * bytes share one GPUBuffer. An LLM run through ORT's WebNN EP builds a prefill graph and a decode
 * graph from the same weights; without sharing every weight would be on the GPU twice.
 *
 * Constants of at least SHARE_BYTES are keyed by their length and SHA-256 digest (computed at
 * build, before the upload); smaller ones are uploaded per graph (hashing costs more than they
 * take). A shared buffer counts its graphs and is destroyed when the last one releases it (after
 * the queue work submitted before the release).
 */

/** Constants of at least this many bytes are shared between the graphs of a context. */
export const SHARE_BYTES = 64 * 1024;

export class ConstantStore {
  /**
   * @param {GPUDevice} device
   * @param {number} usage GPUBufferUsage flags of constant buffers
   */
  constructor(device, usage) {
    this.device = device;
    this.usage = usage;
    /** @type {Map<string, {buffer: GPUBuffer, graphs: number}>} */
    this.shared = new Map();
  }

  /** The sharing key of `data` (an ArrayBufferView), or null for data too small to share. */
  async keyOf(data) {
    if (data.byteLength < SHARE_BYTES || !globalThis.crypto?.subtle) return null;
    const digest = await crypto.subtle.digest('SHA-256', data);
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
    return `${data.byteLength}:${hex}`;
  }

  /**
   * A buffer holding `data`: the shared one of `key` when there is one (one more graph counts on
   * it), else a new one (shared under `key` unless it is null).
   * @returns {{buffer: GPUBuffer, shared: boolean}}
   */
  acquire(key, data, label) {
    const entry = key && this.shared.get(key);
    if (entry) {
      entry.graphs++;
      return {buffer: entry.buffer, shared: true};
    }
    const buffer = this.device.createBuffer({size: Math.max(16, Math.ceil(data.byteLength / 4) * 4), usage: this.usage, label});
    this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    if (key) this.shared.set(key, {buffer, graphs: 1});
    return {buffer, shared: Boolean(key)};
  }

  /**
   * One graph less counts on the buffer of `key`; the returned buffer (if any) has no graph left
   * and is the caller's to destroy once queued work is done.
   * @returns {GPUBuffer|null}
   */
  release(key) {
    const entry = this.shared.get(key);
    if (!entry || --entry.graphs > 0) return null;
    this.shared.delete(key);
    return entry.buffer;
  }

  /** The bytes of the buffers held (each shared buffer once). */
  get bytes() {
    let n = 0;
    for (const {buffer} of this.shared.values()) n += buffer.size;
    return n;
  }

  /** The context is gone: every shared buffer freed. */
  destroy() {
    for (const {buffer} of this.shared.values()) buffer.destroy();
    this.shared.clear();
  }
}
