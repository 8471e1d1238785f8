/**
 * The run page (`/runs/{id}`) and the sample page (`/samples/{id}`, read-only,
 * no key): the header line, the timeline in lanes (live, or replayed with
 * its recorded timing), the output, the cost split, the files, the
 * permissions table and "the exact request".
 */

import {
  ApiError,
  FINISHED,
  api,
  serverNow,
  type FileEntry,
  type Run,
  type RunRequest,
  type Sample,
  type TimelineEvent,
} from "../api";
import { h, replace } from "../dom";
import { bytes, dateLong, duration, money, num, secs, t } from "../i18n";
import { renderMarkdown } from "../markdown";
import { follow } from "../sse";
import { TimelineView, emptyState, reduce, type RunState } from "../timeline";
import { baseName, codeBlock, curlCommand, problemBox, requestJson, saveBlob, section, statusBadge } from "../widgets";
import type { Page } from "../router";

export const runPage: Page = (main, params) => {
  const id = params[0] as string;
  const ctl = { stopped: false, stop: [] as Array<() => void> };
  document.title = `${id} · Ephemeral`;
  main.replaceChildren(h("p", { class: "loading" }, t().loading));
  api
    .run(id)
    .then((run) => {
      if (ctl.stopped) return;
      const view = new RunView(run, { mode: "run" });
      ctl.stop.push(() => view.destroy());
      main.replaceChildren(view.el);
      view.start();
      if (run.permissions?.zero_data_retention) view.setRequest(null);
      else
        api
          .runRequest(id)
          .then((r) => view.setRequest(r.request))
          .catch(() => view.setRequest(null));
    })
    .catch((e: unknown) => {
      if (ctl.stopped) return;
      main.replaceChildren(
        h("h1", { tabindex: "-1" }, t().runTitle),
        e instanceof ApiError && e.status === 404 ? h("p", null, t().notFound) : problemBox(e),
        h("p", null, h("a", { href: "/runs" }, t().backToRuns)),
      );
    });
  return () => {
    ctl.stopped = true;
    for (const f of ctl.stop) f();
  };
};

export const samplePage: Page = (main, params) => {
  const id = params[0] as string;
  let view: RunView | null = null;
  let stopped = false;
  document.title = `${t().sampleTitle} · Ephemeral`;
  main.replaceChildren(h("p", { class: "loading" }, t().loading));
  api
    .sample(id)
    .then((sample) => {
      if (stopped) return;
      if (!sample.run) throw new ApiError(404, { title: t().notFound }, null);
      document.title = `${sample.title ?? sample.id} · Ephemeral`;
      view = new RunView(sample.run, { mode: "sample", sample });
      main.replaceChildren(view.el);
      view.start();
      view.setRequest(sample.request ?? null);
    })
    .catch((e: unknown) => {
      if (stopped) return;
      main.replaceChildren(
        h("h1", { tabindex: "-1" }, t().sampleTitle),
        e instanceof ApiError && e.status === 404 ? h("p", null, t().notFound) : problemBox(e),
      );
    });
  return () => {
    stopped = true;
    view?.destroy();
  };
};

interface Options {
  mode: "run" | "sample";
  sample?: Sample;
}

type Speed = 1 | 4 | "instant";

class RunView {
  readonly el: HTMLElement;
  private run: Run;
  private readonly opts: Options;
  /** Every event known, in order of `seq`. */
  private events: TimelineEvent[] = [];
  private seqs = new Set<number>();
  /** What the whole timeline tells (live header). */
  private full: RunState = emptyState();
  /** What the shown part tells (output and cost follow the replay). */
  private shown: RunState = emptyState();
  private applied = 0;
  private timeline: TimelineView;
  private live = false;
  private stopFollow: (() => void) | null = null;
  private ticker: ReturnType<typeof setInterval> | null = null;

  // Parts updated in place.
  private head = h("div", { class: "run-head" });
  private actions = h("div", { class: "actions" });
  private connection = h("p", { class: "connection", role: "status" });
  private replayBar = h("div", { class: "replay", hidden: true });
  private outputBody = h("div", { class: "output-body" });
  private costBody = h("div", { class: "cost-body" });
  private filesSection: HTMLElement | null = null;
  private filesBody = h("div", { class: "files-body" });
  private requestBody = h("div", { class: "request-body" }, h("p", { class: "loading" }, t().loading));

  // Replay.
  private pos = 0;
  private playing = false;
  private speed: Speed = 1;
  private raf = 0;
  private lastFrame = 0;
  private scrub!: HTMLInputElement;
  private clock!: HTMLElement;
  private playButton!: HTMLButtonElement;
  private speedButtons = new Map<Speed, HTMLButtonElement>();

  constructor(run: Run, opts: Options) {
    this.run = run;
    this.opts = opts;
    this.timeline = new TimelineView(run.isolation ?? null);
    for (const ev of run.timeline ?? []) this.add(ev);
    const m = t();

    const intro: Array<Node | null> = [];
    if (opts.mode === "sample") {
      intro.push(h("p", { class: "eyebrow" }, m.seeRealRun));
      intro.push(h("h1", { tabindex: "-1" }, opts.sample?.title || opts.sample?.id || m.sampleTitle));
      intro.push(h("p", { class: "replay-of" }, m.replayOf(dateLong(run.created_at), run.model ?? "—")));
    }
    if (opts.mode === "run") this.filesSection = section(m.files, "files", h("p", { class: "dim" }, m.filesLead), this.filesBody);

    this.el = h(
      "article",
      { class: "run", "data-run-id": run.id },
      intro,
      this.head,
      this.actions,
      this.connection,
      this.replayBar,
      section(m.timeline, "timeline-panel", this.timeline.el),
      section(opts.mode === "sample" ? m.recordedOutput : m.output, "output", this.outputBody),
      section(m.costSplit, "cost", this.costBody),
      this.filesSection,
      section(
        m.permissions,
        "permissions",
        h("p", { class: "dim" }, m.permissionsLead),
        this.permissionsTable(),
        h("p", { class: "dim" }, m.credentialsNote),
      ),
      section(m.exactRequest, "request", h("p", { class: "dim" }, m.exactRequestLead), this.requestBody),
    );
  }

  /** Shows what is known, then follows the run live or offers its replay. */
  start(): void {
    this.live = !FINISHED.has(this.run.status) && !this.full.ended;
    this.applyUpTo(Infinity);
    this.renderActions();
    if (this.live) {
      this.startTicker();
      this.stopFollow = follow(this.run.id, this.timeline.lastSeq, {
        onEvent: (seq, type, data) => {
          if (this.add({ seq, type, data })) this.applyUpTo(Infinity);
        },
        onConnection: (up) => {
          this.connection.textContent = up ? "" : t().reconnecting;
          this.connection.classList.toggle("lost", !up);
        },
        onEnd: () => void this.finish(),
        hasEnded: async () => FINISHED.has((await api.run(this.run.id)).status),
      });
    } else {
      this.finishedView();
    }
    this.renderHead();
    performance.mark("ephemeral:first-render");
  }

  destroy(): void {
    this.stopFollow?.();
    this.stopFollow = null;
    if (this.ticker) clearInterval(this.ticker);
    cancelAnimationFrame(this.raf);
    this.playing = false;
  }

  private add(ev: TimelineEvent): boolean {
    if (typeof ev.seq !== "number" || this.seqs.has(ev.seq)) return false;
    this.seqs.add(ev.seq);
    const last = this.events[this.events.length - 1];
    if (!last || last.seq < ev.seq) this.events.push(ev);
    else {
      this.events.push(ev);
      this.events.sort((a, b) => a.seq - b.seq);
    }
    reduce(this.full, ev);
    return true;
  }

  /** Applies to the view the events up to `tms` (their own time in the run). */
  private applyUpTo(tms: number): void {
    let changed = false;
    while (this.applied < this.events.length) {
      const ev = this.events[this.applied] as TimelineEvent;
      const at = typeof ev.data?.t_ms === "number" ? ev.data.t_ms : 0;
      if (at > tms) break;
      this.timeline.apply(ev);
      reduce(this.shown, ev);
      this.applied++;
      changed = true;
    }
    if (changed || this.applied === 0) {
      this.renderOutput();
      this.renderCost();
      if (this.live) this.renderHead();
    }
  }

  /** The live stream ended: read the settled run, then offer the replay. */
  private async finish(): Promise<void> {
    this.live = false;
    this.stopFollow = null;
    this.connection.textContent = "";
    if (this.ticker) clearInterval(this.ticker);
    try {
      const run = await api.run(this.run.id);
      this.run = run;
      for (const ev of run.timeline ?? []) this.add(ev);
      this.applyUpTo(Infinity);
    } catch {
      // The events already told the outcome; the header shows those.
    }
    this.finishedView();
    this.renderHead();
    this.renderActions();
  }

  private finishedView(): void {
    this.buildReplayBar();
    this.pos = this.total();
    this.updateClock();
    this.renderFiles();
  }

  // ---- header, actions --------------------------------------------------

  private renderHead(): void {
    const m = t();
    const run = this.run;
    const status = this.live ? (this.full.status ?? run.status) : run.status;
    const budget = run.permissions?.max_cost_micros ?? run.cost?.reserved_micros ?? this.full.reservedMicros;
    const charged = this.live
      ? (this.full.chargedMicros ?? run.cost?.charged_micros ?? null)
      : (run.cost?.charged_micros ?? this.full.chargedMicros);
    const chargedText = charged === null || charged === undefined || (this.live && !this.full.ended) ? "—" : money(charged);
    const idEl = h("code", { class: "run-id" }, run.id);
    replace(
      this.head,
      statusBadge(status),
      this.live ? h("span", { class: "live-dot" }, m.live) : null,
      this.opts.mode === "run" ? h("h1", { tabindex: "-1", class: "run-title" }, h("span", { class: "sr-only" }, `${m.runTitle} `), idEl) : idEl,
      h("span", { class: "cost-of", "data-testid": "cost-of" }, m.costOf(chargedText, money(budget ?? null))),
      h("span", { class: "elapsed" }, h("span", { class: "sr-only" }, `${m.elapsed} `), h("span", { class: "elapsed-value" }, this.elapsedText())),
    );
  }

  private elapsedText(): string {
    const run = this.run;
    const created = run.created_at ? Date.parse(run.created_at) : NaN;
    if (this.live) {
      if (Number.isFinite(created)) return duration(Math.max(0, serverNow() - created));
      return duration(this.full.lastTms);
    }
    const ended = run.ended_at ? Date.parse(run.ended_at) : NaN;
    if (Number.isFinite(created) && Number.isFinite(ended)) return duration(ended - created);
    return duration(this.full.lastTms);
  }

  private startTicker(): void {
    this.ticker = setInterval(() => {
      const v = this.head.querySelector(".elapsed-value");
      if (v) v.textContent = this.elapsedText();
    }, 100);
  }

  private renderActions(): void {
    const m = t();
    const items: Node[] = [];
    if (this.opts.mode === "sample" && this.opts.sample) {
      items.push(
        h("a", { class: "button primary", href: `/playground?sample=${encodeURIComponent(this.opts.sample.id)}` }, m.runItYourself),
        h("p", { class: "dim lead-small" }, m.runItYourselfLead(money(this.run.permissions?.max_cost_micros ?? null))),
      );
    } else {
      items.push(h("a", { class: "button", href: `/playground?run=${encodeURIComponent(this.run.id)}` }, m.openInPlayground));
      if (this.live) {
        const b: HTMLButtonElement = h(
          "button",
          {
            type: "button",
            class: "danger",
            on: {
              click: () => {
                b.disabled = true;
                b.textContent = m.cancelling;
                api.cancel(this.run.id).catch(() => {
                  b.disabled = false;
                  b.textContent = m.cancelRun;
                });
              },
            },
          },
          m.cancelRun,
        );
        items.push(b);
      }
    }
    replace(this.actions, items);
  }

  // ---- output, cost, files -----------------------------------------------

  private renderOutput(): void {
    const m = t();
    const st = this.shown;
    const reached = st.status !== null && st.status !== "running";
    if (!reached) {
      replace(this.outputBody, h("p", { class: "dim" }, "…"));
      return;
    }
    const output = st.output ?? (FINISHED.has(this.run.status) ? (this.run.output ?? null) : null);
    const error = st.error;
    replace(
      this.outputBody,
      error ? h("div", { class: "run-error", role: "note" }, h("strong", null, `${m.errorLabel}: `), error) : null,
      output
        ? h("div", { class: "markdown", "data-testid": "output" }, renderMarkdown(output))
        : error
          ? null
          : h("p", { class: "dim" }, this.run.permissions?.zero_data_retention ? m.outputNotKept : m.noOutput),
    );
  }

  private renderCost(): void {
    const m = t();
    const split = this.shown.split;
    if (!split) {
      replace(this.costBody, h("p", { class: "dim" }, m.costPending));
      return;
    }
    const part = (label: string, micros: number, key: string) =>
      h("span", { class: "split-part", "data-part": key }, `${label} `, h("strong", null, money(micros)));
    replace(
      this.costBody,
      h(
        "p",
        { class: "split", "data-testid": "cost-split" },
        part(m.costModel, split.model, "model"),
        " · ",
        part(m.costWeb, split.web, "web"),
        " · ",
        part(m.costCompute, split.compute, "compute"),
      ),
      h(
        "p",
        { class: "dim" },
        m.charged(money(this.shown.chargedMicros), money(this.shown.releasedMicros)),
      ),
    );
  }

  private renderFiles(): void {
    if (!this.filesSection) return;
    const m = t();
    const live = this.full.liveFiles;
    const liveList = live.length
      ? h(
          "ul",
          { class: "files-list" },
          live.map((f) =>
            h(
              "li",
              null,
              h("span", { class: "mono" }, f.path),
              h("span", { class: "dim" }, ` · ${bytes(f.size)} `),
              h(
                "button",
                {
                  type: "button",
                  "aria-label": m.download(f.path),
                  on: {
                    click: () => {
                      const bin = atob(f.base64);
                      const arr = new Uint8Array(bin.length);
                      for (let k = 0; k < bin.length; k++) arr[k] = bin.charCodeAt(k);
                      saveBlob(new Blob([arr]), baseName(f.path));
                    },
                  },
                },
                m.downloadShort,
              ),
            ),
          ),
        )
      : null;
    if (this.run.permissions?.zero_data_retention) {
      replace(this.filesBody, liveList ?? h("p", { class: "dim" }, m.noFiles));
      return;
    }
    api
      .files(this.run.id)
      .then((list) => {
        const files: FileEntry[] = list.data ?? [];
        if (!files.length && !liveList) {
          replace(this.filesBody, h("p", { class: "dim" }, m.noFiles));
          return;
        }
        replace(
          this.filesBody,
          liveList,
          h(
            "ul",
            { class: "files-list" },
            files.map((f) => {
              const status = h("span", { class: "dim", role: "status" });
              return h(
                "li",
                null,
                h("span", { class: "mono" }, f.path),
                h("span", { class: "dim" }, ` · ${bytes(f.size)}${f.content_type ? ` · ${f.content_type}` : ""} `),
                h(
                  "button",
                  {
                    type: "button",
                    "aria-label": m.download(f.path),
                    "data-path": f.path,
                    on: {
                      click: () => {
                        status.textContent = "";
                        api
                          .file(this.run.id, f.path)
                          .then((res) => res.blob())
                          .then((blob) => saveBlob(blob, baseName(f.path)))
                          .catch((e: unknown) => {
                            status.textContent = e instanceof Error ? e.message : String(e);
                          });
                      },
                    },
                  },
                  m.downloadShort,
                ),
                status,
              );
            }),
          ),
        );
      })
      .catch((e: unknown) => replace(this.filesBody, problemBox(e)));
  }

  // ---- permissions, request ------------------------------------------------

  private permissionsTable(): HTMLElement {
    const m = t();
    const p = this.run.permissions ?? {};
    const list = (xs: string[] | undefined) =>
      xs && xs.length ? h("span", { class: "mono" }, xs.join(", ")) : m.none;
    let retention: string = m.zdrOffUnknown;
    const created = this.run.created_at ? Date.parse(this.run.created_at) : NaN;
    const expires = this.run.expires_at ? Date.parse(this.run.expires_at) : NaN;
    if (Number.isFinite(created) && Number.isFinite(expires)) retention = m.zdrOff(num(Math.round((expires - created) / 86_400_000)));
    const rows: Array<[string, Node | string]> = [
      [m.permModel, h("span", { class: "mono" }, this.run.model ?? "—")],
      [m.permConnections, list(p.connections)],
      [m.permWeb, p.web ? m.webOn : m.off],
      [m.permShell, p.shell === false ? m.off : m.shellOn],
      [m.permFiles, list(p.files)],
      [m.permOutputs, list(p.outputs)],
      [m.permZdr, p.zero_data_retention ? m.zdrOn : retention],
      [m.permBudget, m.budgetCap(money(p.max_cost_micros ?? null))],
      [m.permTimeout, m.seconds(num(p.timeout_seconds ?? null))],
    ];
    return h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "perm" },
        h("thead", null, h("tr", null, h("th", { scope: "col" }, m.colSetting), h("th", { scope: "col" }, m.colAllowed))),
        h("tbody", null, rows.map(([k, v]) => h("tr", null, h("th", { scope: "row" }, k), h("td", null, v)))),
      ),
    );
  }

  /** Shows the request (null: not kept; then what the run object tells). */
  setRequest(req: RunRequest | null): void {
    const m = t();
    let body = req;
    let note: Node | null = null;
    if (!body) {
      const p = this.run.permissions ?? {};
      body = {};
      if (this.run.model) body.model = this.run.model;
      body.web = p.web ?? false;
      body.shell = p.shell ?? true;
      if (p.connections?.length) body.connections = p.connections;
      if (p.outputs?.length) body.outputs = p.outputs;
      if (p.timeout_seconds !== undefined) body.timeout_seconds = p.timeout_seconds;
      if (p.max_cost_micros !== undefined) body.max_cost_micros = p.max_cost_micros;
      if (p.zero_data_retention) body.zero_data_retention = true;
      note = h("p", { class: "note" }, m.requestNotKept);
    }
    replace(
      this.requestBody,
      note,
      codeBlock("curl", m.copyCurl, curlCommand(), "curl").el,
      codeBlock(m.requestJson, m.copyJson, requestJson(body), "request-json").el,
    );
  }

  // ---- replay ------------------------------------------------------------------

  private total(): number {
    let max = 0;
    for (const ev of this.events) {
      const at = ev.data?.t_ms;
      if (typeof at === "number" && at > max) max = at;
    }
    return max;
  }

  private buildReplayBar(): void {
    const m = t();
    const total = this.total();
    this.playButton = h(
      "button",
      { type: "button", class: "play", "data-testid": "play", on: { click: () => this.togglePlay() } },
      m.play,
    );
    this.scrub = h("input", {
      type: "range",
      min: "0",
      max: String(Math.max(total, 1)),
      step: "1",
      value: String(total),
      "aria-label": m.scrubber,
      "data-testid": "scrubber",
      on: {
        input: () => {
          this.pause();
          this.seek(Number(this.scrub.value));
        },
      },
    });
    this.clock = h("span", { class: "clock mono", "aria-hidden": "true" });
    const speeds: Array<[Speed, string]> = [
      [1, "1×"],
      [4, "4×"],
      ["instant", m.instant],
    ];
    const group = h(
      "div",
      { class: "speeds", role: "group", "aria-label": m.speed },
      speeds.map(([sp, label]) => {
        const b = h(
          "button",
          {
            type: "button",
            class: "speed",
            "aria-pressed": String(sp === this.speed),
            "data-speed": String(sp),
            on: { click: () => this.setSpeed(sp) },
          },
          label,
        );
        this.speedButtons.set(sp, b);
        return b;
      }),
    );
    replace(this.replayBar, h("span", { class: "replay-label" }, m.replay), this.playButton, group, this.scrub, this.clock);
    this.replayBar.hidden = false;
  }

  private setSpeed(sp: Speed): void {
    this.speed = sp;
    for (const [k, b] of this.speedButtons) b.setAttribute("aria-pressed", String(k === sp));
    if (sp === "instant") {
      this.pause();
      this.seek(this.total());
    }
  }

  private togglePlay(): void {
    if (this.playing) return this.pause();
    if (this.speed === "instant") {
      this.seek(this.total());
      return;
    }
    if (this.pos >= this.total()) this.seek(0);
    this.playing = true;
    this.playButton.textContent = t().pause;
    this.el.classList.add("replaying");
    this.lastFrame = performance.now();
    const frame = (now: number) => {
      if (!this.playing) return;
      const dt = Math.min(now - this.lastFrame, 250);
      this.lastFrame = now;
      const rate = this.speed === "instant" ? Infinity : this.speed;
      const next = Math.min(this.total(), this.pos + dt * rate);
      this.seek(next);
      if (next >= this.total()) {
        this.pause();
        return;
      }
      this.raf = requestAnimationFrame(frame);
    };
    this.raf = requestAnimationFrame(frame);
  }

  private pause(): void {
    this.playing = false;
    cancelAnimationFrame(this.raf);
    if (this.playButton) this.playButton.textContent = t().play;
    this.el.classList.remove("replaying");
  }

  /** Moves the replay to `tms`: forward adds events, backward rebuilds. */
  private seek(tms: number): void {
    if (tms < this.pos) {
      this.timeline.clear();
      this.shown = emptyState();
      this.applied = 0;
    }
    this.pos = tms;
    this.applyUpTo(tms);
    if (this.scrub) this.scrub.value = String(Math.round(tms));
    this.updateClock();
  }

  private updateClock(): void {
    if (!this.clock || !this.scrub) return;
    const text = t().clock(secs(this.pos), secs(this.total()));
    this.clock.textContent = text;
    this.scrub.setAttribute("aria-valuetext", text);
  }
}
