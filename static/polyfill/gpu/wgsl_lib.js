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
 * @returns {string}
 */
export function collectHelpers(library, names) {
  const done = new Set();
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
