/**
 * Layer normalization written out as reductions and element-wise operators, found at build and
 * compiled as one layerNormalization step.
 *
 * ONNX models of opsets before 17 have no LayerNormalization operator: PyTorch exports
 * nn.LayerNorm (every BERT-family layer norm of a Hugging Face model) as
 *   mean = reduceMean(x, axes, keepDimensions)     d = sub(x, mean)
 *   variance = reduceMean(pow(d, 2), axes, keepDimensions)      (or mul(d, d))
 *   y = div(d, sqrt(add(variance, epsilon)))                    (or mul(d, reciprocal(...)))
 *   [y = mul(y, scale)] [y = add(y, bias)]                      (either operand order)
 * and ORT's WebNN EP passes it through as those nine builder calls (ORT's LayerNormFusion runs
 * for its own CPU and GPU EPs, and in its basic level only for opset 17 and later). Unfused that
 * is six GPU steps where the spec's operator is one, and the product before each can no longer
 * hand its partial sums to the normalization (compile/split_norm.js): BERT-base's plan takes
 * 20 steps a layer unfused instead of 8.
 *
 * The same without the mean (the square and the division read x itself) is an RMS norm:
 * ORT's WebNN EP writes ONNX Runtime's SimplifiedLayerNormalization (the RMSNorm of LLaMA-style
 * decoders exported for it) as pow(x, 2) -> reduceMean -> add epsilon -> sqrt -> div(x, .) ->
 * mul(scale, .), four steps unfused (pow, reduceMean, add + sqrt, div + mul).
 *
 * planLayerNorms replaces each such group with one node of op layerNormalization whose attrs
 * carry `formula` ({square: 'pow' | 'mul', reciprocal, center}); ops/normalization.js then evaluates
 * every stage with the element-wise operator's own expression (ops/elementwise.js: div_f,
 * pow_f, sqrt_f) and, for float16, rounds each stage's result to binary16 as the unfused
 * steps store it, so the values differ from the unfused steps' only in the order the two
 * means add up their rows.
 *
 * The pattern: float32 or float16 throughout; the reduceMeans over the same non-empty axes
 * with keepDimensions; the exponent 2 and epsilon one-element constants; every intermediate
 * (mean, d, its square, the variance, variance + epsilon, its square root, the reciprocal, the
 * normalized value before scale or bias) read only inside the group and not a graph output; a
 * centered d read by exactly its square and the division (else the group is the RMS norm of d);
 * a scale or bias joins only when it addresses the normalized axes alone (its shape, aligned
 * right, is 1 on every other axis and the input's extent on the normalized ones) and the result
 * keeps the input's shape. x itself may have other readers (an RMS norm's residual stream).
 */
import {elementCount} from '../dtypes.js';
import {slots, useCounts} from '../operand.js';
import {float16Value} from '../shape/cast.js';
import {sameShape} from '../shape/common.js';
import {readersOf} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/** The value of a one-element float constant operand, or undefined when it is none. */
function constantValue(operand) {
  const s = slots(operand);
  if (s.kind !== 'constant' || !s.bytes || elementCount(s.shape) !== 1) return undefined;
  const view = new DataView(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength);
  if (s.dataType === 'float32') return view.getFloat32(0, true);
  if (s.dataType === 'float16') return float16Value(view.getUint16(0, true));
  return undefined;
}

/** Whether `param` (scale or bias) addresses only the normalized `axes` of `shape` as the layerNormalization's own scale would. */
function isAxesParam(param, shape, axes) {
  const p = param.shape;
  if (p.length > shape.length) return false;
  const offset = shape.length - p.length;
  for (let d = 0; d < shape.length; d++) {
    const extent = d < offset ? 1 : p[d - offset];
    if (extent !== (axes.includes(d) ? shape[d] : 1) && !(extent === 1 && shape[d] === 1)) return false;
  }
  return true;
}

/**
 * @param {object[]} nodes reachable builder nodes, topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {object[]} `nodes` with each decomposed layer normalization replaced by one
 *   layerNormalization node (at its last node's place, reading x, scale, bias; writing the last
 *   node's output operand; `origins`: the builder operators it stands for, in graph order)
 */
export function planLayerNorms(nodes, outputs) {
  if (!nodes.some((n) => n.op === 'reduceMean')) return nodes;
  const uses = useCounts(nodes, outputs);
  const readers = readersOf(nodes);
  /** The one node reading `operand` (read exactly once, not an output), or null. */
  const only = (operand) => {
    const s = slots(operand);
    return uses.get(s) === 1 ? readers.get(s)?.[0] ?? null : null;
  };
  const replaced = new Map();
  const removed = new Set();
  for (const variance of nodes) {
    const group = match(variance, only, uses);
    if (!group || group.nodes.some((n) => removed.has(n))) continue;
    group.nodes.forEach((n) => removed.add(n));
    const last = group.nodes[group.nodes.length - 1];
    replaced.set(last, {
      id: last.id, op: 'layerNormalization', label: last.label,
      inputs: [group.x, ...(group.scale ? [group.scale] : []), ...(group.bias ? [group.bias] : [])],
      attrs: {axes: group.axes, epsilon: group.epsilon, hasScale: Boolean(group.scale), hasBias: Boolean(group.bias),
        formula: {square: group.square, reciprocal: group.reciprocal, center: group.center}},
      origin: group.nodes[0].origin, origins: group.nodes.map((n) => n.origin),
      outputs: [last.outputs[0]],
    });
  }
  if (!replaced.size) return nodes;
  return nodes.flatMap((n) => (replaced.has(n) ? [replaced.get(n)] : removed.has(n) ? [] : [n]));
}

/**
 * The written-out normalization whose variance (or mean square) is the reduceMean `variance`, or
 * null (see the module comment): centered (x - mean, a layer norm) when its square reads such a
 * difference, else of x itself (an RMS norm).
 */
function match(variance, only, uses) {
  if (variance.op !== 'reduceMean') return null;
  const sq = slots(variance.inputs[0]);
  const square = sq.kind === 'op' ? sq.node : null;
  if (!square || only(variance.inputs[0])?.node !== variance) return null;
  // the square: pow(d, 2) or mul(d, d)
  const d = slots(square.inputs[0]);
  if (!((square.op === 'pow' && constantValue(square.inputs[1]) === 2) || (square.op === 'mul' && slots(square.inputs[1]) === d))) return null;
  const shape = d.shape;
  const dt = d.dataType;
  const axes = [...variance.attrs.axes].sort((a, b) => a - b);
  if (!FLOAT.has(dt) || !axes.length || variance.outputs[0].shape.length !== shape.length) return null;
  const group = [square, variance];
  // centered: d = sub(x, reduceMean(x)) over the same axes, d read only by its square and the division
  const sub = d.kind === 'op' && d.node.op === 'sub' ? d.node : null;
  const meanOf = sub && slots(sub.inputs[1]).kind === 'op' ? slots(sub.inputs[1]).node : null;
  const centered = Boolean(meanOf) && meanOf.op === 'reduceMean' && slots(meanOf.inputs[0]) === slots(sub.inputs[0])
    && only(meanOf.outputs[0])?.node === sub && meanOf.outputs[0].shape.length === shape.length
    && [...meanOf.attrs.axes].sort((a, b) => a - b).join() === axes.join()
    && uses.get(d) === (square.op === 'mul' ? 3 : 2);
  const x = centered ? sub.inputs[0] : square.inputs[0];
  if (centered) group.unshift(meanOf, sub);
  const addEps = only(variance.outputs[0]);
  if (addEps?.node.op !== 'add') return null;
  const epsilon = constantValue(addEps.node.inputs[1 - addEps.at]);
  if (epsilon === undefined || addEps.node.inputs[1 - addEps.at].dataType !== dt) return null;
  const root = only(addEps.node.outputs[0])?.node;
  if (root?.op !== 'sqrt') return null;
  group.push(addEps.node, root);
  let divisor = only(root.outputs[0]);
  let reciprocal = false;
  if (divisor?.node.op === 'reciprocal') {
    group.push(divisor.node);
    reciprocal = true;
    divisor = only(divisor.node.outputs[0]);
  }
  const norm = divisor?.node;
  if (!norm || !(reciprocal ? norm.op === 'mul' : norm.op === 'div' && divisor.at === 1)) return null;
  if (slots(norm.inputs[1 - divisor.at]) !== d || !sameShape(norm.outputs[0].shape, shape)) return null;
  group.push(norm);
  // optional scale, then optional bias: mul / add with an operand addressing the normalized axes
  let scale = null;
  let bias = null;
  const inGroup = (operand) => slots(operand).kind === 'op' && group.includes(slots(operand).node);
  for (const [op, set] of [['mul', (p) => { scale = p; }], ['add', (p) => { bias = p; }]]) {
    const next = only(group[group.length - 1].outputs[0]);
    if (next?.node.op !== op) continue;
    const param = next.node.inputs[1 - next.at];
    if (param.dataType !== dt || inGroup(param) || !isAxesParam(param, shape, axes)
      || !sameShape(next.node.outputs[0].shape, shape)) continue;
    set(param);
    group.push(next.node);
  }
  return {nodes: group, x, axes, epsilon, scale, bias, square: square.op, reciprocal, center: centered};
}

/** The pass (compile/plan.js PASSES): written-out normalizations replaced in `g.nodes`. */
export function layerNormPass(g) {
  return {...g, nodes: planLayerNorms(g.nodes, g.outputs)};
}
