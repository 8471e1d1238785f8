/** The runs list (`/runs`): the organisation's runs, newest first, paged. */

import { api, type Run } from "../api";
import { h, uid } from "../dom";
import { dateTime, duration, money, t } from "../i18n";
import type { Page } from "../router";
import { problemBox, statusBadge } from "../widgets";

const PAGE = 20;

export const runsPage: Page = (main) => {
  const m = t();
  let stopped = false;
  document.title = `${m.runsTitle} · Ephemeral`;
  const tbody = h("tbody");
  const more = h("button", { type: "button", hidden: true }, m.loadMore);
  const status = h("div", { role: "status" }, h("p", { class: "loading" }, m.loading));
  const capId = uid("cap");
  const table = h(
    "table",
    { class: "runs", "aria-describedby": capId },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        [m.colStatus, m.colRun, m.colModel, m.colCost, m.colCreated, m.colDuration].map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    tbody,
  );
  let before: string | null = null;

  const load = () => {
    more.disabled = true;
    api
      .runs(PAGE, before)
      .then((list) => {
        if (stopped) return;
        status.replaceChildren();
        for (const run of list.data ?? []) tbody.appendChild(row(run));
        before = list.next_before ?? (list.data?.length ? (list.data[list.data.length - 1] as Run).id : null);
        more.hidden = !list.has_more;
        more.disabled = false;
        if (!tbody.firstChild) status.replaceChildren(h("p", null, m.noRuns, " ", h("a", { href: "/playground" }, m.navPlayground)));
      })
      .catch((e: unknown) => {
        if (stopped) return;
        status.replaceChildren(problemBox(e));
        more.disabled = false;
      });
  };
  more.addEventListener("click", load);

  main.replaceChildren(
    h(
      "div",
      { class: "page-head" },
      h("h1", { tabindex: "-1" }, m.runsTitle),
      h("a", { class: "button primary", href: "/playground" }, m.newRun),
    ),
    h("p", { class: "dim", id: capId }, m.runsLead),
    h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": m.runsTitle }, table),
    status,
    h("div", { class: "form-actions" }, more),
  );
  load();
  return () => {
    stopped = true;
  };
};

function row(run: Run): HTMLTableRowElement {
  const m = t();
  const created = run.created_at ? Date.parse(run.created_at) : NaN;
  const ended = run.ended_at ? Date.parse(run.ended_at) : NaN;
  const charged = run.cost?.charged_micros;
  const budget = run.permissions?.max_cost_micros ?? run.cost?.reserved_micros;
  return h(
    "tr",
    { "data-run-id": run.id },
    h("td", null, statusBadge(run.status)),
    h("td", null, h("a", { href: `/runs/${encodeURIComponent(run.id)}`, class: "mono" }, run.id)),
    h("td", { class: "mono" }, run.model ?? "—"),
    h("td", null, m.costOf(money(charged ?? null), money(budget ?? null))),
    h("td", null, dateTime(run.created_at)),
    h("td", null, Number.isFinite(created) && Number.isFinite(ended) ? duration(ended - created) : "—"),
  );
}
