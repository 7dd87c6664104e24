/**
 * The fusion pass of build(): between the graph and lowering, it folds chains of element-wise
 * operators into the step of the operator producing their input, as that step's epilogue
 * (ops/epilogue.js), so that e.g. conv2d -> add (residual) -> clamp is one GPU dispatch.
 *
 * A producer is a conv2d, convTranspose2d, gemm, matmul, reduceMin or reduceMax (ORT's
 * DynamicQuantizeLinear adjusts its range with max/min and divides), or a float element-wise operator
 * (the binary, unary and activation tables of ops/elementwise.js and ops/activations.js). Its
 * output joins a chain when
 *  - its data type is float32 or float16 (integer graphs stay unfused),
 *  - it is not a graph output and every use of it is inside the chain: one consumer (counted
 *    per use: mul(x, x) is two), or several where all but the first are later stages reading it
 *    as their other operand (GELU's x * f(x); the epilogue keeps such values in variables),
 *  - the next consumer is an element-wise stage (or a reshape/identity, a stage that changes
 *    nothing: ORT's WebNN EP puts gemm -> reshape before the bias add): an activation, a float
 *    unary operator, or a binary
 *    operator whose other operand broadcasts to the chain's shape without enlarging it (a
 *    residual of the same shape, a bias along the output channel, a scalar, a chain value).
 * A cast of a float32 chain value to int32 whose only use is a cast back to float32 (ORT's WebNN
 * EP's MatMulInteger: a float product cast to int32, which the model casts back to scale it) is
 * one stage for both casts, `trunc_i32_f` (gpu/math.js).
 * Chains grow while the stage's output qualifies in turn (conv -> add -> clamp), up to
 * MAX_OTHER_OPERANDS binary stages (binding limits). Each stage keeps
 * its own operator's semantics (NaN, ±Inf, float16 rounding of every intermediate), see
 * ops/epilogue.js.
 *
 * The pass replaces each chain by its producer rewritten with `attrs.epilogue` = the stages
 * (compile/rewrite.js), standing where the chain's last stage stood in the topological order, so
 * every other operand of a stage has been lowered by then; its `origins` list the builder
 * operators of the whole group (producer first) for profiles. The stage nodes leave the list.
 */
import {elementCount} from '../dtypes.js';
import {slots} from '../operand.js';
import {ACTIVATIONS} from '../ops/activations.js';
import {BINARY, UNARY, exprFor} from '../ops/elementwise.js';
import {rewritten} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);
/**
 * Other operands one fused step may read: producers bind at most 4 buffers (gemm: A, B, C, Y),
 * and WebGPU guarantees 8 storage buffers per shader stage.
 */
const MAX_OTHER_OPERANDS = 4;
/** Producers with a kernel that applies an epilogue at its store. */
const KERNEL_PRODUCERS = new Set(['conv2d', 'convTranspose2d', 'gemm', 'matmul', 'quantizedMatmul', 'reduceMin', 'reduceMax']);

/** The stage of `node` with the chain value at input `at`, or null when it cannot be a stage. */
function stageOf(node, at) {
  const dataType = node.outputs[0].dataType;
  if (!FLOAT.has(dataType)) return null;
  // a reshape keeps every element's row-major index: the chain runs through it unchanged
  if (node.op === 'reshape' || node.op === 'identity') return {node, expr: 'x', vars: ['x'], attrs: {}, other: null, reshape: true};
  const act = ACTIVATIONS[node.op];
  if (act && act.f) {
    const attrs = {};
    for (const [key, value] of Object.entries(node.attrs)) attrs[key] = Number(value);
    return {node, expr: act.f, vars: ['x'], attrs, other: null};
  }
  const unary = UNARY[node.op];
  if (unary && unary.types.includes(dataType)) return {node, expr: exprFor(unary, dataType), vars: ['x'], attrs: {}, other: null};
  const binary = BINARY[node.op];
  if (binary && node.inputs.length === 2) {
    const other = node.inputs[1 - at];
    if (elementCount(node.outputs[0].shape) !== elementCount(node.inputs[at].shape)) return null;
    // vars: the chain value is `a` when it is the first operand, `b` otherwise
    return {node, expr: exprFor(binary, dataType), vars: at === 0 ? ['a', 'b'] : ['b', 'a'], attrs: {}, other};
  }
  return null;
}

/**
 * The stage of cast `node` (float32 -> int32, reading chain value `value`) with the cast back to
 * float32 that is its output's only use (`through`: the first cast, lowered inside the stage), or
 * null when `node` is not such a pair.
 */
function roundTripStage(node, value, uses, consumers, absorbed) {
  if (node.op !== 'cast' || value.dataType !== 'float32' || node.outputs[0].dataType !== 'int32') return null;
  const mid = slots(node.outputs[0]);
  const next = consumers.get(mid) ?? [];
  if (uses.get(mid) !== 1 || next.length !== 1) return null;
  const back = next[0].node;
  if (back.op !== 'cast' || back.outputs[0].dataType !== 'float32' || absorbed.has(back)) return null;
  return {node: back, through: node, expr: 'trunc_i32_f(x)', vars: ['x'], attrs: {}, other: null};
}

/** Whether `node` can head a chain. */
function isProducer(node) {
  if (!FLOAT.has(node.outputs[0]?.dataType) || node.outputs.length !== 1) return false;
  if (KERNEL_PRODUCERS.has(node.op)) return true;
  return Boolean(ACTIVATIONS[node.op] || UNARY[node.op] || BINARY[node.op]);
}

/**
 * Groups the reachable nodes into fused chains.
 * @param {object[]} nodes reachable builder nodes in topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {{tails: Map<object, object[]>, lowerAt: Map<object, object>, absorbed: Set<object>}}
 *   tails: producer node -> its stages ({node, expr, vars, attrs, other, chainOther?}), only for producers
 *   with at least one; lowerAt: the last stage's node -> the producer to lower there;
 *   absorbed: every node lowered as part of another's step or later than its own position
 *   (producers of a chain and their stages)
 */
export function planFusion(nodes, outputs) {
  const uses = new Map();
  const consumers = new Map();
  const count = (s, node, at) => {
    uses.set(s, (uses.get(s) ?? 0) + 1);
    if (node) {
      if (!consumers.has(s)) consumers.set(s, []);
      consumers.get(s).push({node, at});
    }
  };
  for (const node of nodes) node.inputs.forEach((input, at) => count(slots(input), node, at));
  for (const o of outputs) count(slots(o), null, -1);
  const tails = new Map();
  const lowerAt = new Map();
  const absorbed = new Set();
  for (const node of nodes) {
    if (absorbed.has(node) || !isProducer(node)) continue;
    const tail = chainOf(node, uses, consumers, absorbed);
    if (!tail.length) continue;
    for (const stage of tail) {
      absorbed.add(stage.node);
      if (stage.through) absorbed.add(stage.through);
    }
    tails.set(node, tail);
    lowerAt.set(tail[tail.length - 1].node, node);
    absorbed.add(node);
  }
  return {tails, lowerAt, absorbed};
}

/**
 * The longest chain of stages after producer `node` in which every value but the last is read
 * only inside the chain: by the next stage, or as a later stage's other operand (`chainOther`:
 * the index of that value, 0 = the producer's output, k + 1 = stage k's), which the epilogue
 * keeps in a variable (GELU's x * f(x): matmul -> add bias -> div -> erf -> add -> mul(x, .)).
 * A value read twice continues into its earliest consumer.
 */
function chainOf(node, uses, consumers, absorbed) {
  const values = [slots(node.outputs[0])];
  const pending = new Map([[values[0], uses.get(values[0])]]);
  const tail = [];
  const inTail = new Set();
  let best = 0;
  let others = 0;
  for (;;) {
    const value = values[values.length - 1];
    const next = (consumers.get(value) ?? []).filter((c) => !absorbed.has(c.node) && !inTail.has(c.node))
      .sort((x, y) => x.node.id - y.node.id)[0];
    if (!next) break;
    const stage = stageOf(next.node, next.at) ?? roundTripStage(next.node, value, uses, consumers, absorbed);
    if (!stage || stage.node.outputs[0].dataType !== value.dataType) break;
    const at = stage.other ? values.indexOf(slots(stage.other)) : -1;
    if (at >= 0) {
      stage.chainOther = at;
      stage.other = null;
    } else if (stage.other && ++others > MAX_OTHER_OPERANDS) {
      break;
    }
    pending.set(value, pending.get(value) - 1);
    if (at >= 0) pending.set(values[at], pending.get(values[at]) - 1);
    tail.push(stage);
    inTail.add(next.node);
    inTail.add(stage.node);
    const out = slots(stage.node.outputs[0]);
    values.push(out);
    pending.set(out, uses.get(out) ?? 0);
    if (values.slice(0, -1).every((v) => pending.get(v) === 0)) best = tail.length;
  }
  return tail.slice(0, best);
}

/**
 * The pass (compile/plan.js PASSES): each chain's producer, rewritten with `attrs.epilogue` (its
 * stages) and the stages' origins, takes the place of the chain's last stage; the other nodes of
 * the chain leave the list.
 */
export function fusionPass(g) {
  const {tails, lowerAt, absorbed} = planFusion(g.nodes, g.outputs);
  const nodes = [];
  for (const node of g.nodes) {
    if (!absorbed.has(node)) nodes.push(node);
    else if (lowerAt.has(node)) {
      const producer = lowerAt.get(node);
      const stages = tails.get(producer);
      nodes.push(rewritten(producer, {epilogue: stages}, stages.flatMap((st) => (st.through ? [st.through.origin, st.node.origin] : [st.node.origin]))));
    }
  }
  return {...g, nodes};
}
