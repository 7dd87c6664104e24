/**
 * The generation loop over a Decoder (decoder.js): the prompt into the cache (decoder.extend: only
 * what the cache lacks of it), then one decode step per new token, each token chosen by a sampler
 * (sampler.js) from the step's logits, until a stop token, the token budget or the end of the
 * context. Reports every token as it comes and times the two phases. Afterwards the cache holds
 * the prompt and the new tokens but the last (it was sampled, never fed).
 */
import {argmax} from './sampler.js';

/**
 * @param {import('./decoder.js').Decoder} decoder
 * @param {number[]} promptIds 1 .. decoder.maxLength - 1 token ids
 * @param {{maxNewTokens?: number, sample?: (logits: Float32Array) => number, stopIds?: Iterable<number>,
 *   onToken?: (id: number, index: number) => (void|Promise<void>), signal?: AbortSignal,
 *   reuse?: 'auto'|'always'|'never'}} options
 *   sample: greedy when left out; onToken: called after each new token (awaited, so a page can
 *   paint); signal: stops before the next step once aborted; reuse: decoder.extend's policy for the
 *   cached prefix of the prompt (default 'auto')
 * @returns {Promise<{tokens: number[], stopped: 'stop'|'length'|'context'|'aborted', timings: object}>}
 *   tokens: the new ids, a stop token included; timings (ms and tokens per second):
 *   {promptTokens, reusedTokens (prompt tokens whose cache rows were kept), promptMode ('prefill': the
 *   whole prompt prefilled; 'steps': the uncached rest decoded a token a step), newTokens, prefillMs
 *   (prompt in, first token's logits out, by either mode), firstTokenMs (time to first token: prefill +
 *   sampling), prefillTokensPerSecond (the prompt tokens computed, reused ones left out, over
 *   prefillMs), decodeMs (the decode steps' own time, onToken's left out), decodeTokensPerSecond
 *   (steps per second; null without a step), totalMs}
 */
export async function generate(decoder, promptIds, {maxNewTokens = 128, sample = argmax, stopIds = [], onToken = () => {},
  signal, reuse = 'auto'} = {}) {
  const stops = new Set(stopIds);
  const t0 = performance.now();
  const prompt = await decoder.extend(promptIds, {reuse});
  let logits = prompt.logits;
  const prefillMs = performance.now() - t0;
  const tokens = [];
  let firstTokenMs = null;
  let steps = 0;
  let stopped = 'length';
  let position = promptIds.length;
  let decodeMs = 0;
  while (tokens.length < maxNewTokens) {
    const token = sample(logits);
    tokens.push(token);
    firstTokenMs ??= performance.now() - t0;
    await onToken(token, tokens.length - 1);
    if (stops.has(token)) { stopped = 'stop'; break; }
    if (tokens.length === maxNewTokens) break;
    if (position + 1 >= decoder.maxLength) { stopped = 'context'; break; }
    if (signal?.aborted) { stopped = 'aborted'; break; }
    const tStep = performance.now();
    logits = await decoder.step(token, position++);
    decodeMs += performance.now() - tStep;
    steps++;
  }
  return {tokens, stopped, timings: {promptTokens: promptIds.length, reusedTokens: prompt.reusedTokens,
    promptMode: prompt.mode, newTokens: tokens.length, prefillMs, firstTokenMs,
    prefillTokensPerSecond: (promptIds.length - prompt.reusedTokens) / (prefillMs / 1000), decodeMs,
    decodeTokensPerSecond: steps ? steps / (decodeMs / 1000) : null, totalMs: performance.now() - t0}};
}
