/**
 * DOM updates of the text-generation page. Functions take the element map from `findElements()`;
 * none keeps state of its own.
 */
import {findElements as findById} from '../dom.js';

const IDS = ['error', 'missing', 'missing-name', 'missing-files', 'settings', 'model-name', 'device', 'context-length',
  'load-progress', 'load-status', 'adapter', 'model-info', 'build-time', 'conversation', 'prompt-form', 'prompt',
  'generate', 'stop', 'reset', 'max-new-tokens', 'temperature', 'top-k', 'seed', 'ttft', 'prefill-rate',
  'decode-rate', 'token-count'];

/** The page's elements by camelCase id (../dom.js). */
export function findElements(document) {
  return findById(document, IDS);
}

export function showError(ui, message) {
  ui.error.textContent = message;
  ui.error.hidden = !message;
}

/** The model is not converted: the command to run, and which files are missing. */
export function showMissing(ui, name, missing) {
  ui.missingName.textContent = name;
  ui.missingFiles.textContent = missing.length ? `Missing: ${missing.join(', ')}.` : '';
  ui.missing.hidden = false;
  ui.loadStatus.textContent = 'No model.';
}

/** The settings form shows the page's options; the context lengths are the model's graphs. */
export function showSettings(ui, {model, device, maxLength}, maxLengths) {
  ui.modelName.value = model;
  ui.device.value = device;
  ui.contextLength.replaceChildren(...maxLengths.map((length) => new Option(String(length), String(length), false, length === maxLength)));
}

/**
 * The progress bar over both phases: the weights' download (first 80 %) and the two graph builds.
 * @param {'download'|'build'} stage
 * @param {number} fraction 0..1 of that stage
 */
export function showProgress(ui, stage, fraction, weightBytes) {
  ui.loadProgress.max = 1;
  if (stage === 'download') {
    ui.loadProgress.value = 0.8 * fraction;
    ui.loadStatus.textContent = `Downloading the weights: ${Math.round(100 * fraction)} %` +
      (weightBytes ? ` of ${(weightBytes / 1e6).toFixed(1)} MB` : '');
  } else {
    ui.loadProgress.value = 0.8 + 0.2 * fraction;
    ui.loadStatus.textContent = fraction < 0.5 ? 'Building the prefill graph…' : fraction < 1 ? 'Building the decode graph…' : 'Allocating the cache…';
  }
}

export function showStatus(ui, text, {done = false} = {}) {
  ui.loadStatus.textContent = text;
  if (done) ui.loadProgress.value = ui.loadProgress.max;
}

/** Enables the chat controls (or disables them while generating: only Stop stays usable). */
export function setBusy(ui, {ready, generating}) {
  for (const element of [ui.prompt, ui.generate, ui.reset, ui.maxNewTokens, ui.temperature, ui.topK, ui.seed]) {
    element.disabled = !ready || generating;
  }
  ui.stop.disabled = !generating;
}

/** Appends a message bubble; returns its text node's holder for streaming into. */
export function addMessage(ui, role, text = '') {
  const bubble = document.createElement('div');
  bubble.className = `message ${role}`;
  const label = document.createElement('span');
  label.className = 'role';
  label.textContent = role;
  const body = document.createElement('span');
  body.className = 'text';
  body.textContent = text;
  bubble.append(label, body);
  ui.conversation.append(bubble);
  return body;
}

const rate = (value) => (value === null || !Number.isFinite(value) ? '…' : `${value.toFixed(value < 10 ? 2 : 1)} tokens/s`);
const ms = (value) => (value === null ? '…' : value < 1000 ? `${value.toFixed(0)} ms` : `${(value / 1000).toFixed(2)} s`);

/** Timings of generate() (generate.js), possibly partial while it runs. */
export function showTimings(ui, timings) {
  ui.ttft.textContent = ms(timings.firstTokenMs ?? null);
  ui.prefillRate.textContent = timings.prefillMs === undefined ? '…'
    : `${rate(timings.prefillTokensPerSecond)} (${timings.promptTokens} prompt tokens` +
      `${timings.reusedTokens ? `, ${timings.reusedTokens} from the cache` : ''} in ${ms(timings.prefillMs)})`;
  ui.decodeRate.textContent = rate(timings.decodeTokensPerSecond ?? null);
  ui.tokenCount.textContent = timings.newTokens === undefined ? '…'
    : `${timings.newTokens} new${timings.stopped ? `, ended by ${timings.stopped}` : ''}`;
}
