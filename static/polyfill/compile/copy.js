/** A word-wise buffer copy kernel, used where a graph output must be a copy of another value. */
import {Shader} from '../gpu/wgsl.js';

/** Emits a step copying `bytes` bytes (a multiple of 4) from Value `src` to Value `dst`. */
export function lowerCopy(L, src, dst, bytes, label) {
  const shader = new Shader('copy').read('src', 'u32').write('dst', 'u32').main('  dst[gi] = src[gi];');
  L.step({shader, values: [src, dst], threads: Math.ceil(bytes / 4), label});
}
