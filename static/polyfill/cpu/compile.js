/**
 * build() in the CPU context: the reachable nodes lowered to one ONNX model (the tables of
 * lower_elementwise.js, lower_tensor.js, lower_window.js, lower_recurrent.js), one ONNX Runtime InferenceSession
 * created from it, and a plan whose dispatch() queues one session.run().
 */
import {domError} from '../errors.js';
import {reachableNodes, slots} from '../operand.js';
import {contextSlots} from '../context.js';
import {createGraphObject} from '../graph.js';
import {OPERATORS} from '../ops/index.js';
import {IO_TYPES, tensorLimits} from '../ops/limits.js';
import {OnnxGraph, TYPED} from './onnx_graph.js';
import {ELEMENTWISE_LOWERINGS} from './lower_elementwise.js';
import {TENSOR_LOWERINGS} from './lower_tensor.js';
import {WINDOW_LOWERINGS} from './lower_window.js';
import {RECURRENT_LOWERINGS} from './lower_recurrent.js';

/** WebNN operator name -> lower(node, G) returning the ONNX value of each output. */
export const CPU_LOWERINGS = Object.freeze({...ELEMENTWISE_LOWERINGS, ...TENSOR_LOWERINGS, ...WINDOW_LOWERINGS, ...RECURRENT_LOWERINGS});

/**
 * opSupportLimits() of the CPU context: the shared operator table's limits (the builder
 * validates the same way on both contexts) for the operators this folder lowers (all of them;
 * the lowering carries the data types ORT's kernels lack, see onnx_graph.js CARRIER).
 * @param {number} maxTensorByteLength
 * @returns {object} MLOpSupportLimits
 */
export function cpuSupportLimits(maxTensorByteLength) {
  const limits = {
    preferredInputLayout: 'nchw',
    maxTensorByteLength,
    input: tensorLimits(IO_TYPES),
    constant: tensorLimits(IO_TYPES),
    output: tensorLimits(IO_TYPES),
  };
  for (const [name, def] of Object.entries(OPERATORS)) {
    if (CPU_LOWERINGS[name]) limits[name] = def.limits({cpu: true});
  }
  return limits;
}

/** The compiled graph: one InferenceSession and the names binding it to MLTensors. */
class CpuPlan {
  constructor(backend, session, inputs, outputs) {
    this.backend = backend;
    this.session = session;
    this.inputs = inputs; // WebNN name -> {onnx, dataType, dims}
    this.outputs = outputs; // WebNN name -> ONNX name
  }

  /**
   * Queues one run: the tensors' memory is bound now, the run happens in queue order.
   * @param {object} ctx context slots
   * @param {Record<string, object>} inputs name -> tensor slots
   * @param {Record<string, object>} outputs name -> tensor slots
   */
  dispatch(ctx, inputs, outputs) {
    const {ort} = this.backend;
    const feeds = Object.entries(inputs).map(([name, t]) => [this.inputs.get(name), t.bytes]);
    // each output's tensor slots and the memory bound now (a later destroy() does not unbind it)
    const fetches = Object.entries(outputs).map(([name, t]) => ({onnx: this.outputs.get(name), t, bytes: t.bytes}));
    this.backend.enqueue(async () => {
      if (this.backend.destroyed) return; // a lost context fails its outstanding work
      try {
        const feed = {};
        for (const [info, bytes] of feeds) feed[info.onnx] = new ort.Tensor(info.dataType, typedView(bytes, info.dataType), info.dims);
        const results = await this.session.run(feed);
        for (const {onnx, t, bytes} of fetches) {
          const data = results[onnx].data;
          if (UNPACKED_OUTPUT[t.desc.dataType]) packNibbles(data, bytes);
          else bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
          t.failure = null;
        }
        for (const r of Object.values(results)) r.dispose?.();
      } catch (e) {
        for (const {t} of fetches) t.failure = e?.message ?? String(e);
      }
    });
  }

  /**
   * MLGraph.destroy(): the session is released once queued runs are done (spec: resources are
   * freeable once previously submitted workloads are complete; those runs still happen).
   */
  release() {
    this.backend.enqueue(() => this.session.release().catch(() => {}));
  }
}

/**
 * ORT-web 1.30 takes int4/uint4 feeds (packed Uint8Array) but cannot fetch 4-bit outputs
 * ("unsupported type"): a 4-bit graph output leaves the session as int8/uint8, one element a
 * byte, and is packed into the tensor here.
 */
const UNPACKED_OUTPUT = Object.freeze({int4: 'int8', uint4: 'uint8'});

/** Packs one-a-byte 4-bit values into `bytes`: two a byte, the first in the low nibble. */
function packNibbles(values, bytes) {
  bytes.fill(0);
  for (let i = 0; i < values.length; i++) bytes[i >> 1] |= (values[i] & 0xf) << ((i & 1) * 4);
}

function typedView(bytes, dataType) {
  const T = TYPED[dataType];
  return new T(bytes.buffer, bytes.byteOffset, bytes.byteLength / T.BYTES_PER_ELEMENT);
}

/**
 * Compiles `entries` ([name, MLOperand] pairs) for the CPU context.
 * @returns {Promise<MLGraph>}
 * @throws (rejects) NotSupportedError for an operator without a CPU lowering or a graph ONNX
 *   Runtime cannot run; InvalidStateError when the context is lost meanwhile
 */
export async function compileCpuGraph(context, entries, backend) {
  const ctx = contextSlots(context);
  const G = new OnnxGraph();
  const nodes = reachableNodes(entries.map(([, o]) => o));
  for (const node of nodes) {
    const lower = CPU_LOWERINGS[node.op];
    if (!lower) throw domError('NotSupportedError', `${node.op} is not supported by the CPU context`, node.label);
    let names;
    try {
      names = lower(node, G);
    } catch (e) {
      throw domError('NotSupportedError', `the CPU context cannot lower ${node.op}: ${e.message}`, node.label);
    }
    node.outputs.forEach((o, k) => G.bind(o, names[k]));
  }
  const outputDescriptors = new Map();
  const outputs = new Map();
  entries.forEach(([name, operand], k) => {
    const s = slots(operand);
    outputDescriptors.set(name, {dataType: s.dataType, shape: s.shape.slice()});
    const onnx = `o${k}`;
    const wide = UNPACKED_OUTPUT[s.dataType];
    const value = wide ? G.cast(G.value(operand), s.dataType, wide) : G.value(operand);
    G.nodes.push({op: 'Identity', inputs: [value], outputs: [onnx], attrs: {}});
    G.outputs.push({name: onnx, dataType: wide ?? s.dataType, dims: s.shape.slice()});
    outputs.set(name, onnx);
  });
  const inputDescriptors = new Map();
  const inputs = new Map();
  for (const i of G.inputs) {
    inputDescriptors.set(i.webnn, {dataType: i.dataType, shape: i.dims.slice()});
    inputs.set(i.webnn, {onnx: i.name, dataType: i.dataType, dims: i.dims});
  }
  const session = await backend.session(G.serialize());
  if (ctx.lostInfo) {
    session.release();
    throw domError('InvalidStateError', 'the context was lost during build', 'build');
  }
  return createGraphObject(context, ctx, new CpuPlan(backend, session, inputs, outputs), inputDescriptors, outputDescriptors, 'cpu');
}
