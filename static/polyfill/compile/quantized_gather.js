/**
 * Quantized embedding tables kept packed on the GPU: a pass of build() that finds
 *   gather(dequantizeLinear(constant table, constant scale, constant zeroPoint), indices)
 * and replaces each such gather with one internal node `quantizedGather`, which reads only the
 * gathered elements of the packed table and dequantizes them ((q - zeroPoint) * scale, exact as
 * dequantizeLinear's); the dequantizeLinear node goes when nothing else reads it. The whole
 * table is never dequantized at run time, and the packed table is its only copy on the GPU.
 *
 * This is how ORT's WebNN EP writes ONNX GatherBlockQuantized (an LLM's token embedding):
 * dequantizeLinear of the int8 / uint8 / int4 / uint4 table with block-wise scales, then gather
 * along gather_axis.
 *
 * The pattern (planQuantizedGathers): the table, scale and zeroPoint constants or reshapes of
 * constants (their row-major data is what dequantizeLinear reads) of a packed weight type; the
 * dequantized value not a graph output and read only as the input of gathers. The node: inputs
 * [table, scale, zeroPoint, indices] (the first three: the underlying constants), attrs
 * {bits, signed, zeroBits, zeroSigned, tableShape, scaleShape, inner, axisSize, count} (the
 * gather's, on the dequantized shape), `origins` (the builder operators it stands for), the
 * gather's output.
 */
import {slots, useCounts} from '../operand.js';
import {PACKED_WEIGHTS, constantBehind} from './quantized_matmul.js';
import {readersOf, withoutDeadNodes} from './rewrite.js';

const FLOAT = new Set(['float32', 'float16']);

/** The dequantizeLinear node whose output every gather in `readers` reads as its input, or null. */
function gatheredTable(dq, readerList, uses, outputs) {
  if (dq.op !== 'dequantizeLinear' || !PACKED_WEIGHTS[dq.inputs[0].dataType] || !FLOAT.has(dq.outputs[0].dataType)) return null;
  if (dq.inputs.some((input) => !constantBehind(input))) return null;
  const s = slots(dq.outputs[0]);
  if (outputs.some((o) => slots(o) === s)) return null;
  const list = readerList.get(s) ?? [];
  if (!list.length || list.length !== uses.get(s) || list.some(({node, at}) => node.op !== 'gather' || at !== 0)) return null;
  return list.map(({node}) => node);
}

/**
 * @param {object[]} nodes reachable builder nodes, topological order
 * @param {object[]} outputs the graph's output operands
 * @returns {object[]} `nodes` with each gather of a packed dequantized table replaced by one
 *   quantizedGather node, and nodes left without readers removed
 */
export function planQuantizedGathers(nodes, outputs) {
  if (!nodes.some((n) => n.op === 'dequantizeLinear') || !nodes.some((n) => n.op === 'gather')) return nodes;
  const uses = useCounts(nodes, outputs);
  const readerList = readersOf(nodes);
  const replaced = new Map();
  for (const dq of nodes) {
    const gathers = gatheredTable(dq, readerList, uses, outputs);
    if (!gathers) continue;
    const [table, scale, zero] = dq.inputs.map(constantBehind);
    const packed = PACKED_WEIGHTS[dq.inputs[0].dataType];
    const zeroType = PACKED_WEIGHTS[dq.inputs[2].dataType];
    for (const gather of gathers) {
      replaced.set(gather, {
        id: gather.id, op: 'quantizedGather', label: gather.label,
        inputs: [table.operand, scale.operand, zero.operand, gather.inputs[1]],
        attrs: {bits: packed.bits, signed: packed.signed, zeroBits: zeroType.bits, zeroSigned: zeroType.signed,
          tableShape: dq.inputs[0].shape.slice(), scaleShape: dq.inputs[1].shape.slice(),
          inner: gather.attrs.inner, axisSize: gather.attrs.axisSize, count: gather.attrs.count},
        origin: gather.origin,
        origins: [...table.path, ...scale.path, ...zero.path, dq, gather].sort((x, y) => x.id - y.id).map((n) => n.origin),
        outputs: [gather.outputs[0]],
      });
    }
  }
  if (!replaced.size) return nodes;
  return withoutDeadNodes(nodes.map((n) => replaced.get(n) ?? n), outputs);
}

/** The pass (compile/plan.js PASSES): the record's nodes with each gather of a packed table rewritten. */
export function quantizedGatherPass(g) {
  return {...g, nodes: planQuantizedGathers(g.nodes, g.outputs)};
}
