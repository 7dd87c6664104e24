/**
 * The ONNX graph a CPU-context build() writes (cpu/compile.js): names for WebNN operands, nodes,
 * constant initializers, and the type carriers that let an ONNX operator with a narrower kernel
 * type list in ONNX Runtime's CPU EP run every WebNN data type.
 */
import {slots} from '../operand.js';
import {constantBytes} from '../tensor.js';
import {writeModel} from './onnx_writer.js';

/** ONNX opset the lowering targets (ONNX Runtime 1.30 implements it fully on the CPU EP). */
export const OPSET = 21;

/**
 * The wider type an operator computes in when ORT has no kernel for `dataType`: float16 in
 * float32 (as the WebGPU path does), 8-bit integers in int32, unsigned 32/64-bit in int64 (two's
 * complement: add, sub, mul and comparisons of values below 2^63 agree).
 */
export const CARRIER = Object.freeze({float16: 'float32', int8: 'int32', uint8: 'int32', uint32: 'int64', uint64: 'int64', int32: 'int64'});

/**
 * The typed array over each data type's little-endian bytes, as ORT's Tensor takes them (float16
 * as its raw bits in a Uint16Array, which dtypes.js's DATA_TYPES view is not where Float16Array exists;
 * int4 and uint4 as their packed bytes in a Uint8Array of ceil(n / 2), which ORT's Tensor takes).
 */
export const TYPED = Object.freeze({
  float32: Float32Array, float16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, int8: Int8Array, uint8: Uint8Array, int4: Uint8Array, uint4: Uint8Array,
});

/** @returns {Uint8Array} the bytes of `values` as a `dataType` array */
export function bytesOfValues(dataType, values) {
  const T = TYPED[dataType];
  const typed = T === BigInt64Array || T === BigUint64Array ? T.from(values, (v) => BigInt(v)) : T.from(values, (v) => Number(v));
  return new Uint8Array(typed.buffer);
}

/** An ONNX graph under construction. */
export class OnnxGraph {
  constructor() {
    this.nodes = [];
    this.initializers = [];
    this.inputs = [];
    this.outputs = [];
    this.names = new Map(); // operand slots -> ONNX value name
    this.count = 0;
  }

  /** @returns {string} a fresh value name */
  fresh(hint = 'v') {
    return `${hint}${this.count++}`;
  }

  /**
   * Adds a node.
   * @param {string} op ONNX op_type
   * @param {string[]} inputs value names ('' for an omitted optional input)
   * @param {object} [attrs] see onnx_writer.js writeModel
   * @param {number} [outputs] output count
   * @returns {string[]} output value names
   */
  node(op, inputs, attrs = {}, outputs = 1) {
    const names = Array.from({length: outputs}, () => this.fresh());
    this.nodes.push({op, inputs, outputs: names, attrs});
    return names;
  }

  /** A one-output node. @returns {string} */
  op(op, inputs, attrs = {}) {
    return this.node(op, inputs, attrs, 1)[0];
  }

  /** A constant initializer. @returns {string} its name */
  constant(dataType, dims, bytes) {
    const name = this.fresh('c');
    this.initializers.push({name, dataType, dims: dims.slice(), bytes});
    return name;
  }

  /** A 1-D int64 constant (shapes, axes, pads). @returns {string} */
  i64(values) {
    return this.constant('int64', [values.length], bytesOfValues('int64', values));
  }

  /** A 0-D constant of `dataType`. @returns {string} */
  scalar(dataType, value) {
    return this.constant(dataType, [], bytesOfValues(dataType, [value]));
  }

  /** Cast `name` from `from` to `to` (nothing when equal). @returns {string} */
  cast(name, from, to) {
    if (from === to) return name;
    return this.op('Cast', [name], {to: ONNX_TO[to]});
  }

  /**
   * The ONNX value of a WebNN operand: a graph input, an initializer (constants) or a node output
   * bound by bind().
   * @param {MLOperand} operand
   * @returns {string}
   */
  value(operand) {
    const s = slots(operand);
    if (this.names.has(s)) return this.names.get(s);
    let name;
    if (s.kind === 'input') {
      name = this.fresh('i');
      this.inputs.push({name, webnn: s.name, dataType: s.dataType, dims: s.shape.slice()});
    } else if (s.kind === 'constant') {
      name = this.constant(s.dataType, s.shape, constantBytes(s));
    } else {
      throw new Error(`operand of node ${s.node.op} is used before it is lowered`);
    }
    this.names.set(s, name);
    return name;
  }

  /**
   * The largest element of an integer constant operand read as unsigned (its two's complement
   * bits), or null when the operand is not a constant.
   * @param {MLOperand} operand
   * @returns {bigint|null}
   */
  constantMaxUnsigned(operand) {
    const s = slots(operand);
    if (s.kind !== 'constant') return null;
    const T = TYPED[s.dataType];
    const copy = constantBytes(s).slice();
    const width = T.BYTES_PER_ELEMENT * 8;
    let max = 0n;
    for (const v of new T(copy.buffer)) {
      const u = BigInt.asUintN(width, BigInt(v));
      if (u > max) max = u;
    }
    return max;
  }

  /** Binds a node output operand to an ONNX value name. */
  bind(operand, name) {
    this.names.set(slots(operand), name);
  }

  /**
   * Runs `build(names, type)` in `type` = dataType when it is in `native`, otherwise in
   * CARRIER[dataType] with the inputs of that data type cast there and the result cast back.
   * @param {string} dataType the WebNN data type of the operation
   * @param {string[]} names input values; those listed in `typed` (indices) have `dataType`
   * @param {string[]} native data types ORT's kernel has
   * @param {function(string[], string): string} build returns the result value
   * @param {{typed?: number[], outType?: string|null}} [options] outType: the result's WebNN
   *   type when it is not `dataType` (e.g. 'uint8' from comparisons: not cast back), null: as is
   * @returns {string}
   */
  carried(dataType, names, native, build, {typed = names.map((_, i) => i), outType} = {}) {
    let type = dataType;
    while (!native.includes(type)) {
      if (!CARRIER[type]) throw new Error(`no ONNX Runtime kernel for ${dataType}`);
      type = CARRIER[type];
    }
    const inputs = names.map((n, i) => (typed.includes(i) ? this.cast(n, dataType, type) : n));
    const result = build(inputs, type);
    return outType === undefined ? this.cast(result, type, dataType) : result;
  }

  /** @returns {Uint8Array} the ModelProto */
  serialize() {
    return writeModel({nodes: this.nodes, initializers: this.initializers, inputs: this.inputs, outputs: this.outputs, opset: OPSET});
  }
}

/** ONNX TensorProto.DataType numbers for Cast's `to`. */
const ONNX_TO = {float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, uint32: 12, uint64: 13, uint4: 21, int4: 22};
