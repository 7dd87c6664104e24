/**
 * Norm prologues: a pass of build(), after the siblings pass, that marks an RMS normalization of
 * one row whose result only packed products read as A (a decoder layer's two norms in a decode
 * step: the q/k/v product, the gate/up pair) with `attrs.prologue`. Its lowering
 * (ops/normalization.js) then defers its step (compile/lowering.js deferNormRead): a product on
 * the quantized matrix-vector kernel normalizes A itself (ops/quantized_gemv.js: each workgroup
 * adds up the row's squares and keeps the normalized row in workgroup memory before its loop),
 * and the step is emitted only where a reader binds the result (another kernel, a row that does
 * not fit). A decode layer then
 * takes 7 steps instead of 9.
 *
 * The pattern: a layerNormalization found written out (compile/layer_norm.js `formula`) with no
 * mean subtraction (RMS) and no bias, float32 or float16, over the last axis of a single row; no fused
 * stages; not a graph output; every reader (through reshapes and identities) a packed product
 * reading it as A, none a fused stage's operand: quantizedMatmul (a plain matmul, A not transposed), or mergedMatmul /
 * gatedMatmul of packed weights.
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {readCounts, readersOf, rewritten} from './rewrite.js';

/** Whether `reader` reads the norm's result as its packed product's A (input 0). */
function packedA({node, at}) {
  if (at !== 0) return false;
  if (node.op === 'quantizedMatmul') return node.attrs.kind === 'matmul' && !node.attrs.aTranspose;
  return (node.op === 'mergedMatmul' || node.op === 'gatedMatmul') && Boolean(node.attrs.quant);
}

/**
 * Whether every reader of `operand`, through reshapes and identities, reads it as packed A (`reads`:
 * rewrite.js readCounts, which also counts fused stages' operands, none of which may read it).
 */
function onlyPackedA(operand, readers, reads, outputs) {
  const s = slots(operand);
  const list = readers.get(s) ?? [];
  if (outputs.has(s) || !list.length || reads.get(s) !== list.length) return false;
  return list.every((r) => packedA(r)
    || ((r.node.op === 'reshape' || r.node.op === 'identity') && !r.node.attrs?.epilogue?.length
      && onlyPackedA(r.node.outputs[0], readers, reads, outputs)));
}

/**
 * @param {object[]} nodes the node list after the siblings pass
 * @param {object[]} outputs the graph's outputs
 * @returns {object[]} `nodes` with each such normalization marked `attrs.prologue`
 */
export function planNormPrologues(nodes, outputs) {
  const readers = readersOf(nodes);
  const reads = readCounts(nodes, outputs);
  const graphOutputs = new Set(outputs.map((o) => slots(o)));
  let marked = false;
  const out = nodes.map((node) => {
    if (node.op !== 'layerNormalization' || !node.attrs.formula || node.attrs.formula.center || node.attrs.hasBias) return node;
    const shape = node.inputs[0].shape;
    const {axes} = node.attrs;
    const dataType = node.outputs[0].dataType;
    if ((dataType !== 'float32' && dataType !== 'float16') || axes.length !== 1 || axes[0] !== shape.length - 1) return node;
    if (elementCount(shape) !== shape[shape.length - 1] || node.attrs.epilogue?.length) return node;
    if (!onlyPackedA(node.outputs[0], readers, reads, graphOutputs)) return node;
    marked = true;
    return rewritten(node, {prologue: true});
  });
  return marked ? out : nodes;
}

/** The pass (compile/plan.js PASSES); the tuning switch `normPrologue` false turns it off. */
export function normProloguePass(g, ctx) {
  if (ctx?.tuning.normPrologue === false) return g;
  return {...g, nodes: planNormPrologues(g.nodes, g.outputs)};
}
