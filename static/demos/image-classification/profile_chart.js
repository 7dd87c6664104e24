/**
 * The demo's GPU profile (`?profile=1`): the context is created with the polyfill's profiling
 * mode, every operator of the manifest gets its output's name as `label`, and after each
 * classification two SVG bar charts show the mean GPU ms per inference by operator type and by
 * layer (label), from readProfile() of /polyfill/profiling.js. window.lastProfile holds the
 * profile drawn last. Plain DOM/SVG.
 */

const SVG = 'http://www.w3.org/2000/svg';

/**
 * @param {string} search location.search
 * @returns {boolean} whether the page URL asks for the profile (`profile=1`)
 */
export function profileRequested(search) {
  return new URLSearchParams(search).get('profile') === '1';
}

/**
 * A copy of `manifest` whose operators carry `label` = their (first) output's name, so each
 * profile step names its layer.
 * @param {object} manifest the JSON graph description (graph_json.js form)
 * @returns {object}
 */
export function withLayerLabels(manifest) {
  const operators = manifest.operators.map((op) => {
    const name = Array.isArray(op.outputs) ? op.outputs[0] : op.outputs;
    return {...op, options: {...(op.options ?? {}), label: String(name)}};
  });
  return {...manifest, operators};
}

/**
 * Sums step times by a key, largest first.
 * @param {{ms: number, operators: {type: string, label: string}[]}[]} steps readProfile() steps
 * @param {(step: object) => string} keyOf
 * @returns {{key: string, ms: number, steps: number}[]}
 */
export function groupSteps(steps, keyOf) {
  const groups = new Map();
  for (const step of steps) {
    const key = keyOf(step);
    const g = groups.get(key) ?? {key, ms: 0, steps: 0};
    g.ms += step.ms;
    g.steps += 1;
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.ms - a.ms);
}

/**
 * Operator type of a step: its first operator's, the producer of a fused step (conv2d for
 * conv2d -> add -> clamp); 'input conversion' for steps of no operator.
 */
const typeOf = (step) => step.operators[0]?.type ?? 'input conversion';
/** Layer of a step: its operator's label, else its type. */
const layerOf = (step) => step.operators[0]?.label || typeOf(step);

/**
 * One horizontal bar chart.
 * @param {Document} document
 * @param {string} title
 * @param {{key: string, ms: number, steps: number}[]} rows largest first
 * @returns {SVGSVGElement} with one `rect.bar` (data-key, data-ms) per row
 */
function barChart(document, title, rows) {
  const rowHeight = 16, labelWidth = 220, barWidth = 360, width = labelWidth + barWidth + 90;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(rows.length * rowHeight + 4));
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', title);
  const max = Math.max(...rows.map((r) => r.ms), 1e-9);
  rows.forEach((row, i) => {
    const y = i * rowHeight + 2;
    const text = (x, content, anchor) => {
      const t = document.createElementNS(SVG, 'text');
      t.setAttribute('x', String(x));
      t.setAttribute('y', String(y + rowHeight - 4));
      t.setAttribute('font-size', '12');
      t.setAttribute('text-anchor', anchor);
      t.textContent = content;
      svg.append(t);
    };
    text(labelWidth - 6, row.key.length > 32 ? `${row.key.slice(0, 31)}…` : row.key, 'end');
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('class', 'bar');
    rect.setAttribute('x', String(labelWidth));
    rect.setAttribute('y', String(y + 2));
    rect.setAttribute('height', String(rowHeight - 4));
    rect.setAttribute('width', String(Math.max(1, (row.ms / max) * barWidth)));
    rect.setAttribute('fill', '#36c');
    rect.dataset.key = row.key;
    rect.dataset.ms = String(row.ms);
    const tip = document.createElementNS(SVG, 'title');
    tip.textContent = `${row.key}: ${row.ms.toFixed(3)} ms in ${row.steps} step${row.steps === 1 ? '' : 's'}`;
    rect.append(tip);
    svg.append(rect);
    text(labelWidth + Math.max(1, (row.ms / max) * barWidth) + 4, `${row.ms.toFixed(3)} ms`, 'start');
  });
  return svg;
}

/**
 * Reads the graph's profile (and resets it) and draws it in `#profile`, made at the end of
 * <main> on first use.
 * @param {Document} document
 * @param {MLGraph} graph built on a context with {polyfill: {profiling: true}}
 * @param {{maxLayers?: number}} [options] layers drawn (the slowest), default 30
 * Where there is no profile (the CPU context, or an adapter without "timestamp-query") the
 * section says why instead, and the classification stands.
 * @returns {Promise<object|null>} the profile (readProfile()'s result), or null when there is none
 */
export async function showProfile(document, graph, {maxLayers = 30} = {}) {
  const {readProfile} = await import('/polyfill/profiling.js');
  let section = document.getElementById('profile');
  if (!section) {
    section = document.createElement('section');
    section.id = 'profile';
    section.setAttribute('aria-labelledby', 'profile-heading');
    document.querySelector('main').append(section);
  }
  const heading = Object.assign(document.createElement('h2'), {id: 'profile-heading', textContent: 'GPU profile'});
  let profile;
  try {
    profile = await readProfile(graph, {reset: true});
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    section.replaceChildren(heading, Object.assign(document.createElement('p'), {className: 'muted', textContent: `No GPU profile: ${e.message}.`}));
    window.lastProfile = null;
    return null;
  }
  const summary = Object.assign(document.createElement('p'), {className: 'muted',
    textContent: `${profile.steps.length} GPU steps, ${profile.totalMs.toFixed(3)} ms of GPU time per inference ` +
      `(mean of ${profile.runs} profiled inference${profile.runs === 1 ? '' : 's'}; profiling runs one compute pass per step, ` +
      'so inference is slower than without ?profile=1).'});
  const byType = groupSteps(profile.steps, typeOf);
  const byLayer = groupSteps(profile.steps, layerOf);
  const typeChart = barChart(document, 'GPU ms per operator type', byType);
  typeChart.id = 'profile-by-type';
  const layerChart = barChart(document, 'GPU ms per layer', byLayer.slice(0, maxLayers));
  layerChart.id = 'profile-by-layer';
  const h3 = (text) => Object.assign(document.createElement('h3'), {textContent: text});
  section.replaceChildren(heading, summary, h3('By operator type'), typeChart,
    h3(`By layer (the ${Math.min(maxLayers, byLayer.length)} slowest of ${byLayer.length})`), layerChart);
  window.lastProfile = profile;
  return profile;
}
