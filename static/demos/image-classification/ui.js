/**
 * DOM updates of the image-classification page. Functions take the element map from
 * `findElements()`; none keeps state of its own.
 */
import {findElements as findById} from '../dom.js';

/** Element ids the page needs. */
const IDS = ['load-progress', 'load-status', 'adapter', 'build-time', 'inference-time', 'photos',
  'image-file', 'camera-start', 'camera-capture', 'camera-status', 'camera', 'model-input',
  'source-name', 'attribution', 'run-status', 'predictions', 'error'];

/** The page's elements by camelCase id (../dom.js). */
export function findElements(document) {
  return findById(document, IDS);
}

/** "12.3 MB" from a byte count. */
function megabytes(bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/**
 * Shows download progress of the weights.
 * @param {Record<string, HTMLElement>} ui
 * @param {{loaded: number, total: number|null}} progress bytes
 */
export function showProgress(ui, {loaded, total}) {
  if (total) {
    ui.loadProgress.max = total;
    ui.loadProgress.value = loaded;
    ui.loadStatus.textContent = `Downloading weights: ${megabytes(loaded)} of ${megabytes(total)}`;
  } else {
    ui.loadProgress.removeAttribute('value'); // indeterminate
    ui.loadStatus.textContent = `Downloading weights: ${megabytes(loaded)}`;
  }
}

/** Sets the status line next to the progress bar (and completes the bar when `done`). */
export function showStatus(ui, text, {done = false} = {}) {
  ui.loadStatus.textContent = text;
  if (done) ui.loadProgress.value = ui.loadProgress.max;
}

/**
 * Shows an error on the page.
 * @param {Record<string, HTMLElement>} ui
 * @param {string} message
 */
export function showError(ui, message) {
  ui.error.textContent = message;
  ui.error.hidden = false;
}

/** Hides the error line. */
export function clearError(ui) {
  ui.error.textContent = '';
  ui.error.hidden = true;
}

/** "1234 ms" / "56.7 ms" */
export function formatMs(ms) {
  return ms >= 100 ? `${Math.round(ms)} ms` : `${ms.toFixed(1)} ms`;
}

/**
 * Creates one button per sample photo.
 * @param {Record<string, HTMLElement>} ui
 * @param {ReadonlyArray<{id: string, title: string}>} photos
 * @param {(id: string) => void} onPick
 */
export function renderPhotoButtons(ui, photos, onPick) {
  ui.photos.replaceChildren(...photos.map((photo) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.photo = photo.id;
    button.textContent = photo.title;
    button.disabled = true;
    button.setAttribute('aria-pressed', 'false');
    button.addEventListener('click', () => onPick(photo.id));
    return button;
  }));
}

/**
 * Enables or disables the picture choices (all but the camera-capture button, which follows the camera).
 * @param {Record<string, HTMLElement>} ui
 * @param {boolean} enabled
 * @param {{cameraSupported: boolean}} options
 */
export function setChoicesEnabled(ui, enabled, {cameraSupported}) {
  for (const button of ui.photos.querySelectorAll('button')) button.disabled = !enabled;
  ui.imageFile.disabled = !enabled;
  ui.cameraStart.disabled = !enabled || !cameraSupported;
}

/**
 * Names the picture being classified and its credit line; marks the photo button pressed.
 * @param {Record<string, HTMLElement>} ui
 * @param {{name: string, attribution?: string, photoId?: string}} source
 */
export function showSource(ui, {name, attribution = '', photoId = null}) {
  ui.sourceName.textContent = name;
  ui.attribution.textContent = attribution;
  for (const button of ui.photos.querySelectorAll('button')) {
    button.setAttribute('aria-pressed', String(button.dataset.photo === photoId));
  }
}

/**
 * Draws the picture the model sees (the resized crop, before normalisation).
 * @param {Record<string, HTMLElement>} ui
 * @param {ImageData} preview
 */
export function showPreview(ui, preview) {
  ui.modelInput.width = preview.width;
  ui.modelInput.height = preview.height;
  ui.modelInput.getContext('2d').putImageData(preview, 0, 0);
}

/**
 * Lists the top classes: `<li data-label data-probability>` each, best first.
 * @param {Record<string, HTMLElement>} ui
 * @param {{label: string, probability: number}[]} top
 */
export function showPredictions(ui, top) {
  ui.predictions.replaceChildren(...top.map(({label, probability}) => {
    const item = document.createElement('li');
    item.dataset.label = label;
    item.dataset.probability = String(probability);
    const name = document.createElement('span');
    name.textContent = label;
    const value = document.createElement('span');
    value.className = 'probability';
    value.textContent = `${(probability * 100).toFixed(1)} %`;
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.max(0, Math.min(1, probability)) * 100}%`;
    item.append(name, value, bar);
    return item;
  }));
}

/**
 * Clears the previous picture's top classes and inference time while a new picture is classified.
 * @param {Record<string, HTMLElement>} ui
 */
export function clearResults(ui) {
  ui.predictions.replaceChildren();
  ui.inferenceTime.textContent = '…';
}

/**
 * Shows the timings.
 * @param {Record<string, HTMLElement>} ui
 * @param {{buildMs?: number, inferenceMs?: number, runs?: number}} timings milliseconds
 */
export function showTimings(ui, {buildMs, inferenceMs, runs}) {
  if (buildMs !== undefined) ui.buildTime.textContent = formatMs(buildMs);
  if (inferenceMs !== undefined) {
    ui.inferenceTime.textContent = `${formatMs(inferenceMs)} (median of ${runs} dispatch + readTensor run${runs === 1 ? '' : 's'})`;
  }
}

/**
 * Says what the classifier is doing ('' when idle) and marks the results busy meanwhile.
 * @param {Record<string, HTMLElement>} ui
 * @param {string} text
 */
export function showRunStatus(ui, text) {
  ui.runStatus.textContent = text;
  ui.predictions.setAttribute('aria-busy', String(text !== ''));
}
