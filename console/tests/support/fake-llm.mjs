#!/usr/bin/env node
/**
 * A fake LLM on loopback speaking the OpenAI chat-completions wire format
 * (streamed), for the console's tests: the server under test calls it as
 * it would call OpenAI, so the runs are real runs (real sandbox, real
 * commands, real events) whose model turns are known in advance.
 *
 * The catalogue entry's `upstream` (the request's `model`) picks a script;
 * the turn is the number of assistant messages already in the request:
 *
 *   seed     the seed run's steps (SEED.md): `pwd; whoami` and curl, then
 *            the primes script and /tmp/proof.txt, then a Markdown answer.
 *   hostile  commands whose output (stdout and stderr) holds <script>,
 *            <img onerror>, javascript: links and terminal escapes, files
 *            with hostile names, then an answer made of the same.
 *
 * Control (for the tests, same port):
 *   POST /control/hold     answers (the last turn) of every script wait...
 *   POST /control/release  ...until this; also lets the waiting ones go
 *   GET  /control/state    {"holding", "waiting", "calls"}
 *
 * Prints `fake-llm: listening on http://127.0.0.1:PORT` on stdout once up.
 */

import { createServer } from "node:http";

/** The payloads: each sets `window.__pwned` if it ever runs. */
export const HOSTILE = {
  script: "<script>window.__pwned='script'</script>",
  img: "<img src=x onerror=\"window.__pwned='img'\">",
  svg: "<svg onload=\"window.__pwned='svg'\"></svg>",
  iframe: "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
  jsLink: "[click me](javascript:window.__pwned='link')",
  jsAutolink: "<javascript:window.__pwned='autolink'>",
  jsImage: "![pic](javascript:window.__pwned='image')",
  dataLink: "[data](data:text/html,<script>window.__pwned='data'</script>)",
  rawLink: "<a href=\"javascript:window.__pwned='a'\" onclick=\"window.__pwned='onclick'\">raw anchor</a>",
  ansi: "\u001b[31mRED-TEXT\u001b[0m \u001b]0;title-bar\u0007\u001b]8;;javascript:window.__pwned='osc8'\u001b\\osc-link\u001b]8;;\u001b\\ \u001b[2J\u001b[Hafter-clear",
};

const HOSTILE_FILE = "<img src=x onerror=window.__pwned=1>.txt";

const SEED_CALLS = [
  [
    { tool: "shell", command: "pwd; whoami" },
    { tool: "shell", command: "command -v curl && curl -sS -m 8 https://example.com" },
  ],
  [
    {
      tool: "shell",
      command:
        "printf '%s\\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' 'while len(primes) < 15:' '    if all(n % p for p in primes):' '        primes.append(n)' '    n += 1' 'print(*primes)' > primes.py && chmod +x primes.py && python3 primes.py",
    },
    { tool: "shell", command: "printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt" },
  ],
];

function shq(s) {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

const HOSTILE_CALLS = [
  [
    // stdout: every payload, one per line, through printf %s (escapes written as bytes by printf's format).
    { tool: "shell", command: `printf '%s\\n' ${Object.values(HOSTILE).map(shq).join(" ")}` },
    // stderr, with colours.
    { tool: "shell", command: `printf '\\033[1;31m%s\\033[0m\\n' ${shq(HOSTILE.script)} ${shq(HOSTILE.img)} >&2; echo ${shq("<b onmouseover=\"window.__pwned='cmd'\">bold?</b>")}` },
    // A file with a hostile name, collected by `outputs`.
    { tool: "shell", command: `printf 'x' > ${shq(HOSTILE_FILE)} && ls` },
  ],
];

function hostileAnswer() {
  return [
    "# Report <script>window.__pwned='heading'</script>",
    "",
    `Inline: ${HOSTILE.script} and ${HOSTILE.img}`,
    "",
    `- ${HOSTILE.jsLink}`,
    `- ${HOSTILE.jsAutolink}`,
    `- ${HOSTILE.jsImage}`,
    `- ${HOSTILE.dataLink}`,
    `- ${HOSTILE.rawLink}`,
    `- ${HOSTILE.svg}`,
    `- ${HOSTILE.iframe}`,
    "",
    `Terminal: ${HOSTILE.ansi}`,
    "",
    "A safe one: [example](https://example.com/).",
    "",
    "```html",
    HOSTILE.script,
    "```",
  ].join("\n");
}

function seedAnswer(toolOutputs) {
  // A tool result reads "exit code: N\n[limit hit…\n]output (…):\n<output>".
  const out = (k) => {
    const text = toolOutputs[k] ?? "";
    const at = text.indexOf("):\n");
    return (at >= 0 ? text.slice(at + 3) : text).trim().split("\n").map((l) => l.trim()).filter(Boolean);
  };
  const [pwd = "", who = ""] = out(0);
  return [
    `- Prime script output: ${out(2)[0] ?? ""}`,
    `- whoami:${who};pwd:${pwd}`,
    `- curl error: ${out(1).at(-1) ?? ""}`,
    `- /tmp/proof.txt created; ls -l: ${out(3)[0] ?? ""}`,
    "The network call did not succeed.",
  ].join("\n");
}

const SCRIPTS = {
  seed: { calls: SEED_CALLS, answer: seedAnswer },
  hostile: { calls: HOSTILE_CALLS, answer: hostileAnswer },
};

/** Each model turn takes this long, so a run's recorded timing has some shape to replay. */
const TURN_MS = Number(process.env.FAKE_LLM_TURN_MS ?? 300);

let holding = false;
let waiters = [];
let calls = 0;

function toolChunks(list, turn) {
  const chunks = list.map((c, i) => ({
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            {
              index: i,
              id: `call_t${turn}_${i}`,
              type: "function",
              function: { name: c.tool, arguments: JSON.stringify({ command: c.command }) },
            },
          ],
        },
      },
    ],
  }));
  chunks.push({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
  return chunks;
}

function answerChunks(text) {
  const mid = Math.floor(text.length / 2);
  return [
    { choices: [{ index: 0, delta: { role: "assistant", content: text.slice(0, mid) } }] },
    { choices: [{ index: 0, delta: { content: text.slice(mid) }, finish_reason: "stop" }] },
  ];
}

function sse(res, chunks, usage) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.write(
    `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] } })}\n\n`,
  );
  res.end("data: [DONE]\n\n");
}

async function complete(body, res) {
  calls++;
  const script = SCRIPTS[body.model] ?? SCRIPTS.seed;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const turn = messages.filter((m) => m.role === "assistant").length;
  const tools = messages.filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));
  await new Promise((resolve) => setTimeout(resolve, TURN_MS));
  if (turn < script.calls.length) {
    sse(res, toolChunks(script.calls[turn], turn), [1200 + 400 * turn, 60]);
    return;
  }
  if (holding) await new Promise((resolve) => waiters.push(resolve));
  sse(res, answerChunks(script.answer(tools)), [2300, 150]);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString();
    const url = new URL(req.url ?? "/", "http://x");
    const reply = (status, obj) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(obj));
    };
    if (req.method === "POST" && url.pathname.endsWith("/chat/completions")) {
      let body = {};
      try {
        body = JSON.parse(text);
      } catch {
        return reply(400, { error: { message: "not JSON" } });
      }
      complete(body, res).catch((e) => {
        if (!res.headersSent) reply(500, { error: { message: String(e) } });
      });
      return;
    }
    if (req.method === "POST" && url.pathname === "/control/hold") {
      holding = true;
      return reply(200, { holding, waiting: waiters.length, calls });
    }
    if (req.method === "POST" && url.pathname === "/control/release") {
      holding = false;
      const w = waiters;
      waiters = [];
      for (const f of w) f();
      return reply(200, { holding, released: w.length, calls });
    }
    if (req.method === "GET" && url.pathname === "/control/state") {
      return reply(200, { holding, waiting: waiters.length, calls });
    }
    reply(404, { error: { message: `no route ${req.method} ${url.pathname}` } });
  });
});

server.listen(Number(process.env.FAKE_LLM_PORT ?? 0), "127.0.0.1", () => {
  const a = server.address();
  process.stdout.write(`fake-llm: listening on http://127.0.0.1:${a.port}\n`);
});
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
