/**
 * MLGraphBuilder (spec §MLGraphBuilder): records operators as nodes; validation and shape
 * inference happen in each method (ops/*.js), build() hands the reachable nodes to the compiler.
 *
 * Operator methods are installed on the prototype from the OPERATORS table (ops/index.js); each
 * entry's `method(builder, ...args)` validates, infers and calls addNode() (builder_state.js).
 * The builder's state lives in builder_state.js, off the public object.
 */
import {domError, typeError} from './errors.js';
import {INT4_TYPES, bufferMatches, bytesOf} from './dtypes.js';
import {checkDescriptor} from './shape/common.js';
import {scalarBytes} from './shape/cast.js';
import {createOperand, isOperand, slots} from './operand.js';
import {isTensor, tensorSlots} from './tensor.js';
import {contextSlots, MLContext} from './context.js';
import {OPERATORS} from './ops/index.js';
import {builderState, checkCanBuild, checkSupported, initBuilderState, withOrigin} from './builder_state.js';

export class MLGraphBuilder {

  /**
   * @param {MLContext} context
   * @throws {TypeError} when context is not an MLContext
   * @throws {DOMException} InvalidStateError when the context is lost
   */
  constructor(context) {
    if (!(context instanceof MLContext) || !contextSlots(context)) throw new TypeError('MLGraphBuilder: argument is not an MLContext');
    if (contextSlots(context).lostInfo) throw domError('InvalidStateError', 'the context is lost', 'MLGraphBuilder');
    initBuilderState(this, context, contextSlots(context));
  }

  /**
   * Spec input(name, descriptor).
   * @returns {MLOperand}
   * @throws {TypeError} empty or duplicate name, invalid descriptor
   */
  input(name, descriptor) {
    checkCanBuild(this, 'input');
    name = toUSVString(name, 'input', 'name');
    if (name === '') throw typeError('input', 'name must not be empty');
    if (builderState(this).inputNames.has(name)) throw typeError('input', `an input named "${name}" already exists`);
    const desc = checkSupported(this, checkDescriptor(descriptor, `input ${name}`), `input ${name}`);
    builderState(this).inputNames.add(name);
    return createOperand(this, desc, {kind: 'input', name});
  }

  /**
   * Spec constant(descriptor, buffer), constant(dataType, value) and constant(tensor).
   * The bytes are copied at call time.
   * @returns {MLOperand}
   */
  constant(a, b) {
    if (isTensor(a)) {
      const t = tensorSlots(a);
      if (t.context !== builderState(this).context) throw typeError('constant', 'the tensor belongs to another MLContext');
      if (t.destroyed) throw typeError('constant', 'the tensor is destroyed');
      if (!t.constant) throw typeError('constant', 'the tensor was not created by createConstantTensor');
      checkCanBuild(this, 'constant');
      return createOperand(this, checkSupported(this, t.desc, 'constant'), {kind: 'constant', tensor: a});
    }
    checkCanBuild(this, 'constant');
    if (typeof a === 'string') {
      const desc = checkDescriptor({dataType: a, shape: []}, 'constant');
      // Chromium has no scalar form for the 4-bit types (one element is half a byte)
      if (INT4_TYPES.includes(desc.dataType)) throw typeError('constant', `constant(dataType, value) does not support ${desc.dataType}`);
      // MLNumber is (bigint or unrestricted double): anything but a bigint converts with ToNumber.
      if (typeof b === 'symbol') throw typeError('constant', 'value must be a number or bigint');
      const value = typeof b === 'bigint' ? b : Number(b);
      return createOperand(this, desc, {kind: 'constant', bytes: scalarBytes(value, a).slice()});
    }
    const desc = checkSupported(this, checkDescriptor(a, 'constant'), 'constant');
    if (!bufferMatches(b, desc)) throw typeError('constant', 'buffer does not match the descriptor (byte length or view type)');
    return createOperand(this, desc, {kind: 'constant', bytes: bytesOf(b).slice()});
  }

  /**
   * Spec build(outputs): compiles the part of the graph that the outputs need into a fixed plan
   * (pipelines created, constants uploaded, intermediate buffers assigned).
   * @param {Record<string, MLOperand>} outputs
   * @returns {Promise<MLGraph>}
   * @throws (rejects) InvalidStateError after a previous build or on a lost context; TypeError
   *   for empty outputs, foreign operands, inputs or constants as outputs; OperationError when
   *   compilation fails
   */
  async build(outputs) {
    checkCanBuild(this, 'build');
    const entries = Object.entries(outputs ?? {});
    if (entries.length === 0) throw typeError('build', 'outputs must not be empty');
    for (const [name, operand] of entries) {
      if (name === '') throw typeError('build', 'output names must not be empty');
      if (!isOperand(operand) || slots(operand).builder !== this) throw typeError('build', `output "${name}" is not an operand of this builder`);
      const s = slots(operand);
      if (s.kind === 'input' || s.kind === 'constant') throw typeError('build', `output "${name}" is an input or constant; use identity()`);
    }
    const state = builderState(this);
    state.built = true;
    try {
      // the context's backend: a WebGPU plan (compile/plan.js) or an ONNX Runtime session (cpu/compile.js)
      return await state.ctx.backend.compile(state.context, entries);
    } catch (e) {
      // The spec's errors (TypeError, DOMExceptions such as OperationError or InvalidStateError)
      // pass through; anything else is a failure to compile: spec build() step "if the previous
      // step failed", an OperationError, never a plain Error.
      if (e instanceof DOMException || e instanceof TypeError) throw e;
      throw domError('OperationError', `compiling the graph failed: ${e?.message ?? String(e)}`, 'build');
    }
  }
}

/** WebIDL USVString conversion (ToString; a Symbol throws TypeError). */
function toUSVString(value, label, what) {
  if (typeof value === 'symbol') throw typeError(label, `${what} must be a string`);
  return String(value);
}

for (const [name, def] of Object.entries(OPERATORS)) {
  Object.defineProperty(MLGraphBuilder.prototype, name, {
    configurable: true,
    writable: true,
    enumerable: false,
    value: {[name](...args) {
      const options = args[def.optionsIndex ?? args.length] ?? {};
      if (typeof options !== 'object' && typeof options !== 'function') {
        throw typeError(name, 'options must be a dictionary');
      }
      const given = options.label === undefined ? '' : toUSVString(options.label, name, 'label');
      const label = given || name;
      checkCanBuild(this, label);
      return withOrigin(this, {type: name, label: given}, () => def.method(this, label, ...args));
    }}[name],
  });
}
