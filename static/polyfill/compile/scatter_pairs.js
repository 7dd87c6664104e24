/**
 * Paired cache updates: two scatterND nodes with the same indices (an LLM layer's key and value
 * cache updates, as ORT's WebNN EP writes GroupQueryAttention: the new rows of K and of V
 * scattered into the past buffers at the same positions) become one internal `scatterNDPair`
 * node, lowered as one step (ops/gather.js) that finds each output element's update once and
 * writes both outputs: a decode step's two cache writes a layer are one dispatch.
 *
 * The pattern: both nodes scatterND with the same indices operand (seen through the sharedValue
 * nodes of compile/cse.js), inputs of one data type and shape, updates of one shape, at most
 * `scatterSearchMax` update slices (the one-step search lowering; larger scatters keep their
 * copy, claim and write steps), and nothing between the two reading the first one's output (the
 * pair takes the second one's place). The node: inputs [input0, input1, indices, updates0,
 * updates1], outputs [output0, output1], the first node's attrs, both nodes' origins.
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {sameShape} from '../shape/common.js';
import {producers, sharedRoot} from './rewrite.js';

/**
 * @param {object[]} nodes topological order
 * @param {{scatterSearchMax: number}} tuning
 * @returns {object[]} the nodes with each pair one scatterNDPair node in the second's place
 */
export function planScatterPairs(nodes, tuning) {
  const candidates = nodes.filter((n) => n.op === 'scatterND'
    && elementCount(n.inputs[2].shape) / n.attrs.slice <= tuning.scatterSearchMax);
  if (candidates.length < 2) return nodes;
  const position = new Map(nodes.map((n, i) => [n, i]));
  const made = producers(nodes);
  const paired = new Map(); // second node -> the pair node
  const removed = new Set();
  for (const first of candidates) {
    if (removed.has(first) || paired.has(first)) continue;
    const [x0, i0, u0] = first.inputs;
    const second = candidates.find((n) => position.get(n) > position.get(first) && !removed.has(n) && !paired.has(n)
      && sharedRoot(n.inputs[1], made) === sharedRoot(i0, made) && n.inputs[0].dataType === x0.dataType && sameShape(n.inputs[0].shape, x0.shape)
      && sameShape(n.inputs[2].shape, u0.shape) && n.inputs.every((op) => made.get(slots(op)) !== first));
    if (!second) continue;
    // nothing between the two reads the first one's output
    const out0 = first.outputs[0];
    const between = nodes.slice(position.get(first) + 1, position.get(second));
    if (between.some((n) => n.inputs.includes(out0))) continue;
    removed.add(first);
    paired.set(second, {
      id: second.id, op: 'scatterNDPair', label: `${first.label}+${second.label}`,
      inputs: [x0, second.inputs[0], i0, u0, second.inputs[2]], attrs: first.attrs,
      origin: second.origin, origins: [first.origin, second.origin],
      outputs: [out0, second.outputs[0]],
    });
  }
  if (!paired.size) return nodes;
  return nodes.flatMap((n) => (paired.has(n) ? [paired.get(n)] : removed.has(n) ? [] : [n]));
}

/** The pass (compile/plan.js PASSES). */
export function scatterPairPass(g, ctx) {
  return {...g, nodes: planScatterPairs(g.nodes, ctx.tuning)};
}
