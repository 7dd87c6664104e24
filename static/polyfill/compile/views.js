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
import {slots, useCounts} from '../operand.js';
import {storeStrides} from '../shape/strides.js';

/**
 * The matmuls that store into their only consumer's transposed layout.
 * @param {object[]} nodes reachable nodes, topological order
 * @param {object[]} outputs the graph's output operands
 * @param {Map<object, object[]>} tails the fusion pass's producer -> stages (those keep their store)
 * @returns {Map<object, object>} matmul node -> the transpose node it stores for
 */
export function planStoreViews(nodes, outputs, tails) {
  const uses = useCounts(nodes, outputs);
  const consumer = new Map();
  for (const node of nodes) for (const input of node.inputs) consumer.set(slots(input), node);
  const views = new Map();
  for (const node of nodes) {
    if (node.op !== 'matmul' || tails.has(node)) continue;
    const s = slots(node.outputs[0]);
    const next = consumer.get(s);
    if (uses.get(s) !== 1 || next?.op !== 'transpose') continue;
    if (storeStrides(node.outputs[0].shape, next.attrs.permutation)) views.set(node, next);
  }
  return views;
}

/** The pass (compile/plan.js PASSES): `g.storeViews` = matmul -> the transpose it stores for. */
export function storeViewPass(g) {
  return {...g, storeViews: planStoreViews(g.nodes, g.outputs, g.fusion.tails)};
}
