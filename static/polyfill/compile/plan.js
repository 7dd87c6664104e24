/**
 * build(): graph -> fixed plan. The passes (PASSES, applied in order): computations repeated from
 * the same inputs are made once (compile/cse.js); layer normalizations written out as
 * element-wise operators become one layerNormalization node (compile/layer_norm.js); a product of
 * dequantized packed constant weights becomes one quantizedMatmul node (compile/quantized_matmul.js),
 * with the product of its input's block sums and constant block offsets folded in as float zero
 * points (compile/block_offsets.js), and a gather of a dequantized packed table one quantizedGather node (compile/quantized_gather.js);
 * the rotary embedding written out becomes one rotaryEmbedding node (compile/rotary.js); element-wise
 * chains fuse into their producers (compile/fusion.js); a matmul stores into its transpose's
 * layout (compile/views.js); matmul -> softmax -> matmul becomes a fusedAttention node
 * (compile/attention.js); a product whose fused stages read another product of the same A
 * (a SwiGLU MLP's gate and up) becomes one gatedMatmul node (compile/gated_pairs.js); sibling
 * products of one A become a mergedMatmul node (compile/siblings.js); a normalization adds up
 * the split product it reads (compile/split_norm.js); a one-row RMS norm read only by packed
 * products is normalized by their kernel (compile/norm_prologue.js); two scatterNDs of the same
 * indices become one scatterNDPair node (compile/scatter_pairs.js) and two rotaries of the same
 * cos and sin one rotaryEmbeddingPair node
 * (compile/rotary.js). Then the nodes are lowered, in order, into steps (compile/lowering.js;
 * spec operators through OPERATORS, pass-made nodes through INTERNAL_OPERATORS), pooled buffers
 * are assigned to temporaries by lifetime (a buffer is reused once the last step reading its
 * value has been encoded), constants are uploaded once, every pipeline and the static bind
 * groups are created ahead, and all uniforms are packed into one buffer. dispatch() only creates
 * bind groups for the steps touching the caller's tensors (cached per tensor combination),
 * encodes and submits the steps (one command buffer, or several onto an idle queue:
 * Plan.dispatch).
 */
import {domError} from '../errors.js';
import {DATA_TYPES, elementCount, isDirect} from '../dtypes.js';
import {reachableNodes, slots} from '../operand.js';
import {contextSlots} from '../context.js';
import {createGraphObject} from '../graph.js';
import {OPERATORS} from '../ops/index.js';
import {INTERNAL_OPERATORS} from '../ops/internal.js';
import {Lowering} from './lowering.js';
import {originsOf} from './rewrite.js';
import {fusionPass} from './fusion.js';
import {storeViewPass} from './views.js';
import {attentionPass} from './attention.js';
import {siblingsPass} from './siblings.js';
import {gatedPairsPass} from './gated_pairs.js';
import {splitNormPass} from './split_norm.js';
import {normProloguePass} from './norm_prologue.js';
import {layerNormPass} from './layer_norm.js';
import {csePass} from './cse.js';
import {quantizedMatmulPass} from './quantized_matmul.js';
import {blockOffsetsPass} from './block_offsets.js';
import {quantizedGatherPass} from './quantized_gather.js';
import {rotaryPairPass, rotaryPass} from './rotary.js';
import {scatterPairPass} from './scatter_pairs.js';
import {lowerCopy} from './copy.js';
import {lowerBoundaryOut} from './boundary.js';
import {captureErrors} from '../gpu/error_scope.js';
import {StepTimer} from './step_timer.js';

const STORAGE = globalThis.GPUBufferUsage ? GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST : 0; // no WebGPU: CPU context only

/**
 * The passes, in order: each `(graph, ctx) => graph` over the record {nodes (topological order),
 * outputs}, returning a new record whose node list has the pattern it found rewritten: a node
 * replaced by one carrying the result as attributes (compile/rewrite.js), the nodes it absorbed
 * removed. A new pass is a module exporting one such function and one line here.
 */
export const PASSES = Object.freeze([
  csePass,         // a computation repeated from the same inputs -> sharedValue nodes of the first
  layerNormPass,   // written-out layer/RMS norms -> one layerNormalization node
  quantizedMatmulPass, // dequantizeLinear(packed constant) -> [views] -> matmul/gemm -> one quantizedMatmul node
  blockOffsetsPass, // quantizedMatmul + matmul(blockSums(A), constant offsets) -> the quantizedMatmul with float zero points
  quantizedGatherPass, // gather(dequantizeLinear(packed constant table)) -> one quantizedGather node
  rotaryPass,      // the rotation of halves written out (split, concat, mul, add) -> one rotaryEmbedding node
  fusionPass,      // element-wise chains -> their producer with attrs.epilogue
  storeViewPass,   // a matmul stores into its only consumer transpose's layout: attrs.transpose
  attentionPass,   // matmul -> softmax -> matmul -> one fusedAttention node
  gatedPairsPass,  // a product whose fused stages read another's result of the same A -> one gatedMatmul node
  siblingsPass,    // products of one A with constant B's -> one mergedMatmul node
  splitNormPass,   // a normalization adds the split product's partial sums it reads: attrs.splitNorm
  normProloguePass, // a one-row RMS norm read only as packed products' A: attrs.prologue (they normalize A themselves)
  scatterPairPass, // two scatterNDs of the same indices (a layer's K and V cache updates) -> one scatterNDPair node
  rotaryPairPass,  // two rotaryEmbedding nodes of the same cos and sin (a layer's q and k) -> one rotaryEmbeddingPair node
]);

/**
 * Lowers the passes' node list into steps, in order: spec operators through OPERATORS, pass-made
 * nodes through INTERNAL_OPERATORS; each node's steps record the builder operators it stands for.
 */
function lowerNodes(nodes, L) {
  for (const node of nodes) {
    L.within(originsOf(node), () => (OPERATORS[node.op] ?? INTERNAL_OPERATORS[node.op]).lower(node, L));
  }
}

/**
 * Compiles the graph for `entries` ([name, MLOperand] pairs) on `context`.
 * @returns {Promise<MLGraph>}
 * @throws (rejects) OperationError when a kernel cannot be created, NotSupportedError for
 *   unsupported data types, InvalidStateError when the context is lost meanwhile
 */
export async function compileGraph(context, entries) {
  const ctx = contextSlots(context);
  const L = new Lowering(ctx);
  const graphNodes = reachableNodes(entries.map(([, o]) => o));
  const graph = PASSES.reduce((g, pass) => pass(g, ctx), {nodes: graphNodes, outputs: entries.map(([, o]) => o)});
  for (const [name, operand] of entries) {
    if (!L.graphOutputs.has(slots(operand))) L.graphOutputs.set(slots(operand), name);
  }
  lowerNodes(graph.nodes, L);

  const outputDescriptors = new Map();
  const outputs = new Map();
  const claimed = new Set();
  for (const [name, operand] of entries) {
    const s = slots(operand);
    const desc = {dataType: s.dataType, shape: s.shape.slice()};
    outputDescriptors.set(name, desc);
    // an output's copy or packing step is its producer's
    L.within(s.kind === 'op' ? [s.node.origin] : [], () => {
      // written in its tensor layout by its producer's step (Lowering.packedOutput)
      const packed = L.graphOutputs.get(s) === name ? L.packedOutputs.get(s) : undefined;
      if (packed) {
        outputs.set(name, packed);
        return;
      }
      const value = L.value(operand);
      if (!isDirect(desc.dataType)) {
        const raw = L.newValue('output', elementCount(desc.shape) * DATA_TYPES[desc.dataType].bytes, `output ${name}`, {name});
        lowerBoundaryOut(L, value, raw, desc);
        outputs.set(name, raw);
      } else if (value.kind === 'temp' && !claimed.has(value)) {
        value.kind = 'output';
        value.name = name;
        claimed.add(value);
        outputs.set(name, value);
      } else {
        const raw = L.newValue('output', value.bytes, `output ${name}`, {name});
        lowerCopy(L, value, raw, value.bytes, `output ${name}`);
        outputs.set(name, raw);
      }
    });
  }
  const inputDescriptors = new Map();
  for (const node of graphNodes) {
    for (const input of node.inputs) {
      const s = slots(input);
      if (s.kind === 'input') inputDescriptors.set(s.name, {dataType: s.dataType, shape: s.shape.slice()});
    }
  }

  const plan = new Plan(ctx, L, outputs);
  try {
    await plan.prepare();
  } catch (e) {
    plan.discard();
    throw e;
  }
  if (ctx.lostInfo) {
    plan.release(ctx);
    throw domError('InvalidStateError', 'the context was lost during build', 'build');
  }
  return createGraphObject(context, ctx, plan, inputDescriptors, outputDescriptors);
}

/** The compiled, immutable execution plan of one MLGraph. */
export class Plan {
  constructor(ctx, L, outputs) {
    this.ctx = ctx;
    this.steps = L.steps;
    this.values = L.values;
    this.inputs = L.inputs;
    this.outputs = outputs;
    this.owned = [];
    /** sharing keys of the constants held in the context's ConstantStore (gpu/constant_store.js) */
    this.sharedKeys = [];
    this.bindCache = new Map();
    /** @type {StepTimer|null} GPU time per step, only in a context with profiling on */
    this.timer = null;
  }

  /**
   * What each step is, for profiles: index, name (the step's label), kernel (WGSL entry's
   * shader name), the builder operators ({type, label}) it came from, and its launch size:
   * workgroups ([x, y, z] workgroups dispatched) of workgroupSize invocations each.
   * @returns {{index: number, name: string, kernel: string, operators: {type: string, label: string}[],
   *   workgroups: number[], workgroupSize: number}[]}
   */
  describeSteps() {
    return this.steps.map((st, index) => ({index, name: st.label, kernel: st.shader.name,
      operators: st.operators.map(({type, label}) => ({type, label})),
      workgroups: [...st.workgroups], workgroupSize: st.shader.workgroupSize}));
  }

  /**
   * Allocates buffers, uploads constants and uniforms, creates pipelines and bind groups.
   * @throws {DOMException} OperationError when the GPU cannot allocate the buffers or a kernel
   *   fails to compile (the caller discards the plan)
   */
  async prepare() {
    const {device, pipelines} = this.ctx;
    const compiled = Promise.all(this.steps.map((st) => pipelines.get(st.shader)));
    compiled.catch(() => {}); // awaited below unless allocation fails first
    // constants other graphs of the context hold already are shared, by length and digest
    const constants = this.values.filter((v) => v.kind === 'constant');
    const keys = await Promise.all(constants.map((v) => this.ctx.constants.keyOf(v.data)));
    constants.forEach((v, i) => { v.shareKey = keys[i]; });
    const allocation = captureErrors(device, () => this.allocate());
    const allocationError = await allocation.error;
    if (allocationError) {
      throw domError('OperationError', `the GPU could not allocate the graph's buffers: ${allocationError.message}`, 'build');
    }
    const results = await compiled;
    const binding = captureErrors(device, () => this.steps.forEach((st, i) => {
      st.pipeline = results[i].pipeline;
      st.layout = results[i].layout;
      st.dynamic = st.values.some((v) => v.kind === 'input' || v.kind === 'output');
      if (!st.dynamic) st.bindGroup = this.bindGroup(st, null, null);
      st.uniformData = null;
    }));
    const error = await binding.error;
    if (error) {
      throw domError('OperationError', `creating the graph's bind groups failed: ${error.message}`, 'build');
    }
  }

  /** Buffers for temporaries (pooled, by lifetime), constants (uploaded) and uniforms. */
  allocate() {
    const {device} = this.ctx;
    this.assignBuffers();
    for (const v of this.values) {
      if (v.kind === 'constant') {
        const {buffer, shared} = this.ctx.constants.acquire(v.shareKey, v.data, `webnn:${v.label}`);
        v.buffer = buffer;
        if (shared) this.sharedKeys.push(v.shareKey);
        else this.owned.push(buffer);
        v.data = null;
      }
    }
    const align = device.limits.minUniformBufferOffsetAlignment;
    let offset = 0;
    for (const st of this.steps) {
      st.uniformOffset = offset;
      st.uniformSize = st.uniformData.byteLength;
      offset += Math.ceil(st.uniformData.byteLength / align) * align;
    }
    this.uniformBuffer = device.createBuffer({size: Math.max(offset, 16), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label: 'webnn:uniforms'});
    this.owned.push(this.uniformBuffer);
    const packed = new Uint8Array(Math.max(offset, 16));
    for (const st of this.steps) packed.set(new Uint8Array(st.uniformData), st.uniformOffset);
    device.queue.writeBuffer(this.uniformBuffer, 0, packed);
    if (this.ctx.profiling) this.timer = new StepTimer(this.ctx, this.steps.length);
  }

  /** Destroys every buffer of a plan that failed to build (none goes back to the pool). */
  discard() {
    this.owned.forEach((b) => b.destroy());
    this.owned = [];
    this.sharedKeys.forEach((key) => this.ctx.constants.release(key)?.destroy());
    this.sharedKeys = [];
    this.pooled = new Set();
    this.timer?.destroyAfter(Promise.resolve());
  }

  /** Assigns pooled buffers to temporaries: best fit among buffers whose values are dead. */
  assignBuffers() {
    const {pool} = this.ctx;
    const temps = this.values.filter((v) => v.kind === 'temp' && v.lastUse >= 0);
    const byStart = [...temps].sort((a, b) => a.firstUse - b.firstUse);
    const free = [];
    const live = [];
    for (const v of byStart) {
      // values whose last reader ran before this value's producer can give their buffer back
      for (let i = live.length - 1; i >= 0; i--) {
        if (live[i].lastUse < v.firstUse) free.push(live.splice(i, 1)[0].buffer);
      }
      let best = -1;
      free.forEach((b, i) => {
        if (b.size >= v.bytes && (best < 0 || b.size < free[best].size)) best = i;
      });
      if (best >= 0) v.buffer = free.splice(best, 1)[0];
      else {
        v.buffer = pool.acquire(v.bytes, STORAGE, `webnn:${v.label}`);
        this.owned.push(v.buffer);
      }
      live.push(v);
    }
    this.pooled = new Set(temps.map((v) => v.buffer));
  }

  bindGroup(st, inputs, outputs) {
    const entries = st.values.map((v, i) => {
      let buffer = v.buffer;
      if (v.kind === 'input') buffer = inputs[v.name].buffer;
      else if (v.kind === 'output') buffer = outputs[v.name].buffer;
      return {binding: i, resource: {buffer}};
    });
    entries.push({binding: st.values.length, resource: {buffer: this.uniformBuffer, offset: st.uniformOffset, size: st.uniformSize}});
    return this.ctx.device.createBindGroup({label: `webnn:${st.label}`, layout: st.layout, entries});
  }

  /**
   * Encodes the steps into compute passes and submits them: one command buffer, or several.
   * Chromium's GPU process records a command buffer into the driver's only when it is submitted,
   * so several submits let the GPU start on the first steps while the rest are still recorded,
   * which only pays when the GPU would otherwise wait. By default (the tuning switch
   * `submitSteps` unset): command buffers of 4, 8, 16... steps when the context's completion
   * tracking says no earlier dispatch of it may still run (gpu/completion.js `idle`: hardware
   * adapters with fastReadback on; other work on the queue is not seen, which changes only how
   * the plan is submitted, not what it computes); else one. Splitting always costs back-to-back
   * throughput, splitting onto an idle queue wins latency (docs/design-notes.md, "Submitting a
   * plan in pieces"). The switch forces a choice: a number n, one command buffer per n steps;
   * 'doubling', always split.
   * @param {object} ctx context slots
   * @param {Record<string, object>} inputs name -> tensor slots
   * @param {Record<string, object>} outputs name -> tensor slots
   */
  dispatch(ctx, inputs, outputs) {
    const key = [...this.inputs.keys()].map((n) => tensorId(inputs[n])).join('|')
      + '#' + [...this.outputs.keys()].map((n) => tensorId(outputs[n])).join('|');
    let groups = this.bindCache.get(key);
    if (!groups) {
      groups = this.steps.map((st) => (st.dynamic ? this.bindGroup(st, inputs, outputs) : st.bindGroup));
      if (this.bindCache.size > 16) this.bindCache.delete(this.bindCache.keys().next().value);
      this.bindCache.set(key, groups);
    }
    const encoder = ctx.device.createCommandEncoder({label: 'webnn:dispatch'});
    if (this.timer) {
      const staging = this.timer.encode(encoder, this.steps, groups);
      ctx.device.queue.submit([encoder.finish()]);
      this.timer.collect(staging);
      return;
    }
    const doubling = ctx.tuning.submitSteps === 'doubling' || (ctx.tuning.submitSteps === undefined && Boolean(ctx.completion?.idle));
    let chunk = doubling ? 4 : (ctx.tuning.submitSteps > 0 ? ctx.tuning.submitSteps : this.steps.length);
    let first = 0;
    do {
      const commands = first === 0 ? encoder : ctx.device.createCommandEncoder({label: 'webnn:dispatch'});
      const pass = commands.beginComputePass({label: 'webnn:dispatch'});
      const end = Math.min(first + chunk, this.steps.length);
      for (let i = first; i < end; i++) {
        const st = this.steps[i];
        pass.setPipeline(st.pipeline);
        pass.setBindGroup(0, groups[i]);
        pass.dispatchWorkgroups(...st.workgroups);
      }
      pass.end();
      ctx.device.queue.submit([commands.finish()]);
      first = end;
      if (doubling) chunk *= 2;
    } while (first < this.steps.length);
  }

  /** Gives temporaries back to the pool and destroys constants once queued work is done. */
  release(ctx) {
    this.bindCache.clear();
    const own = this.owned.filter((b) => !this.pooled.has(b));
    for (const key of this.sharedKeys) {
      const last = ctx.constants.release(key);
      if (last) own.push(last);
    }
    this.sharedKeys = [];
    ctx.pool.release([...this.pooled]);
    const done = ctx.completion.wait(ctx.device.queue.onSubmittedWorkDone());
    done.then(() => own.forEach((b) => b.destroy()), () => {});
    this.timer?.destroyAfter(done);
  }
}

/** A stable id per tensor (slots object) for the bind group cache. */
function tensorId(t) {
  if (!t.id) t.id = contextSlots(t.context).nextTensorId++;
  return t.id;
}
