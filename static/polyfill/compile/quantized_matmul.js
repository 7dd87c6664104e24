/**
 * Quantized weights kept packed on the GPU: a pass of build() that finds
 *   dequantizeLinear(constant W, constant scale, constant zeroPoint)
 *     -> [reshape | slice | transpose]* -> matmul (as B) / gemm (as B)
 * and replaces the whole chain with one internal node `quantizedMatmul` whose B operand is the
 * packed constant itself; ops/matmul_quantized.js lowers it to one step whose loads of B
 * dequantize the packed values ((q - zeroPoint) * scale, exact as dequantizeLinear's) in
 * registers. No dequantized copy of the weights exists at run time and there is no dequantize
 * step: W is uploaded once as its tensor-layout bytes (int8/uint8: one byte an element, int4 /
 * uint4: two elements a byte, low nibble first, as Chromium packs them).
 *
 * This is how ORT's WebNN EP writes ONNX MatMulNBits: W a uint4 / uint8 constant [N, blocks,
 * blockSize], the scales a reshape of a constant to [N, blocks, 1], the zero point a constant of
 * the same shape, then reshape to [N, blocks * blockSize], slice to [N, K] when K is padded,
 * transpose, matmul (and an add of the bias, which the fusion pass folds into the product's
 * epilogue). It is also QDQ-style per-tensor / per-axis int8 weights.
 *
 * The pattern (planQuantizedMatmuls):
 *  - W: a constant (through reshapes of one) of int8, uint8, int4 or uint4; scale and zeroPoint
 *    constants or reshapes of constants (their row-major data is what dequantizeLinear reads);
 *  - the dequantized value and every intermediate of the chain read once, by the next node of
 *    the chain, and not graph outputs (a dequantized tensor with another reader stays unfused:
 *    that reader needs it);
 *  - the chain's reshapes, slices and transposes compose to a strided view of W's row-major
 *    elements (shape/strides.js reshapeStrides), the product's B: [K, N] (after gemm's
 *    bTranspose), each of whose axes moves along rows only or along columns only of W seen as a
 *    matrix [R, C] split at some axis of W, where the scale's blocks are rectangles
 *    [blockRows, blockCols] (the blockwise broadcast of each side is: whole dimensions, at most
 *    one dimension in blocks, then dimensions of one scale each);
 *  - matmul: B of rank 2 (A's batch dimensions become rows of the product), float32 or float16;
 *    gemm: any options.
 * The node: inputs [A, W, scale, zeroPoint, (C)] (W, scale and zeroPoint: the underlying
 * constants), attrs {bits, signed, zeroBits, zeroSigned, kind: 'matmul' | 'gemm', alpha, beta,
 * aTranspose, view: {offset, strides [k, n] in elements of W}, scaleMap: {k: {origin, step,
 * block, stride}, n: {...}}: the scale element of B's (k, n) is
 * sum over axis a of floor((origin_a + index_a * step_a) / block_a) * stride_a}, `origins` (the
 * builder operators of the chain, graph order), the product's output. Nodes left with no reader
 * (a reshape of the scales) are dropped.
 */
import {elementCount} from '../dtypes.js';
import {slots, useCounts} from '../operand.js';
import {stridesOf} from '../shape/common.js';
import {reshapeStrides} from '../shape/strides.js';
import {withoutDeadNodes} from './rewrite.js';

/** Bits per element and signedness of the weight types a packed product reads. */
export const PACKED_WEIGHTS = Object.freeze({
  int8: {bits: 8, signed: true},
  uint8: {bits: 8, signed: false},
  int4: {bits: 4, signed: true},
  uint4: {bits: 4, signed: false},
});

const FLOAT = new Set(['float32', 'float16']);
const VIEW_OPS = new Set(['reshape', 'slice', 'transpose', 'identity']);

/**
 * The constant operand behind `operand` through reshapes/identities (row-major data unchanged),
 * and the reshapes passed, or null.
 * @returns {{operand, path: object[]}|null}
 */
export function constantBehind(operand) {
  let s = slots(operand);
  const path = [];
  while (s.kind === 'op' && (s.node.op === 'reshape' || s.node.op === 'identity')) {
    path.push(s.node);
    s = slots(s.node.inputs[0]);
  }
  return s.kind === 'constant' ? {operand: path.length ? path[path.length - 1].inputs[0] : operand, path} : null;
}

/**
 * One side (rows or columns) of W split into a matrix: dims and the scale's dims on that side.
 * @returns {number|null} the block size along the flattened side, or null when the side's
 *   blocks are not one block size (see the module comment)
 */
function sideBlock(dims, scaleDims) {
  let phase = 0; // 0: whole dimensions (scale == dim), 1: after the partial one or in ones
  let block = 1;
  for (let d = 0; d < dims.length; d++) {
    const n = dims[d];
    const s = scaleDims[d];
    if (n === 1) continue;
    if (phase === 0 && s === n) continue;
    if (phase === 0) {
      phase = 1;
      block = n / s;
      continue;
    }
    if (s !== 1) return null;
    block *= n;
  }
  return block;
}

/**
 * How B's element (k, n) maps into W and its scale, from the strided `view` of W's row-major
 * elements ({offset, shape: [K, N], strides}), or null when no split of W fits.
 */
function mapScales(wShape, scaleShape, view) {
  const rank = wShape.length;
  for (let p = 0; p <= rank; p++) {
    const C = elementCount(wShape.slice(p));
    const rows = sideBlock(wShape.slice(0, p), scaleShape.slice(0, p));
    const cols = sideBlock(wShape.slice(p), scaleShape.slice(p));
    if (rows === null || cols === null) continue;
    const scaleCols = elementCount(scaleShape.slice(p));
    const r0 = Math.floor(view.offset / C);
    const c0 = view.offset % C;
    const map = {};
    const taken = {row: false, col: false};
    let ok = true;
    ['k', 'n'].forEach((axis, i) => {
      const extent = view.shape[i];
      const stride = view.strides[i];
      if (extent === 1) return;
      if (stride % C === 0 && !taken.row) {
        taken.row = true;
        map[axis] = {origin: r0, step: stride / C, block: rows, stride: scaleCols};
      } else if (stride < C && c0 + (extent - 1) * stride < C && !taken.col) {
        taken.col = true;
        map[axis] = {origin: c0, step: stride, block: cols, stride: 1};
      } else {
        ok = false;
      }
    });
    if (!ok) continue;
    // the scale offset of a side no axis moves along, carried by an axis of extent 1
    let fixed = (taken.row ? 0 : Math.floor(r0 / rows) * scaleCols) + (taken.col ? 0 : Math.floor(c0 / cols));
    for (const axis of ['k', 'n']) {
      if (!map[axis]) {
        map[axis] = {origin: fixed, step: 0, block: 1, stride: 1};
        fixed = 0;
      }
    }
    return map;
  }
  return null;
}

/**
 * The chain from a dequantizeLinear node down to the product reading it as B, or null.
 * @returns {{product, chain: object[], view}|null}
 */
function matchFrom(dq, readers, uses) {
  const w = constantBehind(dq.inputs[0]);
  const scale = constantBehind(dq.inputs[1]);
  const zero = constantBehind(dq.inputs[2]);
  const packed = PACKED_WEIGHTS[dq.inputs[0].dataType];
  if (!w || !scale || !zero || !packed || !FLOAT.has(dq.outputs[0].dataType)) return null;
  const wShape = dq.inputs[0].shape;
  let view = {offset: 0, shape: wShape.slice(), strides: stridesOf(wShape)};
  const chain = [dq];
  let value = dq.outputs[0];
  for (;;) {
    const s = slots(value);
    const next = readers.get(s);
    if (uses.get(s) !== 1 || !next) return null;
    const {node, at} = next;
    if (VIEW_OPS.has(node.op)) {
      const shape = node.outputs[0].shape;
      if (node.op === 'reshape' || node.op === 'identity') {
        const strides = reshapeStrides(view.shape, view.strides, shape);
        if (!strides) return null;
        view = {offset: view.offset, shape: shape.slice(), strides};
      } else if (node.op === 'transpose') {
        const perm = node.attrs.permutation;
        view = {offset: view.offset, shape: perm.map((p) => view.shape[p]), strides: perm.map((p) => view.strides[p])};
      } else {
        const {starts, strides: steps} = node.attrs;
        view = {offset: view.offset + starts.reduce((o, st, d) => o + st * view.strides[d], 0),
          shape: shape.slice(), strides: view.strides.map((st, d) => st * (steps?.[d] ?? 1))};
      }
      chain.push(node);
      value = node.outputs[0];
      continue;
    }
    if (at !== 1 || (node.op !== 'matmul' && node.op !== 'gemm')) return null;
    if (node.outputs[0].dataType !== dq.outputs[0].dataType) return null;
    // B as [K, N]: matmul's B of rank 2 (or with leading ones), gemm's after bTranspose
    const r = view.shape.length;
    if (r < 2 || view.shape.slice(0, r - 2).some((d) => d !== 1)) return null;
    if (node.op === 'matmul' && node.inputs[1].shape.length > 2 && node.inputs[0].shape.length < r) return null;
    let shape = view.shape.slice(r - 2);
    let strides = view.strides.slice(r - 2);
    if (node.op === 'gemm' && node.attrs.bTranspose) {
      shape = [shape[1], shape[0]];
      strides = [strides[1], strides[0]];
    }
    const b = {offset: view.offset, shape, strides};
    const scaleMap = mapScales(wShape, dq.inputs[1].shape, b);
    if (!scaleMap) return null;
    return {product: node, chain, view: b, scaleMap, w, scale, zero, packed};
  }
}

/**
 * @param {object[]} nodes reachable builder nodes, topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {object[]} `nodes` with each matched chain replaced by one quantizedMatmul node (at
 *   the product's place) and nodes left without readers removed
 */
export function planQuantizedMatmuls(nodes, outputs) {
  if (!nodes.some((n) => n.op === 'dequantizeLinear')) return nodes;
  const uses = useCounts(nodes, outputs);
  const readers = new Map();
  for (const node of nodes) node.inputs.forEach((input, at) => readers.set(slots(input), {node, at}));
  const replaced = new Map();
  const removed = new Set();
  for (const dq of nodes) {
    if (dq.op !== 'dequantizeLinear') continue;
    const m = matchFrom(dq, readers, uses);
    if (!m) continue;
    const {product, chain, view, scaleMap, w, scale, zero, packed} = m;
    chain.forEach((n) => removed.add(n));
    const zeroType = PACKED_WEIGHTS[dq.inputs[2].dataType];
    const [a, , c] = product.inputs;
    const gemm = product.op === 'gemm';
    replaced.set(product, {
      id: product.id, op: 'quantizedMatmul', label: product.label,
      inputs: [a, w.operand, scale.operand, zero.operand, ...(gemm && c ? [c] : [])],
      attrs: {bits: packed.bits, signed: packed.signed, zeroBits: zeroType.bits, zeroSigned: zeroType.signed,
        kind: product.op, alpha: gemm ? product.attrs.alpha : 1, beta: gemm ? product.attrs.beta : 1,
        aTranspose: gemm && product.attrs.aTranspose, hasC: gemm && Boolean(c),
        view: {offset: view.offset, strides: view.strides, shape: view.shape}, scaleMap,
        weightShape: dq.inputs[0].shape.slice()},
      origin: product.origin,
      // the chain's operators (and the reshapes of its constants) in graph order, for profiles
      origins: [...w.path, ...scale.path, ...zero.path, ...chain, product].sort((x, y) => x.id - y.id).map((n) => n.origin),
      outputs: [product.outputs[0]],
    });
    // the constants' reshapes: dropped below when nothing else reads them
  }
  if (!replaced.size) return nodes;
  const kept = nodes.flatMap((n) => (replaced.has(n) ? [replaced.get(n)] : removed.has(n) ? [] : [n]));
  return withoutDeadNodes(kept, outputs);
}

/** The pass (compile/plan.js PASSES): the record's nodes with each packed-weight product rewritten. */
export function quantizedMatmulPass(g) {
  return {...g, nodes: planQuantizedMatmuls(g.nodes, g.outputs)};
}
