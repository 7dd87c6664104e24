/**
 * Runs conformance cases (JSON, see tests/conformance/encode.py) against navigator.ml.
 * Graph cases: build, dispatch, read back, compare within the case's tolerance.
 * Validation cases: the case's JS must throw the named error, with `[label]` in its message.
 * Nothing here logs to the console: failures are results, not errors.
 */
import {addToBuilder, fromBase64} from '/harness/graph_json.js';
import {compare} from './compare.js';

/** Loads the case index and the families it lists. @returns {Promise<object[]>} families */
export async function loadFamilies(base = './cases/') {
  const index = await (await fetch(`${base}index.json`)).json();
  return Promise.all(index.families.map(async (name) => ({name, ...(await (await fetch(`${base}${name}.json`)).json())})));
}

/**
 * Runs one graph case.
 * @returns {Promise<{name, op, dataType, kind: 'graph', pass, worst, metric, detail?}>}
 */
export async function runGraphCase(context, c) {
  const result = {name: c.name, op: c.op, dataType: c.dataType, kind: 'graph', metric: c.tolerance.metric, pass: false, worst: null};
  const tensors = [];
  try {
    const builder = new MLGraphBuilder(context);
    const operands = addToBuilder(builder, c.graph, (name, spec) => fromBase64(spec.bytes));
    const graph = await builder.build(Object.fromEntries(c.graph.outputs.map((n) => [n, operands.get(n)])));
    const inputs = {};
    for (const [name, spec] of Object.entries(c.graph.inputs ?? {})) {
      const t = await context.createTensor({dataType: spec.dataType, shape: spec.shape, writable: true});
      context.writeTensor(t, fromBase64(c.inputs[name].bytes));
      inputs[name] = t;
      tensors.push(t);
    }
    const outputs = {};
    for (const name of c.graph.outputs) {
      const o = operands.get(name);
      outputs[name] = await context.createTensor({dataType: o.dataType, shape: o.shape, readable: true});
      tensors.push(outputs[name]);
    }
    context.dispatch(graph, inputs, outputs);
    result.pass = true;
    result.worst = 0;
    for (const name of c.graph.outputs) {
      const exp = c.expected[name];
      const o = operands.get(name);
      if (o.dataType !== exp.dataType || o.shape.length !== exp.shape.length || o.shape.some((d, i) => d !== exp.shape[i])) {
        result.pass = false;
        result.detail = `${name}: got ${o.dataType} [${o.shape}], expected ${exp.dataType} [${exp.shape}]`;
        continue;
      }
      const actual = new Uint8Array(await context.readTensor(outputs[name]));
      const r = compare(actual, fromBase64(exp.bytes), exp.dataType, c.tolerance);
      result.worst = Math.max(result.worst, r.worst);
      if (!r.pass) {
        result.pass = false;
        result.detail = `${name}[${r.index}]: got ${r.actual}, expected ${r.expected} (${r.worst} ${c.tolerance.metric} > ${c.tolerance.value})`;
      }
    }
    graph.destroy();
  } catch (e) {
    result.pass = false;
    result.detail = `${e?.name}: ${e?.message}`;
  } finally {
    tensors.forEach((t) => t.destroy());
  }
  return result;
}

/**
 * Runs one validation case.
 * @returns {Promise<{name, op, kind: 'validation', pass, detail?}>}
 */
export async function runValidationCase(context, c) {
  const result = {name: c.name, op: c.op, dataType: c.dataType ?? '-', kind: 'validation', pass: false};
  let fn;
  try {
    fn = new Function(`return (${c.js});`)();
  } catch (e) {
    result.detail = `case does not parse: ${e.message}`;
    return result;
  }
  try {
    const builder = new MLGraphBuilder(context);
    await fn(builder, context);
    result.detail = `no error thrown, expected ${c.error}`;
  } catch (e) {
    const nameOk = e?.name === c.error;
    const labelOk = !c.label || String(e?.message).includes(`[${c.label}]`);
    result.pass = nameOk && labelOk;
    if (!result.pass) result.detail = `threw ${e?.name}: ${e?.message}; expected ${c.error}${c.label ? ` with [${c.label}]` : ''}`;
  }
  return result;
}

/**
 * Runs families of cases on one context.
 * @param {object[]} families from loadFamilies()
 * @param {{filter?: (c) => boolean, onResult?: (r) => void | Promise<void>, onContext?: (context) => void,
 *   contextOptions?: object}} [options]
 *   contextOptions: for createContext(), e.g. {deviceType: 'cpu'} for the CPU context; onContext
 *   is told the context once it exists; onResult is awaited after each case (a page yields to its
 *   renderer there)
 * @returns {Promise<object[]>} results
 */
export async function runAll(families, {filter = () => true, onResult = () => {}, onContext = () => {}, contextOptions = {}} = {}) {
  const context = await navigator.ml.createContext(contextOptions);
  onContext(context);
  const results = [];
  try {
    for (const family of families) {
      for (const c of family.graph ?? []) {
        if (!filter(c)) continue;
        const r = await runGraphCase(context, c);
        r.family = family.name;
        results.push(r);
        await onResult(r);
      }
      for (const c of family.validation ?? []) {
        if (!filter(c)) continue;
        const r = await runValidationCase(context, c);
        r.family = family.name;
        results.push(r);
        await onResult(r);
      }
    }
  } finally {
    context.destroy();
  }
  return results;
}

/**
 * Summary table: op -> dataType -> {passed, failed, worst}.
 * @returns {Map<string, Map<string, {passed: number, failed: number, worst: number}>>}
 */
export function summarize(results) {
  const table = new Map();
  for (const r of results) {
    if (!table.has(r.op)) table.set(r.op, new Map());
    const row = table.get(r.op);
    const key = r.kind === 'validation' ? 'validation' : r.dataType;
    if (!row.has(key)) row.set(key, {passed: 0, failed: 0, worst: 0});
    const cell = row.get(key);
    if (r.pass) cell.passed++; else cell.failed++;
    if (typeof r.worst === 'number' && Number.isFinite(r.worst)) cell.worst = Math.max(cell.worst, r.worst);
  }
  return table;
}
