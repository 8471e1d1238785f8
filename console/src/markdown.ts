/**
 * A small Markdown renderer that builds DOM nodes, for a run's output.
 *
 * The output is untrusted (the model wrote it, from what commands printed),
 * so this renderer never produces markup from it: every piece of text
 * becomes a text node, and the only elements are the ones named here.
 * Raw HTML is shown as the text it is; links are kept only for absolute
 * http(s) and mailto URLs (anything else, `javascript:` included, is shown
 * as its source text); images become links (the page loads nothing from
 * elsewhere). Terminal escape sequences are stripped first.
 *
 * What it understands: paragraphs, ATX headings, fenced code, thematic
 * breaks, block quotes, bullet and ordered lists (nested by indentation),
 * GFM tables; inline code, strong, emphasis, links, autolinks, bare
 * http(s) URLs, backslash escapes and hard line breaks. A line that does
 * not start a list item ends a list (models write "- a\n- b\nSummary.").
 */

import { stripAnsi } from "./ansi";
import { h } from "./dom";

const MAX_DEPTH = 12;

/** Longer outputs are shown as plain text: the renderer is not built for megabytes. */
const MAX_MARKDOWN = 200_000;

export function renderMarkdown(source: string): DocumentFragment {
  const f = document.createDocumentFragment();
  if (source.length > MAX_MARKDOWN) {
    f.appendChild(h("pre", { class: "md-code" }, stripAnsi(source)));
    return f;
  }
  const lines = stripAnsi(source).replace(/\t/g, "    ").split("\n");
  for (const n of blocks(lines, 0)) f.appendChild(n);
  return f;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])([ \t]+(.*))?$/;
const TABLE_SEP = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function isBlank(l: string): boolean {
  return /^\s*$/.test(l);
}

function startsBlock(l: string): boolean {
  return FENCE.test(l) || HEADING.test(l) || HR.test(l) || QUOTE.test(l) || ITEM.test(l);
}

function blocks(lines: string[], depth: number): Node[] {
  const out: Node[] = [];
  if (depth > MAX_DEPTH) {
    out.push(h("p", null, lines.join("\n")));
    return out;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = FENCE.exec(line))) {
      const fence = m[1] as string;
      const info = m[2] ?? "";
      const body: string[] = [];
      i++;
      while (i < lines.length) {
        const l = lines[i] as string;
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(l);
        if (close && (close[1] as string)[0] === fence[0] && (close[1] as string).length >= fence.length) {
          i++;
          break;
        }
        body.push(l);
        i++;
      }
      const code = h("code", /^[\w+-]{1,32}$/.test(info) ? { class: `lang-${info}` } : null, body.join("\n"));
      out.push(h("pre", { class: "md-code" }, code));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const level = Math.min(6, (m[1] as string).length + 2) as 3 | 4 | 5 | 6;
      out.push(h(`h${level}`, { class: "md-h" }, inline(m[2] ?? "", 0)));
      i++;
      continue;
    }
    if (HR.test(line)) {
      out.push(h("hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i] as string))) {
        inner.push(m[1] ?? "");
        i++;
      }
      out.push(h("blockquote", null, blocks(inner, depth + 1)));
      continue;
    }
    if (ITEM.test(line)) {
      i = list(lines, i, depth, out);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1] as string)) {
      i = table(lines, i, out);
      continue;
    }
    // A paragraph: until a blank line or the start of another block.
    const para: string[] = [line];
    i++;
    while (i < lines.length && !isBlank(lines[i] as string) && !startsBlock(lines[i] as string)) {
      para.push(lines[i] as string);
      i++;
    }
    out.push(h("p", null, inline(para.map((l) => l.replace(/^ +/, "")).join("\n"), 0)));
  }
  return out;
}

function list(lines: string[], start: number, depth: number, out: Node[]): number {
  const first = ITEM.exec(lines[start] as string) as RegExpExecArray;
  const indent = (first[1] as string).length;
  const ordered = /\d/.test(first[2] as string);
  const delimiter = (first[2] as string).slice(-1);
  const el = ordered ? h("ol") : h("ul");
  if (ordered) {
    const n = parseInt(first[2] as string, 10);
    if (n !== 1) el.setAttribute("start", String(n));
  }
  let i = start;
  let loose = false;
  const items: string[][] = [];
  while (i < lines.length) {
    const m = ITEM.exec(lines[i] as string);
    if (!m || (m[1] as string).length !== indent) break;
    const marker = m[2] as string;
    if (/\d/.test(marker) !== ordered || marker.slice(-1) !== delimiter) break;
    const content = indent + marker.length + ((m[3] ?? " ").length - (m[4] ?? "").length);
    const body = [m[4] ?? ""];
    i++;
    while (i < lines.length) {
      const l = lines[i] as string;
      if (isBlank(l)) {
        // A blank line belongs to the item when an indented line follows.
        let j = i;
        while (j < lines.length && isBlank(lines[j] as string)) j++;
        const next = lines[j];
        if (next !== undefined && leading(next) > indent) {
          loose = true;
          for (; i < j; i++) body.push("");
          continue;
        }
        break;
      }
      const lead = leading(l);
      if (lead > indent) {
        body.push(l.slice(Math.min(lead, content)));
        i++;
        continue;
      }
      break;
    }
    items.push(body);
    // A blank line between items makes the list loose.
    if (i < lines.length && isBlank(lines[i] as string)) {
      let j = i;
      while (j < lines.length && isBlank(lines[j] as string)) j++;
      const m2 = lines[j] !== undefined ? ITEM.exec(lines[j] as string) : null;
      if (m2 && (m2[1] as string).length === indent) {
        loose = true;
        i = j;
      }
    }
  }
  for (const body of items) {
    const li = h("li");
    const kids = blocks(body, depth + 1);
    for (const k of kids) {
      if (!loose && k instanceof HTMLParagraphElement) {
        while (k.firstChild) li.appendChild(k.firstChild);
        if (k !== kids[kids.length - 1]) li.appendChild(h("br"));
      } else li.appendChild(k);
    }
    el.appendChild(li);
  }
  out.push(el);
  return i;
}

function leading(l: string): number {
  return (/^ */.exec(l) as RegExpExecArray)[0].length;
}

function cells(row: string): string[] {
  let r = row.trim();
  if (r.startsWith("|")) r = r.slice(1);
  if (r.endsWith("|") && !r.endsWith("\\|")) r = r.slice(0, -1);
  const parts: string[] = [];
  let cur = "";
  for (let k = 0; k < r.length; k++) {
    const c = r[k] as string;
    if (c === "\\" && r[k + 1] === "|") {
      cur += "|";
      k++;
    } else if (c === "|") {
      parts.push(cur.trim());
      cur = "";
    } else cur += c;
  }
  parts.push(cur.trim());
  return parts;
}

function table(lines: string[], start: number, out: Node[]): number {
  const head = cells(lines[start] as string);
  const aligns = cells(lines[start + 1] as string).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : "",
  );
  const cls = (k: number) => (aligns[k] ? `align-${aligns[k]}` : undefined);
  const thead = h("thead", null, h("tr", null, head.map((c, k) => h("th", { scope: "col", class: cls(k) }, inline(c, 0)))));
  const tbody = h("tbody");
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i] as string) && (lines[i] as string).includes("|")) {
    const row = cells(lines[i] as string);
    tbody.appendChild(h("tr", null, head.map((_, k) => h("td", { class: cls(k) }, inline(row[k] ?? "", 0)))));
    i++;
  }
  out.push(h("div", { class: "md-table" }, h("table", null, thead, tbody)));
  return i;
}

// ---- inline ---------------------------------------------------------------

/** An absolute http(s) or mailto URL, normalised; null for anything else. */
export function safeUrl(raw: string): string | null {
  const s = raw.trim().replace(/^<|>$/g, "");
  if (!/^(https?:\/\/|mailto:)/i.test(s)) return null;
  try {
    const u = new URL(s);
    if (u.protocol !== "http:" && u.protocol !== "https:" && u.protocol !== "mailto:") return null;
    return u.href;
  } catch {
    return null;
  }
}

function link(href: string, children: Node[] | string): HTMLAnchorElement {
  return h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank", class: "md-link" }, children);
}

const PUNCT = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const BARE_URL = /^https?:\/\/[^\s<>"]*[^\s<>".,:;'!?)\]]/i;

function inline(text: string, depth: number): Node[] {
  const out: Node[] = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push(document.createTextNode(buf));
    buf = "";
  };
  if (depth > MAX_DEPTH) return [document.createTextNode(text)];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    const rest = text.slice(i);
    // Backslash escapes and hard breaks.
    if (c === "\\") {
      const n = text[i + 1];
      if (n === "\n") {
        flush();
        out.push(h("br"));
        i += 2;
        continue;
      }
      if (n !== undefined && PUNCT.test(n)) {
        buf += n;
        i += 2;
        continue;
      }
    }
    if (c === "\n") {
      if (/ {2,}$/.test(buf)) {
        buf = buf.replace(/ +$/, "");
        flush();
        out.push(h("br"));
      } else buf += "\n";
      i++;
      continue;
    }
    // Code spans.
    if (c === "`") {
      const run = (/^`+/.exec(rest) as RegExpExecArray)[0];
      const end = text.indexOf(run, i + run.length);
      if (end >= 0 && text[end + run.length] !== "`") {
        let code = text.slice(i + run.length, end).replace(/\n/g, " ");
        if (/^ .* $/.test(code) && code.trim() !== "") code = code.slice(1, -1);
        flush();
        out.push(h("code", null, code));
        i = end + run.length;
        continue;
      }
      buf += run;
      i += run.length;
      continue;
    }
    // Autolinks <https://…>.
    if (c === "<") {
      const m = /^<([a-z][a-z0-9+.-]{1,31}:[^\s<>]*)>/i.exec(rest);
      if (m) {
        const href = safeUrl(m[1] as string);
        flush();
        out.push(href ? link(href, m[1] as string) : document.createTextNode(m[0]));
        i += m[0].length;
        continue;
      }
    }
    // Links and images.
    if (c === "[" || (c === "!" && text[i + 1] === "[")) {
      const open = c === "!" ? i + 1 : i;
      const parsed = linkAt(text, open);
      if (parsed) {
        const href = safeUrl(parsed.url);
        flush();
        if (href) out.push(link(href, c === "!" ? parsed.label || href : inline(parsed.label, depth + 1)));
        else out.push(document.createTextNode(text.slice(i, parsed.end)));
        i = parsed.end;
        continue;
      }
    }
    // Bare URLs.
    if ((c === "h" || c === "H") && (i === 0 || !/[\w/]/.test(text[i - 1] as string))) {
      const m = BARE_URL.exec(rest);
      if (m) {
        const href = safeUrl(m[0]);
        if (href) {
          flush();
          out.push(link(href, m[0]));
          i += m[0].length;
          continue;
        }
      }
    }
    // Strong and emphasis.
    if (c === "*" || c === "_") {
      const em = emphasisAt(text, i);
      if (em) {
        flush();
        const tag = em.strong ? "strong" : "em";
        out.push(h(tag, null, inline(text.slice(em.innerStart, em.innerEnd), depth + 1)));
        i = em.end;
        continue;
      }
      const run = (/^[*_]+/.exec(rest) as RegExpExecArray)[0];
      buf += run;
      i += run.length;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

/** `[label](url "title")` starting at `open` (the `[`). */
function linkAt(text: string, open: number): { label: string; url: string; end: number } | null {
  let depth = 0;
  let k = open;
  for (; k < text.length; k++) {
    const ch = text[k];
    if (ch === "\\") {
      k++;
      continue;
    }
    if (ch === "[") depth++;
    else if (ch === "]") {
      depth--;
      if (depth === 0) break;
    }
  }
  if (depth !== 0 || text[k + 1] !== "(") return null;
  const label = text.slice(open + 1, k);
  let p = k + 2;
  let parens = 1;
  let q = p;
  for (; q < text.length; q++) {
    const ch = text[q];
    if (ch === "\\") {
      q++;
      continue;
    }
    if (ch === "(") parens++;
    else if (ch === ")") {
      parens--;
      if (parens === 0) break;
    } else if (ch === "\n") return null;
  }
  if (parens !== 0) return null;
  let dest = text.slice(p, q).trim();
  const titled = /^(\S+)\s+(?:"[^"]*"|'[^']*'|\([^)]*\))$/.exec(dest);
  if (titled) dest = titled[1] as string;
  p = q + 1;
  return { label, url: dest, end: p };
}

/** `**strong**`, `__strong__`, `*em*`, `_em_` at `i`, or null. */
function emphasisAt(
  text: string,
  i: number,
): { strong: boolean; innerStart: number; innerEnd: number; end: number } | null {
  const ch = text[i] as string;
  const double = text[i + 1] === ch;
  const before = i > 0 ? (text[i - 1] as string) : " ";
  const size = double ? 2 : 1;
  const after = text[i + size];
  if (after === undefined || /\s/.test(after) || after === ch) return null;
  // Underscores inside words (snake_case) are not emphasis.
  if (ch === "_" && /[\p{L}\p{N}]/u.test(before)) return null;
  const delim = ch.repeat(size);
  let from = i + size;
  for (;;) {
    const k = text.indexOf(delim, from);
    if (k < 0) return null;
    const prev = text[k - 1] as string;
    const next = text[k + size];
    const okClose =
      k > i + size &&
      !/\s/.test(prev) &&
      (size === 2 || next !== ch) &&
      !(ch === "_" && next !== undefined && /[\p{L}\p{N}]/u.test(next));
    if (okClose && text[k - 1] !== "\\") {
      return { strong: double, innerStart: i + size, innerEnd: k, end: k + size };
    }
    from = k + 1;
  }
}
