/**
 * Sibling matrix products as one: matmuls that read the same A with constant 2-D B's (a
 * transformer layer's Q, K and V projections), each optionally followed by a fused add of a
 * constant bias along N, become one product with the B's (and biases) concatenated along N at
 * build; each sibling's result is then a column range of the merged output, a strided view
 * (compile/views.js) that the following reshape/transpose/attention steps read in place.
 *
 * The bias rides in the product as its C term (ops/matmul_kernels.js: alpha * A x B + C, then
 * stored), so a float16 product rounds once where matmul -> add rounds twice (within the
 * operators' float16 tolerance).
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {tensorSlots} from '../tensor.js';
import {stridesOf} from '../shape/common.js';
import {constantComputeBytes} from './boundary.js';
import {reshapeStrides} from './views.js';

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
 * {node, bias, out} when `node` can join a sibling group, else null: a matmul, or a gemm
 * without transposes and scaling (ORT's WebNN EP writes MatMul + Add as gemm with C), of a
 * constant [K, N] B; bias: the constant bias operand (gemm's C, or a fused add stage), or null;
 * out: the operand the member's result is (its last fused stage's: reshapes may follow).
 */
function member(node, tails) {
  if ((node.op !== 'matmul' && node.op !== 'gemm') || !FLOAT.has(node.outputs[0].dataType)) return null;
  const b = slots(node.inputs[1]);
  if (b.kind !== 'constant' || b.shape.length !== 2 || b.dataType !== node.outputs[0].dataType) return null;
  const n = b.shape[1];
  let tail = tails.get(node) ?? [];
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
  const stages = tails.get(node) ?? [];
  return {node, bias, out: stages.length ? stages[stages.length - 1].node.outputs[0] : node.outputs[0],
    origins: [node.origin, ...stages.map((st) => st.node.origin)]};
}

/**
 * The sibling groups: matmuls reading the same A operand with constant [K, N_i] B's of one data
 * type, all with a bias stage or all without.
 * @param {object[]} nodes reachable nodes, topological order
 * @param {Map<object, object[]>} tails the fusion pass's producer -> stages
 * @param {Set<object>} [exclude] matmuls that must keep their own step (e.g. a transposed store)
 * @returns {Map<object, {members: {node, stage}[], done: boolean}>} each member node -> its group
 */
export function planSiblings(nodes, tails, exclude = new Set()) {
  const byA = new Map();
  for (const node of nodes) {
    const m = exclude.has(node) ? null : member(node, tails);
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
    const group = {members, done: false};
    for (const m of members) groups.set(m.node, group);
  }
  return groups;
}

/**
 * Lowers `group` as one product (see the module docstring); each member's result operand
 * becomes a deferred view of the merged output.
 * @param {import('./lowering.js').Lowering} L
 * @param {{members: {node, stage}[]}} group
 * @param {object} fns the kernels' step builders, passed in by ops/gemm.js (no import cycle):
 *   matmulStep (ops/matmul_kernels.js), stridedCopy (ops/movement.js, materializing a member's
 *   view), batchStridesOf (compile/views.js), simplifyStrided (shape/movement.js)
 */
export function lowerSiblings(L, group, {matmulStep, stridedCopy, batchStridesOf, simplifyStrided}) {
  group.done = true;
  const {members} = group;
  const first = members[0].node;
  const dataType = first.outputs[0].dataType;
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
  const b = L.newValue('constant', weights.byteLength, `constant [${K},${N}] (${members.length} merged)`, {data: weights});
  let c;
  if (members[0].bias) {
    const bias = new Uint8Array(N * 4);
    col = 0;
    members.forEach((m, i) => {
      bias.set(constantData(m.bias).subarray(0, widths[i] * 4), col * 4);
      col += widths[i];
    });
    c = L.newValue('constant', bias.byteLength, `constant [${N}] (${members.length} merged)`, {data: bias});
  }
  const shape = first.outputs[0].shape;
  const rank = shape.length;
  const M = shape[rank - 2];
  const batchShape = shape.slice(0, rank - 2);
  const merged = [...shape.slice(0, rank - 1), N];
  const y = L.newValue('temp', elementCount(merged) * 4, `${first.label}:merged`);
  const va = L.view(first.inputs[0]);
  L.origin = [...members.flatMap((m) => m.origins), ...va.origins];
  matmulStep(L, {
    label: members.map((m) => m.node.label).join('+'),
    dataType,
    a: va.value,
    b,
    c,
    y,
    M, N, K,
    offsets: {a: va.offset},
    aStrides: va.strides.slice(va.strides.length - 2),
    bStrides: [N, 1],
    cStrides: c ? [0, 1] : undefined,
    batchShape,
    aBatchStrides: batchStridesOf(va, batchShape),
    bBatchStrides: batchShape.map(() => 0),
    yBatchStride: M * N,
  });
  col = 0;
  members.forEach((m, i) => {
    const operand = m.out;
    const offset = col;
    const own = slots(operand).shape;
    // the member's [..., M, N_i] columns of the merged [..., M, N], then its reshapes
    const strides = reshapeStrides(m.node.outputs[0].shape, stridesOf(merged), own);
    const view = {value: y, offset, shape: own, strides, origins: []};  // its operators are the merged step's
    view.materialize = () => {
      L.origin = [m.node.origin];
      const out = L.newValue('temp', elementCount(own) * 4, `${m.node.label}:0`);
      stridedCopy(L, y, out, dataType, simplifyStrided(own, strides, offset), false, m.node.label);
      return out;
    };
    L.defer(operand, view);
    col += widths[i];
  });
}
