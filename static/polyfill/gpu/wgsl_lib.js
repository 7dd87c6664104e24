/**
 * A tiny registry of WGSL helper functions with dependencies, so a kernel pulls in exactly the
 * helpers its expressions use, each once and in dependency order.
 *
 * A library is `{name: {deps: [names], code: 'fn ...'}}`; gpu/int64.js and gpu/math.js define one.
 */

/**
 * WGSL source of `names` and everything they depend on, dependencies first, each once.
 * @param {Record<string, {deps?: string[], code: string}>} library
 * @param {Iterable<string>} names
 * @param {Iterable<string>} [present] helpers the shader already defines: left out, as are
 *   their dependencies unless something else needs them
 * @returns {string}
 */
export function collectHelpers(library, names, present = []) {
  const done = new Set(present);
  const out = [];
  const visit = (name) => {
    if (done.has(name)) return;
    const entry = library[name];
    if (!entry) throw new Error(`unknown WGSL helper ${name}`);
    done.add(name);
    for (const dep of entry.deps ?? []) visit(dep);
    out.push(entry.code);
  };
  for (const name of names) visit(name);
  return out.join('\n');
}

/**
 * Names of the helpers of `library` called in the WGSL text `code` (an identifier followed by '(').
 * @returns {string[]}
 */
export function helpersUsedIn(library, code) {
  const used = [];
  for (const match of code.matchAll(/\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)) {
    if (Object.prototype.hasOwnProperty.call(library, match[1]) && !used.includes(match[1])) used.push(match[1]);
  }
  return used;
}

/**
 * Adds to `shader` (a gpu/wgsl.js Shader) the helpers of `library` that its WGSL source calls
 * and does not define yet, with their dependencies, each once. Call it when the shader's
 * functions and entry point are set (module-scope WGSL declarations may come in any order, so the
 * helpers can follow their callers).
 * @param {{source(): string, fn(code: string): object}} shader
 * @param {Record<string, {deps?: string[], code: string}>} library
 */
export function addLibraryHelpers(shader, library) {
  const code = shader.source();
  const defined = [...code.matchAll(/\bfn\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)].map((m) => m[1]);
  const names = helpersUsedIn(library, code).filter((name) => !defined.includes(name));
  if (names.length) shader.fn(collectHelpers(library, names, defined));
}
