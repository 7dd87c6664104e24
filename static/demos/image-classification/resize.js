/**
 * Antialiased bilinear resize of 8-bit RGB(A) pixels, computed the way Pillow's
 * `Image.resize(size, Image.BILINEAR, box)` does (libImaging/Resample.c), so that the demo feeds
 * the model the tensor a Python pipeline (Pillow, torchvision's PIL path) would:
 *   - the filter is the triangle 1 - |x|, widened by the scale factor when shrinking (support
 *     max(scale, 1) source pixels each side of the output pixel's centre), so every source pixel
 *     under an output pixel contributes: no aliasing however large the photo;
 *   - coefficients are normalised to sum to 1 per output pixel, then turned into fixed point with
 *     22 fraction bits, rounded half away from zero;
 *   - two separable passes, horizontal first over the source rows the vertical pass needs, each
 *     rounding its sums to 8 bits (Pillow stores the horizontal result as uint8 before the
 *     vertical pass; emulating that keeps us at Pillow's exact pixels rather than within a level);
 *   - the crop box's coordinates are single-precision floats, as Pillow passes them to C.
 * Integer sums stay below 2^31 (255 x 2^22 x a little over 1), so Number arithmetic is exact.
 */

/** Fraction bits of the fixed-point coefficients (Pillow's PRECISION_BITS = 32 - 8 - 2). */
const PRECISION_BITS = 22;
const ONE = 2 ** PRECISION_BITS;
const HALF = 2 ** (PRECISION_BITS - 1);

/** Pillow's bilinear (triangle) filter, support 1. */
function triangle(x) {
  const a = Math.abs(x);
  return a < 1 ? 1 - a : 0;
}

/**
 * Fixed-point coefficients of one axis.
 * @param {number} sizeIn source pixels along the axis
 * @param {number} in0 crop start, source pixels (fractional allowed; rounded to float32)
 * @param {number} in1 crop end, source pixels (> in0; rounded to float32)
 * @param {number} sizeOut output pixels along the axis
 * @returns {{first: Int32Array, count: Int32Array, weights: Int32Array, taps: number}} output pixel
 *   k sums source pixels first[k] .. first[k] + count[k] - 1 with weights[k * taps + i] / 2^22
 */
export function axisCoefficients(sizeIn, in0, in1, sizeOut) {
  const start = Math.fround(in0);
  const scale = Math.fround(Math.fround(in1) - start) / sizeOut;
  const filterScale = Math.max(scale, 1);
  const support = filterScale; // the triangle's support (1) widened
  const taps = Math.ceil(support) * 2 + 1;
  const first = new Int32Array(sizeOut);
  const count = new Int32Array(sizeOut);
  const weights = new Int32Array(sizeOut * taps);
  const inverse = 1 / filterScale;
  const k = new Float64Array(taps);
  for (let out = 0; out < sizeOut; out++) {
    const centre = start + (out + 0.5) * scale;
    const lo = Math.max(Math.trunc(centre - support + 0.5), 0);
    const n = Math.min(Math.trunc(centre + support + 0.5), sizeIn) - lo;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      k[i] = triangle((i + lo - centre + 0.5) * inverse);
      sum += k[i];
    }
    for (let i = 0; i < n; i++) {
      const w = sum !== 0 ? k[i] / sum : k[i];
      weights[out * taps + i] = Math.trunc(w < 0 ? w * ONE - 0.5 : w * ONE + 0.5);
    }
    first[out] = lo;
    count[out] = n;
  }
  return {first, count, weights, taps};
}

/** An 8-bit value from a fixed-point sum (which started at HALF, so this rounds). */
function clip8(sum) {
  const v = Math.floor(sum / ONE);
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/**
 * Resizes the box [x0, x1) x [y0, y1) of `image` to width x height, antialiased bilinear.
 * @param {{data: Uint8ClampedArray|Uint8Array, width: number, height: number}} image RGBA pixels,
 *   row-major, 4 bytes per pixel (alpha is ignored, as after Pillow's convert('RGB'))
 * @param {{x0: number, y0: number, x1: number, y1: number}} box source pixels, fractional allowed,
 *   0 <= x0 < x1 <= image.width and 0 <= y0 < y1 <= image.height
 * @param {number} width output pixels (positive integer)
 * @param {number} height output pixels (positive integer)
 * @returns {Uint8ClampedArray} RGBA, width x height, alpha 255
 * @throws {RangeError} for an empty or out-of-bounds box or a non-positive output size
 */
export function resizeBilinear(image, {x0, y0, x1, y1}, width, height) {
  const {data, width: inWidth, height: inHeight} = image;
  if (!(Number.isInteger(width) && width > 0 && Number.isInteger(height) && height > 0)) {
    throw new RangeError(`resize to ${width} x ${height}: the size must be positive integers`);
  }
  if (!(x0 >= 0 && y0 >= 0 && x1 > x0 && y1 > y0 && x1 <= inWidth && y1 <= inHeight)) {
    throw new RangeError(`resize box [${x0}, ${x1}) x [${y0}, ${y1}) is not inside ${inWidth} x ${inHeight}`);
  }
  const xs = axisCoefficients(inWidth, x0, x1, width);
  const ys = axisCoefficients(inHeight, y0, y1, height);
  // Horizontal pass over the source rows the vertical pass reads, stored as 8-bit RGB.
  const rowFirst = ys.first[0];
  const rows = ys.first[height - 1] + ys.count[height - 1] - rowFirst;
  const temp = new Uint8Array(rows * width * 3);
  for (let row = 0; row < rows; row++) {
    const source = (row + rowFirst) * inWidth * 4;
    for (let x = 0; x < width; x++) {
      const base = x * xs.taps;
      let r = HALF, g = HALF, b = HALF;
      for (let i = 0, p = source + xs.first[x] * 4; i < xs.count[x]; i++, p += 4) {
        const w = xs.weights[base + i];
        r += data[p] * w;
        g += data[p + 1] * w;
        b += data[p + 2] * w;
      }
      const t = (row * width + x) * 3;
      temp[t] = clip8(r);
      temp[t + 1] = clip8(g);
      temp[t + 2] = clip8(b);
    }
  }
  // Vertical pass.
  const out = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    const base = y * ys.taps;
    const top = ys.first[y] - rowFirst;
    for (let x = 0; x < width; x++) {
      let r = HALF, g = HALF, b = HALF;
      for (let i = 0, p = (top * width + x) * 3; i < ys.count[y]; i++, p += width * 3) {
        const w = ys.weights[base + i];
        r += temp[p] * w;
        g += temp[p + 1] * w;
        b += temp[p + 2] * w;
      }
      const o = (y * width + x) * 4;
      out[o] = clip8(r);
      out[o + 1] = clip8(g);
      out[o + 2] = clip8(b);
      out[o + 3] = 255;
    }
  }
  return out;
}
