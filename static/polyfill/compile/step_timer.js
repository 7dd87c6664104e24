/**
 * GPU time per plan step, for a context made with {polyfill: {profiling: true}} on a device with
 * "timestamp-query" (see profiling.js for the public readProfile()).
 *
 * WebGPU writes timestamps only at the beginning and end of a pass (computePass
 * timestampWrites), so a profiled dispatch encodes one compute pass per step (an unprofiled one
 * encodes all steps into one pass): step i writes queries 2i (begin) and 2i+1 (end) of a query
 * set (4096 queries at most per set, so 2048 steps per set). After the passes the command buffer
 * resolves the query sets into a buffer and copies it into a pooled mappable buffer; when that
 * maps, the step times (end - begin, ns, negative differences counted as 0) are added to the
 * sums. Nothing here runs for contexts without profiling.
 */

const STEPS_PER_SET = 2048;
// without WebGPU's globals the polyfill still loads (the CPU context needs none of this)
const RESOLVE_USAGE = globalThis.GPUBufferUsage ? GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC : 0;
const READ_USAGE = globalThis.GPUBufferUsage ? GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST : 0;

export class StepTimer {
  /**
   * @param {object} ctx context slots (device, pool, completion)
   * @param {number} stepCount the plan's steps
   */
  constructor(ctx, stepCount) {
    this.ctx = ctx;
    this.stepCount = stepCount;
    /** summed GPU ns per step over `runs` dispatches (replaced whole on reset) */
    this.stats = {runs: 0, sums: new Float64Array(stepCount)};
    /** @type {Set<Promise<void>>} readbacks not yet added to the sums */
    this.pending = new Set();
    this.sets = [];
    for (let first = 0; first < stepCount; first += STEPS_PER_SET) {
      const count = 2 * Math.min(STEPS_PER_SET, stepCount - first);
      this.sets.push({
        first,
        count,
        querySet: ctx.device.createQuerySet({type: 'timestamp', count, label: 'webnn:profile'}),
        resolve: ctx.device.createBuffer({size: count * 8, usage: RESOLVE_USAGE, label: 'webnn:profile-resolve'}),
      });
    }
    this.bytes = 2 * stepCount * 8;
  }

  /**
   * Encodes the steps, one timed compute pass each, then the copy of the timestamps.
   * @param {GPUCommandEncoder} encoder
   * @param {object[]} steps the plan's steps (pipeline, workgroups)
   * @param {GPUBindGroup[]} groups one per step
   * @returns {GPUBuffer} the mappable buffer the timestamps land in (give it to collect())
   */
  encode(encoder, steps, groups) {
    steps.forEach((st, i) => {
      const set = this.sets[Math.floor(i / STEPS_PER_SET)];
      const q = 2 * (i - set.first);
      const pass = encoder.beginComputePass({label: `webnn:${st.label}`,
        timestampWrites: {querySet: set.querySet, beginningOfPassWriteIndex: q, endOfPassWriteIndex: q + 1}});
      pass.setPipeline(st.pipeline);
      pass.setBindGroup(0, groups[i]);
      pass.dispatchWorkgroups(...st.workgroups);
      pass.end();
    });
    const staging = this.ctx.pool.acquire(this.bytes, READ_USAGE, 'webnn:profile-read');
    for (const set of this.sets) {
      encoder.resolveQuerySet(set.querySet, 0, set.count, set.resolve, 0);
      encoder.copyBufferToBuffer(set.resolve, 0, staging, set.first * 16, set.count * 8);
    }
    return staging;
  }

  /**
   * After the submit: maps `staging` and adds its step times to the sums (one more run).
   * A map that fails (device lost, graph destroyed) adds nothing.
   * @param {GPUBuffer} staging from encode()
   */
  collect(staging) {
    const {completion, pool} = this.ctx;
    const read = completion.wait(staging.mapAsync(GPUMapMode.READ, 0, this.bytes)).then(() => {
      const stamps = new BigUint64Array(staging.getMappedRange(0, this.bytes));
      const {sums} = this.stats;
      for (let i = 0; i < this.stepCount; i++) {
        if (stamps[2 * i + 1] > stamps[2 * i]) sums[i] += Number(stamps[2 * i + 1] - stamps[2 * i]);
      }
      this.stats.runs++;
    }, () => {}).finally(() => {
      if (staging.mapState === 'mapped') staging.unmap();
      pool.release([staging]);
      this.pending.delete(read);
    });
    this.pending.add(read);
  }

  /**
   * Mean GPU ms per dispatch of each step, once every submitted dispatch has been read back.
   * @param {boolean} reset zero the sums and run count afterwards
   * @returns {Promise<{runs: number, ms: number[]}>}
   */
  async read(reset) {
    while (this.pending.size) await Promise.all([...this.pending]);
    const {runs, sums} = this.stats;
    if (reset) this.stats = {runs: 0, sums: new Float64Array(this.stepCount)};
    return {runs, ms: Array.from(sums, (ns) => (runs ? ns / runs / 1e6 : 0))};
  }

  /** Frees the query sets and resolve buffers (after the queued work, as the plan's own buffers). */
  destroyAfter(done) {
    const sets = this.sets;
    this.sets = [];
    done.then(() => sets.forEach((s) => { s.querySet.destroy(); s.resolve.destroy(); }), () => {});
  }
}
