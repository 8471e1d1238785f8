/**
 * The playground (`/playground`): a request editor, prefilled from a sample
 * (`?sample=ID`), a run (`?run=ID`) or the seed request; it shows the exact
 * request it will send (curl + JSON), sends it with an `Idempotency-Key`,
 * and opens the live run page. Problems are shown next to the field at
 * fault (`errors[].field` of the problem; a 402 next to the budget).
 */

import { ApiError, api, type Model, type Run, type RunRequest } from "../api";
import { h, replace, uid } from "../dom";
import { num, t } from "../i18n";
import { navigate, type Page } from "../router";
import { codeBlock, curlCommand, problemBox, requestJson } from "../widgets";

/** The seed request (SEED.md, edge/src/cli/demo.rs). */
export const SEED_REQUEST: RunRequest = {
  prompt:
    "This is a sandbox test. Do these steps with the shell and report the real output, never what you expect. 1) Write a small script that prints the first 15 prime numbers, run it and show the output. 2) Run `whoami` and `pwd`. 3) Try to reach the internet with `curl -sS -m 8 https://example.com` (and, if curl is missing, python3 with urllib) and report the exact error. 4) Write a file named /tmp/proof.txt and list it. Reply in Markdown, at most 120 words: one line per step with the result, then one sentence saying whether the network call succeeded.",
  web: false,
  shell: true,
  timeout_seconds: 120,
  max_cost_micros: 40000,
};

type FileDraft = { path: string; content?: string; content_base64?: string };

interface Draft {
  prompt: string;
  model: string;
  shell: boolean;
  web: boolean;
  connections: string;
  files: FileDraft[];
  outputs: string;
  timeout: string;
  budget: string;
  zdr: boolean;
  /** Fields the editor has no control for (metadata, future fields): sent as they came. */
  extra: Record<string, unknown>;
}

const KNOWN = new Set([
  "prompt",
  "model",
  "shell",
  "web",
  "connections",
  "files",
  "outputs",
  "timeout_seconds",
  "max_cost_micros",
  "zero_data_retention",
]);

/** Micro-dollars as the budget field's text: "0.04". */
function dollars(micros: number | undefined): string {
  if (typeof micros !== "number" || !Number.isFinite(micros)) return "";
  let s = (micros / 1_000_000).toFixed(6).replace(/0+$/, "");
  if (/\.\d?$/.test(s)) s = (micros / 1_000_000).toFixed(2);
  return s;
}

function fromRequest(req: RunRequest): Draft {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req)) if (!KNOWN.has(k)) extra[k] = v;
  return {
    prompt: typeof req.prompt === "string" ? req.prompt : "",
    model: typeof req.model === "string" ? req.model : "",
    shell: req.shell !== false,
    web: req.web === true,
    connections: (req.connections ?? []).join(", "),
    files: (req.files ?? []).map((f) => ({ ...f })),
    outputs: (req.outputs ?? []).join(", "),
    timeout: req.timeout_seconds !== undefined ? String(req.timeout_seconds) : "120",
    budget: dollars(req.max_cost_micros),
    zdr: req.zero_data_retention === true,
    extra,
  };
}

function fromRun(run: Run): Draft {
  const p = run.permissions ?? {};
  const req: RunRequest = { prompt: "" };
  if (run.model) req.model = run.model;
  req.web = p.web ?? false;
  req.shell = p.shell ?? true;
  if (p.connections?.length) req.connections = p.connections;
  if (p.outputs?.length) req.outputs = p.outputs;
  if (p.timeout_seconds !== undefined) req.timeout_seconds = p.timeout_seconds;
  if (p.max_cost_micros !== undefined) req.max_cost_micros = p.max_cost_micros;
  if (p.zero_data_retention) req.zero_data_retention = true;
  if (run.metadata && Object.keys(run.metadata).length) req.metadata = run.metadata;
  return fromRequest(req);
}

const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/** The body to send, in the seed's field order, and the fields that cannot be sent as typed. */
function toRequest(d: Draft): { body: RunRequest; errors: Map<string, string> } {
  const errors = new Map<string, string>();
  const body: RunRequest = { prompt: d.prompt };
  if (d.model) body.model = d.model;
  body.web = d.web;
  body.shell = d.shell;
  const conns = list(d.connections);
  if (conns.length) body.connections = conns;
  if (d.files.length) body.files = d.files.map((f) => ({ ...f }));
  const outs = list(d.outputs);
  if (outs.length) body.outputs = outs;
  const timeout = Number(d.timeout.trim());
  if (d.timeout.trim() === "" || !Number.isInteger(timeout)) errors.set("timeout_seconds", t().notNumber);
  body.timeout_seconds = Number.isFinite(timeout) ? timeout : (d.timeout as unknown as number);
  const usd = Number(d.budget.trim().replace(",", "."));
  if (d.budget.trim() === "" || !Number.isFinite(usd)) errors.set("max_cost_micros", t().notNumber);
  body.max_cost_micros = Math.round(usd * 1_000_000);
  if (d.zdr) body.zero_data_retention = true;
  for (const [k, v] of Object.entries(d.extra)) body[k] = v;
  return { body, errors };
}

/** Kept across re-renders of the same URL (a language switch keeps what was typed). */
let kept: { search: string; draft: Draft; note: string } | null = null;
let models: Model[] | null = null;

export const playgroundPage: Page = (main, _params, search) => {
  const m = t();
  let stopped = false;
  document.title = `${m.playgroundTitle} · Ephemeral`;
  const key = search.toString();
  if (kept && kept.search === key) {
    draw(main, kept.draft, kept.note);
    return () => {
      stopped = true;
    };
  }
  main.replaceChildren(h("p", { class: "loading" }, m.loading));
  const sample = search.get("sample");
  const runId = search.get("run");
  let load: Promise<{ draft: Draft; note: string }>;
  if (sample) {
    load = api.sample(sample).then((s) => ({
      draft: fromRequest(s.request ?? SEED_REQUEST),
      note: m.prefilledFromSample(s.title || s.id),
    }));
  } else if (runId) {
    // The run first: under zero data retention its request was never kept,
    // and asking for it would only earn a 404.
    load = api.run(runId).then(async (run) => {
      const notKept = { draft: fromRun(run), note: m.runRequestNotKept };
      if (run.permissions?.zero_data_retention) return notKept;
      try {
        const r = await api.runRequest(runId);
        return { draft: fromRequest(r.request), note: m.prefilledFromRun(runId) };
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return notKept;
        throw e;
      }
    });
  } else {
    load = Promise.resolve({ draft: fromRequest(SEED_REQUEST), note: "" });
  }
  const catalogue = models ? Promise.resolve(models) : api.models().then((r) => (models = r.data ?? []));
  Promise.all([load, catalogue.catch(() => [] as Model[])])
    .then(([{ draft, note }]) => {
      if (stopped) return;
      kept = { search: key, draft, note };
      draw(main, draft, note);
    })
    .catch((e: unknown) => {
      if (stopped) return;
      main.replaceChildren(h("h1", { tabindex: "-1" }, m.playgroundTitle), problemBox(e));
    });
  return () => {
    stopped = true;
  };
};

interface Field {
  wrap: HTMLElement;
  control: HTMLElement;
  error: HTMLElement;
}

function draw(main: HTMLElement, d: Draft, note: string): void {
  const m = t();
  const fields = new Map<string, Field>();
  const general = h("div", { class: "general-error", role: "alert" });

  const field = (name: string, label: string, control: HTMLElement, hint?: string | HTMLElement, inline = false): HTMLElement => {
    const id = control.id || uid(name);
    control.id = id;
    const errId = uid("err");
    const hintId = hint ? uid("hint") : null;
    control.setAttribute("aria-describedby", [hintId, errId].filter(Boolean).join(" "));
    const error = h("p", { id: errId, class: "field-error" });
    const hintEl = hint ? h("p", { id: hintId as string, class: "hint" }, hint) : null;
    const wrap = inline
      ? h("div", { class: "field check", "data-field": name }, control, h("label", { for: id }, label), hintEl, error)
      : h("div", { class: "field", "data-field": name }, h("label", { for: id }, label), control, hintEl, error);
    fields.set(name, { wrap, control, error });
    return wrap;
  };

  const curl = codeBlock("curl", m.copyCurl, curlCommand(), "curl");
  const json = codeBlock(m.requestJson, m.copyJson, "", "request-json");
  const update = () => {
    json.set(requestJson(toRequest(d).body));
  };
  const clearError = (name: string) => {
    const f = fields.get(name);
    if (!f) return;
    f.error.textContent = "";
    f.control.removeAttribute("aria-invalid");
  };
  const bind = <E extends HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(
    el: E,
    name: string,
    set: (el: E) => void,
  ): E => {
    el.addEventListener(el instanceof HTMLInputElement && el.type === "checkbox" ? "change" : "input", () => {
      set(el);
      clearError(name);
      update();
    });
    return el;
  };

  // Prompt
  const prompt = bind(h("textarea", { name: "prompt", rows: "8", required: true, spellcheck: "false" }), "prompt", (el) => (d.prompt = el.value));
  prompt.value = d.prompt;

  // Model
  const catalogue = models ?? [];
  const def = catalogue.find((x) => x.default);
  const select = bind(h("select", { name: "model" }), "model", (el) => (d.model = el.value));
  select.appendChild(h("option", { value: "" }, m.fModelServer(def?.id ?? "")));
  const ids = catalogue.map((x) => x.id);
  if (d.model && !ids.includes(d.model)) ids.push(d.model);
  for (const id of ids) select.appendChild(h("option", { value: id }, id));
  select.value = d.model;

  const check = (name: string, value: boolean, set: (v: boolean) => void) => {
    const el = bind(h("input", { type: "checkbox", name }), name, (e) => set(e.checked));
    el.checked = value;
    return el;
  };
  const text = (name: string, value: string, set: (v: string) => void, attrs: Record<string, string> = {}) => {
    const el = bind(h("input", { type: "text", name, spellcheck: "false", ...attrs }), name, (e) => set(e.value));
    el.value = value;
    return el;
  };

  // Files
  const filesList = h("ol", { class: "file-drafts" });
  const drawFiles = () => {
    filesList.replaceChildren(
      ...d.files.map((f, k) => {
        const pathId = uid("fpath");
        const path = h("input", { id: pathId, type: "text", name: `files[${k}].path`, spellcheck: "false" });
        path.value = f.path;
        path.addEventListener("input", () => {
          f.path = path.value;
          clearError("files");
          update();
        });
        let content: HTMLElement;
        if (f.content_base64 !== undefined) {
          content = h("p", { class: "hint" }, m.fFileBinary(num(Math.floor((f.content_base64.length * 3) / 4))));
        } else {
          const cId = uid("fcontent");
          const ta = h("textarea", { id: cId, rows: "3", name: `files[${k}].content`, spellcheck: "false" });
          ta.value = f.content ?? "";
          ta.addEventListener("input", () => {
            f.content = ta.value;
            clearError("files");
            update();
          });
          content = h("div", null, h("label", { for: cId }, m.fFileContent), ta);
        }
        return h(
          "li",
          { class: "file-draft" },
          h("div", { class: "file-draft-head" }, h("label", { for: pathId }, m.fFilePath), path,
            h(
              "button",
              {
                type: "button",
                class: "small",
                "aria-label": m.removeFile(f.path || String(k + 1)),
                on: {
                  click: () => {
                    d.files.splice(k, 1);
                    drawFiles();
                    update();
                  },
                },
              },
              "×",
            ),
          ),
          content,
        );
      }),
    );
  };
  drawFiles();
  const upload = h("input", { type: "file", multiple: true, class: "file-input" });
  const uploadId = uid("upload");
  upload.id = uploadId;
  upload.addEventListener("change", () => {
    const picked = Array.from(upload.files ?? []);
    void Promise.all(
      picked.map(async (file) => {
        const buf = new Uint8Array(await file.arrayBuffer());
        try {
          const text = new TextDecoder("utf-8", { fatal: true }).decode(buf);
          d.files.push({ path: file.name, content: text });
        } catch {
          let bin = "";
          for (let k = 0; k < buf.length; k += 0x8000) bin += String.fromCharCode(...buf.subarray(k, k + 0x8000));
          d.files.push({ path: file.name, content_base64: btoa(bin) });
        }
      }),
    ).then(() => {
      upload.value = "";
      drawFiles();
      update();
    });
  });
  const filesControl = h(
    "div",
    { class: "files-editor", id: uid("files"), tabindex: "-1" },
    filesList,
    h(
      "div",
      { class: "form-actions" },
      h(
        "button",
        {
          type: "button",
          on: {
            click: () => {
              d.files.push({ path: "", content: "" });
              drawFiles();
              update();
              const inputs = filesList.querySelectorAll<HTMLInputElement>("input[type=text]");
              inputs[inputs.length - 1]?.focus();
            },
          },
        },
        m.addFile,
      ),
      h("label", { for: uploadId, class: "button" }, m.uploadFile),
      upload,
    ),
  );

  // Budget
  const budgetHint = h("span");
  const showBudgetHint = () => {
    const usd = Number(d.budget.trim().replace(",", "."));
    budgetHint.textContent = Number.isFinite(usd) && d.budget.trim() !== "" ? m.fBudgetHint(num(Math.round(usd * 1_000_000))) : "";
  };
  const budget = text("max_cost_micros", d.budget, (v) => {
    d.budget = v;
    showBudgetHint();
  }, { inputmode: "decimal", autocomplete: "off" });
  showBudgetHint();
  const timeout = text("timeout_seconds", d.timeout, (v) => (d.timeout = v), { inputmode: "numeric", autocomplete: "off" });

  const sendButton = h("button", { type: "submit", class: "primary", "data-testid": "send" }, m.send);
  let lastBody = "";
  let lastKey = "";

  const showErrors = (errs: Map<string, string>, other: unknown) => {
    for (const [name, f] of fields) {
      f.error.textContent = errs.get(name) ?? "";
      if (errs.has(name)) f.control.setAttribute("aria-invalid", "true");
      else f.control.removeAttribute("aria-invalid");
    }
    general.replaceChildren(other ? problemBox(other) : "");
    const first = [...fields.entries()].find(([name]) => errs.has(name));
    if (first) first[1].control.focus();
    else if (other) general.focus();
  };

  const form = h(
    "form",
    {
      class: "playground-form",
      novalidate: true,
      "aria-label": m.playgroundTitle,
      on: {
        submit: (ev) => {
          ev.preventDefault();
          const { body, errors } = toRequest(d);
          if (errors.size) return showErrors(errors, null);
          showErrors(new Map(), null);
          const bodyText = JSON.stringify(body);
          if (bodyText !== lastBody) {
            lastBody = bodyText;
            lastKey = crypto.randomUUID();
          }
          sendButton.disabled = true;
          sendButton.textContent = m.sending;
          api
            .createRun(body, lastKey)
            .then((run) => {
              kept = null;
              navigate(`/runs/${encodeURIComponent(run.id)}`);
            })
            .catch((e: unknown) => {
              sendButton.disabled = false;
              sendButton.textContent = m.send;
              const errs = new Map<string, string>();
              let rest: unknown = null;
              if (e instanceof ApiError) {
                if (e.status === 402) errs.set("max_cost_micros", e.detail || e.title);
                const unplaced: string[] = [];
                for (const fe of e.errors) {
                  const base = (/^[a-z_]+/.exec(fe.field) ?? [""])[0];
                  if (fields.has(base)) errs.set(base, [errs.get(base), fe.message].filter(Boolean).join(" "));
                  else unplaced.push(fe.field);
                }
                if (!errs.size || unplaced.length) rest = e;
              } else rest = e;
              showErrors(errs, rest);
            });
        },
      },
    },
    field("prompt", m.fPrompt, prompt),
    field("model", m.fModel, select),
    h(
      "div",
      { class: "field-row" },
      field("shell", m.fShell, check("shell", d.shell, (v) => (d.shell = v)), m.fShellHint, true),
      field("web", m.fWeb, check("web", d.web, (v) => (d.web = v)), m.fWebHint, true),
    ),
    field("connections", m.fConnections, text("connections", d.connections, (v) => (d.connections = v)), m.fConnectionsHint),
    h(
      "fieldset",
      { class: "field files-field", "data-field": "files" },
      h("legend", null, m.fFiles),
      h("p", { class: "hint" }, m.fFilesHint),
      filesControl,
      (() => {
        const error = h("p", { class: "field-error", id: uid("err") });
        fields.set("files", { wrap: filesControl, control: filesControl, error });
        return error;
      })(),
    ),
    field("outputs", m.fOutputs, text("outputs", d.outputs, (v) => (d.outputs = v)), m.fOutputsHint),
    h(
      "div",
      { class: "field-row" },
      field("timeout_seconds", m.fTimeout, timeout),
      field("max_cost_micros", m.fBudget, budget, budgetHint),
    ),
    field("zero_data_retention", m.fZdr, check("zero_data_retention", d.zdr, (v) => (d.zdr = v)), m.fZdrHint, true),
    general,
    h("div", { class: "form-actions" }, sendButton),
  );
  general.tabIndex = -1;
  update();

  const headId = uid("h");
  replace(
    main,
    h("h1", { tabindex: "-1" }, m.playgroundTitle),
    h("p", { class: "lead" }, m.playgroundLead),
    note ? h("p", { class: "note", "data-testid": "prefill-note" }, note) : null,
    h(
      "div",
      { class: "playground" },
      form,
      h(
        "section",
        { class: "panel preview", "aria-labelledby": headId },
        h("h2", { id: headId }, m.willSend),
        h("p", { class: "dim" }, m.exactRequestLead),
        curl.el,
        json.el,
      ),
    ),
  );
}

