// The one DOM helper the page's modules share, and the page's element lookups.

/** An element with an optional class, text and attributes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string, attrs?: Record<string, string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  for (const [k, v] of Object.entries(attrs ?? {})) node.setAttribute(k, v);
  return node;
}

/** The element with id `id`: the page's markup (index.html) has it, so its absence is a bug. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`index.html has no #${id}`);
  return node as T;
}

/** The element for `selector`, which index.html has. */
export function one<T extends Element = HTMLElement>(selector: string, root: ParentNode = document): T {
  const node = root.querySelector(selector);
  if (!node) throw new Error(`index.html has no ${selector}`);
  return node as T;
}

export const TEXT_LIMIT = 1200;

/** Long text is cut; the element's title has all of it. */
export function setText<T extends HTMLElement>(node: T, text: string, limit = TEXT_LIMIT): T {
  node.textContent = text.length > limit ? `${text.slice(0, limit)}…` : text;
  if (text.length > limit) node.title = text;
  else node.removeAttribute("title");
  return node;
}
