/**
 * The text-generation page: checks that the model is converted (/api/models), loads the decoder
 * (decoder.js: ORT-web's WebNN EP on navigator.ml) and the tokenizer (tokenizer.js), then chats:
 * the conversation through the chat template, generate.js's loop, the reply streamed in. Each turn
 * renders the whole conversation again; the decoder keeps the cache rows of the ids the previous
 * turn left in it (decoder.extend), so a turn computes little more than the new message.
 *
 * For automation the page sets window.demoStatus = {state: 'loading' | 'missing' | 'ready' |
 * 'generating' | 'error', error?, missing?}, window.textGeneration = {decoder, tokenizer, context,
 * deviceType, adapter} once loaded, and after each reply window.lastGeneration = {sequence,
 * promptIds, tokens, text, stopped, timings, deviceType}.
 */
import {Decoder} from './decoder.js';
import {ChatTokenizer, TextStream} from './tokenizer.js';
import {generate} from './generate.js';
import {createSampler} from './sampler.js';
import * as view from './ui.js';

const DEFAULT_MODEL = 'smollm2-135m';
/** files a converted model folder must hold (besides one model-<L>.onnx per context) */
const REQUIRED = ['genai_config.json', 'model.onnx.data', 'tokenizer.json', 'tokenizer_config.json'];
const ORT_URL = '/demos/bench-ort/vendor/ort.min.mjs';

/** The page's URL parameters. */
export function readOptions(search) {
  const params = new URLSearchParams(search);
  const model = params.get('model') ?? DEFAULT_MODEL;
  if (!/^[\w.-]+$/.test(model)) throw new TypeError(`?model=${model}: not a model folder name`);
  // auto: createContext() chooses (WebGPU on a hardware adapter, else the CPU context)
  const device = params.get('device') || 'auto';
  if (!['auto', 'gpu', 'cpu'].includes(device)) throw new TypeError(`?device=${device}: auto, gpu or cpu`);
  // checked against the converted model's contexts by load(), which names them
  const ctxText = params.get('ctx') || null;
  // decoder.extend's policy for the cached prefix of each turn's prompt
  const reuse = params.get('reuse') || 'auto';
  if (!['auto', 'always', 'never'].includes(reuse)) throw new TypeError(`?reuse=${reuse}: auto, always or never`);
  return {model, device, maxLength: ctxText === null ? null : Number(ctxText), ctxText, prompt: params.get('prompt'),
    autorun: params.get('autorun') === '1', reuse};
}

function messageOf(error) {
  return error instanceof Error || error instanceof DOMException ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The files of REQUIRED and a graph that the model folder lacks; null: no folder. A context the
 * converted model has no graph for is not a missing file: load() names the contexts it has.
 */
async function missingFiles(model) {
  const response = await fetch('/api/models');
  if (!response.ok) throw new Error(`GET /api/models: HTTP ${response.status}`);
  const files = (await response.json()).models[model];
  if (!files) return null;
  const graphs = files.filter((f) => /^model-\d+\.onnx$/.test(f));
  return [...REQUIRED.filter((f) => !files.includes(f)), ...(graphs.length ? [] : ['model-<L>.onnx'])];
}

/** "polyfill WebNN on WebGPU: google / swiftshader (fallback adapter)" for the context. */
async function describeContext(context, implementation) {
  if (context.accelerated === false) return `${implementation} WebNN, CPU context (ONNX Runtime Web's wasm engine)`;
  if (implementation !== 'polyfill') return `${implementation} WebNN (the browser's own: adapter not visible)`;
  const {contextInfo} = await import('/polyfill/options.js');
  const info = contextInfo(context).adapterInfo ?? {};
  const name = [info.vendor, info.architecture, info.device].filter(Boolean).join(' / ') || 'unknown adapter';
  const notes = [info.description, info.isFallbackAdapter ? 'fallback adapter' : ''].filter(Boolean);
  return `polyfill WebNN on WebGPU: ${name}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}

/** A URL parameter out of its values: said on the page with the values it takes (no model is loaded). */
function addressError(ui, text) {
  const message = `Check the page's address: ${text}`;
  view.showStatus(ui, 'Failed.');
  view.showError(ui, message);
  window.demoStatus = {state: 'error', error: message};
}

/** Loads everything; returns the app state, or null when the model is not converted or the address is wrong. */
async function load(ui, options) {
  const base = `/models/${options.model}/`;
  const missing = await missingFiles(options.model);
  if (missing === null || missing.length) {
    view.showMissing(ui, options.model, missing ?? []);
    window.demoStatus = {state: 'missing', missing: missing ?? ['the folder']};
    return null;
  }
  const meta = await (await fetch(base + 'genai_config.json')).json();
  if (options.maxLength !== null && !meta.max_lengths.includes(options.maxLength)) {
    addressError(ui, `?ctx=${options.ctxText}: this model has contexts ${meta.max_lengths.join(', ')}`);
    return null;
  }
  const maxLength = options.maxLength ?? Math.min(...meta.max_lengths);
  view.showSettings(ui, {...options, maxLength}, meta.max_lengths);
  // Imported here rather than statically so that a polyfill or ORT failing to load shows on the page.
  const {ready} = await import('/polyfill/webnn.js');
  const {implementation} = await ready;
  const ort = await import(ORT_URL);
  ort.env.wasm.numThreads = 1;  // ORT's own wasm only plans the sessions; the graphs run on WebNN
  view.showStatus(ui, 'Creating the WebNN context…');
  const context = await navigator.ml.createContext(options.device === 'auto' ? {} : {deviceType: options.device});
  const deviceType = context.accelerated === false ? 'cpu' : 'gpu';
  const adapter = await describeContext(context, implementation);
  ui.adapter.textContent = adapter;
  const [decoder, tokenizer] = await Promise.all([
    Decoder.load(ort, base, {maxLength, deviceType, context,
      onProgress: (stage, fraction) => view.showProgress(ui, stage, fraction)}),
    ChatTokenizer.load(base),
  ]);
  ui.modelInfo.textContent = `${meta.name ?? options.model}: ${meta.config.layers} layers, ${meta.config.bits}-bit weights ` +
    `(${(decoder.weightBytes / 1e6).toFixed(1)} MB), context ${maxLength} tokens, KV cache ${(decoder.cacheBytes / 1e6).toFixed(1)} MB in the context`;
  ui.buildTime.textContent = `${(decoder.buildMs / 1000).toFixed(2)} s (two ORT sessions: prefill and decode)`;
  view.showStatus(ui, 'Ready.', {done: true});
  return {decoder, tokenizer, context, deviceType, adapter, messages: [], sequence: 0, abort: null, reuse: options.reuse};
}

/** One turn: the user's text in, the reply streamed out. */
async function reply(app, ui, text) {
  const {decoder, tokenizer} = app;
  const messages = [...app.messages, {role: 'user', content: text}];
  const promptIds = tokenizer.encode(tokenizer.applyChatTemplate(messages));
  if (promptIds.length >= decoder.maxLength) {
    throw new RangeError(`the conversation takes ${promptIds.length} tokens; the context holds ${decoder.maxLength}: ` +
      'start a new conversation or load a larger context');
  }
  const sequence = ++app.sequence;
  view.addMessage(ui, 'user', text);
  const out = view.addMessage(ui, 'assistant');
  const stream = new TextStream(tokenizer);
  const temperature = Number(ui.temperature.value) || 0;
  const sample = createSampler({temperature, topK: Number(ui.topK.value) || 0, seed: Number(ui.seed.value) || 0});
  const stopIds = tokenizer.stopIds;
  const t0 = performance.now();
  let tFirst = null;
  app.abort = new AbortController();
  view.showTimings(ui, {});
  const result = await generate(decoder, promptIds, {
    maxNewTokens: Math.max(1, Math.min(1024, Number(ui.maxNewTokens.value) || 64)), sample, stopIds,
    signal: app.abort.signal, reuse: app.reuse,
    onToken: async (id, index) => {
      if (!stopIds.includes(id)) out.textContent += stream.push(id);
      const now = performance.now();
      tFirst ??= now;
      view.showTimings(ui, {firstTokenMs: tFirst - t0, newTokens: index + 1,
        decodeTokensPerSecond: index ? index / ((now - tFirst) / 1000) : null});
      await new Promise((resolve) => requestAnimationFrame(resolve));  // let the page paint the token
    },
  });
  const generated = result.tokens.filter((id) => !stopIds.includes(id));
  out.textContent = tokenizer.decode(generated, {skipSpecialTokens: true});
  view.showTimings(ui, {...result.timings, stopped: result.stopped});
  app.messages = [...messages, {role: 'assistant', content: out.textContent}];
  window.lastGeneration = {sequence, promptIds, tokens: result.tokens, text: out.textContent, stopped: result.stopped,
    timings: result.timings, deviceType: app.deviceType};
}

function wire(app, ui) {
  ui.promptForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = ui.prompt.value.trim();
    if (!text) return;
    view.showError(ui, '');
    view.setBusy(ui, {ready: true, generating: true});
    window.demoStatus = {state: 'generating'};
    try {
      await reply(app, ui, text);
      ui.prompt.value = '';
    } catch (error) {
      view.showError(ui, `Generation failed: ${messageOf(error)}`);
      if (!(error instanceof RangeError)) console.error(error);
    } finally {
      app.abort = null;
      view.setBusy(ui, {ready: true, generating: false});
      window.demoStatus = {state: 'ready'};
    }
  });
  ui.stop.addEventListener('click', () => app.abort?.abort());
  ui.reset.addEventListener('click', () => {
    app.messages = [];
    ui.conversation.replaceChildren();
  });
}

async function main() {
  const ui = view.findElements(document);
  window.demoStatus = {state: 'loading'};
  // A graph build that fails inside ORT's WebNN EP can surface only as an unhandled rejection while
  // the session's creation never settles: say so on the page instead of loading forever.
  const onRejection = (event) => {
    const message = `The model could not be loaded: ${messageOf(event.reason)}`;
    view.showStatus(ui, 'Failed.');
    view.showError(ui, message);
    window.demoStatus = {state: 'error', error: message};
  };
  window.addEventListener('unhandledrejection', onRejection);
  let app;
  let options;
  try {
    options = readOptions(location.search);
  } catch (error) {
    addressError(ui, error.message);
    window.removeEventListener('unhandledrejection', onRejection);
    return;
  }
  try {
    app = await load(ui, options);
    window.removeEventListener('unhandledrejection', onRejection);
    if (!app) return;
    window.textGeneration = {decoder: app.decoder, tokenizer: app.tokenizer, context: app.context,
      deviceType: app.deviceType, adapter: app.adapter};
    wire(app, ui);
    view.setBusy(ui, {ready: true, generating: false});
    window.demoStatus = {state: 'ready'};
    if (options.prompt !== null) ui.prompt.value = options.prompt;
    if (options.autorun) ui.promptForm.requestSubmit();
  } catch (error) {
    const message = `The model could not be loaded: ${messageOf(error)}`;
    view.showStatus(ui, 'Failed.');
    view.showError(ui, message);
    window.demoStatus = {state: 'error', error: message};
    if (error?.name === 'NotSupportedError') console.warn(error); else console.error(error);
  }
}

main().catch((error) => {
  document.body.append(Object.assign(document.createElement('p'), {className: 'error', textContent: messageOf(error)}));
  console.error(error);
});
