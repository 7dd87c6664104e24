/**
 * The siblings pass: matmuls that read the same A with constant 2-D B's (a transformer layer's
 * Q, K and V projections), each optionally followed by a fused add of a constant bias along N,
 * become one internal `mergedMatmul` node (ops/merged_matmul.js) carrying the B's (and biases)
 * concatenated along N; each sibling's result is then a column range of the merged output, a
 * strided view that the following reshape/transpose/attention steps read in place.
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {tensorSlots} from '../tensor.js';
import {stridesOf} from '../shape/common.js';
import {reshapeStrides} from '../shape/strides.js';
import {constantComputeBytes} from './boundary.js';
import {originsOf, replaceNodes, storedOutputs} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/** The constant's bytes in the compute layout (4 bytes per float32/float16 element). */
function constantData(operand) {
  const s = slots(operand);
  const bytes = s.tensor ? tensorSlots(s.tensor).bytes : s.bytes;
  return constantComputeBytes(bytes, {dataType: s.dataType, shape: s.shape});
}

/** Whether `operand` is a constant of N elements along the last axis (a bias over N). */
function isBias(operand, n) {
  const c = slots(operand);
  return c.kind === 'constant' && c.shape[c.shape.length - 1] === n && elementCount(c.shape) === n;
}

/**
 * {node, bias, out, origins} when `node` can join a sibling group, else null: a matmul, or a gemm
 * without transposes and scaling (ORT's WebNN EP writes MatMul + Add as gemm with C), of a
 * constant [K, N] B, with no fused stages but a bias add and reshapes; bias: the constant bias
 * operand (gemm's C, or a fused add stage), or null; out: the operand the member's result is
 * (its last fused stage's: reshapes may follow).
 */
function member(node) {
  if ((node.op !== 'matmul' && node.op !== 'gemm') || node.attrs.transpose || !FLOAT.has(node.outputs[0].dataType)) return null;
  const b = slots(node.inputs[1]);
  if (b.kind !== 'constant' || b.shape.length !== 2 || b.dataType !== node.outputs[0].dataType) return null;
  const n = b.shape[1];
  let tail = node.attrs.epilogue ?? [];
  let bias = null;
  if (node.op === 'gemm') {
    const {alpha, beta, aTranspose, bTranspose} = node.attrs;
    if (alpha !== 1 || aTranspose || bTranspose) return null;
    if (node.inputs[2]) {
      if (beta !== 1 || !isBias(node.inputs[2], n)) return null;
      bias = node.inputs[2];
    }
  }
  if (!bias && tail[0] && tail[0].node.op === 'add' && tail[0].other && isBias(tail[0].other, n)) {
    bias = tail[0].other;
    tail = tail.slice(1);
  }
  if (!tail.every((st) => st.reshape)) return null;
  return {node, bias, out: storedOutputs(node)[0], origins: originsOf(node)};
}

/**
 * The sibling groups: matmuls reading the same A operand with constant [K, N_i] B's of one data
 * type, all with a bias stage or all without.
 * @param {object[]} nodes the node list after fusion (and transposed stores, which keep their
 *   own step), topological order
 * @returns {Map<object, object>} each member node -> its group's mergedMatmul node
 *   (ops/merged_matmul.js), which takes the place of the member that comes first
 */
export function planSiblings(nodes) {
  const byA = new Map();
  // members in builder order (a fused member stands at its last stage's place in the list)
  for (const node of [...nodes].sort((x, y) => x.id - y.id)) {
    const m = member(node);
    if (!m) continue;
    // the same data: one operand, or reshapes of one (ORT's WebNN EP reshapes the input per gemm)
    let a = slots(node.inputs[0]);
    while (a.kind === 'op' && (a.node.op === 'reshape' || a.node.op === 'identity')) a = slots(a.node.inputs[0]);
    if (!byA.has(a)) byA.set(a, new Map());
    const byShape = byA.get(a);
    const key = node.inputs[0].shape.join(',');
    if (!byShape.has(key)) byShape.set(key, []);
    byShape.get(key).push(m);
  }
  const lists = [...byA.values()].flatMap((byShape) => [...byShape.values()]);
  const groups = new Map();
  for (const list of lists) {
    const withBias = list.filter((m) => m.bias);
    const members = withBias.length >= 2 ? withBias : list.filter((m) => !m.bias);
    if (members.length < 2) continue;
    // each member's reshapes must stay views of its columns of the merged product
    const n = members.reduce((acc, m) => acc + slots(m.node.inputs[1]).shape[1], 0);
    const shape = members[0].node.outputs[0].shape;
    const merged = stridesOf([...shape.slice(0, -1), n]);
    if (members.some((m) => !reshapeStrides(m.node.outputs[0].shape, merged, slots(m.out).shape))) continue;
    if (members.some((m) => m.node.outputs[0].shape.slice(0, -1).some((d, i) => d !== shape[i]))) continue;
    const node = mergedMatmulNode(members);
    for (const m of members) groups.set(m.node, node);
  }
  return groups;
}

/**
 * The mergedMatmul node of sibling `members` ({node, bias, out, origins} of member()): their
 * constant B's and biases concatenated along N in the compute layout.
 */
function mergedMatmulNode(members) {
  const first = members[0].node;
  const [K] = first.inputs[1].shape;
  const widths = members.map((m) => m.node.inputs[1].shape[1]);
  const N = widths.reduce((a, b) => a + b, 0);
  const weights = new Uint8Array(K * N * 4);
  let col = 0;
  members.forEach((m, i) => {
    const data = constantData(m.node.inputs[1]);
    const row = widths[i] * 4;
    for (let k = 0; k < K; k++) weights.set(data.subarray(k * row, (k + 1) * row), (k * N + col) * 4);
    col += widths[i];
  });
  let bias = null;
  if (members[0].bias) {
    bias = new Uint8Array(N * 4);
    col = 0;
    members.forEach((m, i) => {
      bias.set(constantData(m.bias).subarray(0, widths[i] * 4), col * 4);
      col += widths[i];
    });
  }
  return {
    id: first.id, op: 'mergedMatmul', label: members.map((m) => m.node.label).join('+'),
    inputs: [first.inputs[0]],
    attrs: {dataType: first.outputs[0].dataType, K, widths, weights, bias,
      members: members.map((m) => ({node: m.node, out: m.out, origins: m.origins}))},
    origin: first.origin, origins: members.flatMap((m) => m.origins),
    outputs: [],
  };
}

/**
 * The pass (compile/plan.js PASSES): each group's mergedMatmul node takes the place of its first
 * member; the other members leave the list. Transposed stores keep their own step, and a fused
 * attention's products are no longer in the list (its step computes the scores itself).
 */
export function siblingsPass(g) {
  const groups = planSiblings(g.nodes);
  const placed = new Set();
  const replaced = new Map();
  for (const node of g.nodes) {
    const merged = groups.get(node);
    if (merged) replaced.set(node, placed.has(merged) ? null : merged);
    if (merged) placed.add(merged);
  }
  return {...g, nodes: replaceNodes(g.nodes, replaced)};
}
