/**
 * Strided views: transpose and reshape as addressing instead of copies.
 *
 * Lowering defers a transpose (and a reshape or identity of a deferred view) as a View: the
 * Value holding the data, an element offset into it and a stride per dimension of the operand's
 * shape (element units, compute layout). A consumer that can address strided data (the matrix
 * kernels: matmul and gemm read A and B through strides) reads the View directly, so
 * matmul(Q, transpose(K)) or matmul(transpose(reshape(X)), W) is one dispatch; any other
 * consumer asks Lowering.value() for the operand, which materializes the View with one strided
 * copy at that point (a chain of transposes and reshapes is one copy).
 *
 * Store side: a matmul whose only consumer is a transpose (attention's context, [B, H, S, D] ->
 * [B, S, H, D]) stores its elements straight into the transposed layout when that layout gives
 * each matrix row and column one stride and the batch one stride (planStoreViews); the transpose
 * then has no step.
 *
 * A View: {value, offset: number, shape: number[], strides: number[], origins: {type, label}[]
 * (the builder operators folded into it, for the consuming step's profile), materialize():
 * Value}.
 */
import {slots} from '../operand.js';
import {storeStrides} from '../shape/strides.js';
import {readCounts, replaceNodes, rewritten} from './rewrite.js';

/**
 * The matmuls that store into their only consumer's transposed layout.
 * @param {object[]} nodes the node list, topological order (a matmul with fused stages keeps
 *   its row-major store)
 * @param {object[]} outputs the graph's output operands
 * @returns {Map<object, object>} matmul node -> the transpose node it stores for
 */
export function planStoreViews(nodes, outputs) {
  const uses = readCounts(nodes, outputs);
  const consumer = new Map();
  for (const node of nodes) for (const input of node.inputs) consumer.set(slots(input), node);
  const views = new Map();
  for (const node of nodes) {
    if (node.op !== 'matmul' || node.attrs.epilogue) continue;
    const s = slots(node.outputs[0]);
    const next = consumer.get(s);
    if (uses.get(s) !== 1 || next?.op !== 'transpose') continue;
    if (storeStrides(node.outputs[0].shape, next.attrs.permutation)) views.set(node, next);
  }
  return views;
}

/**
 * The pass (compile/plan.js PASSES): each such matmul rewritten with `attrs.transpose` (the
 * transpose it stores for, whose output its step writes) and the transpose's origin; the
 * transpose leaves the list.
 */
export function storeViewPass(g) {
  const replaced = new Map();
  for (const [matmul, transpose] of planStoreViews(g.nodes, g.outputs)) {
    replaced.set(matmul, rewritten(matmul, {transpose}, [transpose.origin]));
    replaced.set(transpose, null);
  }
  return {...g, nodes: replaceNodes(g.nodes, replaced)};
}
