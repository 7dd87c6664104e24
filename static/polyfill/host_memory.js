/**
 * Host memory for readTensor()'s results (spec §MLContext readTensor: a new ArrayBuffer per read).
 *
 * A fresh ArrayBuffer of more than a few pages is mapped lazily: each 4 KiB page faults in at its
 * first write. On the H200 host (Chromium 156's renderer, tools/bench_latency.py, 2026-12-03)
 * that made the copy of a read's bytes out of the mapped staging buffer the slow part of a large
 * read: `Uint8Array.prototype.slice` of 1 MiB took 0.65-0.71 ms, whether of mapped memory or of an
 * ordinary array, against 0.12-0.23 ms for a copy of 1 MiB into memory already written once
 * (a mapped upload buffer; writeTensor's kept copy), so a 1 MiB readTensor took 1.3 ms against
 * 0.24 ms for 4 bytes. readTensor therefore allocates its result when it is called and faults the
 * pages in while the GPU works (touchPages, from a microtask: after Blink has sent the read's
 * commands to the GPU process), leaving only the copy for when the map resolves.
 */

/** Bytes per page touched (the smallest page size of the platforms Chromium runs on). */
const PAGE_BYTES = 4096;

/** Results of at least this many bytes get their pages faulted in ahead (below: heap memory). */
export const FAULT_IN_BYTES = 65536;

/**
 * Writes a zero into every page of `buffer` (a fresh ArrayBuffer reads as zeros, so its contents
 * are unchanged), so that later writes to it do not fault.
 * @param {ArrayBuffer} buffer
 */
export function touchPages(buffer) {
  const bytes = new Uint8Array(buffer);
  for (let i = 0; i < bytes.length; i += PAGE_BYTES) bytes[i] = 0;
}
