/**
 * The attention pass: finds the pattern below and replaces it with one internal `fusedAttention`
 * node (ops/attention.js, one step):
 *   scores = matmul(Q, Kt) [-> element-wise stages fused into it: scale, mask, ...]
 *   P = softmax(scores, last axis);  Y = matmul(P, V)
 * where the scores (after the stages, of the first matmul's shape: a reshape among the stages
 * may not regroup its rows) and P are each read once, by the next node only, and
 * neither is a graph output; the second matmul has no fused stages of its own and its batch
 * shape is the scores' batch shape; the data type is float32 or float16; the head sizes fit the
 * kernel's workgroup memory (ops/attention.js attentionFits). Where K and V are a
 * GroupQueryAttention cache's heads expanded to the query heads (sharedHeads), the node reads the
 * cache itself (attrs.kvGroups query heads a K/V head) and the expands leave the list. The BERT encoder's
 * matmul -> div -> softmax -> matmul is this, built by hand or by ORT's WebNN EP. compile/plan.js
 * applies it on hardware adapters, or as the tuning switch `attention` says.
 */
import {slots} from '../operand.js';
import {attentionFits} from '../ops/attention.js';
import {isSoftwareAdapter} from '../ops/adapter_kind.js';
import {originsOf, producers, readCounts, replaceNodes} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/**
 * Grouped-query attention's shared heads: `operand` ([..., H, L, D], or its transpose [..., H, D, L]
 * when `transposed`) as GroupQueryAttention writes it from the cache X [..., kvH, L, D]:
 *   reshape(X) to [..., kvH, 1, L, D] -> expand to [..., kvH, g, L, D] -> reshape to [..., kvH * g, L, D]
 *   [-> transpose of the last two axes]
 * each read once. The kernel reads X itself, head h from head h / g, instead of a copy of the
 * cache g times over.
 * @returns {{source: object, groups: number, nodes: object[]}|null} X, g, the nodes it skips
 */
function sharedHeads(operand, producer, once, transposed) {
  const nodes = [];
  let x = operand;
  const step = (op) => {
    const node = producer.get(slots(x));
    if (node?.op !== op || !once(x) || node.attrs.epilogue) return null;
    nodes.push(node);
    x = node.inputs[0];
    return node;
  };
  if (transposed) {
    const t = step('transpose');
    const r = t?.attrs.permutation.length;
    if (!t || t.attrs.permutation.some((p, i) => p !== (i < r - 2 ? i : 2 * r - 3 - i))) return null;
  }
  if (!step('reshape') || !step('expand') || !step('reshape')) return null;
  const [merged, expanded, split] = [nodes.at(-3).outputs[0].shape, nodes.at(-2).outputs[0].shape, nodes.at(-1).outputs[0].shape];
  const r = x.shape.length;
  if (r < 3 || merged.length !== r || expanded.length !== r + 1 || split.length !== r + 1) return null;
  const lead = x.shape.slice(0, r - 3);
  const [kvH, L, D] = x.shape.slice(r - 3);
  const g = expanded[r - 2];
  const same = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);
  if (!same(split, [...lead, kvH, 1, L, D]) || !same(expanded, [...lead, kvH, g, L, D]) || !same(merged, [...lead, kvH * g, L, D])) return null;
  return {source: x, groups: g, nodes};
}

/**
 * @param {object[]} nodes the node list after fusion and transposed stores, topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {Map<object, object>} second matmul node -> the fusedAttention node that replaces it
 *   (attrs: {scores, softmax, context, transpose}: the first matmul (with its fused stages in
 *   attrs.epilogue), the softmax, the second matmul and the transpose whose layout Y is stored
 *   in, or null; outputs: the last one's)
 */
export function planAttention(nodes, outputs) {
  const uses = readCounts(nodes, outputs);
  const producer = producers(nodes);
  const once = (operand) => uses.get(slots(operand)) === 1;
  const found = new Map();
  for (const node of nodes) {
    if (node.op !== 'matmul' || node.attrs.epilogue || !FLOAT.has(node.outputs[0].dataType)) continue;
    const softmax = producer.get(slots(node.inputs[0]));
    if (softmax?.op !== 'softmax' || !once(node.inputs[0])) continue;
    if (softmax.attrs.axis !== softmax.outputs[0].shape.length - 1) continue;
    const scores = producer.get(slots(softmax.inputs[0]));
    if (!scores || !once(softmax.inputs[0])) continue;
    if (scores.op !== 'matmul' || scores.attrs.transpose || scores.outputs[0].dataType !== node.outputs[0].dataType) continue;
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
    const transpose = node.attrs.transpose ?? null;
    // grouped-query attention: K and V read from the shared heads, the expands skipped
    const gk = sharedHeads(scores.inputs[1], producer, once, true);
    const gv = sharedHeads(v, producer, once, false);
    const grouped = gk && gv && gk.groups === gv.groups && gk.source.shape.length === shape.length ? {k: gk, v: gv} : null;
    const skipped = grouped ? [...grouped.k.nodes, ...grouped.v.nodes] : [];
    found.set(node, {
      id: node.id, op: 'fusedAttention', label: node.label,
      inputs: grouped ? [q, grouped.k.source, grouped.v.source] : [q, scores.inputs[1], v],
      attrs: {scores, softmax, context: node, transpose, kvGroups: grouped ? grouped.k.groups : 1, skipped},
      origin: scores.origin,
      origins: [...originsOf(scores), softmax.origin, ...originsOf(node), ...skipped.map((n) => n.origin)],
      outputs: (transpose ?? node).outputs,
    });
  }
  return found;
}

/**
 * The pass (compile/plan.js PASSES): each fusedAttention node takes its second matmul's place;
 * the first matmul and the softmax leave the list. On hardware adapters, or as the tuning
 * switch `attention` says. Not on software adapters, where the kernel's workgroup barriers cost
 * more than the three unfused steps (docs/design-notes.md).
 */
export function attentionPass(g, ctx) {
  if (!(ctx.tuning.attention ?? !isSoftwareAdapter(ctx))) return g;
  const replaced = new Map();
  for (const [context, node] of planAttention(g.nodes, g.outputs)) {
    replaced.set(context, node).set(node.attrs.scores, null).set(node.attrs.softmax, null);
    for (const skipped of node.attrs.skipped) replaced.set(skipped, null);
  }
  return {...g, nodes: replaceNodes(g.nodes, replaced)};
}
