/**
 * A split product's reduce step folded into the normalization that reads its result.
 *
 * On hardware adapters a tiled matmul/gemm of few workgroups is split along K (ops/matmul_choice.js
 * splitCount): one step stores f32 partial sums, a reduce step adds them, applies alpha, the C
 * term and the fused element-wise tail (compile/fusion.js; a transformer's residual add) and
 * stores Y. When Y is read by nothing but a layerNormalization or instanceNormalization (as its
 * input), the normalization's step reads its input through ops/matmul_kernels.js addSplitRead
 * instead: the same sums in the same order, the same epilogue and float16 rounding, so its
 * results equal the unfused steps' bit for bit, and the reduce step and Y's buffer are gone. The
 * BERT encoder's attention output projection and second feed-forward product (matmul or gemm +
 * bias + residual add -> layerNormalization over the hidden axis, built by hand or by ORT's
 * WebNN EP) are this.
 *
 * A pre-norm transformer (an LLM decoder) reads that sum twice: the normalization, and the next
 * residual add. Then the normalization also stores Y as it adds the partial sums (`keep`), and
 * the other readers read Y from there: still no reduce step.
 *
 * The pattern (planSplitNorms), decided at build: a matmul, gemm, conv2d or packed-weight
 * product (quantizedMatmul; float32 or float16; a conv2d is split only when it is pointwise, and
 * stores row-major only in nchw), not a transposed store (sibling products and fused attention
 * are other nodes by now), whose output after its fused stages is input 0 of a
 * layerNormalization / instanceNormalization, and is not a graph output (other readers: `keep`);
 * the normalization's step then binds at most 8 storage buffers (WebGPU's guaranteed
 * maxStorageBuffersPerShaderStage): partial sums, C, the stages' other operands, scale, bias, its
 * output and, with `keep`, Y. Whether the product is split at all is the matrix kernel's choice at lowering, and
 * it defers the reduce only when it stores Y row-major from offset 0 (ops/matmul_kernels.js
 * splitStep); otherwise it stores Y as always and the normalization reads Y. The pass marks the
 * product with `attrs.splitNorm` (the normalization node); the deferral itself is a property of
 * the product's Value during lowering (compile/lowering.js deferSplitRead). A reader of Y lowered
 * before the normalization gets the reduce step emitted first, and the normalization reads Y.
 */
import {slots} from '../operand.js';
import {producers, readCounts, replaceNodes, rewritten} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);
const NORMALIZATIONS = new Set(['layerNormalization', 'instanceNormalization']);
/** Producers that may store through a split product (conv2d: a pointwise one, on the matrix kernels). */
const PRODUCTS = new Set(['matmul', 'gemm', 'conv2d', 'quantizedMatmul']);
/** WebGPU's guaranteed storage buffers per shader stage. */
const MAX_STORAGE_BINDINGS = 8;

/**
 * @param {object[]} nodes the node list after the other passes, topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {Map<object, {norm: object, keep: boolean}>} product node -> the normalization node
 *   reading its result, and whether others read it too
 */
export function planSplitNorms(nodes, outputs) {
  const uses = readCounts(nodes, outputs);
  const producer = producers(nodes);
  const graphOutputs = new Set(outputs.map((o) => slots(o)));
  const found = new Map();
  for (const node of nodes) {
    if (!NORMALIZATIONS.has(node.op) || !FLOAT.has(node.outputs[0].dataType)) continue;
    const x = slots(node.inputs[0]);
    if (x.kind !== 'op' || graphOutputs.has(x) || node.inputs.slice(1).some((o) => slots(o) === x)) continue;
    const keep = uses.get(x) > 1;
    // the product itself, or the producer of the fused chain ending in x
    const product = producer.get(x);
    if (!product || !PRODUCTS.has(product.op) || product.attrs.transpose) continue;
    const stages = product.attrs.epilogue ?? [];
    // the product's C term: gemm's c, conv2d's bias (its third input)
    const c = product.op === 'quantizedMatmul' ? product.attrs.hasC : product.inputs.length > 2;
    const bindings = 1 + (c ? 1 : 0) + stages.filter((st) => st.other).length
      + (node.inputs.length - 1) + 1 + (keep ? 1 : 0);
    if (bindings > MAX_STORAGE_BINDINGS) continue;
    found.set(product, {norm: node, keep});
  }
  return found;
}

/**
 * The pass (compile/plan.js PASSES): each such product rewritten with `attrs.splitNorm` = its
 * normalization and `attrs.splitNormKeep` = whether that normalization also stores its result.
 */
export function splitNormPass(g) {
  const replaced = new Map();
  for (const [product, {norm, keep}] of planSplitNorms(g.nodes, g.outputs)) {
    replaced.set(product, rewritten(product, {splitNorm: norm, splitNormKeep: keep}));
  }
  return {...g, nodes: replaceNodes(g.nodes, replaced)};
}
