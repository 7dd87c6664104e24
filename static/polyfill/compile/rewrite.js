/**
 * What the rewriting passes share (compile/plan.js PASSES): a pass takes the node list and
 * returns a new one in which the nodes it rewrote are replaced by nodes carrying the result as
 * attributes, and the nodes they absorb are gone. A rewritten node keeps its operator, inputs
 * and outputs and adds:
 *   attrs.epilogue   the element-wise stages fused into its step (compile/fusion.js; ops/epilogue.js
 *                    applies them), each {node, expr, vars, attrs, other, chainOther?, reshape?}
 *   attrs.transpose  the transpose node whose layout a matmul stores its output in (compile/views.js)
 *   attrs.splitNorm  the normalization node that adds a split product's partial sums itself
 *                    (compile/split_norm.js)
 *   origins          the builder operators ({type, label}) the node now stands for, in order;
 *                    every step lowered for it records them (compile/lowering.js)
 * Internal nodes (fusedAttention, mergedMatmul, quantizedMatmul, a layerNormalization with a
 * formula) carry their whole computation in attrs the same way.
 */
import {slots} from '../operand.js';

/** The builder operators `node` stands for: its `origins`, or its own origin. */
export function originsOf(node) {
  return node.origins ?? [node.origin];
}

/**
 * The operands whose data `node`'s lowering stores: the last fused stage's output, the
 * transpose's output for a transposed store, a fusedAttention's output, else its outputs.
 */
export function storedOutputs(node) {
  const stages = node.attrs?.epilogue;
  if (stages?.length) return stages[stages.length - 1].node.outputs;
  if (node.attrs?.transpose) return node.attrs.transpose.outputs;
  return node.outputs;
}

/** Operand slots -> the node of `nodes` whose step stores that operand (storedOutputs). */
export function producers(nodes) {
  const map = new Map();
  for (const node of nodes) for (const o of storedOutputs(node)) map.set(slots(o), node);
  return map;
}

/**
 * The operand `operand` is a shared copy of (a sharedValue node of compile/cse.js), followed to
 * the first computation, as slots; its own slots when it is no copy.
 * @param {Map<object, object>} made producers(nodes)
 */
export function sharedRoot(operand, made) {
  const node = made.get(slots(operand));
  if (!node || node.op !== 'sharedValue') return slots(operand);
  return sharedRoot(node.inputs[node.outputs.indexOf(operand)], made);
}

/** The data behind `operand` through reshapes / identities / shared copies, as slots. */
export function dataRoot(operand, made) {
  let s = sharedRoot(operand, made);
  for (;;) {
    const node = made.get(s);
    if (!node || (node.op !== 'reshape' && node.op !== 'identity')) return s;
    s = sharedRoot(node.inputs[0], made);
  }
}

/**
 * Pairs of `candidates` (nodes of `nodes`, in node order): for each one not yet paired, the
 * first later unpaired candidate that `partner(first, second, position)` accepts (`position`:
 * node -> its index in `nodes`); each pair becomes `make(first, second)` in the place of the
 * first (`at` 'first') or of the second (`at` 'second'), the other node dropped. `partner`
 * decides whether that place is valid (what the moved node reads is computed by then, what
 * reads it comes after).
 * @returns {object[]} the new node list (`nodes` itself when nothing pairs)
 */
export function pairNodes(nodes, candidates, partner, make, at) {
  if (candidates.length < 2) return nodes;
  const position = new Map(nodes.map((n, i) => [n, i]));
  const pairs = new Map(); // the node whose place a pair takes -> the pair
  const removed = new Set();
  const taken = (n) => pairs.has(n) || removed.has(n);
  for (const first of candidates) {
    if (taken(first)) continue;
    const second = candidates.find((n) => position.get(n) > position.get(first) && !taken(n) && partner(first, n, position));
    if (!second) continue;
    pairs.set(at === 'first' ? first : second, make(first, second));
    removed.add(at === 'first' ? second : first);
  }
  if (!pairs.size) return nodes;
  return nodes.flatMap((n) => (pairs.has(n) ? [pairs.get(n)] : removed.has(n) ? [] : [n]));
}

/**
 * Who reads each operand: operand slots -> [{node, at}] (the nodes of `nodes` with the operand as
 * input `at`), in node order.
 * @returns {Map<object, {node: object, at: number}[]>}
 */
export function readersOf(nodes) {
  const readers = new Map();
  for (const node of nodes) {
    node.inputs.forEach((input, at) => {
      const s = slots(input);
      if (!readers.has(s)) readers.set(s, []);
      readers.get(s).push({node, at});
    });
  }
  return readers;
}

/**
 * How many times each operand is read by `nodes` and `outputs`: once per input slot, once per
 * fused stage's other operand (operand.js useCounts counts the builder's nodes; this counts the
 * rewritten ones, whose stages read operands their inputs do not list).
 * @returns {Map<object, number>} operand slots -> reads
 */
export function readCounts(nodes, outputs) {
  const uses = new Map();
  const read = (operand) => uses.set(slots(operand), (uses.get(slots(operand)) ?? 0) + 1);
  for (const node of nodes) {
    node.inputs.forEach(read);
    for (const st of node.attrs?.epilogue ?? []) if (st.other) read(st.other);
  }
  outputs.forEach(read);
  return uses;
}

/**
 * `nodes` with each key of `replaced` replaced by its value (null: removed), in order.
 * @param {object[]} nodes
 * @param {Map<object, object|null>} replaced
 */
export function replaceNodes(nodes, replaced) {
  return nodes.flatMap((n) => {
    if (!replaced.has(n)) return [n];
    const r = replaced.get(n);
    return r ? [r] : [];
  });
}

/** `node` rewritten with `attrs` added and `origins` following its own. */
export function rewritten(node, attrs, origins = []) {
  return {...node, attrs: {...node.attrs, ...attrs}, origins: [...originsOf(node), ...origins]};
}

/**
 * `nodes` less those whose outputs nothing reads (what a rewrite left behind: a reshape of scales
 * the absorbed dequantize read, a repeated computation's inputs). Reads: the nodes' inputs, their
 * fused stages' operands, the graph's outputs; a node writes its outputs, its stored outputs and
 * a mergedMatmul its members' results.
 */
export function withoutDeadNodes(nodes, outputs) {
  const live = new Set(outputs.map((o) => slots(o)));
  const out = [];
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i];
    const written = [...node.outputs, ...storedOutputs(node), ...(node.attrs?.members ?? []).map((m) => m.out)];
    if (!written.some((o) => live.has(slots(o)))) continue;
    node.inputs.forEach((input) => live.add(slots(input)));
    for (const st of node.attrs?.epilogue ?? []) if (st.other) live.add(slots(st.other));
    out.push(node);
  }
  return out.reverse();
}
