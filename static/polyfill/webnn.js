/**
 * Entry point of the polyfill: importing this module installs `navigator.ml` and the globals
 * MLContext, MLGraphBuilder, MLGraph, MLOperand, MLTensor when the browser has no usable WebNN
 * (no navigator.ml, or a native createContext() that rejects with NotSupportedError, as Chromium
 * on Linux does). `?webnn=polyfill` in the page URL, or `install({force: true})`, installs ours
 * regardless.
 *
 * Usage: `<script type="module" src="/polyfill/webnn.js"></script>` before the page's own modules,
 * or `import {ready} from '/polyfill/webnn.js'; await ready;`.
 */
import {ML} from './ml.js';
import {MLContext} from './context.js';
import {MLGraphBuilder} from './graph_builder.js';
import {MLGraph} from './graph.js';
import {MLOperand} from './operand.js';
import {MLTensor} from './tensor.js';

export {ML, MLContext, MLGraphBuilder, MLGraph, MLOperand, MLTensor};

const GLOBALS = {ML, MLContext, MLGraphBuilder, MLGraph, MLOperand, MLTensor};

/** Whether the native WebNN, if any, can create a context. */
async function nativeUsable() {
  const native = globalThis.navigator?.ml;
  if (!native || native instanceof ML) return false;
  try {
    const context = await native.createContext();
    context.destroy?.();
    return true;
  } catch (e) {
    return !(e && e.name === 'NotSupportedError');
  }
}

/**
 * Installs the polyfill.
 * @param {{force?: boolean}} [options] force: install even when a native WebNN works
 * @returns {Promise<{installed: boolean, implementation: 'polyfill'|'native'}>}
 */
export async function install({force = false} = {}) {
  const forced = force || new URLSearchParams(globalThis.location?.search ?? '').get('webnn') === 'polyfill';
  if (!forced && await nativeUsable()) return {installed: false, implementation: 'native'};
  const ml = new ML();
  Object.defineProperty(globalThis.navigator, 'ml', {value: ml, configurable: true, enumerable: true, writable: false});
  for (const [name, value] of Object.entries(GLOBALS)) {
    Object.defineProperty(globalThis, name, {value, configurable: true, writable: true, enumerable: false});
  }
  return {installed: true, implementation: 'polyfill'};
}

/** Resolves once the automatic install has run; tells which implementation is in use. */
export const ready = install();
// Importers (a page's own modules, `await import(...)`) continue only once navigator.ml is set.
await ready;
