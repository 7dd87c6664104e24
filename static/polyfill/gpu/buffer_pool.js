/**
 * One buffer pool per MLContext: GPUBuffers keyed by (usage, size class), recycled only after the
 * queue work submitted before their release has completed.
 */
import {maxBindingBytes} from './device_limits.js';

/** Size classes: multiples of 256 bytes up to 64 KiB, then powers of two up to 64 MiB, then 16 MiB steps. */
export function sizeClass(bytes) {
  const b = Math.max(16, bytes);
  if (b <= 65536) return Math.ceil(b / 256) * 256;
  if (b <= 64 * 2 ** 20) return 2 ** Math.ceil(Math.log2(b));
  return Math.ceil(b / (16 * 2 ** 20)) * 16 * 2 ** 20;
}

export class BufferPool {
  /**
   * @param {GPUDevice} device
   * @param {import('./completion.js').Completion} [completion] the context's, to wait promptly
   */
  constructor(device, completion) {
    this.device = device;
    this.completion = completion;
    // no size class past what one binding holds (a multiple of 4): a tensor or temporary that
    // fits the binding limit must not be rounded up past it, into a buffer WebGPU refuses to
    // create or to bind whole
    this.largest = Math.floor(maxBindingBytes(device) / 4) * 4;
    /** @type {Map<string, GPUBuffer[]>} free buffers by `${usage}:${size}` */
    this.free = new Map();
    this.destroyed = false;
  }

  /**
   * A buffer of at least `bytes` bytes (rounded to its size class, at most to the binding limit)
   * with `usage`.
   * Contents are undefined unless the buffer is new (zero).
   * @param {number} bytes
   * @param {number} usage GPUBufferUsage flags
   * @param {string} label names the op or purpose
   * @returns {GPUBuffer}
   */
  acquire(bytes, usage, label) {
    const size = Math.max(bytes, Math.min(sizeClass(bytes), this.largest));
    const list = this.free.get(`${usage}:${size}`);
    if (list && list.length) {
      const buffer = list.pop();
      buffer.label = label;
      return buffer;
    }
    return this.device.createBuffer({size, usage, label});
  }

  /**
   * Returns buffers to the pool once the work submitted so far on the queue has completed.
   * @param {GPUBuffer[]} buffers
   */
  release(buffers) {
    if (!buffers.length) return;
    const done = this.device.queue.onSubmittedWorkDone();
    (this.completion ? this.completion.wait(done) : done).then(() => {
      for (const buffer of buffers) {
        if (this.destroyed) {
          buffer.destroy();
          continue;
        }
        const key = `${buffer.usage}:${buffer.size}`;
        if (!this.free.has(key)) this.free.set(key, []);
        this.free.get(key).push(buffer);
      }
    }, () => {});
  }

  /** Destroys every pooled buffer; buffers released later are destroyed on return. */
  destroy() {
    this.destroyed = true;
    for (const list of this.free.values()) list.forEach((b) => b.destroy());
    this.free.clear();
  }
}
