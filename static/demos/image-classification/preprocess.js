/**
 * Turns a picture into the classifier's input tensor, following the manifest's `preprocessing`
 * entry {layout: 'nchw'|'nhwc', size, centralCrop, mean, scale}:
 *   1. take the centred square whose side is centralCrop x the shorter side of the picture;
 *   2. resize it to size x size with resize.js: antialiased bilinear, Pillow's
 *      `Image.resize(..., Image.BILINEAR, box)` to the pixel (not canvas smoothing, so the result
 *      is the same in every browser, and the tensor is the one a Python pipeline would build:
 *      tests/reference/classify.py `preprocess` calls Pillow);
 *   3. (x - mean) / scale per channel (mean/scale: a number or one per R, G, B);
 *   4. lay out as float32 [1, 3, size, size] (nchw) or [1, size, size, 3] (nhwc).
 * Pixels are read without colour-space conversion or alpha premultiplication.
 */

import {resizeBilinear} from './resize.js';

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
 *   [1,3,S,S] or [1,S,S,3]; preview: the resized 8-bit picture before normalisation (S x S)
 * @throws {TypeError} for an unknown layout or malformed preprocessing values
 */
export function preprocess(image, {layout = 'nchw', size, centralCrop, mean, scale}) {
  if (layout !== 'nchw' && layout !== 'nhwc') throw new TypeError(`unknown preprocessing layout ${layout}`);
  if (!(Number.isInteger(size) && size > 0)) throw new TypeError('preprocessing.size must be a positive integer');
  if (!(centralCrop > 0 && centralCrop <= 1)) throw new TypeError('preprocessing.centralCrop must be in (0, 1]');
  const means = perChannel(mean, 'mean');
  const scales = perChannel(scale, 'scale');
  const {width, height} = image;
  const side = centralCrop * Math.min(width, height);
  const x0 = (width - side) / 2;
  const y0 = (height - side) / 2;
  const resized = resizeBilinear(image, {x0, y0, x1: x0 + side, y1: y0 + side}, size, size);
  const plane = size * size;
  const tensor = new Float32Array(3 * plane);
  for (let pixel = 0; pixel < plane; pixel++) {
    for (let ch = 0; ch < 3; ch++) {
      tensor[layout === 'nchw' ? ch * plane + pixel : pixel * 3 + ch] = (resized[pixel * 4 + ch] - means[ch]) / scales[ch];
    }
  }
  const preview = new ImageData(resized, size, size);
  const shape = layout === 'nchw' ? [1, 3, size, size] : [1, size, size, 3];
  return {tensor, shape, preview};
}
