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
 * Attributes compare by value (bigints and non-finite numbers included). Constants of at most
 * COMPARED_CONSTANT bytes count as the same input when their type, shape and bytes are:
 * converters make one constant per use (ORT's `add(position, 0)` before each rotary gather, a
 * prefill graph's position range per rotary). Nodes
 * whose attributes hold anything but numbers, strings, booleans, plain arrays and plain objects
 * are never merged (their equality is not decided by their text).
 */
import {slots} from '../operand.js';
import {withoutDeadNodes} from './rewrite.js';

/** Constants of at most this many bytes are told apart by their contents, larger ones by identity. */
const COMPARED_CONSTANT = 64 * 1024;

/** A constant's bytes when its contents decide its identity, else null (larger, or a tensor's). */
function comparedBytes(s) {
  if (s.kind !== 'constant' || !s.bytes || s.bytes.byteLength > COMPARED_CONSTANT) return null;
  return new Uint8Array(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength);
}

/** A bucket key of a compared constant: type, shape and a 32-bit FNV-1a hash of its bytes. */
function constantKey(s, bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return `${s.dataType}[${s.shape}]${bytes.length}:${h >>> 0}`;
}

const sameBytes = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

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
  const constants = new Map(); // compared constant's key -> [{bytes, id}] (hash collisions apart)
  let next = 0;
  const constantId = (s, bytes) => {
    const key = constantKey(s, bytes);
    const bucket = constants.get(key) ?? [];
    constants.set(key, bucket);
    let entry = bucket.find((e) => sameBytes(e.bytes, bytes));
    if (!entry) bucket.push(entry = {bytes, id: next++});
    return entry.id;
  };
  const idOf = (operand) => {
    const s = slots(operand);
    if (!ids.has(s)) {
      const bytes = comparedBytes(s);
      ids.set(s, bytes ? constantId(s, bytes) : next++);
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
