/**
 * A minimal protobuf writer for the ONNX messages the CPU context needs (onnx/onnx.proto3:
 * ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto). It writes
 * only; ONNX Runtime parses the bytes. Large payloads (constant weights) are kept by reference as
 * chunks and copied once, into the final buffer.
 */

/**
 * ONNX TensorProto.DataType of each MLOperandDataType (plus bool, for comparison results).
 * UINT4 and INT4 raw data pack two elements a byte, the first in the low nibble, as WebNN's do.
 */
export const ONNX_TYPES = Object.freeze({
  float32: 1, float64: 11, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, uint32: 12, uint64: 13,
  uint4: 21, int4: 22,
});

/** A protobuf message under construction: a list of byte chunks. */
class Message {
  constructor() {
    this.chunks = [];
    this.length = 0;
    this.scratch = [];
  }

  /** Appends raw bytes (kept by reference). */
  raw(bytes) {
    this.flushScratch();
    this.chunks.push(bytes);
    this.length += bytes.byteLength;
  }

  flushScratch() {
    if (this.scratch.length === 0) return;
    const bytes = Uint8Array.from(this.scratch);
    this.scratch = [];
    this.chunks.push(bytes);
    this.length += bytes.byteLength;
  }

  /** Unsigned varint of a non-negative Number or any BigInt (negative: 64-bit two's complement). */
  varint(value) {
    if (typeof value === 'number' && value >= 0 && value < 2 ** 31) {
      let v = value;
      while (v > 0x7f) { this.scratch.push((v & 0x7f) | 0x80); v >>>= 7; }
      this.scratch.push(v);
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    while (v > 0x7fn) { this.scratch.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
    this.scratch.push(Number(v));
  }

  tag(field, wire) { this.varint(field * 8 + wire); }

  int(field, value) { this.tag(field, 0); this.varint(value); }

  float(field, value) {
    this.tag(field, 5);
    const b = new Uint8Array(new Float32Array([value]).buffer);
    for (const x of b) this.scratch.push(x);
  }

  bytes(field, bytes) {
    this.tag(field, 2);
    this.varint(bytes.byteLength);
    this.raw(bytes);
  }

  string(field, text) { this.bytes(field, new TextEncoder().encode(text)); }

  message(field, sub) {
    sub.flushScratch();
    this.tag(field, 2);
    this.varint(sub.length);
    this.flushScratch();
    this.chunks.push(...sub.chunks);
    this.length += sub.length;
  }

  /** @returns {Uint8Array} the serialised message */
  finish() {
    this.flushScratch();
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const c of this.chunks) { out.set(c, offset); offset += c.byteLength; }
    return out;
  }
}

/**
 * TensorProto with raw little-endian data.
 * @param {string} name
 * @param {string} dataType a key of ONNX_TYPES
 * @param {number[]} dims
 * @param {Uint8Array} bytes the elements packed row-major (the MLTensor layout)
 */
function tensorProto(name, dataType, dims, bytes) {
  const m = new Message();
  for (const d of dims) m.int(1, d);
  m.int(2, ONNX_TYPES[dataType]);
  m.string(8, name);
  m.bytes(9, bytes);
  return m;
}

function attributeProto(name, value) {
  const m = new Message();
  m.string(1, name);
  if (value instanceof Float32Array) {
    for (const f of value) m.float(7, f);
    m.int(20, 6);
  } else if (Array.isArray(value) && typeof value[0] === 'string') {
    for (const text of value) m.string(9, text);
    m.int(20, 8);
  } else if (Array.isArray(value)) {
    for (const i of value) m.int(8, i);
    m.int(20, 7);
  } else if (typeof value === 'string') {
    m.string(4, value);
    m.int(20, 3);
  } else if (typeof value === 'object' && value.tensor) {
    const t = value.tensor;
    m.message(5, tensorProto('', t.dataType, t.dims, t.bytes));
    m.int(20, 4);
  } else if (typeof value === 'object' && value.float !== undefined) {
    m.float(2, value.float);
    m.int(20, 1);
  } else {
    m.int(3, typeof value === 'boolean' ? Number(value) : value);
    m.int(20, 2);
  }
  return m;
}

function valueInfo(name, dataType, dims) {
  const shape = new Message();
  for (const d of dims) {
    const dim = new Message();
    dim.int(1, d);
    shape.message(1, dim);
  }
  const tensorType = new Message();
  tensorType.int(1, ONNX_TYPES[dataType]);
  tensorType.message(2, shape);
  const type = new Message();
  type.message(1, tensorType);
  const m = new Message();
  m.string(1, name);
  m.message(2, type);
  return m;
}

/**
 * Serialises a model.
 * @param {{nodes: {op: string, inputs: string[], outputs: string[], attrs?: object}[],
 *   initializers: {name: string, dataType: string, dims: number[], bytes: Uint8Array}[],
 *   inputs: {name, dataType, dims}[], outputs: {name, dataType, dims}[], opset: number}} model
 *   attrs values: integer (INT), {float: x} (FLOAT), Float32Array (FLOATS), integer array (INTS),
 *   string (STRING), string array (STRINGS), {tensor: {dataType, dims, bytes}} (TENSOR); '' in `inputs` is an omitted input
 * @returns {Uint8Array} ModelProto bytes (IR version 10)
 */
export function writeModel({nodes, initializers, inputs, outputs, opset}) {
  const graph = new Message();
  nodes.forEach((n, k) => {
    const m = new Message();
    for (const i of n.inputs) m.string(1, i);
    for (const o of n.outputs) m.string(2, o);
    m.string(3, `n${k}_${n.op}`);
    m.string(4, n.op);
    for (const [name, value] of Object.entries(n.attrs ?? {})) {
      if (value !== undefined) m.message(5, attributeProto(name, value));
    }
    graph.message(1, m);
  });
  graph.string(2, 'webnn');
  for (const t of initializers) graph.message(5, tensorProto(t.name, t.dataType, t.dims, t.bytes));
  for (const v of inputs) graph.message(11, valueInfo(v.name, v.dataType, v.dims));
  for (const v of outputs) graph.message(12, valueInfo(v.name, v.dataType, v.dims));
  const model = new Message();
  model.int(1, 10);
  model.string(2, 'webnn-wgsl');
  model.message(7, graph);
  const opsetId = new Message();
  opsetId.string(1, '');
  opsetId.int(2, opset);
  model.message(8, opsetId);
  return model.finish();
}
