/**
 * The image-classification demo: loads EfficientNet-Lite0 (/models/efficientnet-lite0/), builds it
 * with MLGraphBuilder and classifies sample photos, the user's files and webcam frames.
 *
 * For automation, after each classification the page sets (in this order)
 *   window.lastInput          Float32Array, the exact input tensor given to the graph
 *   window.lastProbabilities  Array of the 1000 output probabilities
 *   window.lastRun            {sequence, source, top5: [{label, probability}], buildMs, inferenceMs,
 *                              timesMs, runs, warmup, adapter}
 * and on a failed classification window.lastError = {sequence, message}. window.demoStatus is
 * {state: 'loading' | 'ready' | 'error', error?} for the model itself.
 * URL parameters: runs (timed runs, default 5), warmup (default 1), autorun (default 1: classify the
 * coffee photo once the model is ready, unless a picture was asked for while it loaded),
 * profile=1 (GPU time per operator type and layer after each classification: profile_chart.js).
 */
import {loadModel} from './loader.js';
import {buildClassifier, topK} from './model.js';
import {decodeImage, preprocess, readPixels} from './preprocess.js';
import {adapterText, describeAdapter} from './adapter.js';
import {cameraErrorText, cameraSupported, startCamera, stopCamera} from './camera.js';
import {PHOTOS, attributionText} from './photos.js';
import * as view from './ui.js';
import {profileRequested, showProfile, withLayerLabels} from './profile_chart.js';

const MODEL_URL = '/models/efficientnet-lite0/';

/**
 * Reads the page's URL parameters.
 * @param {string} search location.search
 * @returns {{runs: number, warmup: number, autorun: boolean}}
 */
export function readOptions(search) {
  const params = new URLSearchParams(search);
  const count = (name, fallback, min, max) => {
    const value = Number.parseInt(params.get(name) ?? '', 10);
    return Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : fallback;
  };
  return {runs: count('runs', 5, 1, 100), warmup: count('warmup', 1, 0, 10), autorun: params.get('autorun') !== '0'};
}

/** The message of anything thrown. */
function messageOf(error) {
  return error instanceof Error || error instanceof DOMException ? `${error.name}: ${error.message}` : String(error);
}

/** Loads a bundled photo's pixels. */
async function photoSource(photo) {
  const response = await fetch(photo.file);
  if (!response.ok) throw new Error(`GET ${photo.file}: HTTP ${response.status}`);
  const bitmap = await decodeImage(await response.blob());
  try {
    return {name: photo.file.split('/').pop(), photoId: photo.id, attribution: attributionText(photo),
      pixels: readPixels(bitmap, bitmap.width, bitmap.height)};
  } finally {
    bitmap.close();
  }
}

/** Loads a user file's pixels; a file the browser cannot decode is the user's error, not ours. */
async function fileSource(file) {
  let bitmap;
  try {
    bitmap = await decodeImage(file);
  } catch (error) {
    throw Object.assign(new Error(`${file.name} could not be decoded as an image (${messageOf(error)})`), {userError: true});
  }
  try {
    return {name: file.name, pixels: readPixels(bitmap, bitmap.width, bitmap.height)};
  } finally {
    bitmap.close();
  }
}

/** Runs one classification of `source` and publishes it on the page and on window. */
async function classifySource(app, source) {
  const {manifest, labels, classifier, adapter, options, ui} = app;
  const {tensor, preview} = preprocess(source.pixels, manifest.preprocessing);
  view.clearResults(ui);  // the previous picture's top 5 would read as this one's
  view.showSource(ui, source);
  view.showPreview(ui, preview);
  const {probabilities, inferenceMs, timesMs} = await classifier.classify(tensor, options);
  const top5 = topK(probabilities, labels, 5).map(({label, probability}) => ({label, probability}));
  view.showPredictions(ui, top5);
  view.showTimings(ui, {inferenceMs, runs: timesMs.length});
  if (app.profile) await showProfile(document, classifier.graph);
  window.lastInput = tensor;
  window.lastProbabilities = Array.from(probabilities);
  window.lastRun = {sequence: source.sequence, source: source.name, top5, buildMs: classifier.buildMs, inferenceMs,
    timesMs, runs: timesMs.length, warmup: options.warmup, adapter};
}

/**
 * Queues a classification: `load` gives the source's pixels. Requests run one at a time, in order,
 * and none before the model is ready: `app.queue` starts as the model-ready promise, so a request
 * made while it loads (a file set on #image-file by automation or restored form state, though the
 * choices are still disabled) waits for it. If the model fails, waiting requests are dropped (the
 * page already says why). Failures are shown on the page (console.error only for failures that
 * are not the user's).
 */
function enqueue(app, load) {
  const sequence = ++app.sequence;
  if (!app.classifier) view.showRunStatus(app.ui, 'Waiting for the model…');
  app.queue = app.queue.then(async () => {
    if (!app.classifier) return;
    view.clearError(app.ui);
    view.showRunStatus(app.ui, 'Classifying…');
    try {
      const source = await load();
      view.showRunStatus(app.ui, `Classifying ${source.name} (${app.options.warmup + app.options.runs} inferences)…`);
      await classifySource(app, {...source, sequence});
      view.showRunStatus(app.ui, '');
    } catch (error) {
      view.showRunStatus(app.ui, '');
      const message = error?.userError ? error.message : `Classification failed: ${messageOf(error)}`;
      view.showError(app.ui, message);
      window.lastError = {sequence, message};
      if (!error?.userError) console.error(error);
    }
  });
  return app.queue;
}

/** Wires the picture choices: photo buttons, file input, webcam. */
function wireChoices(app) {
  const {ui} = app;
  view.renderPhotoButtons(ui, PHOTOS, (id) => enqueue(app, () => photoSource(PHOTOS.find((p) => p.id === id))));
  ui.imageFile.addEventListener('change', () => {
    const [file] = ui.imageFile.files;
    if (file) enqueue(app, () => fileSource(file));
  });
  if (!cameraSupported()) ui.cameraStatus.textContent = 'This browser offers no camera access on this page.';
  ui.cameraStart.addEventListener('click', async () => {
    if (app.stream) {
      stopCamera(app.stream, ui.camera);
      app.stream = null;
      ui.camera.hidden = true;
      ui.cameraCapture.disabled = true;
      ui.cameraStart.textContent = 'Start webcam';
      ui.cameraStatus.textContent = '';
      return;
    }
    ui.cameraStatus.textContent = 'Starting the camera…';
    try {
      app.stream = await startCamera(ui.camera);
      ui.camera.hidden = false;
      ui.cameraCapture.disabled = false;
      ui.cameraStart.textContent = 'Stop webcam';
      ui.cameraStatus.textContent = '';
    } catch (error) {
      ui.cameraStatus.textContent = cameraErrorText(error); // no camera is not a page error
    }
  });
  ui.cameraCapture.addEventListener('click', () => {
    enqueue(app, async () => ({name: 'webcam frame', pixels: readPixels(ui.camera, ui.camera.videoWidth, ui.camera.videoHeight)}));
  });
}

/** Loads and builds the model, then classifies the coffee photo unless ?autorun=0 or a picture is waiting. */
async function main() {
  const ui = view.findElements(document);
  let modelSettled;
  const app = {ui, options: readOptions(location.search), sequence: 0, stream: null,
    queue: new Promise((resolve) => { modelSettled = resolve; })};
  window.demoStatus = {state: 'loading'};
  wireChoices(app);
  try {
    // Imported here rather than statically so that a polyfill failing to load shows on the page.
    const {ready} = await import('/polyfill/webnn.js');
    const {implementation} = await ready;
    view.showStatus(ui, 'Creating the WebNN context…');
    app.profile = profileRequested(location.search);
    // ?device=cpu | gpu picks the context (the polyfill's CPU context or WebGPU); else createContext() chooses
    const device = new URLSearchParams(location.search).get('device');
    const context = await navigator.ml.createContext({...(device ? {deviceType: device} : {}), ...(app.profile ? {polyfill: {profiling: true}} : {})});
    app.adapter = await describeAdapter(context, implementation);
    ui.adapter.textContent = adapterText(app.adapter);
    const {manifest, labels, weights} = await loadModel(MODEL_URL, (progress) => view.showProgress(ui, progress));
    view.showStatus(ui, `Building the graph (${manifest.operators.length} operators)…`);
    app.classifier = await buildClassifier(context, app.profile ? withLayerLabels(manifest) : manifest, weights);
    Object.assign(app, {manifest, labels});
    view.showTimings(ui, {buildMs: app.classifier.buildMs});
    view.showStatus(ui, `Ready: ${manifest.name ?? 'model'}, ${manifest.operators.length} operators, ` +
      `${(weights.byteLength / 1e6).toFixed(1)} MB of weights.`, {done: true});
    view.setChoicesEnabled(ui, true, {cameraSupported: cameraSupported()});
    window.demoStatus = {state: 'ready'};
    modelSettled();
  } catch (error) {
    const message = `The model could not be loaded or built: ${messageOf(error)}`;
    view.showStatus(ui, 'Failed.');
    view.showError(ui, message);
    window.demoStatus = {state: 'error', error: message};
    view.showRunStatus(ui, '');
    modelSettled();
    // An implementation or browser lacking a feature (NotSupportedError) is a limitation, not a bug.
    if (error?.name === 'NotSupportedError') console.warn(error); else console.error(error);
    return;
  }
  // A picture asked for while the model loaded is the one to show, not the coffee.
  if (app.options.autorun && app.sequence === 0) await enqueue(app, () => photoSource(PHOTOS[0]));
}

main().catch((error) => {
  // Only a page without its elements gets here; say so where it can be seen.
  document.body.append(Object.assign(document.createElement('p'), {className: 'error', textContent: messageOf(error)}));
  console.error(error);
});
