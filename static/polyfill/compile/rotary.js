/**
 * Rotary position embedding written out as movement and element-wise operators, found at build
 * and compiled as one step (the internal node `rotaryEmbedding`, ops/rotary.js).
 *
 * ORT's WebNN EP writes GroupQueryAttention's and RotaryEmbedding's rotation of the halves
 * (rotary_interleaved = 0) of q and k as
 *   xr = reshape(x) to [..., 2, half]
 *   [x1, x2] = split(xr, axis -2)          swapped = concat([x2, x1], axis -2)
 *   a = mul(xr, cos)     b = mul(swapped, sin)     c = mul(b, sign)      (either operand order)
 *   y = add(reshape(a), reshape(c))                                      (either operand order)
 * with cos and sin gathered at the positions, broadcast over the heads, and sign a constant
 * [..., 2, 1] of two values (-1 for the first half, 1 for the second). Unfused: six steps (split
 * and concat two each, the multiplications fold into each other or the add).
 *
 * The pattern (planRotaries): float32 or float16 throughout; a, b, c and swapped of xr's shape; the split in
 * two halves along axis -2 (of extent 2) and the concat of its outputs swapped; the sign a
 * constant of two elements along that axis (every other extent 1); every intermediate (the
 * halves, swapped, a, b, c and their reshapes) read only inside the group and not a graph output;
 * the reshapes keeping the row-major order (any reshape does); cos and sin any operands that
 * broadcast to xr's shape. The node: inputs [xr, cos, sin], attrs {shape (xr's), sign [first,
 * second], dataType}, `origins`, the add's output.
 *
 * Pairs (planRotaryPairs, a later pass): two rotaryEmbedding nodes of one rank with the same cos
 * and sin (seen through compile/cse.js's shared copies), neither with fused stages, the second's
 * x computed before the first (a layer's q and k, column ranges of one product) become one
 * rotaryEmbeddingPair node in the first's place: inputs [x0, x1, cos, sin] (the first's cos and
 * sin, read by both), attrs {members: [first's attrs, second's attrs]}, outputs [first's,
 * second's].
 */
import {slots, useCounts} from '../operand.js';
import {float16Value} from '../shape/cast.js';
import {pairNodes, producers, sharedRoot, withoutDeadNodes} from './rewrite.js';

const producerOf = (operand) => {
  const s = slots(operand);
  return s.kind === 'op' ? s.node : null;
};

/** The two values of a sign constant of `dataType` along axis -2 of `shape`, or null. */
function signValues(operand, shape, dataType) {
  const s = slots(operand);
  const size = dataType === 'float16' ? 2 : 4;
  if (s.kind !== 'constant' || !s.bytes || s.dataType !== dataType || s.bytes.byteLength !== 2 * size) return null;
  const r = shape.length;
  const d = s.shape.length;
  if (d < 2 || d > r || s.shape[d - 2] !== 2 || s.shape.some((n, i) => i !== d - 2 && n !== 1)) return null;
  const view = new DataView(s.bytes.buffer, s.bytes.byteOffset, 2 * size);
  return size === 4 ? [view.getFloat32(0, true), view.getFloat32(4, true)]
    : [float16Value(view.getUint16(0, true)), float16Value(view.getUint16(2, true))];
}

/** Whether `shape` broadcasts to `target` (numpy rules, `shape` not longer). */
function broadcasts(shape, target) {
  if (shape.length > target.length) return false;
  return shape.every((n, i) => n === 1 || n === target[target.length - shape.length + i]);
}

/** The mul node producing `operand` whose other input satisfies `test`, as [node, this input, other input]. */
function mulOf(operand, nodesIn, test) {
  const node = producerOf(operand);
  if (!node || node.op !== 'mul' || !nodesIn.has(node)) return null;
  for (const [i, j] of [[0, 1], [1, 0]]) {
    const got = test(node.inputs[i], node.inputs[j]);
    if (got) return {node, mine: node.inputs[i], other: node.inputs[j], got};
  }
  return null;
}

/** The rotary group whose final add is `add`, or null. */
function matchAt(add, nodesIn, uses, isOutput) {
  const dataType = add.outputs[0].dataType;
  if (add.op !== 'add' || (dataType !== 'float32' && dataType !== 'float16')) return null;
  const single = (operand) => uses.get(slots(operand)) === 1 && !isOutput(operand);
  for (const [ia, ic] of [[0, 1], [1, 0]]) {
    const ra = producerOf(add.inputs[ia]);
    const rc = producerOf(add.inputs[ic]);
    if (!ra || !rc || ra.op !== 'reshape' || rc.op !== 'reshape' || !nodesIn.has(ra) || !nodesIn.has(rc)) continue;
    if (!single(ra.outputs[0]) || !single(rc.outputs[0]) || ra === rc) continue;
    const [a, c] = [ra.inputs[0], rc.inputs[0]];
    const shape = a.shape;
    const r = shape.length;
    if (r < 2 || shape[r - 2] !== 2 || c.shape.join() !== shape.join() || !single(a) || !single(c)) continue;
    // c = mul(b, sign)
    const cm = mulOf(c, nodesIn, (b, sign) => producerOf(b) && signValues(sign, shape, dataType));
    if (!cm || !single(cm.mine)) continue;
    // b = mul(swapped, sin), swapped = concat([x2, x1]) of split(xr)
    const bm = mulOf(cm.mine, nodesIn, (swapped, sin) => {
      const cat = producerOf(swapped);
      if (!cat || cat.op !== 'concat' || !nodesIn.has(cat) || cat.inputs.length !== 2 || cat.attrs.axis !== r - 2) return null;
      const sp = producerOf(cat.inputs[0]);
      if (!sp || sp.op !== 'split' || !nodesIn.has(sp) || producerOf(cat.inputs[1]) !== sp || sp.outputs.length !== 2) return null;
      if (cat.inputs[0] !== sp.outputs[1] || cat.inputs[1] !== sp.outputs[0] || sp.attrs.axis !== r - 2) return null;
      if (!sp.outputs.every(single) || !single(swapped) || !broadcasts(sin.shape, shape)) return null;
      return {cat, split: sp};
    });
    if (!bm || bm.mine.shape.join() !== shape.join()) continue;
    const xr = bm.got.split.inputs[0];
    if (xr.shape.join() !== shape.join() || xr.dataType !== dataType) continue;
    // a = mul(xr, cos)
    const am = mulOf(a, nodesIn, (x, cos) => x === xr && broadcasts(cos.shape, shape));
    if (!am) continue;
    const group = [bm.got.split, bm.got.cat, am.node, bm.node, cm.node, ra, rc, add];
    return {group, xr, cos: am.other, sin: bm.other, sign: cm.got, shape, dataType};
  }
  return null;
}

/**
 * @param {object[]} nodes topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {object[]} the nodes with each rotary group one rotaryEmbedding node at its add
 */
export function planRotaries(nodes, outputs) {
  if (!nodes.some((n) => n.op === 'split') || !nodes.some((n) => n.op === 'concat')) return nodes;
  const uses = useCounts(nodes, outputs);
  const outSet = new Set(outputs.map((o) => slots(o)));
  const isOutput = (operand) => outSet.has(slots(operand));
  const nodesIn = new Set(nodes);
  const replaced = new Map();
  const removed = new Set();
  for (const node of nodes) {
    const m = matchAt(node, nodesIn, uses, isOutput);
    if (!m || m.group.some((n) => removed.has(n))) continue;
    m.group.forEach((n) => removed.add(n));
    replaced.set(node, {
      id: node.id, op: 'rotaryEmbedding', label: node.label,
      inputs: [m.xr, m.cos, m.sin], attrs: {shape: m.shape.slice(), sign: m.sign, dataType: m.dataType},
      origin: node.origin, origins: m.group.slice().sort((x, y) => x.id - y.id).map((n) => n.origin),
      outputs: [node.outputs[0]],
    });
  }
  if (!replaced.size) return nodes;
  return withoutDeadNodes(nodes.flatMap((n) => (replaced.has(n) ? [replaced.get(n)] : removed.has(n) ? [] : [n])), outputs);
}

/** The pass (compile/plan.js PASSES). */
export function rotaryPass(g) {
  return {...g, nodes: planRotaries(g.nodes, g.outputs)};
}

/**
 * @param {object[]} nodes topological order
 * @returns {object[]} the nodes with each pair of rotaryEmbedding nodes (module comment) one
 *   rotaryEmbeddingPair node
 */
export function planRotaryPairs(nodes) {
  const candidates = nodes.filter((n) => n.op === 'rotaryEmbedding' && !n.attrs.epilogue);
  const made = producers(nodes);
  const partner = (first, second, position) => {
    const x1 = made.get(slots(second.inputs[0]));
    // the second's x computed before the first (graph inputs and constants always are)
    return second.attrs.shape.length === first.attrs.shape.length && second.attrs.dataType === first.attrs.dataType
      && (!x1 || position.get(x1) < position.get(first))
      && sharedRoot(second.inputs[1], made) === sharedRoot(first.inputs[1], made)
      && sharedRoot(second.inputs[2], made) === sharedRoot(first.inputs[2], made);
  };
  // in the first one's place, both rotations reading its cos and sin (the same values)
  const make = (first, second) => ({
    id: first.id, op: 'rotaryEmbeddingPair', label: first.label,
    inputs: [first.inputs[0], second.inputs[0], first.inputs[1], first.inputs[2]], attrs: {members: [first.attrs, second.attrs]},
    origin: first.origin, origins: [...first.origins, ...second.origins],
    outputs: [first.outputs[0], second.outputs[0]],
  });
  return pairNodes(nodes, candidates, partner, make, 'first');
}

/** The pairing pass (compile/plan.js PASSES), after the others that read rotaryEmbedding nodes. */
export function rotaryPairPass(g) {
  return {...g, nodes: planRotaryPairs(g.nodes)};
}
