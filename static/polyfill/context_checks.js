/**
 * The argument checks MLContext's methods share (spec §MLContext: readTensor, writeTensor,
 * dispatch, exportToGPU), kept apart from context.js so that it stays about the context itself.
 */
import {typeError} from './errors.js';
import {isTensor, tensorSlots} from './tensor.js';

/**
 * @returns {object} the slots of `tensor`, a live MLTensor of `context`
 * @throws {TypeError} not an MLTensor, another context's tensor, a destroyed tensor
 */
export function checkTensor(context, tensor, what) {
  if (!isTensor(tensor)) throw typeError(what, 'argument is not an MLTensor');
  const t = tensorSlots(tensor);
  if (t.context !== context) throw typeError(what, 'the tensor belongs to another MLContext');
  if (t.destroyed) throw typeError(what, 'the tensor is destroyed');
  return t;
}

/** Whether an AllowSharedBufferSource's memory was detached (transferred) meanwhile. */
export function isDetached(source) {
  const buffer = ArrayBuffer.isView(source) ? source.buffer : source;
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  return ArrayBuffer.isView(source) ? source.byteLength === 0 : buffer.byteLength === 0;
}

/**
 * Checks dispatch()'s inputs or outputs against the graph's descriptors: as many as it has, each
 * named by it, not a constant tensor, with its exact data type and shape (Chromium 156 compares
 * shapes exactly).
 * @param {[string, MLTensor][]} entries the record's entries
 * @param {Map<string, {dataType: string, shape: number[]}>} descriptors the graph's, by name
 * @param {string} what 'input' | 'output'
 * @throws {TypeError} any mismatch, with the dispatch label
 */
export function validateNamed(entries, descriptors, what) {
  if (entries.length !== descriptors.size) {
    throw typeError('dispatch', `expected ${descriptors.size} ${what} tensors (${[...descriptors.keys()].join(', ')}), got ${entries.length}`);
  }
  for (const [name, tensor] of entries) {
    const t = tensorSlots(tensor);
    if (t.constant) throw typeError('dispatch', `${what} "${name}" is a constant tensor`);
    const d = descriptors.get(name);
    if (!d) throw typeError('dispatch', `the graph has no ${what} named "${name}"`);
    if (d.dataType !== t.desc.dataType || d.shape.length !== t.desc.shape.length || d.shape.some((x, i) => x !== t.desc.shape[i])) {
      throw typeError('dispatch', `${what} "${name}" expects ${d.dataType} [${d.shape}], got ${t.desc.dataType} [${t.desc.shape}]`);
    }
  }
}
