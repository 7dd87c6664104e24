/**
 * Prompt completion of queue waits (`mapAsync` of readTensor, `onSubmittedWorkDone` of the
 * buffer pool and of graph release): one Completion per MLContext.
 *
 * Why: Chromium's GPU process checks for finished GPU work when the renderer sends it commands
 * and otherwise only on a delayed poll (about every 2 ms plus scheduling), so a wait whose GPU
 * work outlasts the first check resolves only at that next poll. Sending the GPU process a tiny
 * command while the page waits makes it look again each time. On SwiftShader the "GPU" is the
 * CPU, so the loop would only steal its time: it never runs on fallback/software adapters, nor
 * where the adapter is unknown.
 *
 * dispatch() registers a wait too (afterSubmit()): the queue's onSubmittedWorkDone of the work
 * submitted so far, so the page's own waits after a dispatch (its onSubmittedWorkDone or mapAsync
 * of a buffer the graph wrote through exportToGPU) finish promptly as well. At most one such wait
 * is outstanding; dispatches submitted while it is pending get one more when it settles.
 *
 * While at least one wait is outstanding a MessageChannel task loop runs, sending a nudge at
 * most every `intervalMs`; it stops by itself when no wait is outstanding, and when no wait has
 * started or settled for `capMs` (then waits are plain until the next one starts). Nudges carry
 * no work for the graph, so results are unchanged. A nudge every task floods the GPU process;
 * docs/design-notes.md has the measurements behind the interval.
 *
 * Settings come from the context's tuning (tuning.js, applied by tune()): `nudgeQueue` (whether
 * the adapter counts as hardware; default from adapterInfo), `nudge` ('submit': queue.submit([]);
 * 'write': a 16-byte writeBuffer into a per-context scratch buffer), `nudgeIntervalMs`,
 * `nudgeCapMs`; `enabled` is the context's fastReadback option. `nudges` counts the nudges sent.
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
