/**
 * What the demo pages share for their DOM: the elements a page needs, found by id.
 */

/**
 * @param {Document} document
 * @param {string[]} ids the element ids the page needs
 * @returns {Record<string, HTMLElement>} id (camelCase: 'load-progress' -> loadProgress) -> element
 * @throws {Error} when the page lacks one of them
 */
export function findElements(document, ids) {
  const elements = {};
  for (const id of ids) {
    const element = document.getElementById(id);
    if (!element) throw new Error(`the page has no #${id}`);
    elements[id.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = element;
  }
  return elements;
}
