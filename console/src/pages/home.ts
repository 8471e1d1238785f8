/**
 * The home page (`/`: sign-in and the samples, or the runs when signed in),
 * the sign-in form shown by any page that needs a key, and the list of
 * published samples.
 */

import { ApiError, api, forgetKey, json, setKey } from "../api";
import { h, uid } from "../dom";
import { dateLong, t } from "../i18n";
import { navigate, type Page } from "../router";

/** The form: the key is checked against the API, then kept in sessionStorage. */
export function signInForm(onDone: () => void): HTMLElement {
  const m = t();
  const inputId = uid("key");
  const hintId = uid("hint");
  const errId = uid("err");
  const input = h("input", {
    id: inputId,
    name: "key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": `${hintId} ${errId}`,
  });
  const err = h("p", { id: errId, class: "field-error", role: "alert" });
  const button = h("button", { type: "submit", class: "primary" }, m.signInButton);
  const form = h(
    "form",
    {
      class: "signin panel",
      "aria-label": m.signInTitle,
      on: {
        submit: (ev) => {
          ev.preventDefault();
          const key = input.value.trim();
          err.textContent = "";
          if (!key) {
            err.textContent = m.keyEmpty;
            input.focus();
            return;
          }
          button.disabled = true;
          button.textContent = m.signingIn;
          json("/v1/runs?limit=1", { key })
            .then(() => {
              setKey(key);
              input.value = "";
              onDone();
            })
            .catch((e: unknown) => {
              forgetKey();
              err.textContent = e instanceof ApiError && e.status === 401 ? m.keyRefused : e instanceof Error ? e.message : String(e);
              button.disabled = false;
              button.textContent = m.signInButton;
              input.setAttribute("aria-invalid", "true");
              input.focus();
            });
        },
      },
    },
    h("h2", null, m.signInTitle),
    h("p", { class: "dim" }, m.signInLead),
    h("label", { for: inputId }, m.keyLabel),
    input,
    h("p", { id: hintId, class: "hint" }, m.keyHint),
    err,
    h("div", { class: "form-actions" }, button),
  );
  return form;
}

/** The published samples (no key), or nothing when the server has none. */
export function samplesList(): HTMLElement {
  const m = t();
  const body = h("div", null, h("p", { class: "loading" }, m.loading));
  api
    .samples()
    .then((list) => {
      const data = list.data ?? [];
      body.replaceChildren(
        data.length
          ? h(
              "ul",
              { class: "samples" },
              data.map((s) =>
                h(
                  "li",
                  null,
                  h("a", { href: `/samples/${encodeURIComponent(s.id)}` }, s.title || s.id),
                  s.published_at ? h("span", { class: "dim" }, ` · ${dateLong(s.published_at)}`) : null,
                ),
              ),
            )
          : h("p", { class: "dim" }, m.noSamples),
      );
    })
    .catch(() => body.replaceChildren(h("p", { class: "dim" }, m.noSamples)));
  const id = uid("h");
  return h(
    "section",
    { class: "panel samples-panel", "aria-labelledby": id },
    h("h2", { id }, m.samplesTitle),
    h("p", { class: "dim" }, m.samplesLead),
    body,
  );
}

export const homePage: Page = (main) => {
  const m = t();
  document.title = "Ephemeral";
  main.replaceChildren(
    h("h1", { tabindex: "-1" }, m.homeTitle),
    h("p", { class: "lead" }, m.homeLead),
    h("div", { class: "home-grid" }, signInForm(() => navigate("/runs")), samplesList()),
  );
};

export const samplesPage: Page = (main) => {
  document.title = `${t().samplesTitle} · Ephemeral`;
  main.replaceChildren(h("h1", { tabindex: "-1" }, t().samplesTitle), samplesList());
};
