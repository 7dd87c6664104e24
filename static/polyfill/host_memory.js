/**
 * Host memory for readTensor()'s results (spec §MLContext readTensor: a new ArrayBuffer per read).
 *
 * A fresh ArrayBuffer of more than a few pages is mapped lazily: each 4 KiB page faults in at its
 * first write, which makes the copy of a read's bytes out of the mapped staging buffer the slow
 * part of a large read (docs/design-notes.md, "Host memory of readTensor"). readTensor therefore allocates its result when it is called and faults the
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
