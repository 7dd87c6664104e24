/**
 * Common subexpressions: a pass of build() that finds nodes computing the same thing twice (same
 * operator, same attributes, the same input operands once earlier duplicates are seen through)
 * and replaces every later one with an internal `sharedValue` node whose outputs are the first
 * one's values (no step). Nodes then left without readers are dropped.
 *
 * Converters repeat work per layer: ORT's WebNN EP writes GroupQueryAttention's mask (cast,
 * cumulativeSum, expand, lesser, where) and the rotary embedding's cos/sin gathers once per
 * layer from the same inputs; here each is computed once.
 *
 * Attributes compare by value (bigints and non-finite numbers included). Small constants (at most
 * SMALL_CONSTANT bytes) count as the same input when their type, shape and bytes are: converters
 * make one scalar constant per use (ORT's `add(position, 0)` before each rotary gather). Nodes
 * whose attributes hold anything but numbers, strings, booleans, plain arrays and plain objects
 * are never merged (their equality is not decided by their text).
 */
import {slots} from '../operand.js';
import {withoutDeadNodes} from './rewrite.js';

/** Constants of at most this many bytes are told apart by their contents, larger ones by identity. */
const SMALL_CONSTANT = 256;

/** A key of a small constant's type, shape and bytes, or null (larger, or a tensor's). */
function constantKey(s) {
  if (s.kind !== 'constant' || !s.bytes || s.bytes.byteLength > SMALL_CONSTANT) return null;
  const bytes = new Uint8Array(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength);
  return `${s.dataType}[${s.shape}]${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** A key of `attrs` for equality, or null when they hold values the key cannot decide on. */
function attrsKey(attrs) {
  let plain = true;
  const key = JSON.stringify(attrs ?? {}, (k, v) => {
    if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0) ? v : `#${Object.is(v, -0) ? '-0' : v}`;
    if (typeof v === 'bigint') return `#${v}n`;
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'function' || typeof v === 'symbol') plain = false;
      return v;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== Array.prototype) plain = false;
    return v;
  });
  return plain ? key : null;
}

/**
 * @param {object[]} nodes topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {object[]} the nodes with each repeated computation a sharedValue node
 */
export function planCommonSubexpressions(nodes, outputs) {
  const ids = new Map(); // operand slots -> the id of the value it holds
  const constants = new Map(); // small constant's key -> its id
  let next = 0;
  const idOf = (operand) => {
    const s = slots(operand);
    if (!ids.has(s)) {
      const key = constantKey(s);
      if (key !== null && !constants.has(key)) constants.set(key, next++);
      ids.set(s, key !== null ? constants.get(key) : next++);
    }
    return ids.get(s);
  };
  const first = new Map(); // key -> the node first computing it
  let merged = false;
  const out = nodes.map((node) => {
    const attrs = attrsKey(node.attrs);
    if (attrs === null) return node;
    const key = `${node.op}|${attrs}|${node.inputs.map(idOf).join(',')}`;
    const earlier = first.get(key);
    if (!earlier) {
      first.set(key, node);
      return node;
    }
    node.outputs.forEach((o, i) => ids.set(slots(o), idOf(earlier.outputs[i])));
    merged = true;
    return {id: node.id, op: 'sharedValue', label: node.label, inputs: earlier.outputs.slice(), attrs: {},
      origin: node.origin, origins: [node.origin], outputs: node.outputs};
  });
  return merged ? withoutDeadNodes(out, outputs) : nodes;
}

/** The pass (compile/plan.js PASSES). */
export function csePass(g) {
  return {...g, nodes: planCommonSubexpressions(g.nodes, g.outputs)};
}
