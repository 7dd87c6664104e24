/**
 * Builds the classifier network from the model manifest with MLGraphBuilder and runs it.
 * The graph itself is made by the shared harness helper `addToBuilder` (static/harness/graph_json.js);
 * constants are views into weights.bin at the manifest's offset/byteLength.
 */
import {addToBuilder} from '/harness/graph_json.js';

/** MLOperandDataType -> the typed array that WebNN expects for its data. */
const TYPED_ARRAYS = {
  float32: Float32Array,
  float16: globalThis.Float16Array ?? Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  int8: Int8Array,
  uint8: Uint8Array,
};

/**
 * The data of one manifest constant, as a typed array of its data type (a view into `weights`
 * when the offset is aligned, else a copy).
 * @param {ArrayBuffer} weights contents of weights.bin
 * @param {{dataType: string, offset: number, byteLength: number}} spec the manifest's constant entry
 * @returns {ArrayBufferView}
 * @throws {RangeError} when the slice lies outside weights.bin; TypeError for an unknown data type
 */
export function constantView(weights, {dataType, offset, byteLength}) {
  const View = TYPED_ARRAYS[dataType];
  if (!View) throw new TypeError(`unknown constant data type ${dataType}`);
  if (!(offset >= 0 && byteLength >= 0 && offset + byteLength <= weights.byteLength)) {
    throw new RangeError(`constant bytes [${offset}, ${offset + byteLength}) lie outside weights.bin (${weights.byteLength} bytes)`);
  }
  const aligned = offset % View.BYTES_PER_ELEMENT === 0;
  const buffer = aligned ? weights : weights.slice(offset, offset + byteLength);
  return new View(buffer, aligned ? offset : 0, byteLength / View.BYTES_PER_ELEMENT);
}

/**
 * The operators a description uses that `builder` does not provide, in order of first use.
 * @param {MLGraphBuilder} builder
 * @param {{operators: {op: string}[]}} description
 * @returns {string[]}
 */
export function missingOperators(builder, description) {
  const missing = new Set();
  for (const {op} of description.operators ?? []) {
    if (typeof builder[op] !== 'function') missing.add(op);
  }
  return [...missing];
}

/** Median of a non-empty list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Builds the manifest's graph on `context` and prepares its input and output tensors.
 * @param {MLContext} context
 * @param {object} manifest JSON graph description with one input, `outputs`, and optionally
 *   `output: {name}` naming the probabilities
 * @param {ArrayBuffer} weights contents of weights.bin
 * @returns {Promise<{classify: (input: Float32Array, options?: {runs?: number, warmup?: number}) =>
 *   Promise<{probabilities: Float32Array, inferenceMs: number, timesMs: number[]}>,
 *   buildMs: number, inputName: string, inputShape: number[], graph: MLGraph, destroy: () => void}>}
 *   buildMs: milliseconds from the first builder call until build() resolved (constants included)
 * @throws {DOMException} NotSupportedError naming the operators this WebNN implementation lacks;
 *   the builder's own errors
 *   (TypeError, DataError...) for an invalid graph
 */
export async function buildClassifier(context, manifest, weights) {
  const inputNames = Object.keys(manifest.inputs ?? {});
  if (inputNames.length !== 1) throw new Error(`the manifest must have one input, it has ${inputNames.length}`);
  const [inputName] = inputNames;
  const outputName = manifest.output?.name ?? manifest.outputs?.[0];
  if (!outputName) throw new Error('the manifest names no output');

  const started = performance.now();
  const builder = new MLGraphBuilder(context);
  const missing = missingOperators(builder, manifest);
  if (missing.length) {
    throw new DOMException(`this WebNN implementation lacks the operator${missing.length > 1 ? 's' : ''} ` +
      `${missing.join(', ')} that ${manifest.name ?? 'the model'} needs`, 'NotSupportedError');
  }
  const operands = addToBuilder(builder, manifest, (name, spec) => constantView(weights, spec));
  const output = operands.get(outputName);
  const graph = await builder.build({[outputName]: output});
  const buildMs = performance.now() - started;

  const inputSpec = manifest.inputs[inputName];
  const inputTensor = await context.createTensor({dataType: inputSpec.dataType, shape: inputSpec.shape, writable: true});
  const outputTensor = await context.createTensor({dataType: output.dataType, shape: output.shape, readable: true});

  /** One dispatch + readback; returns [milliseconds, output]. */
  const runOnce = async () => {
    const t0 = performance.now();
    context.dispatch(graph, {[inputName]: inputTensor}, {[outputName]: outputTensor});
    const result = new Float32Array(await context.readTensor(outputTensor));
    return [performance.now() - t0, result];
  };

  return {
    buildMs,
    graph,
    inputName,
    inputShape: [...inputSpec.shape],
    /**
     * Classifies one input: `warmup` untimed runs, then `runs` timed dispatch + readTensor runs.
     * @returns inferenceMs: the median of the timed runs; probabilities: the last run's output
     */
    async classify(input, {runs = 5, warmup = 1} = {}) {
      context.writeTensor(inputTensor, input);
      let probabilities;
      for (let i = 0; i < warmup; i++) [, probabilities] = await runOnce();
      const timesMs = [];
      for (let i = 0; i < Math.max(1, runs); i++) {
        const [ms, result] = await runOnce();
        timesMs.push(ms);
        probabilities = result;
      }
      return {probabilities, inferenceMs: median(timesMs), timesMs};
    },
    destroy() {
      graph.destroy();
      inputTensor.destroy();
      outputTensor.destroy();
    },
  };
}

/**
 * The `k` most probable classes, best first (ties keep class order).
 * @param {Float32Array|number[]} probabilities one per class
 * @param {string[]} labels class names in index order
 * @param {number} [k]
 * @returns {{index: number, label: string, probability: number}[]}
 */
export function topK(probabilities, labels, k = 5) {
  const order = Array.from(probabilities, (p, index) => index);
  order.sort((a, b) => probabilities[b] - probabilities[a] || a - b);
  return order.slice(0, k).map((index) => ({index, label: labels[index] ?? `class ${index}`, probability: probabilities[index]}));
}
