/**
 * English and Japanese (the seed page's language), and locale formatting.
 *
 * The language comes from the user's switch (remembered in localStorage),
 * else from `navigator.languages`. Money is integer micro-dollars, shown in
 * dollars with 2 to 5 decimals (3530 → $0.00353, 40000 → $0.04), numbers
 * and dates through `Intl` in the page's language, as the seed page does
 * ("$0.04 のうち $0.00353").
 */

export type Lang = "en" | "ja";
export const LANGS: readonly Lang[] = ["en", "ja"];
const LANG_KEY = "ephemeral.lang";

const en = {
  langName: "English",
  language: "Language",
  skip: "Skip to content",
  brand: "Ephemeral",
  navRuns: "Runs",
  navPlayground: "Playground",
  navSamples: "Samples",
  signOut: "Sign out",
  loading: "Loading…",
  notFound: "Not found.",
  pageNotFound: "There is no page here.",
  backToRuns: "Back to runs",
  retry: "Try again",
  error: "Error",

  // Sign-in
  signInTitle: "Sign in",
  signInLead: "Paste a member key of your organisation. It is kept in this tab only (session storage) and sent as a Bearer header; never in a URL or a cookie.",
  keyLabel: "Member key",
  keyHint: "Starts with eph_. Make one with: ephemeral keys create --org NAME",
  signInButton: "Sign in",
  signingIn: "Checking the key…",
  keyRefused: "The server refused this key.",
  keyEmpty: "Paste a key first.",
  samplesTitle: "Samples",
  samplesLead: "Recorded runs anyone can replay, no key needed.",
  noSamples: "No samples are published on this server.",
  homeTitle: "Ephemeral",
  homeLead: "Disposable sandboxes for AI agents: runs, live timelines and replays.",

  // Runs list
  runsTitle: "Runs",
  runsLead: "Your organisation's runs, newest first.",
  noRuns: "No runs yet. Start one from the playground.",
  colStatus: "Status",
  colRun: "Run",
  colModel: "Model",
  colCost: "Cost",
  colCreated: "Created",
  colDuration: "Duration",
  loadMore: "Older runs",
  newRun: "New run",

  // Statuses
  status_queued: "Queued",
  status_running: "Running",
  status_succeeded: "Success",
  status_failed: "Failure",
  status_timed_out: "Timed out",
  status_budget_exceeded: "Budget exceeded",
  status_cancelled: "Cancelled",

  // Run page
  runTitle: "Run",
  costOf: (charged: string, budget: string) => `${charged} of ${budget}`,
  elapsed: "Elapsed",
  live: "Live",
  reconnecting: "Connection lost, resuming…",
  timeline: "Timeline",
  laneWaiting: "Waiting",
  laneMicroVM: "MicroVM",
  laneSandbox: "Sandbox",
  laneShell: "Shell",
  laneModel: "Model calls",
  laneWeb: "Web",
  laneFiles: "Files",
  laneDestroy: "Destroy worker",
  laneNote: "Note",
  reserveBudget: (m: string) => `reserve budget ${m}`,
  modelCall: (n: string, model: string, tin: string, tout: string, cost: string) =>
    `call ${n} · ${model} · ${tin} in, ${tout} out tokens · ${cost}`,
  outcomeLine: (calls: string, tokens: string) => `${calls} model calls, ${tokens} tokens`,
  charged: (c: string, r: string) => `charged ${c}, released ${r}`,
  exitCode: (c: string) => `exit ${c}`,
  truncated: "output truncated",
  limitHit: (l: string) => `limit: ${l}`,
  running: "running…",
  filesCollected: (n: string) => `${n} files collected`,
  fileSkipped: (p: string, r: string) => `skipped ${p} (${r})`,
  fileLive: (p: string) => `file ${p} (live stream only)`,
  timelineTruncated: (n: string) => `timeline truncated: ${n} events dropped`,
  output: "Output",
  recordedOutput: "Recorded output",
  noOutput: "No output.",
  outputNotKept: "Not kept (zero data retention).",
  errorLabel: "Error",
  costSplit: "Cost",
  costModel: "Model",
  costWeb: "Web",
  costCompute: "Compute",
  costPending: "Settled when the worker is destroyed.",
  files: "Files",
  filesLead: "Files the run's outputs collected.",
  noFiles: "No files were collected.",
  download: (p: string) => `Download ${p}`,
  downloadShort: "Download",
  permissions: "What the agent can and cannot do",
  permissionsLead: "Permissions are part of the request. Anything not listed is unavailable in the run.",
  colSetting: "Setting",
  colAllowed: "Allowed",
  permConnections: "Connections",
  permWeb: "Web",
  permShell: "Shell",
  permFiles: "Files",
  permOutputs: "Outputs",
  permZdr: "Zero data retention",
  permBudget: "Budget",
  permTimeout: "Timeout",
  permModel: "Model",
  none: "none",
  on: "on",
  off: "off",
  webOn: "on (GET only, through the broker)",
  shellOn: "on (inside the isolated machine)",
  zdrOn: "on: nothing but billing figures is stored",
  zdrOff: (days: string) => `off: records are kept for ${days} days`,
  zdrOffUnknown: "off: records are kept",
  budgetCap: (m: string) => `${m}, hard cap`,
  seconds: (n: string) => `${n} seconds`,
  credentialsNote: "Credentials never enter the machine. A broker attaches credentials to each call and lets through only the methods listed above.",
  exactRequest: "The exact request",
  exactRequestLead: "Set EPHEMERAL_URL to this server and EPHEMERAL_API_KEY to your organisation's member key.",
  requestJson: "request.json",
  requestNotKept: "This run's request was not kept (zero data retention); below is what the run object tells of it.",
  promptNotKept: "(not kept)",
  copy: "Copy",
  copyCurl: "Copy the curl command",
  copyJson: "Copy request.json",
  copied: "Copied",
  openInPlayground: "Open in playground",
  cancelRun: "Cancel run",
  cancelling: "Cancelling…",
  // Replay
  replayOf: (date: string, model: string) => `Replaying the real run of ${date}. Model: ${model}.`,
  replay: "Replay",
  play: "Play",
  pause: "Pause",
  speed: "Speed",
  instant: "instant",
  scrubber: "Position in the run",
  clock: (pos: string, total: string) => `${pos} / ${total} s`,
  // Samples
  sampleTitle: "Sample",
  runItYourself: "Run it yourself",
  runItYourselfLead: (m: string) =>
    `Opens the sample in the playground with the whole request filled in. It runs on your own account, within the budget shown. Budget for this sample: ${m}.`,
  seeRealRun: "See a real run",

  // Playground
  playgroundTitle: "Playground",
  playgroundLead: "Write a request, see exactly what will be sent, and run it.",
  prefilledFromSample: (t: string) => `Filled in from the sample “${t}”.`,
  prefilledFromRun: (id: string) => `Filled in from run ${id}.`,
  runRequestNotKept: "That run's request was not kept (zero data retention): its settings are filled in, the prompt is not.",
  fPrompt: "Prompt",
  fModel: "Model",
  fModelServer: (id: string) => (id ? `Server default (${id})` : "Server default"),
  fShell: "Shell",
  fShellHint: "The agent gets a shell inside the isolated machine.",
  fWeb: "Web",
  fWebHint: "The agent may fetch web pages (GET only, through the broker).",
  fConnections: "Connections",
  fConnectionsHint: "Names of your organisation's connections, separated by commas.",
  fFiles: "Files",
  fFilesHint: "Written into the scratch folder before the agent starts.",
  fFilePath: "Path",
  fFileContent: "Content",
  fFileBinary: (n: string) => `binary file, ${n} bytes (base64)`,
  addFile: "Add a text file",
  uploadFile: "Add files from this computer",
  removeFile: (p: string) => `Remove file ${p}`,
  fOutputs: "Outputs",
  fOutputsHint: "Glob patterns of files to collect at the end, separated by commas (e.g. *.png, report.md).",
  fTimeout: "Timeout (seconds)",
  fBudget: "Budget (US dollars, hard cap)",
  fBudgetHint: (micros: string) => `= ${micros} micro-dollars, reserved up front; what is not used is released.`,
  fZdr: "Zero data retention",
  fZdrHint: "Nothing but billing figures is stored.",
  willSend: "The request it will send",
  send: "Run",
  sending: "Starting…",
  notNumber: "Enter a number.",
  problem: (title: string) => title,
  retryAfter: (s: string) => `Try again in ${s} s.`,
} as const;

type Messages = { [K in keyof typeof en]: (typeof en)[K] extends string ? string : (typeof en)[K] };

const ja: Messages = {
  langName: "日本語",
  language: "言語",
  skip: "本文へ移動",
  brand: "Ephemeral",
  navRuns: "実行",
  navPlayground: "プレイグラウンド",
  navSamples: "サンプル",
  signOut: "サインアウト",
  loading: "読み込み中…",
  notFound: "見つかりません。",
  pageNotFound: "このページはありません。",
  backToRuns: "実行の一覧へ",
  retry: "再試行",
  error: "エラー",

  signInTitle: "サインイン",
  signInLead: "組織のメンバーキーを貼り付けてください。キーはこのタブの中だけ（セッションストレージ）に保持され、Bearer ヘッダーとして送信されます。URL や Cookie には入りません。",
  keyLabel: "メンバーキー",
  keyHint: "eph_ で始まります。作成: ephemeral keys create --org NAME",
  signInButton: "サインイン",
  signingIn: "キーを確認しています…",
  keyRefused: "サーバーがこのキーを拒否しました。",
  keyEmpty: "先にキーを貼り付けてください。",
  samplesTitle: "サンプル",
  samplesLead: "記録された実行を、キーなしで誰でも再生できます。",
  noSamples: "このサーバーには公開されたサンプルがありません。",
  homeTitle: "Ephemeral",
  homeLead: "AI エージェントのための使い捨てサンドボックス: 実行、ライブのタイムライン、再生。",

  runsTitle: "実行",
  runsLead: "組織の実行（新しい順）。",
  noRuns: "まだ実行がありません。プレイグラウンドから始めてください。",
  colStatus: "状態",
  colRun: "実行",
  colModel: "モデル",
  colCost: "費用",
  colCreated: "作成日時",
  colDuration: "所要時間",
  loadMore: "以前の実行",
  newRun: "新しい実行",

  status_queued: "待機中",
  status_running: "実行中",
  status_succeeded: "成功",
  status_failed: "失敗",
  status_timed_out: "タイムアウト",
  status_budget_exceeded: "予算超過",
  status_cancelled: "キャンセル",

  runTitle: "実行",
  costOf: (charged, budget) => `${budget} のうち ${charged}`,
  elapsed: "経過時間",
  live: "ライブ",
  reconnecting: "接続が切れました。再開しています…",
  timeline: "タイムライン",
  laneWaiting: "待機中",
  laneMicroVM: "MicroVM",
  laneSandbox: "サンドボックス",
  laneShell: "シェル",
  laneModel: "モデル呼び出し",
  laneWeb: "Web",
  laneFiles: "ファイル",
  laneDestroy: "ワーカーを破棄",
  laneNote: "注記",
  reserveBudget: (m) => `予算 ${m} を確保`,
  modelCall: (n, model, tin, tout, cost) => `呼び出し ${n} · ${model} · 入力 ${tin}、出力 ${tout} トークン · ${cost}`,
  outcomeLine: (calls, tokens) => `モデル呼び出し ${calls} 回、トークン ${tokens}`,
  charged: (c, r) => `${c} を請求、${r} を解放`,
  exitCode: (c) => `終了コード ${c}`,
  truncated: "出力は切り詰められました",
  limitHit: (l) => `上限: ${l}`,
  running: "実行中…",
  filesCollected: (n) => `${n} 個のファイルを収集`,
  fileSkipped: (p, r) => `${p} を除外（${r}）`,
  fileLive: (p) => `ファイル ${p}（ライブストリームのみ）`,
  timelineTruncated: (n) => `タイムラインを切り詰めました: ${n} 件のイベントを破棄`,
  output: "出力",
  recordedOutput: "記録された出力",
  noOutput: "出力はありません。",
  outputNotKept: "保存されていません（ゼロデータ保持）。",
  errorLabel: "エラー",
  costSplit: "費用",
  costModel: "モデル",
  costWeb: "Web",
  costCompute: "コンピュート",
  costPending: "ワーカーの破棄時に確定します。",
  files: "ファイル",
  filesLead: "outputs で収集されたファイル。",
  noFiles: "収集されたファイルはありません。",
  download: (p) => `${p} をダウンロード`,
  downloadShort: "ダウンロード",
  permissions: "エージェントにできること、できないこと",
  permissionsLead: "権限はリクエストの一部です。ここに挙げていないものは、実行では利用できません。",
  colSetting: "設定",
  colAllowed: "許可",
  permConnections: "接続",
  permWeb: "Web",
  permShell: "シェル",
  permFiles: "ファイル",
  permOutputs: "出力ファイル",
  permZdr: "ゼロデータ保持",
  permBudget: "予算",
  permTimeout: "タイムアウト",
  permModel: "モデル",
  none: "なし",
  on: "オン",
  off: "オフ",
  webOn: "オン（GET のみ、ブローカー経由）",
  shellOn: "オン（隔離されたマシンの内部）",
  zdrOn: "オン: 課金の数値以外は何も保存されません",
  zdrOff: (days) => `オフ: 記録は ${days} 日間保存されます`,
  zdrOffUnknown: "オフ: 記録は保存されます",
  budgetCap: (m) => `${m}、厳格な上限`,
  seconds: (n) => `${n} 秒`,
  credentialsNote: "認証情報がマシンに入ることはありません。ブローカーが各呼び出しに認証情報を付与し、上記のメソッドだけを通します。",
  exactRequest: "正確なリクエスト",
  exactRequestLead: "EPHEMERAL_URL にはこのサーバーを、EPHEMERAL_API_KEY には組織のメンバーキーを設定してください。",
  requestJson: "request.json",
  requestNotKept: "この実行のリクエストは保存されていません（ゼロデータ保持）。以下は実行オブジェクトからわかる内容です。",
  promptNotKept: "（保存されていません）",
  copy: "コピー",
  copyCurl: "curl コマンドをコピー",
  copyJson: "request.json をコピー",
  copied: "コピーしました",
  openInPlayground: "プレイグラウンドで開く",
  cancelRun: "実行をキャンセル",
  cancelling: "キャンセルしています…",
  replayOf: (date, model) => `${date} の実際の実行を再生しています。モデル: ${model}。`,
  replay: "再生",
  play: "再生",
  pause: "一時停止",
  speed: "速度",
  instant: "即時",
  scrubber: "実行内の位置",
  clock: (pos, total) => `${pos} / ${total} 秒`,
  sampleTitle: "サンプル",
  runItYourself: "自分で実行する",
  runItYourselfLead: (m) =>
    `リクエスト全体が入力された状態で、サンプルをプレイグラウンドで開きます。実行はご自身のアカウントで、表示された予算の範囲内で行われます。このサンプルの予算: ${m}`,
  seeRealRun: "実際の実行を見る",

  playgroundTitle: "プレイグラウンド",
  playgroundLead: "リクエストを書き、送信される内容をそのまま確認して、実行します。",
  prefilledFromSample: (t) => `サンプル「${t}」から入力しました。`,
  prefilledFromRun: (id) => `実行 ${id} から入力しました。`,
  runRequestNotKept: "その実行のリクエストは保存されていません（ゼロデータ保持）。設定は入力しましたが、プロンプトはありません。",
  fPrompt: "プロンプト",
  fModel: "モデル",
  fModelServer: (id) => (id ? `サーバーの既定（${id}）` : "サーバーの既定"),
  fShell: "シェル",
  fShellHint: "エージェントは隔離されたマシンの中でシェルを使えます。",
  fWeb: "Web",
  fWebHint: "エージェントは Web ページを取得できます（GET のみ、ブローカー経由）。",
  fConnections: "接続",
  fConnectionsHint: "組織の接続の名前（カンマ区切り）。",
  fFiles: "ファイル",
  fFilesHint: "エージェントの開始前に作業フォルダーに書き込まれます。",
  fFilePath: "パス",
  fFileContent: "内容",
  fFileBinary: (n) => `バイナリファイル、${n} バイト（base64）`,
  addFile: "テキストファイルを追加",
  uploadFile: "このコンピューターからファイルを追加",
  removeFile: (p) => `ファイル ${p} を削除`,
  fOutputs: "出力ファイル",
  fOutputsHint: "最後に収集するファイルの glob パターン（カンマ区切り、例: *.png, report.md）。",
  fTimeout: "タイムアウト（秒）",
  fBudget: "予算（米ドル、厳格な上限）",
  fBudgetHint: (micros) => `= ${micros} マイクロドル。最初に確保され、使わなかった分は解放されます。`,
  fZdr: "ゼロデータ保持",
  fZdrHint: "課金の数値以外は何も保存されません。",
  willSend: "送信されるリクエスト",
  send: "実行",
  sending: "開始しています…",
  notNumber: "数値を入力してください。",
  problem: (title) => title,
  retryAfter: (s) => `${s} 秒後に再試行してください。`,
};

const messages: Record<Lang, Messages> = { en: en as Messages, ja };

let current: Lang = pickLang();

function pickLang(): Lang {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved === "en" || saved === "ja") return saved;
  } catch {
    // storage disabled: fall through to the browser's languages
  }
  for (const l of navigator.languages ?? [navigator.language]) {
    const base = l.toLowerCase().split("-")[0];
    if (base === "ja") return "ja";
    if (base === "en") return "en";
  }
  return "en";
}

export function lang(): Lang {
  return current;
}

export function setLang(l: Lang): void {
  current = l;
  try {
    localStorage.setItem(LANG_KEY, l);
  } catch {
    // not remembered; still switched for this page
  }
  document.documentElement.lang = l;
}

/** The current language's messages. */
export function t(): Messages {
  return messages[current];
}

// ---- formatting -------------------------------------------------------

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function nf(key: string, opts: Intl.NumberFormatOptions): Intl.NumberFormat {
  const k = `${current}|n|${key}`;
  let f = cache.get(k) as Intl.NumberFormat | undefined;
  if (!f) {
    f = new Intl.NumberFormat(current, opts);
    cache.set(k, f);
  }
  return f;
}
function df(key: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const k = `${current}|d|${key}`;
  let f = cache.get(k) as Intl.DateTimeFormat | undefined;
  if (!f) {
    f = new Intl.DateTimeFormat(current, opts);
    cache.set(k, f);
  }
  return f;
}

/** Integer micro-dollars as dollars: at least 2 decimals, at most 5, trailing zeros trimmed. */
export function money(micros: number | null | undefined): string {
  if (typeof micros !== "number" || !Number.isFinite(micros)) return "—";
  return nf("money", {
    style: "currency",
    currency: "USD",
    minimumFractionDigits: 2,
    maximumFractionDigits: 5,
  }).format(micros / 1_000_000);
}

export function num(n: number | null | undefined): string {
  if (typeof n !== "number" || !Number.isFinite(n)) return "—";
  return nf("num", {}).format(n);
}

/** Milliseconds as seconds with up to 2 decimals ("0.35"), for "+0.35 s". */
export function secs(ms: number, digits = 2): string {
  return nf(`secs${digits}`, { minimumFractionDigits: digits === 1 ? 1 : 0, maximumFractionDigits: digits }).format(ms / 1000);
}

/** A duration for people: "4 ms", "0.36 s", "2 min 5 s". */
export function duration(ms: number | null | undefined): string {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return "—";
  const s = current === "ja" ? "秒" : " s";
  // Under a tenth of a second, "0 s" would say nothing: milliseconds.
  if (ms < 100) return `${num(Math.round(ms))}${current === "ja" ? "ミリ秒" : " ms"}`;
  if (ms < 60_000) return `${secs(ms, ms < 10_000 ? 2 : 1)}${s}`;
  const total = Math.round(ms / 1000);
  const m = Math.floor(total / 60);
  const rest = total % 60;
  return current === "ja" ? `${num(m)}分${num(rest)}秒` : `${num(m)} min ${num(rest)} s`;
}

export function bytes(n: number | null | undefined): string {
  if (typeof n !== "number" || !Number.isFinite(n)) return "—";
  if (n < 1000) return nf("b", { style: "unit", unit: "byte", unitDisplay: "short" }).format(n);
  if (n < 1_000_000)
    return nf("kb", { style: "unit", unit: "kilobyte", unitDisplay: "short", maximumFractionDigits: 1 }).format(n / 1000);
  return nf("mb", { style: "unit", unit: "megabyte", unitDisplay: "short", maximumFractionDigits: 1 }).format(n / 1_000_000);
}

export function dateTime(iso: string | null | undefined): string {
  const d = iso ? new Date(iso) : null;
  if (!d || Number.isNaN(d.getTime())) return "—";
  return df("dt", { dateStyle: "medium", timeStyle: "medium" }).format(d);
}

export function dateLong(iso: string | null | undefined): string {
  const d = iso ? new Date(iso) : null;
  if (!d || Number.isNaN(d.getTime())) return "—";
  return df("dl", { dateStyle: "long" }).format(d);
}

/** The status's words ("Success", "成功"). */
export function statusText(status: string): string {
  const m = t() as unknown as Record<string, unknown>;
  const v = m[`status_${status}`];
  return typeof v === "string" ? v : status;
}
