/**
 * A run's timeline in the seed page's lanes, built event by event.
 *
 * The same view serves a live run (events as they stream in), a finished
 * one (all at once) and a replay (events up to a point in the run's own
 * time, `t_ms`). Events are keyed by `seq`: one already shown is ignored,
 * so a reload or a resumed stream never shows a line twice.
 *
 * Lanes (SEED.md): Waiting, MicroVM (or "Sandbox", naming the isolation,
 * when it is not a microVM), Shell (each `$ command` with its output,
 * stdout and stderr told apart), Model calls, Web, Files, the outcome
 * (Success / Failure / …), Destroy worker.
 */

import { AnsiStream, stripAnsi } from "./ansi";
import type { TimelineEvent } from "./api";
import { h } from "./dom";
import { bytes, duration, money, num, secs, t } from "./i18n";

/** What the events tell of the run so far (the header, output and cost read it). */
export interface RunState {
  status: string | null;
  isolation: string | null;
  reservedMicros: number | null;
  chargedMicros: number | null;
  releasedMicros: number | null;
  split: { model: number; web: number; compute: number } | null;
  output: string | null;
  error: string | null;
  modelCalls: number | null;
  totalTokens: number | null;
  lastTms: number;
  ended: boolean;
  /** Files sent on the live stream only (zero data retention). */
  liveFiles: Array<{ path: string; size: number; base64: string }>;
}

export function emptyState(): RunState {
  return {
    status: null,
    isolation: null,
    reservedMicros: null,
    chargedMicros: null,
    releasedMicros: null,
    split: null,
    output: null,
    error: null,
    modelCalls: null,
    totalTokens: null,
    lastTms: 0,
    ended: false,
    liveFiles: [],
  };
}

const OUTCOMES: Record<string, string> = {
  "run.succeeded": "succeeded",
  "run.failed": "failed",
  "run.timed_out": "timed_out",
  "run.budget_exceeded": "budget_exceeded",
  "run.cancelled": "cancelled",
};

const n = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const s = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));

function errorText(e: unknown): string | null {
  if (e === null || e === undefined) return null;
  if (typeof e === "string") return e;
  if (typeof e === "object") {
    const o = e as Record<string, unknown>;
    const parts = [s(o.code), s(o.message)].filter(Boolean);
    return parts.length ? parts.join(": ") : JSON.stringify(e);
  }
  return String(e);
}

/** Folds one event into the state. */
export function reduce(state: RunState, ev: TimelineEvent): void {
  const d = ev.data ?? {};
  const tms = n(d.t_ms);
  if (tms !== null && tms > state.lastTms) state.lastTms = tms;
  switch (ev.type) {
    case "budget.reserved":
      state.reservedMicros = n(d.reserved_micros);
      state.status ??= "running";
      break;
    case "vm.ready":
      if (typeof d.isolation === "string") state.isolation = d.isolation;
      break;
    case "worker.destroyed": {
      state.chargedMicros = n(d.charged_micros);
      state.releasedMicros = n(d.released_micros);
      const c = (d.cost ?? {}) as Record<string, unknown>;
      state.split = { model: n(c.model) ?? 0, web: n(c.web) ?? 0, compute: n(c.compute) ?? 0 };
      state.ended = true;
      break;
    }
    case "file.content":
      state.liveFiles.push({ path: s(d.path), size: n(d.size) ?? 0, base64: s(d.content_base64) });
      break;
    default:
      if (ev.type in OUTCOMES) {
        state.status = OUTCOMES[ev.type] as string;
        if (typeof d.output === "string") state.output = d.output;
        state.error = errorText(d.error);
        state.modelCalls = n(d.model_calls);
        state.totalTokens = n(d.total_tokens);
      }
  }
}

interface ShellRow {
  li: HTMLLIElement;
  pre: HTMLPreElement;
  meta: HTMLElement;
  last: { stream: string; text: Text } | null;
  ansi: Map<string, AnsiStream>;
}

/** The lane list. `apply` adds an event; `clear` empties it (replay seeks back). */
export class TimelineView {
  readonly el: HTMLOListElement;
  private shells = new Map<string, ShellRow>();
  private maxSeq = 0;
  private isolation: string | null;

  constructor(isolation: string | null) {
    this.isolation = isolation;
    this.el = h("ol", { class: "timeline" });
  }

  get lastSeq(): number {
    return this.maxSeq;
  }

  clear(): void {
    this.el.replaceChildren();
    this.shells.clear();
    this.maxSeq = 0;
  }

  /** Adds one event; false when it was already shown. */
  apply(ev: TimelineEvent): boolean {
    if (ev.seq <= this.maxSeq) return false;
    this.maxSeq = ev.seq;
    const d = ev.data ?? {};
    const m = t();
    const at = n(d.t_ms);
    switch (ev.type) {
      case "budget.reserved":
        this.row("waiting", m.laneWaiting, at, m.reserveBudget(money(n(d.reserved_micros))));
        break;
      case "vm.ready": {
        if (typeof d.isolation === "string") this.isolation = d.isolation;
        const text = this.isMicroVM()
          ? "microVM ready"
          : `sandbox ready · ${this.isolation ?? "?"} (no microVM)`;
        const ready = n(d.ready_ms);
        this.row("vm", this.vmLane(), at, text, ready !== null ? this.dim(` · ${duration(ready)}`) : null);
        break;
      }
      case "worker.started": {
        const conns = Array.isArray(d.connections) ? (d.connections as unknown[]).map(s) : [];
        const files = Array.isArray(d.files) ? (d.files as unknown[]).map((f) => (typeof f === "object" && f ? s((f as Record<string, unknown>).path) : s(f))) : [];
        const parts = [
          "worker started",
          `shell ${d.shell ? "on" : "off"}`,
          `web ${d.web ? "on" : "off"}`,
        ];
        if (conns.length) parts.push(`connections ${conns.join(", ")}`);
        if (files.length) parts.push(`files ${files.join(", ")}`);
        this.row("vm", this.vmLane(), at, parts.join(" · "));
        break;
      }
      case "model.call":
        this.row(
          "model",
          m.laneModel,
          at,
          m.modelCall(
            num(n(d.n)),
            s(d.model),
            num(n(d.input_tokens)),
            num(n(d.output_tokens)),
            money(n(d.cost_micros)),
          ),
          n(d.duration_ms) !== null ? this.dim(` · ${duration(n(d.duration_ms))}`) : null,
        );
        break;
      case "shell.command":
        this.shellCommand(s(d.call_id), s(d.command), at);
        break;
      case "shell.output":
        this.shellOutput(s(d.call_id), s(d.stream) === "stderr" ? "stderr" : "stdout", s(d.data), at);
        break;
      case "shell.exit":
        this.shellExit(s(d.call_id), d);
        break;
      case "web.request":
        this.row("web", m.laneWeb, at, h("span", { class: "mono" }, `${s(d.method) || "GET"} ${s(d.url)}`));
        break;
      case "web.response":
        this.row(
          "web",
          m.laneWeb,
          at,
          h("span", { class: "mono" }, `${s(d.status)} ${s(d.url)}`),
          n(d.bytes) !== null ? this.dim(` · ${bytes(n(d.bytes))}`) : null,
        );
        break;
      case "files.collected": {
        const files = Array.isArray(d.files) ? (d.files as Array<Record<string, unknown>>) : [];
        const skipped = Array.isArray(d.skipped) ? (d.skipped as Array<Record<string, unknown>>) : [];
        this.row(
          "files",
          m.laneFiles,
          at,
          m.filesCollected(num(files.length)),
          files.length || skipped.length
            ? h(
                "ul",
                { class: "file-list" },
                files.map((f) => h("li", null, h("span", { class: "mono" }, s(f.path)), this.dim(` · ${bytes(n(f.size))}`))),
                skipped.map((f) => h("li", { class: "warn" }, m.fileSkipped(s(f.path), s(f.reason)))),
              )
            : null,
        );
        break;
      }
      case "file.content":
        this.row("files", m.laneFiles, at, m.fileLive(s(d.path)), this.dim(` · ${bytes(n(d.size))}`));
        break;
      case "vm.destroyed": {
        this.flushShells();
        const life = n(d.lifetime_ms);
        this.row(
          "vm",
          this.vmLane(),
          at,
          this.isMicroVM() ? "microVM destroyed" : "sandbox destroyed",
          life !== null ? this.dim(` · ${duration(life)}`) : null,
        );
        break;
      }
      case "timeline.truncated":
        this.row("note", m.laneNote, at, m.timelineTruncated(num(n(d.dropped))));
        break;
      case "worker.destroyed":
        this.flushShells();
        this.row("destroy", m.laneDestroy, at, m.charged(money(n(d.charged_micros)), money(n(d.released_micros))));
        break;
      default:
        if (ev.type in OUTCOMES) {
          const status = OUTCOMES[ev.type] as string;
          const label = (m as unknown as Record<string, string>)[`status_${status}`] ?? status;
          const err = errorText(d.error);
          this.row(
            status === "succeeded" ? "success" : "failure",
            label,
            at,
            m.outcomeLine(num(n(d.model_calls) ?? 0), num(n(d.total_tokens) ?? 0)),
            err ? h("div", { class: "row-error" }, stripAnsi(err)) : null,
          );
        } else {
          // An event type this console does not know yet: shown, not hidden.
          this.row("note", ev.type, at, h("span", { class: "mono" }, stripAnsi(JSON.stringify(d))));
        }
    }
    return true;
  }

  private isMicroVM(): boolean {
    return this.isolation === null || this.isolation.startsWith("kvm");
  }

  private vmLane(): string {
    return this.isMicroVM() ? t().laneMicroVM : t().laneSandbox;
  }

  private dim(text: string): HTMLElement {
    return h("span", { class: "dim" }, text);
  }

  private row(kind: string, lane: string, tms: number | null, ...body: Array<Node | string | null>): HTMLLIElement {
    const li = h(
      "li",
      { class: `row lane-${kind}` },
      h("span", { class: "lane" }, lane),
      h("span", { class: "t" }, tms !== null ? `+${secs(tms)}s` : ""),
      h("div", { class: "body" }, body),
    );
    this.el.appendChild(li);
    return li;
  }

  private shellCommand(callId: string, command: string, at: number | null): void {
    const pre = h("pre", { class: "out", hidden: true });
    const meta = h("span", { class: "exit running" }, t().running);
    const li = this.row(
      "shell",
      t().laneShell,
      at,
      h("div", { class: "cmd" }, h("code", null, h("span", { class: "prompt", "aria-hidden": "true" }, "$ "), stripAnsi(command)), " ", meta),
      pre,
    );
    this.shells.set(callId, { li, pre, meta, last: null, ansi: new Map() });
  }

  private shellOutput(callId: string, stream: "stdout" | "stderr", data: string, at: number | null): void {
    let sh = this.shells.get(callId);
    if (!sh) {
      // Output of a command whose start we never saw (a truncated timeline).
      this.shellCommand(callId, "…", at);
      sh = this.shells.get(callId) as ShellRow;
    }
    let ansi = sh.ansi.get(stream);
    if (!ansi) {
      ansi = new AnsiStream();
      sh.ansi.set(stream, ansi);
    }
    this.write(sh, stream, ansi.push(data));
  }

  private write(sh: ShellRow, stream: string, text: string): void {
    if (!text) return;
    sh.pre.hidden = false;
    if (sh.last && sh.last.stream === stream) {
      sh.last.text.appendData(text);
      return;
    }
    const node = document.createTextNode(text);
    sh.pre.appendChild(h("span", { class: `stream-${stream}`, "data-stream": stream }, node));
    sh.last = { stream, text: node };
  }

  private shellExit(callId: string, d: Record<string, unknown>): void {
    const sh = this.shells.get(callId);
    if (!sh) return;
    for (const [stream, ansi] of sh.ansi) this.write(sh, stream, ansi.flush());
    const code = n(d.exit_code);
    const m = t();
    const parts: Array<Node | string> = [m.exitCode(code === null ? "?" : String(code))];
    const dur = n(d.duration_ms);
    if (dur !== null) parts.push(` · ${duration(dur)}`);
    if (d.truncated === true) parts.push(` · ${m.truncated}`);
    if (typeof d.limit === "string" && d.limit) parts.push(` · ${m.limitHit(d.limit)}`);
    sh.meta.className = `exit ${code === 0 ? "ok" : "bad"}`;
    sh.meta.replaceChildren(...parts);
    this.shells.delete(callId);
  }

  private flushShells(): void {
    for (const sh of this.shells.values()) {
      for (const [stream, ansi] of sh.ansi) this.write(sh, stream, ansi.flush());
      sh.meta.className = "exit";
      sh.meta.replaceChildren("");
    }
    this.shells.clear();
  }
}
