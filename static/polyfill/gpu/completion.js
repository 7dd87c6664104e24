/**
 * Prompt completion of queue waits (`mapAsync` of readTensor, `onSubmittedWorkDone` of the
 * buffer pool and of graph release): one Completion per MLContext.
 *
 * Why: Chromium's GPU process checks for finished GPU work when the renderer sends it commands
 * and otherwise only on a delayed poll (about every 2 ms plus scheduling). A wait whose GPU work
 * outlasts the first check therefore resolves only at that next poll: on an NVIDIA H200
 * (Chromium 156, Vulkan) the issue's author measured one pass of N tiny dependent dispatches then
 * a 4-byte mapAsync at 0.2 ms for N=1 but 2.6 ms for N=25 and 2.8 ms for N=100. Sending the GPU
 * process a tiny command every task while the page waits makes it look again each time: 0.4 ms
 * (N=25) and 1.2 ms (N=100). On SwiftShader the "GPU" is the CPU, so the loop would only steal
 * its time (2-4x slower): it never runs on fallback/software adapters, nor where the adapter is
 * unknown.
 *
 * dispatch() registers a wait too (afterSubmit()): the queue's onSubmittedWorkDone of the work
 * submitted so far, so the page's own waits after a dispatch (its onSubmittedWorkDone or mapAsync
 * of a buffer the graph wrote through exportToGPU) finish promptly as well: on the H200 the
 * interop demo's one-graph variant, dispatch() then the app's onSubmittedWorkDone, read 2.5 ms
 * for a conv2d of a few microseconds. At most one such wait is outstanding; dispatches
 * submitted while it is pending get one more when it settles.
 *
 * While at least one wait is outstanding a MessageChannel task loop runs, sending a nudge at
 * most every `intervalMs` (0.25 ms); it stops by itself when no wait is outstanding, and when no
 * wait has started or settled for `capMs` (then waits are plain until the next one starts).
 * Nudges carry no work for the graph, so results are unchanged. Why not one nudge per task (the
 * earlier default): on an H200 host of 2026-12-03 (`make bench`'s tool, builder and ORT's WebNN EP,
 * alternating, two rounds) a nudge every task flooded the GPU process: median latencies of
 * BERT-base 13.0-110.5 ms, MobileNetV2 2.95-33.4, the 2-layer encoder 13.8-112.4 (maxima to 174
 * ms), and ORT's back-to-back runs 20-50 % slower than ours. One nudge per 0.1-0.5 ms gave 4.2-4.4
 * / 1.8-2.7 / 1.05-1.5 ms (ORT's back-to-back runs level with ours), 1 ms 4.55-4.6 / 2.0-2.1 /
 * 1.9; no nudges 4.2 / 3.5-4.1 / 3.2-3.3.
 *
 * Settings (properties of the object, the context slot `completion`; tests and benchmarks set them):
 *   enabled        false when the page created the context with {polyfill: {fastReadback: false}};
 *                  setting it (or `hardware`) false also stops a running loop at its next task
 *   hardware       whether the adapter is a hardware one (from adapterInfo; tests force it)
 *   nudge          'submit' (queue.submit([]), the default) | 'write' (a 16-byte writeBuffer into
 *                  a per-context scratch buffer)
 *   capMs          100: ms without a wait starting or settling after which the loop stops
 *   intervalMs     0.25: least ms between two nudges (the loop still runs every task, but sends
 *                  a nudge only once this much time has passed since the previous one; 0: every
 *                  task)
 *   nudges         count of nudges sent so far (read-only use)
 */
import {isSoftwareAdapter} from '../ops/adapter_kind.js';
import {DEFAULT_TUNING} from '../tuning.js';

export class Completion {
  /**
   * @param {GPUDevice} device
   * @param {{adapterInfo?: GPUAdapterInfo, enabled?: boolean}} options enabled: the page's
   *   fastReadback option (default true)
   */
  constructor(device, {adapterInfo, enabled = true, tuning = DEFAULT_TUNING} = {}) {
    this.device = device;
    this.enabled = enabled;
    this.adapterHardware = Boolean(adapterInfo) && !isSoftwareAdapter({adapterInfo});
    this.tune(tuning);
    this.lastNudge = -Infinity;
    this.nudges = 0;
    this.outstanding = 0;
    this.running = false;
    this.destroyed = false;
    this.lastProgress = 0;
    this.scratch = null;
    this.channel = null;
    this.tracking = false;
    this.submittedAgain = false;
  }

  /**
   * Applies the context's tuning (tuning.js): nudgeQueue, nudge, nudgeIntervalMs, nudgeCapMs.
   * @param {object} tuning the context's frozen tuning object
   */
  tune(tuning) {
    this.hardware = tuning.nudgeQueue ?? this.adapterHardware;
    this.nudge = tuning.nudge;
    this.intervalMs = tuning.nudgeIntervalMs;
    this.capMs = tuning.nudgeCapMs;
  }

  /** @returns {boolean} whether waits started now are nudged */
  get active() {
    return this.enabled && this.hardware && !this.destroyed;
  }

  /**
   * @returns {boolean} whether the context tracks its dispatches (active) and none it submitted
   *   may still be running (afterSubmit's tracking); blind to readTensor's copies, held writes
   *   and work other code put on the same queue
   */
  get idle() {
    return this.active && !this.tracking;
  }

  /**
   * Registers a wait on the queue and returns the same promise; its result is untouched.
   * @template T
   * @param {Promise<T>} promise settles when the GPU work it waits for is done
   * @returns {Promise<T>} `promise` itself
   */
  wait(promise) {
    if (!this.active) return promise;
    this.outstanding++;
    this.lastProgress = performance.now();
    const settled = () => {
      this.outstanding--;
      this.lastProgress = performance.now();
    };
    promise.then(settled, settled);
    if (!this.running) {
      this.running = true;
      this.port().postMessage(0);
    }
    return promise;
  }

  /**
   * Called after work is submitted (dispatch()): waits, nudged, for the queue to finish
   * everything submitted so far (see the module comment). Never throws; a lost device ends it.
   */
  afterSubmit() {
    if (!this.active) return;
    if (this.tracking) {
      this.submittedAgain = true;
      return;
    }
    this.tracking = true;
    const stop = () => {
      this.tracking = false;
      this.submittedAgain = false;
    };
    const next = () => {
      if (!this.submittedAgain || !this.active) return stop();
      this.submittedAgain = false;
      this.wait(this.device.queue.onSubmittedWorkDone()).then(next, stop);
    };
    this.wait(this.device.queue.onSubmittedWorkDone()).then(next, stop);
  }

  /** Stops the loop for good and frees the scratch buffer (the context is lost). */
  destroy() {
    this.destroyed = true;
    this.running = false;
    if (this.channel) {
      this.channel.port1.close();
      this.channel.port2.close();
      this.channel = null;
    }
    this.scratch?.destroy();
    this.scratch = null;
  }

  /** The port whose messages drive the loop (one MessageChannel per context, made on first use). */
  port() {
    if (!this.channel) {
      this.channel = new MessageChannel();
      this.channel.port1.onmessage = () => this.tick();
    }
    return this.channel.port2;
  }

  /** One task of the loop: nudge and schedule the next, or stop. */
  tick() {
    if (!this.running) return;
    const now = performance.now();
    if (!this.active || this.outstanding === 0 || now - this.lastProgress > this.capMs) {
      this.running = false;
      return;
    }
    if (now - this.lastNudge < this.intervalMs) {
      this.port().postMessage(0);
      return;
    }
    this.lastNudge = now;
    this.nudges++;
    if (this.nudge === 'write') {
      if (!this.scratch) this.scratch = this.device.createBuffer({size: 16, usage: GPUBufferUsage.COPY_DST, label: 'webnn:completion-nudge'});
      this.device.queue.writeBuffer(this.scratch, 0, new Uint32Array(4));
    } else {
      this.device.queue.submit([]);
    }
    this.port().postMessage(0);
  }
}
