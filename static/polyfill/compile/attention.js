/**
 * Finds the attention pattern for ops/attention.js's fused step:
 *   scores = matmul(Q, Kt) [-> element-wise stages fused into it: scale, mask, ...]
 *   P = softmax(scores, last axis);  Y = matmul(P, V)
 * where the scores (after the stages, of the first matmul's shape: a reshape among the stages
 * may not regroup its rows) and P are each read once, by the next node only, and
 * neither is a graph output; the second matmul has no fused stages of its own and its batch
 * shape is the scores' batch shape; the data type is float32 or float16; the head sizes fit the
 * kernel's workgroup memory (ops/attention.js attentionFits). The BERT encoder's
 * matmul -> div -> softmax -> matmul is this, built by hand or by ORT's WebNN EP. compile/plan.js
 * applies it on hardware adapters, or as the tuning switch `attention` says.
 */
import {slots, useCounts} from '../operand.js';
import {attentionFits} from '../ops/attention.js';

const FLOAT = new Set(['float32', 'float16']);

/**
 * @param {object[]} nodes reachable nodes, topological order
 * @param {object[]} outputs the graph's output operands
 * @param {{tails: Map, lowerAt: Map}} fusion the fusion pass's plan (compile/fusion.js)
 * @returns {Map<object, {scores: object, softmax: object}>} second matmul node -> its pattern
 */
export function planAttention(nodes, outputs, fusion) {
  const uses = useCounts(nodes, outputs);
  const once = (operand) => uses.get(slots(operand)) === 1;
  const found = new Map();
  for (const node of nodes) {
    if (node.op !== 'matmul' || fusion.tails.has(node) || !FLOAT.has(node.outputs[0].dataType)) continue;
    const p = slots(node.inputs[0]);
    const softmax = p.kind === 'op' ? p.node : null;
    if (softmax?.op !== 'softmax' || !once(node.inputs[0])) continue;
    if (softmax.attrs.axis !== softmax.outputs[0].shape.length - 1) continue;
    const x = slots(softmax.inputs[0]);
    if (x.kind !== 'op' || !once(softmax.inputs[0])) continue;
    const scores = x.node.op === 'matmul' && !fusion.tails.has(x.node) ? x.node : fusion.lowerAt.get(x.node);
    if (scores?.op !== 'matmul' || scores.outputs[0].dataType !== node.outputs[0].dataType) continue;
    const shape = scores.outputs[0].shape;
    // the kernel's rows are the first matmul's: a reshape in the chain (fused as a pass-through)
    // that regroups them ([2, 5, 8] normalised as [2, 10, 4]) is another computation
    const rows = softmax.outputs[0].shape;
    if (rows.length !== shape.length || rows.some((d, i) => d !== shape[i])) continue;
    const out = node.outputs[0].shape;
    if (out.length !== shape.length || out.slice(0, -2).some((d, i) => d !== shape[i])) continue;
    const q = scores.inputs[0];
    const v = node.inputs[1];
    if (!attentionFits(shape[shape.length - 1], q.shape[q.shape.length - 1], v.shape[v.shape.length - 1])) continue;
    found.set(node, {scores, softmax});
  }
  return found;
}
