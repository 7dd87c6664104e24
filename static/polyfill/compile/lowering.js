/**
 * Lowering: turns builder nodes into a list of GPU steps over abstract values.
 *
 * A Value is one GPU buffer's worth of data in the compute layout (dtypes.js): a graph input or
 * output (bound to an MLTensor at dispatch), a constant (uploaded once at build) or a temporary
 * (assigned a pooled buffer by lifetime after lowering). Several operands can share one Value
 * (reshape, identity, squeeze-like ops alias their input).
 *
 * Op files receive a Lowering as `L` in their `lower(node, L)` and use:
 *   L.value(operand)            the Value holding an operand (inputs and constants created lazily)
 *   L.alias(operand, value)     let an operand share an existing Value (no copy)
 *   L.result(node, i = 0)       a new temporary Value for the node's i-th output
 *   L.temp(bytes, label)        a scratch Value
 *   L.step({shader, values, uniforms, threads | groups, origins})   append one dispatch
 *   L.view(operand)             the operand as a strided View (compile/views.js) without a copy:
 *                               kernels that address strided data read deferred transposes so
 *   L.defer(operand, view)      make `operand` a deferred View (materialized by L.value on demand)
 *   L.deferSplitRead(value, r)  a split product's reduce step, not yet emitted, for `value`
 *   L.splitRead(value)          that read (the caller adds the partial sums instead of binding
 *                               `value`), or null
 *   L.deferNormRead(value, r)   a one-row normalization's step, not yet emitted, for `value`
 *   L.normRead(value)           that normalization (the caller normalizes its input itself
 *                               instead of binding `value`), or null
 *   L.operators                 the builder operators the steps appended now are for
 * What the passes decided is on the node itself (compile/rewrite.js): its fused stages
 * (`attrs.epilogue`, applied by ops/epilogue.js), the transpose it stores for, the normalization
 * reading its split product, the builder operators it stands for (`origins`).
 *
 * Each step records `operators`: the builder operators ({type, label}) it was made for: those of
 * the node being lowered (the compiler lowers each node within(originsOf(node))), then the
 * `origins` the step adds (the operators folded into the views it reads). A deferred view's copy
 * records the view's operators, an output's copy or packing step the output's producer, steps
 * converting graph inputs none.
 */
import {domError} from '../errors.js';
import {DATA_TYPES, computeByteLength, elementCount, isDirect} from '../dtypes.js';
import {slots} from '../operand.js';
import {constantBytes} from '../tensor.js';
import {chunkPadded} from '../gpu/packing.js';
import {foldWorkgroups} from '../gpu/wgsl.js';
import {lowerBoundaryIn, constantComputeBytes} from './boundary.js';
import {maxBindingBytes} from '../gpu/device_limits.js';
import {stridesOf} from '../shape/common.js';

export class Lowering {
  /** @param {object} ctx context slots (device, pipelines, pool) */
  constructor(ctx) {
    this.ctx = ctx;
    this.values = [];
    this.steps = [];
    /** @type {Map<object, object>} operand slots -> Value */
    this.byOperand = new Map();
    this.inputs = new Map();
    this.maxBinding = maxBindingBytes(ctx.device);
    /** @type {Map<object, object>} operand slots -> deferred View (compile/views.js) */
    this.deferred = new Map();
    /** @type {Map<object, object>} Value -> the deferred reduce of the split product it holds */
    this.splitReads = new Map();
    /** @type {Map<object, object>} Value -> the deferred normalization that computes it */
    this.normReads = new Map();
    /** @type {Map<object, object>} constant operand slots -> its packed Value (packedConstant) */
    this.packed = new Map();
    /** @type {Map<object, string>} graph output operand slots -> the first name it is output as (compileGraph) */
    this.graphOutputs = new Map();
    /** @type {Map<object, object>} graph output operand slots -> the raw Value a step writes (packedOutput) */
    this.packedOutputs = new Map();
  }

  /** @type {{type: string, label: string}[]} the builder operators the steps appended now are for */
  get operators() {
    return this.#operators;
  }

  #operators = [];

  /**
   * Runs `fn` with the steps it appends recorded as made for `operators` (the compiler: a node's
   * origins; Lowering itself: a deferred view's or an input conversion's), and returns its result.
   */
  within(operators, fn) {
    const outer = this.#operators;
    this.#operators = operators;
    try {
      return fn();
    } finally {
      this.#operators = outer;
    }
  }

  /**
   * Defers the reduce step of a split product whose result `value` is read by the
   * normalization planned for it (compile/split_norm.js): that normalization gets `read` from
   * splitRead() and adds the partial sums itself (ops/matmul_kernels.js addSplitRead); a step
   * binding `value` (none, when the plan holds) gets the reduce step emitted before it, so
   * `value` is never read unwritten.
   * @param {object} value the product's (never written) result
   * @param {{node: object, dataType: string, batchRank: number, hasC: boolean, values: object[],
   *   splits: number, uniforms: object, operators: object[], reduce: function, keep: boolean}} read
   *   what addSplitRead needs, the product step's operators, `reduce()` emitting the reduce step,
   *   and whether the normalization stores `value` too (other steps read it)
   */
  deferSplitRead(value, read) {
    this.splitReads.set(value, read);
  }

  /** The deferred read of `value` (see deferSplitRead), or null. */
  splitRead(value) {
    return this.splitReads.get(value) ?? null;
  }

  /**
   * Defers the step of a one-row normalization whose result `value` packed products read as A
   * (compile/norm_prologue.js): a product whose kernel normalizes A itself gets `read`
   * from normRead() and binds `read.x` instead; a step binding `value` gets the normalization's
   * step emitted before it.
   * @param {object} value the normalization's (not yet written) result
   * @param {{x: object, scale: object|null, epsilon: number, formula: object, dataType: string, n: number,
   *   operators: object[], emit: function}} read its input, scale, epsilon, compile/layer_norm.js
   *   formula, the row's length, its builder operators (a step that normalizes adds them), and
   *   `emit()` appending its step
   */
  deferNormRead(value, read) {
    this.normReads.set(value, read);
  }

  /** The deferred normalization computing `value` (see deferNormRead), or null. */
  normRead(value) {
    return this.normReads.get(value) ?? null;
  }

  /**
   * The deferred read of `value`, which the calling step takes over: it also stores `value`
   * (binds it as an output), so no reduce step is emitted for it later.
   */
  takeSplitRead(value) {
    const read = this.splitRead(value);
    this.splitReads.delete(value);
    return read;
  }

  /**
   * `operand` as a View {value, offset, shape, strides, origins}: its deferred View when it has
   * one not yet materialized, else its Value read row-major.
   */
  view(operand) {
    const d = this.deferredView(operand);
    if (d) return d;
    const s = slots(operand);
    return {value: this.value(operand), offset: 0, shape: s.shape, strides: stridesOf(s.shape), origins: []};
  }

  /** The deferred View of `operand` when it has one not yet materialized, else null. */
  deferredView(operand) {
    const s = slots(operand);
    return this.byOperand.has(s) ? null : this.deferred.get(s) ?? null;
  }

  /** Makes `operand` the deferred View `view` (see compile/views.js). */
  defer(operand, view) {
    this.deferred.set(slots(operand), view);
  }

  /** A new Value of `bytes` bytes (compute layout). */
  newValue(kind, bytes, label, extra = {}) {
    const value = {id: this.values.length, kind, bytes: Math.max(4, Math.ceil(bytes / 4) * 4), label, firstUse: Infinity, lastUse: -1, ...extra};
    this.values.push(value);
    return value;
  }

  /**
   * The Value holding `operand` in the compute layout; graph inputs and constants are created on
   * first use (with a conversion step for float16/int8/uint8 inputs).
   */
  value(operand) {
    const s = slots(operand);
    let v = this.byOperand.get(s);
    if (v) return v;
    const deferred = this.deferred.get(s);
    if (deferred) {
      // its copy step is the view's operators'
      v = this.within(deferred.origins, () => deferred.materialize());
      this.byOperand.set(s, v);
      return v;
    }
    const desc = {dataType: s.dataType, shape: s.shape};
    if (s.kind === 'input') {
      const raw = this.#rawInput(s);
      v = isDirect(s.dataType) ? raw : this.within([], () => lowerBoundaryIn(this, raw, desc));
    } else if (s.kind === 'constant') {
      const data = constantComputeBytes(constantBytes(s), desc);
      v = this.newValue('constant', data.byteLength, `constant [${s.shape}]`, {data});
    } else {
      throw new Error(`operand of node ${s.node.op} used before it was lowered`);
    }
    this.byOperand.set(s, v);
    return v;
  }

  /** The Value bound to graph input `s` (operand slots) at dispatch: its tensor-layout bytes. */
  #rawInput(s) {
    let raw = this.inputs.get(s.name);
    if (!raw) {
      raw = this.newValue('input', Math.ceil(elementCount(s.shape) * DATA_TYPES[s.dataType].bytes), `input ${s.name}`, {name: s.name});
      this.inputs.set(s.name, raw);
    }
    return raw;
  }

  /**
   * For a kernel that reads a float16 graph input in its tensor layout itself (two binary16
   * values a word, gpu/packing.js unpackExpr): the input's own Value, with no conversion step
   * (one is still made if value() is asked for the operand). Null for any other operand.
   */
  packedInput(operand) {
    const s = slots(operand);
    return s.kind === 'input' && s.dataType === 'float16' ? this.#rawInput(s) : null;
  }

  /**
   * For a kernel that writes a float16 graph output in its tensor layout itself (two binary16
   * values a word, element 2k in the low half): the Value bound to the output at dispatch, which
   * then needs no conversion step (compileGraph). Null for any other operand, or where it was
   * asked for before.
   */
  packedOutput(operand) {
    const s = slots(operand);
    const name = this.graphOutputs.get(s);
    if (name === undefined || s.dataType !== 'float16' || this.packedOutputs.has(s)) return null;
    const raw = this.newValue('output', elementCount(s.shape) * DATA_TYPES.float16.bytes, `output ${name}`, {name});
    this.packedOutputs.set(s, raw);
    return raw;
  }

  /** Whether packedInput(`input`) and packedOutput(`output`) would both give a Value (nothing is made). */
  packsBoundary(input, output) {
    const [i, o] = [slots(input), slots(output)];
    return i.kind === 'input' && i.dataType === 'float16' && o.dataType === 'float16' && this.graphOutputs.has(o)
      && !this.packedOutputs.has(o);
  }

  /**
   * A Value holding constant `operand`'s tensor-layout bytes as they are, padded to whole 16-byte
   * chunks (the quantized matrix-vector kernel loads vec4<u32>s; 4-bit types: eight elements a
   * word, element 8k in bits 0-3; see gpu/packing.js unpackExpr), for a kernel that unpacks them
   * itself. Unlike value(), no widened copy is made; one Value per constant however often and by
   * whichever kernels it is asked for (a tied embedding's table serves its gather and the output
   * product).
   */
  packedConstant(operand) {
    const s = slots(operand);
    if (s.kind !== 'constant') throw new Error('packedConstant() of an operand that is not a constant');
    let v = this.packed.get(s);
    if (!v) {
      const data = chunkPadded(constantBytes(s));
      v = this.newValue('constant', data.byteLength, `constant [${s.shape}] (${s.dataType}, packed)`, {data});
      this.packed.set(s, v);
    }
    return v;
  }

  /** Makes `operand` share `value` (no copy). */
  alias(operand, value) {
    this.byOperand.set(slots(operand), value);
    return value;
  }

  /**
   * A new temporary Value for output `index` of `node`, sized for its descriptor. With fused
   * stages (attrs.epilogue) it holds the last stage's output (the producer's own output is never
   * stored).
   */
  result(node, index = 0) {
    const s = slots(node.outputs[index]);
    const v = this.newValue('temp', computeByteLength({dataType: s.dataType, shape: s.shape}), `${node.label}:${index}`);
    const stages = node.attrs?.epilogue ?? [];
    this.byOperand.set(stages.length ? slots(stages[stages.length - 1].node.outputs[0]) : s, v);
    return v;
  }

  /** A scratch Value of `bytes` bytes. */
  temp(bytes, label) {
    return this.newValue('temp', bytes, label);
  }

  /**
   * Appends one compute dispatch.
   * @param {object} step
   * @param {import('../gpu/wgsl.js').Shader} step.shader
   * @param {object[]} step.values Values in the shader's binding order
   * @param {object} step.uniforms uniform values by name (`total` is filled in)
   * @param {number} [step.threads] invocations that do work (one per output element, typically)
   * @param {number} [step.groups] workgroups to launch instead; `total` = groups * workgroupSize
   * @param {object[]} [step.origins] builder operators this step adds to `operators` (those of
   *   the views it reads)
   * @param {object[]} [step.operators] the step's operators instead of `operators` + `origins`
   */
  step({shader, values, uniforms = {}, threads, groups, label, origins = [], operators}) {
    for (const v of values) {
      const read = this.splitRead(v);
      if (read) {
        this.splitReads.delete(v);
        read.reduce();
      }
      const norm = this.normRead(v);
      if (norm) {
        this.normReads.delete(v);
        norm.emit();
      }
    }
    if (values.length !== shader.bindings.length) {
      throw new Error(`${shader.name}: ${values.length} values for ${shader.bindings.length} bindings`);
    }
    for (const v of values) {
      if (v.bytes > this.maxBinding) {
        throw domError('OperationError', `a tensor of ${v.bytes} bytes exceeds the adapter's maxStorageBufferBindingSize (${this.maxBinding})`, label ?? shader.name);
      }
    }
    const wgCount = groups ?? Math.ceil(threads / shader.workgroupSize);
    const total = groups !== undefined ? groups * shader.workgroupSize : threads;
    const index = this.steps.length;
    for (const v of values) {
      v.firstUse = Math.min(v.firstUse, index);
      v.lastUse = Math.max(v.lastUse, index);
    }
    this.steps.push({
      shader,
      label: label ?? shader.name,
      operators: operators ?? [...this.#operators, ...origins],
      values,
      uniformData: shader.packUniforms({...uniforms, total}),
      workgroups: foldWorkgroups(wgCount, Math.min(this.ctx.device.limits.maxComputeWorkgroupsPerDimension,
        this.ctx.tuning.workgroupsPerDimension ?? Infinity)),
    });
  }
}
