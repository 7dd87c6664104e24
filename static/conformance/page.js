/**
 * The /conformance/ page: runs the cases and renders an operator x data type table.
 * Exposes window.runConformance({op, family, deviceType}) for automation, and sets
 * window.conformance = {results, passed, failed, ms, context: 'gpu' | 'cpu'} when a run ends.
 * URL parameters: op, device (cpu | gpu), autorun (0: wait for the button), webnn=polyfill.
 */
import {ready} from '/polyfill/webnn.js';
import {loadFamilies, runAll, summarize} from './runner.js';

/** 'polyfill' | 'native' once the polyfill's ready promise settled. */
let implementation = 'unknown';
const TYPES = ['float32', 'float16', 'int32', 'uint32', 'int64', 'uint64', 'int8', 'uint8', 'validation'];
const $ = (id) => document.getElementById(id);

function render(results) {
  const table = summarize(results);
  const rows = [...table.keys()].sort();
  const head = `<tr><th>operator</th>${TYPES.map((t) => `<th>${t}</th>`).join('')}</tr>`;
  const body = rows.map((op) => {
    const row = table.get(op);
    const cells = TYPES.map((t) => {
      const c = row.get(t);
      if (!c) return '<td class="none">–</td>';
      const total = c.passed + c.failed;
      const worst = t === 'validation' ? '' : `<br><small>worst ${c.worst > 1e-3 || c.worst === 0 ? c.worst : c.worst.toExponential(1)}</small>`;
      return `<td class="${c.failed ? 'bad' : 'ok'}">${c.passed}/${total}${worst}</td>`;
    }).join('');
    return `<tr><td>${op}</td>${cells}</tr>`;
  }).join('');
  $('table').innerHTML = head + body;
  const failures = results.filter((r) => !r.pass);
  $('failures').innerHTML = failures.map((r) => `<li>${r.name}: ${escape(r.detail ?? '')}</li>`).join('') || '<li>none</li>';
}

/**
 * Lets the browser paint (a frame, or 100 ms when the page is hidden and gets none): the CPU
 * context finishes its work in microtasks, so a run that never waits for a task would not show
 * its progress until it ended.
 */
function yieldToRenderer() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => { clearTimeout(timer); setTimeout(resolve, 0); });
  });
}

/** What a context is, in words: WebGPU (and its adapter where the polyfill says) or the CPU context. */
function contextText(context) {
  const kind = implementation === 'native' ? 'the browser\'s own' :
    context.accelerated === false ? 'CPU context (ONNX Runtime Web\'s wasm engine)' : 'WebGPU';
  return `WebNN implementation: ${implementation}; context: ${kind}. ` +
    `Add ?device=cpu or ?device=gpu to choose (default: createContext()'s choice, the CPU context on a software adapter).`;
}

function escape(text) {
  return text.replace(/[&<>]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;'}[c]));
}

/**
 * Runs the suite (or part of it).
 * @param {{op?: string, family?: string, deviceType?: string}} [options] deviceType: 'cpu' for the
 *   CPU context, 'gpu' for WebGPU (default: the URL's ?device=, else createContext()'s choice)
 * @returns {Promise<{results: object[], passed: number, failed: number, ms: number}>}
 */
async function runConformance({op, family, deviceType = params.get('device') ?? undefined} = {}) {
  const started = performance.now();
  $('status').textContent = 'loading cases…';
  let families = await loadFamilies();
  if (family) families = families.filter((f) => f.name === family);
  let done = 0;
  let painted = performance.now();
  let contextKind = null;
  const results = await runAll(families, {
    filter: (c) => !op || c.op === op,
    contextOptions: deviceType ? {deviceType} : {},
    onContext: (context) => {
      contextKind = context.accelerated === false ? 'cpu' : 'gpu';
      $('implementation').textContent = contextText(context);
    },
    onResult: async () => {
      if (++done % 25 === 0) $('status').textContent = `${done} cases run…`;
      if (performance.now() - painted > 100) {
        await yieldToRenderer();
        painted = performance.now();
      }
    },
  });
  render(results);
  const passed = results.filter((r) => r.pass).length;
  const ms = performance.now() - started;
  $('status').textContent = `${passed} of ${results.length} cases passed in ${(ms / 1000).toFixed(1)} s`;
  if (results.length === 0 && op) {
    const known = new Set(families.flatMap((f) => [...(f.graph ?? []), ...(f.validation ?? [])].map((c) => c.op)));
    $('status').textContent = `no cases for operator "${op}"; operators with cases: ${[...known].sort().join(', ')}`;
  }
  window.conformance = {results, passed, failed: results.length - passed, ms, context: contextKind};
  return window.conformance;
}

window.runConformance = runConformance;
const params = new URLSearchParams(location.search);
({implementation} = await ready);
$('implementation').textContent = `WebNN implementation: ${implementation}; ` +
  'add ?device=cpu or ?device=gpu to choose the context.';
$('run').addEventListener('click', () => runConformance({op: $('filter').value.trim() || undefined}));
$('filter').value = params.get('op') ?? '';
if (params.get('autorun') !== '0') runConformance({op: params.get('op') ?? undefined});
else $('status').textContent = 'ready';
