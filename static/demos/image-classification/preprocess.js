/**
 * Turns a picture into the classifier's input tensor, following the manifest's `preprocessing`
 * entry {layout: 'nchw'|'nhwc', size, centralCrop, mean, scale}:
 *   1. take the centred square whose side is centralCrop x the shorter side of the picture;
 *   2. resize it to size x size with our own bilinear filter (not canvas smoothing, so the result
 *      is the same in every browser): half-pixel centres, no antialiasing, edge pixels clamped —
 *      the same arithmetic, in float64, as tests/reference/classify.py `preprocess`;
 *   3. (x - mean) / scale per channel (mean/scale: a number or one per R, G, B);
 *   4. lay out as float32 [1, 3, size, size] (nchw) or [1, size, size, 3] (nhwc).
 * Pixels are read without colour-space conversion or alpha premultiplication.
 */

/**
 * Decodes an image file.
 * @param {Blob} blob a JPEG, PNG, WebP... file
 * @returns {Promise<ImageBitmap>}
 * @throws (rejects) InvalidStateError when the browser cannot decode it
 */
export function decodeImage(blob) {
  return createImageBitmap(blob, {colorSpaceConversion: 'none', premultiplyAlpha: 'none'});
}

/**
 * Reads the RGBA pixels of anything canvas can draw, at its natural size.
 * @param {ImageBitmap|HTMLVideoElement|HTMLImageElement|HTMLCanvasElement} source
 * @param {number} width pixels
 * @param {number} height pixels
 * @returns {ImageData} RGBA, 8 bits per channel, row-major
 * @throws {Error} when the source has no pixels yet (e.g. a video before its first frame)
 */
export function readPixels(source, width, height) {
  if (!(width > 0 && height > 0)) throw new Error('the picture has no pixels (is the camera still starting?)');
  const canvas = new OffscreenCanvas(width, height);
  const context = canvas.getContext('2d', {willReadFrequently: true});
  context.drawImage(source, 0, 0, width, height);
  return context.getImageData(0, 0, width, height);
}

/**
 * Source indices and weights of one axis of the bilinear resize.
 * @param {number} sizeOut output pixels along the axis
 * @param {number} start first source coordinate of the crop (pixels, may be fractional)
 * @param {number} extent crop length in source pixels
 * @param {number} sizeIn source pixels along the axis
 * @returns {{i0: Int32Array, i1: Int32Array, w: Float64Array}} out[k] = in[i0]*(1-w) + in[i1]*w
 */
export function bilinearAxis(sizeOut, start, extent, sizeIn) {
  const i0 = new Int32Array(sizeOut);
  const i1 = new Int32Array(sizeOut);
  const w = new Float64Array(sizeOut);
  const step = extent / sizeOut;
  for (let k = 0; k < sizeOut; k++) {
    const centre = Math.min(Math.max(start + (k + 0.5) * step - 0.5, 0), sizeIn - 1);
    const f = Math.floor(centre);
    i0[k] = f;
    i1[k] = Math.min(f + 1, sizeIn - 1);
    w[k] = centre - f;
  }
  return {i0, i1, w};
}

/** A per-channel value: a number, or an array of 3 numbers (R, G, B). */
function perChannel(value, name) {
  const values = Array.isArray(value) ? value : [value, value, value];
  if (values.length !== 3 || values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw new TypeError(`preprocessing.${name} must be a number or 3 numbers`);
  }
  return values;
}

/**
 * Crops, resizes and normalises RGBA pixels into the model's input.
 * @param {{data: Uint8ClampedArray, width: number, height: number}} image RGBA pixels
 * @param {{layout?: string, size: number, centralCrop: number, mean: number|number[], scale: number|number[]}} preprocessing
 * @returns {{tensor: Float32Array, shape: number[], preview: ImageData}} tensor: the input, `shape`
 *   [1,3,S,S] or [1,S,S,3]; preview: the resized RGB picture before normalisation (S x S)
 * @throws {TypeError} for an unknown layout or malformed preprocessing values
 */
export function preprocess(image, {layout = 'nchw', size, centralCrop, mean, scale}) {
  if (layout !== 'nchw' && layout !== 'nhwc') throw new TypeError(`unknown preprocessing layout ${layout}`);
  if (!(Number.isInteger(size) && size > 0)) throw new TypeError('preprocessing.size must be a positive integer');
  if (!(centralCrop > 0 && centralCrop <= 1)) throw new TypeError('preprocessing.centralCrop must be in (0, 1]');
  const means = perChannel(mean, 'mean');
  const scales = perChannel(scale, 'scale');
  const {data, width, height} = image;
  const side = centralCrop * Math.min(width, height);
  const ys = bilinearAxis(size, (height - side) / 2, side, height);
  const xs = bilinearAxis(size, (width - side) / 2, side, width);
  const plane = size * size;
  const tensor = new Float32Array(3 * plane);
  const preview = new ImageData(size, size);
  for (let y = 0; y < size; y++) {
    const row0 = ys.i0[y] * width;
    const row1 = ys.i1[y] * width;
    const wy = ys.w[y];
    for (let x = 0; x < size; x++) {
      const wx = xs.w[x];
      const a = (row0 + xs.i0[x]) * 4;
      const b = (row0 + xs.i1[x]) * 4;
      const c = (row1 + xs.i0[x]) * 4;
      const d = (row1 + xs.i1[x]) * 4;
      const pixel = y * size + x;
      for (let ch = 0; ch < 3; ch++) {
        const top = data[a + ch] * (1 - wx) + data[b + ch] * wx;
        const bottom = data[c + ch] * (1 - wx) + data[d + ch] * wx;
        const value = top * (1 - wy) + bottom * wy;
        tensor[layout === 'nchw' ? ch * plane + pixel : pixel * 3 + ch] = (value - means[ch]) / scales[ch];
        preview.data[pixel * 4 + ch] = value;
      }
      preview.data[pixel * 4 + 3] = 255;
    }
  }
  const shape = layout === 'nchw' ? [1, 3, size, size] : [1, size, size, 3];
  return {tensor, shape, preview};
}
