/**
 * The console's entry point: the top bar (navigation, language, sign-out)
 * and the routes. Pages that need a member key show the sign-in form
 * instead, and draw themselves once signed in.
 */

import { forgetKey, getKey, setUnauthorizedHandler } from "./api";
import { h, replace } from "./dom";
import { LANGS, lang, setLang, t, type Lang } from "./i18n";
import { homePage, samplesPage, signInForm } from "./pages/home";
import { playgroundPage } from "./pages/playground";
import { runPage, samplePage } from "./pages/run";
import { runsPage } from "./pages/runs";
import { navigate, rerender, startRouter, type Cleanup, type Route } from "./router";

const routes: Route[] = [
  { pattern: /^\/$/, page: homePage, needsKey: false },
  { pattern: /^\/runs\/?$/, page: runsPage, needsKey: true },
  { pattern: /^\/runs\/([^/]+)\/?$/, page: runPage, needsKey: true },
  { pattern: /^\/playground\/?$/, page: playgroundPage, needsKey: true },
  { pattern: /^\/samples\/?$/, page: samplesPage, needsKey: false },
  { pattern: /^\/samples\/([^/]+)\/?$/, page: samplePage, needsKey: false },
];

let cleanup: Cleanup | void;
let refused = false;

function topBar(path: string): void {
  const m = t();
  const top = document.getElementById("top") as HTMLElement;
  const here = (p: RegExp) => (p.test(path) ? "page" : undefined);
  const langSelect = h(
    "select",
    {
      id: "lang",
      "aria-label": m.language,
      on: {
        change: () => {
          setLang(langSelect.value as Lang);
          rerender();
        },
      },
    },
    LANGS.map((l) => h("option", { value: l, lang: l }, messagesName(l))),
  );
  langSelect.value = lang();
  const signedIn = getKey() !== null;
  replace(
    top,
    h(
      "nav",
      { class: "nav", "aria-label": "Ephemeral" },
      h("a", { class: "brand", href: signedIn ? "/runs" : "/" }, h("img", { src: "/assets/icon.svg", alt: "", width: "22", height: "22" }), m.brand),
      h(
        "ul",
        null,
        signedIn ? h("li", null, h("a", { href: "/runs", "aria-current": here(/^\/runs/) }, m.navRuns)) : null,
        signedIn ? h("li", null, h("a", { href: "/playground", "aria-current": here(/^\/playground/) }, m.navPlayground)) : null,
        h("li", null, h("a", { href: "/samples", "aria-current": here(/^\/samples/) }, m.navSamples)),
      ),
    ),
    h(
      "div",
      { class: "tools" },
      langSelect,
      signedIn
        ? h(
            "button",
            {
              type: "button",
              class: "signout",
              on: {
                click: () => {
                  forgetKey();
                  navigate("/");
                },
              },
            },
            m.signOut,
          )
        : null,
    ),
  );
}

function messagesName(l: Lang): string {
  return l === "ja" ? "日本語" : "English";
}

function render(path: string, search: URLSearchParams, focus: boolean): void {
  if (cleanup) cleanup();
  cleanup = undefined;
  const m = t();
  document.documentElement.lang = lang();
  const skip = document.querySelector(".skip");
  if (skip) skip.textContent = m.skip;
  const main = document.getElementById("main") as HTMLElement;

  if (path === "/" && getKey()) {
    history.replaceState(null, "", "/runs");
    path = "/runs";
  }
  topBar(path);

  let route: Route | undefined;
  let params: string[] = [];
  for (const r of routes) {
    const match = r.pattern.exec(path);
    if (match) {
      route = r;
      params = match.slice(1).map((p) => decodeURIComponent(p));
      break;
    }
  }
  if (!route) {
    document.title = "Ephemeral";
    main.replaceChildren(
      h("h1", { tabindex: "-1" }, m.notFound),
      h("p", null, m.pageNotFound),
      h("p", null, h("a", { href: "/" }, m.homeTitle)),
    );
  } else if (route.needsKey && !getKey()) {
    document.title = `${m.signInTitle} · Ephemeral`;
    replace(
      main,
      h("h1", { tabindex: "-1" }, m.signInTitle),
      refused ? h("p", { class: "problem", role: "alert" }, m.keyRefused) : null,
      signInForm(() => {
        refused = false;
        rerender();
      }),
    );
  } else {
    cleanup = route.page(main, params, search);
  }
  if (focus) {
    const h1 = main.querySelector("h1");
    (h1 ?? main).focus({ preventScroll: false });
    scrollTo(0, 0);
  }
}

setUnauthorizedHandler(() => {
  // The key was revoked or mistyped: forget it and ask again.
  forgetKey();
  refused = true;
  rerender();
});

setLang(lang());
startRouter(render);
