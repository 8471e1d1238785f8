/**
 * Small pieces several pages share: status badges, copyable code blocks,
 * "the exact request", downloads through fetch (the key is needed, so no
 * plain links), and the problem box.
 */

import { ApiError, type RunRequest } from "./api";
import { h, uid } from "./dom";
import { statusText, t } from "./i18n";

export function statusBadge(status: string): HTMLElement {
  return h("span", { class: `badge status-${status.replace(/[^a-z_]/g, "")}` }, statusText(status));
}

/** The curl command of SEED.md, the body being `request.json`. */
export function curlCommand(): string {
  return [
    "curl -X POST $EPHEMERAL_URL/v1/runs \\",
    '  -H "Authorization: Bearer $EPHEMERAL_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    '  -H "Idempotency-Key: $(uuidgen)" \\',
    "  -d @request.json",
  ].join("\n");
}

/** request.json as shown: 2-space JSON. */
export function requestJson(req: RunRequest): string {
  return JSON.stringify(req, null, 2);
}

/** Long bodies (files inlined) are cut on screen; "Copy" copies the whole. */
const SHOW_AT_MOST = 100_000;

async function copyText(text: string, fallbackTarget: HTMLElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard (not a secure context, or refused): select the text instead.
    const range = document.createRange();
    range.selectNodeContents(fallbackTarget);
    const sel = getSelection();
    sel?.removeAllRanges();
    sel?.addRange(range);
    return false;
  }
}

/** A titled, copyable code block. `getText` may change (the playground's preview). */
export function codeBlock(title: string, copyLabel: string, text: string, testId: string): {
  el: HTMLElement;
  set: (text: string) => void;
} {
  let full = text;
  const code = h("code", { "data-testid": testId });
  const pre = h("pre", { class: "code", tabindex: "0", "aria-label": title }, code);
  const status = h("span", { class: "copied", role: "status" });
  const set = (v: string) => {
    full = v;
    code.textContent = v.length > SHOW_AT_MOST ? `${v.slice(0, SHOW_AT_MOST)}\n…` : v;
  };
  set(text);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const button = h(
    "button",
    {
      type: "button",
      class: "copy",
      on: {
        click: () => {
          void copyText(full, code).then((ok) => {
            status.textContent = ok ? t().copied : "";
            clearTimeout(timer);
            timer = setTimeout(() => (status.textContent = ""), 2000);
          });
        },
      },
    },
    copyLabel,
  );
  const el = h(
    "figure",
    { class: "codeblock" },
    h("figcaption", null, h("span", { class: "mono" }, title), h("span", { class: "spacer" }), status, button),
    pre,
  );
  return { el, set };
}

/** Saves bytes as a download (an object URL, revoked afterwards). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: name, class: "hidden" });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function baseName(path: string): string {
  const parts = path.split("/").filter(Boolean);
  return parts[parts.length - 1] ?? "file";
}

/** A problem shown as text (title, detail, field errors). */
export function problemBox(e: unknown): HTMLElement {
  const m = t();
  if (e instanceof ApiError) {
    return h(
      "div",
      { class: "problem", role: "alert" },
      h("strong", null, e.title),
      e.detail ? h("p", null, e.detail) : null,
      e.errors.length ? h("ul", null, e.errors.map((f) => h("li", null, h("code", null, f.field), ` ${f.message}`))) : null,
      e.retryAfter ? h("p", null, m.retryAfter(e.retryAfter)) : null,
    );
  }
  const text = e instanceof Error ? e.message : String(e);
  return h("div", { class: "problem", role: "alert" }, h("strong", null, m.error), h("p", null, text));
}

/** A section with a heading wired to it. */
export function section(title: string, cls: string, ...children: Array<Node | null>): HTMLElement {
  const id = uid("h");
  return h("section", { class: `panel ${cls}`, "aria-labelledby": id }, h("h2", { id }, title), children);
}
