/**
 * The siblings pass: matmuls that read the same A with constant 2-D B's (a transformer layer's
 * Q, K and V projections), each optionally followed by a fused add of a constant bias along N,
 * become one internal `mergedMatmul` node (ops/merged_matmul.js) carrying the B's (and biases)
 * concatenated along N; packed-weight products (quantizedMatmul: a decoder's MatMulNBits q, k
 * and v) of one layout likewise, their packed weights, scales and zero points concatenated. Each
 * sibling's result is then a column range of the merged output, a strided view that the following
 * reshape/transpose/attention steps read in place.
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {constantBytes} from '../tensor.js';
import {stridesOf} from '../shape/common.js';
import {reshapeStrides} from '../shape/strides.js';
import {constantComputeBytes} from './boundary.js';
import {originsOf, replaceNodes, storedOutputs} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/** The constant's bytes in the compute layout (4 bytes per float32/float16 element). */
export function constantData(operand) {
  const s = slots(operand);
  return constantComputeBytes(constantBytes(s), {dataType: s.dataType, shape: s.shape});
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

/** The tensor-layout bytes of a constant operand, as bytes. */
export function rawBytes(operand) {
  const b = constantBytes(slots(operand));
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * {node, quant, out, origins} when `node` is a quantizedMatmul (compile/quantized_matmul.js) that
 * can join a packed sibling group: a matmul whose B is whole rows of its packed weights W [N, R]
 * (B[k, n] = W[n, k], K <= R), its scales and zero points [N, S] constants blocked along the row
 * (float32 or float16 scales), no fused stages but an optional bias add and reshapes (ORT's WebNN EP's MatMulNBits); quant:
 * what a group must share ({bits, signed, zeroBits, zeroSigned, zeroFloat, R, S, block}).
 * `stages`: any fused stages allowed (compile/gated_pairs.js), bias then null.
 */
export function quantMember(node, stages = false) {
  if (node.op !== 'quantizedMatmul' || node.attrs.kind !== 'matmul' || node.attrs.hasC) return null;
  const {bits, signed, zeroBits, zeroSigned, zeroFloat = false, view, scaleMap, weightShape} = node.attrs;
  const [, w, scale, zero] = node.inputs;
  const [K, N] = view.shape;
  const R = view.strides[1];
  const {k, n} = scaleMap;
  if (view.offset !== 0 || view.strides[0] !== 1 || K > R || elementCount(weightShape) !== N * R) return null;
  if (k.origin !== 0 || k.step !== 1 || k.stride !== 1 || n.origin !== 0 || n.step !== 1 || n.block !== 1) return null;
  const S = n.stride;
  if (Math.ceil(R / k.block) !== S || !FLOAT.has(slots(scale).dataType) || elementCount(scale.shape) !== N * S) return null;
  if (elementCount(zero.shape) !== N * S || (N * R * bits) % 8) return null;
  if (!FLOAT.has(node.outputs[0].dataType) || slots(w).kind !== 'constant') return null;
  let tail = node.attrs.epilogue ?? [];
  // a bias add (an encoder's MatMulNBits + Add, as onnxruntime's quantizer leaves them)
  let bias = null;
  if (!stages && tail[0] && tail[0].node.op === 'add' && tail[0].other && isBias(tail[0].other, N)) {
    bias = tail[0].other;
    tail = tail.slice(1);
  }
  if (!stages && !tail.every((st) => st.reshape)) return null;
  return {node, bias, quant: {bits, signed, zeroBits, zeroSigned, zeroFloat, R, S, block: k.block}, out: storedOutputs(node)[0],
    origins: originsOf(node)};
}

/**
 * Copies `count` packed elements of `bits` bits (8, or 4: low nibble first) from element `from` of
 * `src` to element `to` of `out` (zeroed where the copy lands): whole bytes where both ranges
 * are, else element by element.
 */
export function copyPacked(out, to, src, from, count, bits) {
  if (bits === 8 || (to % 2 === 0 && from % 2 === 0 && count % 2 === 0)) {
    const per = 8 / bits;
    out.set(src.subarray(from / per, (from + count) / per), to / per);
    return;
  }
  for (let i = 0; i < count; i++) {
    const e = to + i;
    out[e >> 1] |= ((src[(from + i) >> 1] >> (((from + i) & 1) * 4)) & 0xf) << ((e & 1) * 4);
  }
}

/** The packed elements of `parts` ({bytes, count}: count elements of `bits` bits) one after another. */
function concatPacked(parts, bits) {
  const total = parts.reduce((acc, p) => acc + p.count, 0);
  const out = new Uint8Array(Math.ceil((total * bits) / 8));
  let at = 0;
  for (const p of parts) {
    copyPacked(out, at, p.bytes, 0, p.count, bits);
    at += p.count;
  }
  return out;
}

/**
 * The mergedMatmul node of packed sibling `members` (quantMember()): their weights, scales and
 * zero points concatenated along N (attrs.quant), read as one packed product.
 */
function mergedQuantizedNode(members) {
  const first = members[0].node;
  const {bits, signed, zeroBits, zeroSigned, zeroFloat, R, S, block} = members[0].quant;
  const widths = members.map((m) => m.node.attrs.view.shape[1]);
  const K = first.attrs.view.shape[0];
  const weights = concatPacked(members.map((m, i) => ({bytes: rawBytes(m.node.inputs[1]), count: widths[i] * R})), bits);
  // the scales in the compute layout (f32: float16 ones widened)
  const scales = concatPacked(members.map((m, i) => ({bytes: constantData(m.node.inputs[2]), count: widths[i] * S * 4})), 8);
  // float zero points (compile/block_offsets.js) are f32: whole bytes, as the scales
  const zeros = zeroFloat
    ? concatPacked(members.map((m, i) => ({bytes: rawBytes(m.node.inputs[3]), count: widths[i] * S * 4})), 8)
    : concatPacked(members.map((m, i) => ({bytes: rawBytes(m.node.inputs[3]), count: widths[i] * S})), zeroBits);
  return {
    id: first.id, op: 'mergedMatmul', label: members.map((m) => m.node.label).join('+'),
    inputs: [first.inputs[0]],
    attrs: {dataType: first.outputs[0].dataType, K, widths, weights: null, bias: mergedBias(members, widths),
      quant: {bits, signed, zeroBits, zeroSigned, zeroFloat, weights, scales, zeros, hasZp: zeros.some((b) => b !== 0),
        view: {offset: 0, strides: [1, R]},
        scaleMap: {k: {origin: 0, step: 1, block, stride: 1}, n: {origin: 0, step: 1, block: 1, stride: S}}},
      members: members.map((m) => ({node: m.node, out: m.out, origins: m.origins}))},
    origin: first.origin, origins: members.flatMap((m) => m.origins),
    outputs: [],
  };
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
    const m = member(node) ?? quantMember(node);
    if (!m) continue;
    // the same data: one operand, or reshapes of one (ORT's WebNN EP reshapes the input per gemm)
    let a = slots(node.inputs[0]);
    while (a.kind === 'op' && (a.node.op === 'reshape' || a.node.op === 'identity')) a = slots(a.node.inputs[0]);
    if (!byA.has(a)) byA.set(a, new Map());
    const byShape = byA.get(a);
    // packed products group with packed products of the same layout, float ones with float ones
    const key = `${node.inputs[0].shape.join(',')}|${m.quant ? JSON.stringify(m.quant) : 'float'}`;
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
    const widthOf = (m) => (m.quant ? m.node.attrs.view.shape[1] : slots(m.node.inputs[1]).shape[1]);
    const n = members.reduce((acc, m) => acc + widthOf(m), 0);
    const shape = members[0].node.outputs[0].shape;
    const merged = stridesOf([...shape.slice(0, -1), n]);
    if (members.some((m) => !reshapeStrides(m.node.outputs[0].shape, merged, slots(m.out).shape))) continue;
    if (members.some((m) => m.node.outputs[0].shape.slice(0, -1).some((d, i) => d !== shape[i]))) continue;
    const node = members[0].quant ? mergedQuantizedNode(members) : mergedMatmulNode(members);
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
  return {
    id: first.id, op: 'mergedMatmul', label: members.map((m) => m.node.label).join('+'),
    inputs: [first.inputs[0]],
    attrs: {dataType: first.outputs[0].dataType, K, widths, weights, bias: mergedBias(members, widths),
      members: members.map((m) => ({node: m.node, out: m.out, origins: m.origins}))},
    origin: first.origin, origins: members.flatMap((m) => m.origins),
    outputs: [],
  };
}

/** The members' biases concatenated along N in the compute layout, or null when they have none. */
function mergedBias(members, widths) {
  if (!members[0].bias) return null;
  const bias = new Uint8Array(widths.reduce((a, b) => a + b, 0) * 4);
  let col = 0;
  members.forEach((m, i) => {
    bias.set(constantData(m.bias).subarray(0, widths[i] * 4), col * 4);
    col += widths[i];
  });
  return bias;
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
