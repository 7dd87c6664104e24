/**
 * Paired cache updates: two scatterND nodes with the same indices (an LLM layer's key and value
 * cache updates, as ORT's WebNN EP writes GroupQueryAttention: the new rows of K and of V
 * scattered into the past buffers at the same positions) become one internal `scatterNDPair`
 * node, lowered (ops/gather.js) as one step that finds each output element's update once and
 * writes both outputs (a decode step's two cache writes a layer are one dispatch), or, with more
 * than `scatterSearchMax` update slices (a prefill's), as one copy, one claim and one write step
 * for both.
 *
 * The pattern: both nodes scatterND with the same indices operand (seen through the sharedValue
 * nodes of compile/cse.js), inputs of one data type and shape, updates of one shape, and nothing
 * between the two reading the first one's output (the
 * pair takes the second one's place). The node: inputs [input0, input1, indices, updates0,
 * updates1], outputs [output0, output1], the first node's attrs, both nodes' origins.
 */
import {slots} from '../operand.js';
import {sameShape} from '../shape/common.js';
import {pairNodes, producers, sharedRoot} from './rewrite.js';

/**
 * @param {object[]} nodes topological order
 * @returns {object[]} the nodes with each pair one scatterNDPair node in the second's place
 */
export function planScatterPairs(nodes) {
  const candidates = nodes.filter((n) => n.op === 'scatterND');
  const made = producers(nodes);
  const partner = (first, second, position) => {
    const [x0, i0, u0] = first.inputs;
    const [x1, i1, u1] = second.inputs;
    if (sharedRoot(i1, made) !== sharedRoot(i0, made) || x1.dataType !== x0.dataType || !sameShape(x1.shape, x0.shape)
      || !sameShape(u1.shape, u0.shape) || second.inputs.some((op) => made.get(slots(op)) === first)) return false;
    // nothing between the two reads the first one's output
    return !nodes.slice(position.get(first) + 1, position.get(second)).some((n) => n.inputs.includes(first.outputs[0]));
  };
  const make = (first, second) => ({
    id: second.id, op: 'scatterNDPair', label: `${first.label}+${second.label}`,
    inputs: [first.inputs[0], second.inputs[0], first.inputs[1], first.inputs[2], second.inputs[2]], attrs: first.attrs,
    origin: second.origin, origins: [first.origin, second.origin],
    outputs: [first.outputs[0], second.outputs[0]],
  });
  return pairNodes(nodes, candidates, partner, make, 'second');
}

/** The pass (compile/plan.js PASSES). */
export function scatterPairPass(g) {
  return {...g, nodes: planScatterPairs(g.nodes)};
}
