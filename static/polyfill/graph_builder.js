/**
 * MLGraphBuilder (spec §MLGraphBuilder): records operators as nodes; validation and shape
 * inference happen in each method (ops/*.js), build() hands the reachable nodes to the compiler.
 *
 * Operator methods are installed on the prototype from the OPERATORS table (ops/index.js); each
 * entry's `method(builder, ...args)` validates, infers and calls builder._node().
 */
import {domError, typeError} from './errors.js';
import {bufferMatches, bytesOf} from './dtypes.js';
import {checkDescriptor, checkTensorSize} from './shape/common.js';
import {scalarBytes} from './shape/cast.js';
import {createOperand, isOperand, slots} from './operand.js';
import {isTensor, tensorSlots} from './tensor.js';
import {contextSlots, MLContext} from './context.js';
import {OPERATORS} from './ops/index.js';
import {compileGraph} from './compile/plan.js';
import {maxTensorByteLength} from './ops/limits.js';

/** @type {(builder: MLGraphBuilder, origin: {type: string, label: string}, fn: () => *) => *} */
let withOrigin;

export class MLGraphBuilder {
  // Internal state is private: a page cannot un-build a builder or rename its inputs.
  #context;
  #built = false;
  #inputNames = new Set();
  #nodes = [];
  /** {type, label} of the builder method running now (outermost call), recorded on its nodes */
  #origin = null;

  /**
   * @param {MLContext} context
   * @throws {TypeError} when context is not an MLContext
   * @throws {DOMException} InvalidStateError when the context is lost
   */
  constructor(context) {
    if (!(context instanceof MLContext) || !contextSlots(context)) throw new TypeError('MLGraphBuilder: argument is not an MLContext');
    if (contextSlots(context).lostInfo) throw domError('InvalidStateError', 'the context is lost', 'MLGraphBuilder');
    this.#context = context;
  }

  /**
   * Spec input(name, descriptor).
   * @returns {MLOperand}
   * @throws {TypeError} empty or duplicate name, invalid descriptor
   */
  input(name, descriptor) {
    this._checkCanBuild('input');
    name = toUSVString(name, 'input', 'name');
    if (name === '') throw typeError('input', 'name must not be empty');
    if (this.#inputNames.has(name)) throw typeError('input', `an input named "${name}" already exists`);
    const desc = this._checkSupported(checkDescriptor(descriptor, `input ${name}`), `input ${name}`);
    this.#inputNames.add(name);
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
      if (t.context !== this.#context) throw typeError('constant', 'the tensor belongs to another MLContext');
      if (t.destroyed) throw typeError('constant', 'the tensor is destroyed');
      if (!t.constant) throw typeError('constant', 'the tensor was not created by createConstantTensor');
      this._checkCanBuild('constant');
      return createOperand(this, this._checkSupported(t.desc, 'constant'), {kind: 'constant', tensor: a});
    }
    this._checkCanBuild('constant');
    if (typeof a === 'string') {
      const desc = checkDescriptor({dataType: a, shape: []}, 'constant');
      // MLNumber is (bigint or unrestricted double): anything but a bigint converts with ToNumber.
      if (typeof b === 'symbol') throw typeError('constant', 'value must be a number or bigint');
      const value = typeof b === 'bigint' ? b : Number(b);
      return createOperand(this, desc, {kind: 'constant', bytes: scalarBytes(value, a).slice()});
    }
    const desc = this._checkSupported(checkDescriptor(a, 'constant'), 'constant');
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
    this._checkCanBuild('build');
    const entries = Object.entries(outputs ?? {});
    if (entries.length === 0) throw typeError('build', 'outputs must not be empty');
    for (const [name, operand] of entries) {
      if (name === '') throw typeError('build', 'output names must not be empty');
      if (!isOperand(operand) || slots(operand).builder !== this) throw typeError('build', `output "${name}" is not an operand of this builder`);
      const s = slots(operand);
      if (s.kind === 'input' || s.kind === 'constant') throw typeError('build', `output "${name}" is an input or constant; use identity()`);
    }
    this.#built = true;
    return compileGraph(this.#context, entries);
  }

  // ---- internals used by ops/*.js ---------------------------------------------------------

  /**
   * Spec "check dimensions" for every operand this builder makes: valid dimensions and element
   * count, and a byte length within opSupportLimits().maxTensorByteLength (ops/limits.js: the
   * largest tensor whose compute layout fits one storage binding for every data type).
   * @returns {{dataType: string, shape: number[]}} desc
   * @throws {TypeError}
   */
  _checkSupported(desc, label) {
    return checkTensorSize(desc, maxTensorByteLength(contextSlots(this.#context).device), label);
  }

  _checkCanBuild(label) {
    if (this.#built) throw domError('InvalidStateError', 'the builder has already built a graph', label);
    if (contextSlots(this.#context).lostInfo) throw domError('InvalidStateError', 'the context is lost', label);
  }

  /**
   * Checks that `value` is an MLOperand of this builder.
   * @returns {object} the operand's slots
   * @throws {TypeError}
   */
  _operand(value, label, what = 'input') {
    if (!isOperand(value)) throw typeError(label, `${what} is not an MLOperand`);
    const s = slots(value);
    if (s.builder !== this) throw typeError(label, `${what} belongs to another MLGraphBuilder`);
    if (s.kind === 'constant' && s.tensor && tensorSlots(s.tensor).destroyed) throw typeError(label, `${what} is a destroyed constant tensor`);
    return s;
  }

  static {
    // Module-private (not on the prototype): runs `fn` with `origin` recorded on the nodes it
    // makes, unless an outer builder method's origin is already set.
    withOrigin = (builder, origin, fn) => {
      if (builder.#origin) return fn();
      builder.#origin = origin;
      try {
        return fn();
      } finally {
        builder.#origin = null;
      }
    };
  }

  /**
   * Records an operator node and returns its output operands.
   * @param {string} op spec operator name
   * @param {MLOperand[]} inputs operand inputs (positional and from options), already checked
   * @param {object} attrs everything the kernel needs beyond the inputs
   * @param {{dataType: string, shape: number[]}[]} outDescs
   * @param {string} label
   * @returns {MLOperand[]}
   */
  _node(op, inputs, attrs, outDescs, label) {
    // origin: the builder operator the node came from (type = method name, label = the user's
    // label option or ''), for the profile of compiled steps (profiling.js)
    const origin = this.#origin ?? {type: op, label: ''};
    // Every operator's outputs pass the one descriptor check (TypeError before anything is recorded).
    for (const desc of outDescs) this._checkSupported(desc, label);
    const node = {id: this.#nodes.length, op, inputs, attrs, label, origin, outputs: []};
    node.outputs = outDescs.map((desc, index) => createOperand(this, desc, {kind: 'op', node, index}));
    this.#nodes.push(node);
    return node.outputs;
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
      this._checkCanBuild(label);
      return withOrigin(this, {type: name, label: given}, () => def.method(this, label, ...args));
    }}[name],
  });
}
