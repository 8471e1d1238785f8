/**
 * Building DOM nodes without HTML strings.
 *
 * Everything a run produced is untrusted, so the console never parses
 * markup from data: text goes in through text nodes (`textContent`), and
 * attributes through `setAttribute` with names chosen here in the code.
 * There is no `innerHTML` anywhere in the console.
 */

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Attrs {
  class?: string | undefined;
  /** Event handlers: `on: {click: fn}`. */
  on?: { [K in keyof HTMLElementEventMap]?: (ev: HTMLElementEventMap[K]) => void };
  /** Any other attribute: a string sets it, `true` sets it empty, false/null/undefined leaves it out. */
  [name: string]: unknown;
}

/** `h("a", {href: "/runs"}, "Runs")`: an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (name === "on") {
        for (const [type, fn] of Object.entries(value as Record<string, EventListener>)) {
          el.addEventListener(type, fn);
        }
      } else if (name === "style") {
        throw new Error("no style attributes: use a class");
      } else if (/^on/i.test(name)) {
        throw new Error(`no inline handlers (${name})`);
      } else if (value === true) {
        el.setAttribute(name, "");
      } else if (value !== false && value !== null && value !== undefined) {
        el.setAttribute(name, String(value));
      }
    }
  }
  append(el, children);
  return el;
}

/** Appends children (strings become text nodes). */
export function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else if (typeof c === "string" || typeof c === "number") parent.appendChild(document.createTextNode(String(c)));
    else parent.appendChild(c);
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** A fragment of children. */
export function frag(...children: Child[]): DocumentFragment {
  const f = document.createDocumentFragment();
  append(f, children);
  return f;
}

let ids = 0;
/** A fresh id for label/aria wiring. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}
