/**
 * Block offsets of packed weights: a pass of build(), after compile/quantized_matmul.js, that
 * folds
 *   add(quantizedMatmul(A, W, scale, zeroPoint),
 *       matmul(reduceSum(reshape(A, [..., G, g]), axes [last]), O))       O: constant [G, N]
 * into the quantizedMatmul, as float zero points. This is how weights of the form
 *   W[k, n] = scale * (q - zeroPoint) + O[floor(k / g), n]
 * (GGUF's Q4_1 / Q5_1 blocks: d * q + m) are written with operators WebNN and ORT's WebNN EP
 * have (MatMulNBits takes only integer zero points there): sum_k A[k] * O[floor(k / g), n] is the
 * product of A's block sums with O. With z = zeroPoint - O / scale per scale element, each
 * weight is (q - z) * scale, so the product keeps one step and reads no more than its packed
 * weights, their scales and one f32 a scale (ops/packed_weights.js: float zero points).
 *
 * Conditions: the quantizedMatmul a plain product (no C) of more than one column whose scale map
 * starts at the weights' first element and is blocks of bk along k (g a multiple of bk) and one
 * scale a column along n; A of the reshape and of the product the same data (through reshapes,
 * CSE's shared copies) ending in K = G * g; the two products the add's own operands (not shared
 * copies of them, which other readers keep), each read only by the add, of its shape; no scale 0
 * under a non-zero offset. The block sums may feed several products (a layer's q, k, v).
 */
import {createOperand, slots} from '../operand.js';
import {constantBytes} from '../tensor.js';
import {elementCount} from '../dtypes.js';
import {constantComputeBytes} from './boundary.js';
import {constantBehind} from './quantized_matmul.js';
import {dataRoot, producers, readCounts, replaceNodes, sharedRoot, withoutDeadNodes} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/** The node storing `operand` (CSE's shared copies seen through), or null for inputs/constants. */
function producerOf(operand, made) {
  return made.get(sharedRoot(operand, made)) ?? null;
}

/**
 * A constant's elements in the compute layout (one 32-bit word each): f32 for float types
 * (float16 widened), i32 / u32 for the integer ones.
 */
function computeValues(operand) {
  const s = slots(operand);
  const bytes = constantComputeBytes(constantBytes(s), s);
  const View = s.dataType.startsWith('float') ? Float32Array : s.dataType.startsWith('u') ? Uint32Array : Int32Array;
  return new View(bytes.buffer, bytes.byteOffset, elementCount(s.shape));
}

/**
 * The matched pieces of `add` (the node list's add node), or null.
 * @returns {{q: object, offsetProduct: object, sums: object, split: object, offsets: object, g: number}|null}
 */
function match(add, made, reads) {
  if (add.op !== 'add' || add.attrs?.epilogue) return null;
  const shape = add.outputs[0].shape;
  const same = (o) => o.shape.length === shape.length && o.shape.every((d, i) => d === shape[i]);
  for (const [qi, pi] of [[0, 1], [1, 0]]) {
    // the products themselves, not a shared copy (compile/cse.js) of one: the fold removes them
    const q = made.get(slots(add.inputs[qi]));
    const p = made.get(slots(add.inputs[pi]));
    if (q?.op !== 'quantizedMatmul' || p?.op !== 'matmul' || q.attrs.kind !== 'matmul' || q.attrs.hasC) continue;
    if (q.attrs.epilogue || p.attrs?.epilogue || !same(add.inputs[qi]) || !same(add.inputs[pi])) continue;
    if (reads.get(slots(add.inputs[qi])) !== 1 || reads.get(slots(add.inputs[pi])) !== 1) continue;
    const offsets = constantBehind(p.inputs[1]);
    const sums = producerOf(p.inputs[0], made);
    if (!offsets || !FLOAT.has(p.inputs[1].dataType) || sums?.op !== 'reduceSum') continue;
    const split = producerOf(sums.inputs[0], made);
    const sumsIn = sums.inputs[0].shape;
    if (split?.op !== 'reshape' || sums.attrs.axes.length !== 1 || sums.attrs.axes[0] !== sumsIn.length - 1) continue;
    const g = sumsIn[sumsIn.length - 1];
    const [K, N] = q.attrs.view.shape;
    const G = K / g;
    const a = q.inputs[0].shape;
    const o = p.inputs[1].shape;
    if (!Number.isInteger(G) || a[a.length - 1] !== K || split.inputs[0].shape.at(-1) !== K) continue;
    if (o.at(-1) !== N || o.at(-2) !== G || elementCount(o) !== G * N || sums.outputs[0].shape.at(-1) !== G) continue;
    if (dataRoot(split.inputs[0], made) !== dataRoot(q.inputs[0], made)) continue;
    // the products' rows: A's rows, the block sums' rows
    if (elementCount(a) / K !== elementCount(sums.outputs[0].shape) / G) continue;
    return {q, offsetProduct: p, sums, split, offsets, g};
  }
  return null;
}

/**
 * The float zero points (f32, one a scale element) of quantizedMatmul `q` with block offsets
 * O [G, N] (floor(k / g) along k), or null when its scale map or a zero scale rules them out.
 */
function floatZeroPoints(q, offsets, g) {
  const {k, n} = q.attrs.scaleMap;
  const [K, N] = q.attrs.view.shape;
  if (k.origin || n.origin || k.step !== 1 || n.step !== 1 || n.block !== 1 || g % k.block) return null;
  const [, , scaleOperand, zeroOperand] = q.inputs;
  const scale = computeValues(scaleOperand);
  const zero = computeValues(zeroOperand);
  const o = computeValues(offsets.operand);
  const z = new Float32Array(scale.length);
  const set = new Uint8Array(scale.length);
  for (let kb = 0; kb * k.block < K; kb++) {
    const row = Math.floor((kb * k.block) / g) * N;
    for (let c = 0; c < N; c++) {
      const si = kb * k.stride + c * n.stride;
      const off = o[row + c];
      if (scale[si] === 0 && off !== 0) return null;
      const value = scale[si] === 0 ? zero[si] : zero[si] - off / scale[si];
      if (set[si] && z[si] !== Math.fround(value)) return null; // two blocks on one scale
      z[si] = value;
      set[si] = 1;
    }
  }
  return z;
}

/**
 * @param {object[]} nodes the node list after quantizedMatmulPass
 * @param {object[]} outputs the graph's outputs
 * @returns {object[]} `nodes` with each matched add replaced by its quantizedMatmul with float
 *   zero points (in the add's place), the offset products and what only they read removed
 */
export function planBlockOffsets(nodes, outputs) {
  if (!nodes.some((n) => n.op === 'quantizedMatmul') || !nodes.some((n) => n.op === 'reduceSum')) return nodes;
  const made = producers(nodes);
  const reads = readCounts(nodes, outputs);
  const replaced = new Map();
  for (const add of nodes) {
    const m = match(add, made, reads);
    if (!m) continue;
    const z = floatZeroPoints(m.q, m.offsets, m.g);
    if (!z) continue;
    const zeroOperand = m.q.inputs[3];
    const zf = createOperand(slots(zeroOperand).builder, {dataType: 'float32', shape: zeroOperand.shape.slice()},
      {kind: 'constant', bytes: new Uint8Array(z.buffer)});
    const absorbed = [m.split, m.sums, m.offsetProduct, add, ...m.offsets.path];
    replaced.set(m.q, null);
    replaced.set(m.offsetProduct, null);
    replaced.set(add, {
      ...m.q, inputs: [...m.q.inputs.slice(0, 3), zf],
      attrs: {...m.q.attrs, zeroBits: 32, zeroSigned: true, zeroFloat: true},
      origins: [...(m.q.origins ?? [m.q.origin]), ...absorbed.map((x) => x.origin)],
      outputs: [add.outputs[0]],
    });
  }
  if (!replaced.size) return nodes;
  return withoutDeadNodes(replaceNodes(nodes, replaced), outputs);
}

/** The pass (compile/plan.js PASSES). */
export function blockOffsetsPass(g) {
  return {...g, nodes: planBlockOffsets(g.nodes, g.outputs)};
}
