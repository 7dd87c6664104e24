/**
 * MLOperand (spec §MLOperand): a node of the graph being built. Its dataType and shape are known
 * as soon as the builder method that made it returns.
 */

/** Internal slots of an MLOperand, kept off the public object. */
const SLOTS = new WeakMap();

/** @returns {object} the internal slots of an MLOperand created by this polyfill */
export function slots(operand) {
  return SLOTS.get(operand);
}

/** @returns {boolean} whether `value` is an MLOperand of this polyfill */
export function isOperand(value) {
  return SLOTS.has(value);
}

export class MLOperand {
  constructor() {
    throw new TypeError('Illegal constructor');
  }

  /** @type {string} MLOperandDataType */
  get dataType() {
    return slots(this).dataType;
  }

  /** @type {number[]} a frozen copy of the dimensions ([] for a scalar) */
  get shape() {
    return slots(this).frozenShape;
  }

  get [Symbol.toStringTag]() {
    return 'MLOperand';
  }
}

/**
 * Creates an operand (spec "create an MLOperand").
 * @param {object} builder the MLGraphBuilder
 * @param {{dataType: string, shape: number[]}} desc
 * @param {object} origin {kind: 'input', name} | {kind: 'constant', bytes?|tensor?} | {kind: 'op', node, index}
 * @returns {MLOperand}
 */
export function createOperand(builder, desc, origin) {
  const operand = Object.create(MLOperand.prototype);
  SLOTS.set(operand, {
    builder,
    dataType: desc.dataType,
    shape: desc.shape.slice(),
    frozenShape: Object.freeze(desc.shape.slice()),
    ...origin,
  });
  return operand;
}

/**
 * The operator nodes that `outputs` depend on, in creation (= topological) order: what build()
 * compiles, for the WebGPU plan (compile/plan.js) and the CPU context's ONNX model (cpu/compile.js).
 * @param {MLOperand[]} outputs
 * @returns {object[]} nodes ({id, op, inputs, outputs, attrs, ...}, builder_state.js addNode)
 */
export function reachableNodes(outputs) {
  const seen = new Set();
  const stack = outputs.map((o) => slots(o));
  while (stack.length) {
    const s = stack.pop();
    if (s.kind !== 'op' || seen.has(s.node)) continue;
    seen.add(s.node);
    for (const input of s.node.inputs) stack.push(slots(input));
  }
  return [...seen].sort((a, b) => a.id - b.id);
}

/**
 * How many times each operand is read: once per input slot of `nodes` that takes it (mul(x, x)
 * reads x twice) and once more for each of `outputs` it is; the compile passes' "read once"
 * tests (compile/fusion.js, views.js, attention.js, split_norm.js).
 * @param {object[]} nodes builder nodes (reachableNodes)
 * @param {MLOperand[]} outputs the graph's output operands
 * @returns {Map<object, number>} operand slots -> number of reads
 */
export function useCounts(nodes, outputs) {
  const uses = new Map();
  const read = (operand) => uses.set(slots(operand), (uses.get(slots(operand)) ?? 0) + 1);
  for (const node of nodes) node.inputs.forEach(read);
  outputs.forEach(read);
  return uses;
}
