/**
 * Downloads the converted model (server/models/generated/<model>/, served at /models/<model>/):
 * manifest.json (a JSON graph description plus `weights`, `labels`, `preprocessing`, `output`),
 * weights.bin (raw little-endian constant data) and labels.json (class names, index order).
 */

/**
 * Fetches `url` into one ArrayBuffer, reporting progress as the body streams in.
 * @param {string} url
 * @param {(progress: {loaded: number, total: number|null}) => void} [onProgress] called after every
 *   chunk; `total` is the Content-Length in bytes, or null when the server sent none
 * @returns {Promise<ArrayBuffer>}
 * @throws {Error} on an HTTP error status, or when the body length differs from Content-Length
 */
export async function fetchWithProgress(url, onProgress = () => {}) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status} ${response.statusText}`);
  const header = response.headers.get('Content-Length');
  const total = header !== null && /^\d+$/.test(header) ? Number(header) : null;
  if (!response.body) {
    const buffer = await response.arrayBuffer();
    onProgress({loaded: buffer.byteLength, total: buffer.byteLength});
    return buffer;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  onProgress({loaded, total});
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onProgress({loaded, total});
  }
  if (total !== null && loaded !== total) {
    throw new Error(`GET ${url}: received ${loaded} bytes, Content-Length said ${total}`);
  }
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes.buffer;
}

/**
 * Fetches and parses a JSON document.
 * @param {string} url
 * @returns {Promise<any>}
 * @throws {Error} on an HTTP error status or invalid JSON
 */
export async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status} ${response.statusText}`);
  return response.json();
}

/**
 * Loads a converted model: its manifest, then its labels and weights (the weights with progress).
 * @param {string} baseUrl folder URL ending in '/', e.g. '/models/efficientnet-lite0/'
 * @param {(progress: {loaded: number, total: number|null}) => void} [onProgress] weights progress, bytes
 * @returns {Promise<{manifest: object, labels: string[], weights: ArrayBuffer}>}
 * @throws {Error} when a file is missing or the labels are not an array of strings
 */
export async function loadModel(baseUrl, onProgress) {
  const manifest = await fetchJson(new URL('manifest.json', new URL(baseUrl, location.href)).href);
  const base = new URL(baseUrl, location.href);
  const [labels, weights] = await Promise.all([
    fetchJson(new URL(manifest.labels ?? 'labels.json', base).href),
    fetchWithProgress(new URL(manifest.weights ?? 'weights.bin', base).href, onProgress),
  ]);
  if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string')) {
    throw new Error(`${manifest.labels}: expected a JSON array of class names`);
  }
  return {manifest, labels, weights};
}
