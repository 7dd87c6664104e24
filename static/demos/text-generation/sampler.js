/**
 * Choosing the next token from logits: greedy (argmax), or top-k sampling at a temperature with a
 * seeded generator (mulberry32), so that a seed gives the same tokens on every run.
 */

/** mulberry32: a 32-bit seeded generator of uniform numbers in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The index of the largest value (the first of equal ones). */
export function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** Indices of the k largest values, largest first (equal values: lower index first). */
export function topIndices(values, k) {
  const n = k > 0 ? Math.min(k, values.length) : values.length;
  if (n === values.length) return [...values.keys()].sort((a, b) => values[b] - values[a] || a - b);
  // a sorted list of the n best so far: O(length * n), cheap for the small k used
  const order = [];
  for (let i = 0; i < values.length; i++) {
    if (order.length === n && !(values[i] > values[order[n - 1]])) continue;
    let j = Math.min(order.length, n - 1);  // full: the last one drops out
    while (j > 0 && values[i] > values[order[j - 1]]) { order[j] = order[j - 1]; j--; }
    order[j] = i;
  }
  return order;
}

/**
 * A token chooser.
 * @param {{temperature?: number, topK?: number, seed?: number}} options temperature 0 (or topK 1):
 *   greedy; else softmax(logits / temperature) over the topK largest logits (0: all), one uniform
 *   draw of the seeded generator per token walked down their cumulative probabilities
 * @returns {(logits: Float32Array) => number}
 */
export function createSampler({temperature = 0, topK = 0, seed = 0} = {}) {
  if (!(temperature > 0) || topK === 1) return argmax;
  const random = mulberry32(seed);
  return (logits) => {
    const top = topIndices(logits, topK);
    const max = logits[top[0]];
    const weights = top.map((i) => Math.exp((logits[i] - max) / temperature));
    const total = weights.reduce((a, b) => a + b, 0);
    let u = random() * total;
    for (let r = 0; r < top.length; r++) {
      u -= weights[r];
      if (u < 0) return top[r];
    }
    return top[top.length - 1];
  };
}
