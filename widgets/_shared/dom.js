// What every widget's module uses: unique ids, markup from our own strings, and the charting
// library, d3 (npm, pinned in package-lock.json), served from the site itself
// (javascripts/vendor/d3.min.js, copied there by hooks/lab.py): no request leaves the site.

let unique = 0;
export const uid = name => `ffn-${name}-${++unique}`;

/** An element from an HTML string (the markup below is ours, with no reader text in it). */
export function fragment(markup) {
  const template = document.createElement("template");
  template.innerHTML = markup.trim();
  return template.content;
}

export function escape(text) {
  return String(text).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                 '"': "&quot;"})[c]);
}

let d3Loading = null;

/** d3, loaded once, when the first widget that draws mounts (its 280 KB are not on the
 * page's critical path). d3.min.js is a UMD bundle: run as a module it sets globalThis.d3. */
export function loadD3() {
  d3Loading ??= import("../../vendor/d3.min.js").then(() => globalThis.d3);
  return d3Loading;
}
