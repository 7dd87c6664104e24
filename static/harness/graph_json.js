/**
 * Builds and runs graphs written as JSON graph descriptions (the format shared by model
 * manifests, tests and the conformance suite):
 *   {inputs: {name: {dataType, shape}}, constants: {name: {dataType, shape, bytes?|offset?, byteLength?}},
 *    operators: [{op, args: [...], options: {...}, outputs: name | [names]}], outputs: [names]}
 * An operand reference is written {"operand": name}; data travels as base64 of little-endian bytes.
 */

/** base64 -> Uint8Array */
export function fromBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** ArrayBuffer|Uint8Array -> base64 */
export function toBase64(buffer) {
  const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * Adds the description's inputs, constants and operators to `builder`.
 * @param {MLGraphBuilder} builder
 * @param {object} description JSON graph description
 * @param {(name: string, spec: object) => Uint8Array} constantBytes returns a constant's bytes
 * @returns {Map<string, MLOperand>} every named operand
 */
export function addToBuilder(builder, description, constantBytes) {
  const operands = new Map();
  for (const [name, spec] of Object.entries(description.inputs ?? {})) {
    operands.set(name, builder.input(name, {dataType: spec.dataType, shape: spec.shape}));
  }
  for (const [name, spec] of Object.entries(description.constants ?? {})) {
    operands.set(name, builder.constant({dataType: spec.dataType, shape: spec.shape}, constantBytes(name, spec)));
  }
  const resolve = (value) => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value && typeof value === 'object') {
      if (typeof value.operand === 'string' && Object.keys(value).length === 1) {
        if (!operands.has(value.operand)) throw new Error(`unknown operand ${value.operand}`);
        return operands.get(value.operand);
      }
      if (typeof value.bigint === 'string' && Object.keys(value).length === 1) return BigInt(value.bigint);
      if (typeof value.number === 'string' && Object.keys(value).length === 1) return Number(value.number);
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
    }
    return value;
  };
  for (const op of description.operators ?? []) {
    const args = (op.args ?? []).map(resolve);
    if (op.options !== undefined) args.push(resolve(op.options));
    const result = builder[op.op](...args);
    const names = Array.isArray(op.outputs) ? op.outputs : [op.outputs];
    const results = Array.isArray(result) ? result : [result];
    names.forEach((n, i) => operands.set(n, results[i]));
  }
  return operands;
}

/**
 * Builds, dispatches and reads back a description.
 * @param {object} description JSON graph description with inline constant `bytes`
 * @param {Record<string, {dataType, shape, bytes}>} inputs input data, base64
 * @param {{context?: MLContext, repeat?: number}} [options]
 * @returns {Promise<Record<string, {dataType, shape, bytes}>>} outputs, base64
 */
export async function runGraph(description, inputs = {}, options = {}) {
  const context = options.context ?? await navigator.ml.createContext();
  try {
    const builder = new MLGraphBuilder(context);
    const operands = addToBuilder(builder, description, (name, spec) => fromBase64(spec.bytes));
    const outputs = Object.fromEntries(description.outputs.map((n) => [n, operands.get(n)]));
    const graph = await builder.build(outputs);
    const inputTensors = {};
    for (const [name, spec] of Object.entries(description.inputs ?? {})) {
      const tensor = await context.createTensor({dataType: spec.dataType, shape: spec.shape, writable: true});
      context.writeTensor(tensor, fromBase64(inputs[name].bytes));
      inputTensors[name] = tensor;
    }
    const outputTensors = {};
    for (const name of description.outputs) {
      const o = operands.get(name);
      outputTensors[name] = await context.createTensor({dataType: o.dataType, shape: o.shape, readable: true});
    }
    for (let i = 0; i < (options.repeat ?? 1); i++) context.dispatch(graph, inputTensors, outputTensors);
    const result = {};
    for (const name of description.outputs) {
      const o = operands.get(name);
      result[name] = {dataType: o.dataType, shape: [...o.shape], bytes: toBase64(await context.readTensor(outputTensors[name]))};
    }
    graph.destroy();
    Object.values(inputTensors).concat(Object.values(outputTensors)).forEach((t) => t.destroy());
    return result;
  } finally {
    if (!options.context) context.destroy();
  }
}
