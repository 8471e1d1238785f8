/**
 * Routing on `location.pathname`, with the History API for in-app links.
 *
 * The server answers every page path with the same index.html; a page is
 * a function that fills `<main>` and may return a function that stops what
 * it started (a live stream, a replay, timers) when the user leaves.
 */

export type Cleanup = () => void;
export type Page = (main: HTMLElement, params: string[], search: URLSearchParams) => Cleanup | void;

export interface Route {
  pattern: RegExp;
  page: Page;
  /** The page needs a member key: without one, the sign-in form is shown. */
  needsKey: boolean;
}

type Render = (path: string, search: URLSearchParams, focus: boolean) => void;
let draw: Render = () => {};
/** The path and query drawn last: a change of the fragment alone draws nothing. */
let drawn = "";
const here = () => `${location.pathname}?${new URLSearchParams(location.search).toString()}`;

function render(path: string, search: URLSearchParams, focus: boolean): void {
  draw(path, search, focus);
  drawn = here(); // after: a page may replace the address (/ → /runs)
}

export function startRouter(r: Render): void {
  draw = r;
  addEventListener("popstate", () => {
    // Going back over an in-page jump (the skip link's #main) is not a new page.
    if (here() === drawn) return;
    render(location.pathname, new URLSearchParams(location.search), true);
  });
  document.addEventListener("click", (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = (ev.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !isAppPath(url.pathname)) return;
    // A link within this page (the skip link): the browser jumps to it.
    if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
    ev.preventDefault();
    navigate(url.pathname + url.search);
  });
  render(location.pathname, new URLSearchParams(location.search), false);
}

/** Paths the app draws itself (everything else is left to the browser). */
export function isAppPath(path: string): boolean {
  return /^\/(?:runs(?:\/[^/]+)?|playground|samples(?:\/[^/]+)?)?\/?$/.test(path);
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  const url = new URL(to, location.href);
  render(url.pathname, url.searchParams, true);
}

/** Draws the current location again (after signing in, or a language switch). */
export function rerender(): void {
  render(location.pathname, new URLSearchParams(location.search), false);
}
