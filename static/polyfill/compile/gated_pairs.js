/**
 * Gated pairs: a pass of build(), after fusion, that makes two products of one A into one
 * internal `gatedMatmul` node (lowered in ops/merged_matmul.js) where one product's fused stages read the
 * other's whole result:
 *   y = stages(P(A)),  one binary stage's other operand Q(A)
 * as a SwiGLU MLP writes it (mul(silu(gate), up): the gate product's epilogue sigmoid, mul, mul
 * reads the up product's result). The node's B holds both products' weights with their columns
 * interleaved (column 2j: P's column j, 2j + 1: Q's), so one dispatch computes both and each store
 * site has the pair in hand: the stage reads Q's value from the kernel (`pairOther`,
 * ops/epilogue.js) instead of from Q's stored result, which no longer exists. A decode step's
 * pair is one matrix-vector step instead of two; a split prefill product one product step and one
 * reduce step instead of two of each.
 *
 * Conditions: P and Q both plain products of the same A data (through reshapes, CSE's shared
 * copies): float matmuls of constant [K, N] B's of one data type, or packed-weight products of
 * one layout (compile/siblings.js quantMember: no bias, whole rows); P's result shape Q's, Q with
 * no fused stages, read by that stage alone (not a graph output), the stage's other operand of
 * Q's shape (no broadcast); P neither a transposed store nor split into a normalization.
 */
import {slots} from '../operand.js';
import {constantData, copyPacked, quantMember, rawBytes} from './siblings.js';
import {dataRoot, originsOf, producers, readCounts, replaceNodes} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/** {quant, width, K} of a product `node` that may pair (quant null for float B), or null. */
function pairable(node, stages) {
  if (node.attrs?.transpose || node.attrs?.splitNorm) return null;
  if (node.op === 'quantizedMatmul') {
    const m = quantMember(node, stages);
    return m && {quant: m.quant, width: node.attrs.view.shape[1], K: node.attrs.view.shape[0]};
  }
  if (node.op !== 'matmul' || !FLOAT.has(node.outputs[0].dataType)) return null;
  const b = slots(node.inputs[1]);
  if (b.kind !== 'constant' || b.shape.length !== 2 || b.dataType !== node.outputs[0].dataType) return null;
  if (!stages && !(node.attrs?.epilogue ?? []).every((st) => st.reshape)) return null;
  return {quant: null, width: b.shape[1], K: b.shape[0]};
}

const sameShape = (x, y) => x.length === y.length && x.every((d, i) => d === y[i]);

/** {other, at, q} when `node` (P) pairs with the product one of its stages reads, else null. */
function match(node, made, reads) {
  const stages = node.attrs?.epilogue;
  if (!stages?.length) return null;
  const p = pairable(node, true);
  if (!p) return null;
  const shape = node.outputs[0].shape;
  for (const [at, stage] of stages.entries()) {
    if (!stage.other || stage.chainOther !== undefined) continue;
    const other = made.get(slots(stage.other));
    if (!other || other === node || reads.get(slots(stage.other)) !== 1) continue;
    const q = pairable(other, false);
    if (!q || q.width !== p.width || q.K !== p.K || !sameShape(other.outputs[0].shape, shape)) continue;
    if (!sameShape(stage.other.shape, shape) || !sameShape(stage.node.outputs[0].shape, shape)) continue;
    if (JSON.stringify(p.quant) !== JSON.stringify(q.quant)) continue;  // both float, or one packed layout
    if (other.outputs[0].dataType !== node.outputs[0].dataType || !sameShape(other.inputs[0].shape, node.inputs[0].shape)) continue;
    if (dataRoot(other.inputs[0], made) !== dataRoot(node.inputs[0], made)) continue;
    return {other, at, p};
  }
  return null;
}

/**
 * Rows of `a` and `b` (`rows` rows of `rowLength` elements of `bits` bits each, packed) interleaved:
 * row 2j is a's row j, row 2j + 1 b's.
 */
function interleaveRows(a, b, rows, rowLength, bits) {
  const out = new Uint8Array(Math.ceil((2 * rows * rowLength * bits) / 8));
  for (let j = 0; j < rows; j++) {
    copyPacked(out, 2 * j * rowLength, a, j * rowLength, rowLength, bits);
    copyPacked(out, (2 * j + 1) * rowLength, b, j * rowLength, rowLength, bits);
  }
  return out;
}

/** The gatedMatmul node of P `node` and Q `other`, the stage `at` reading Q's value from the kernel. */
function gatedNode(node, other, at, {quant, width: N, K}) {
  const epilogue = node.attrs.epilogue.map((st, i) => (i === at ? {...st, other: null, pairOther: true} : st));
  const attrs = {dataType: node.outputs[0].dataType, K, N, epilogue, weights: null, quant: null};
  if (quant) {
    const {bits, zeroBits, zeroFloat, R, S} = quant;
    const both = (i, length, elementBits, bytes = rawBytes) =>
      interleaveRows(bytes(node.inputs[i]), bytes(other.inputs[i]), N, length, elementBits);
    const zeros = zeroFloat ? both(3, 4 * S, 8) : both(3, S, zeroBits);
    // the scales in the compute layout (f32: float16 ones widened)
    attrs.quant = {...quant, weights: both(1, R, bits), scales: both(2, 4 * S, 8, constantData), zeros, hasZp: zeros.some((v) => v !== 0),
      view: {offset: 0, strides: [1, R]},
      scaleMap: {k: {origin: 0, step: 1, block: quant.block, stride: 1}, n: {origin: 0, step: 1, block: 1, stride: S}}};
  } else {
    // [K, N] each in the compute layout (4 bytes an element) -> [K, 2N], columns interleaved
    const [x, y] = [node, other].map((n) => new Uint32Array(constantData(n.inputs[1]).slice().buffer, 0, K * N));
    const w = new Uint32Array(K * 2 * N);
    for (let k = 0; k < K; k++) {
      for (let j = 0; j < N; j++) {
        w[k * 2 * N + 2 * j] = x[k * N + j];
        w[k * 2 * N + 2 * j + 1] = y[k * N + j];
      }
    }
    attrs.weights = new Uint8Array(w.buffer);
  }
  return {
    id: node.id, op: 'gatedMatmul', label: `${node.label}+${other.label}`, inputs: [node.inputs[0]], attrs,
    origin: node.origin, origins: [...originsOf(other), ...originsOf(node)], outputs: node.outputs,
  };
}

/**
 * @param {object[]} nodes the node list after fusion
 * @param {object[]} outputs the graph's outputs
 * @returns {object[]} `nodes` with each pair's P replaced by its gatedMatmul node and Q removed
 */
export function planGatedPairs(nodes, outputs) {
  const made = producers(nodes);
  const reads = readCounts(nodes, outputs);
  const replaced = new Map();
  for (const node of nodes) {
    if (replaced.has(node)) continue;
    const m = match(node, made, reads);
    if (!m || replaced.has(m.other)) continue;
    replaced.set(node, gatedNode(node, m.other, m.at, m.p));
    replaced.set(m.other, null);
  }
  return replaced.size ? replaceNodes(nodes, replaced) : nodes;
}

/** The pass (compile/plan.js PASSES); the tuning switch `gatedPairs` false turns it off. */
export function gatedPairsPass(g, ctx) {
  if (ctx?.tuning.gatedPairs === false) return g;
  return {...g, nodes: planGatedPairs(g.nodes, g.outputs)};
}
