/**
 * Terminal escape sequences in command output, made harmless.
 *
 * Output is shown as text, never interpreted: CSI sequences (colours,
 * cursor moves: ESC [ … final), OSC sequences (titles, hyperlinks:
 * ESC ] … BEL or ESC \), and other two-byte escapes are removed; any other
 * C0 control character but tab and newline is shown as its visible Unicode
 * "control picture" (U+2400 + code, e.g. ␇ for BEL). CR LF becomes LF and a
 * lone CR (progress bars) a line break. Output arrives in chunks, so a
 * sequence cut between two chunks is held back until the next one.
 */

// ESC [ params intermediates final | ESC ] text (BEL | ESC \) | ESC (one byte)
const SEQ = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[0-Z\\^-~]|\x1b[ -/]+[0-~]|\x9b[0-?]*[ -/]*[@-~]/g;
// An unfinished sequence at the end of a chunk.
const PARTIAL = /(?:\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[ -/]*)?|\x9b[0-?]*[ -/]*)$/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

function visible(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .replace(/\r/g, "\n")
    .replace(CONTROLS, (c) => (c === "\x7f" ? "\u2421" : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

/** Strips a whole text at once. */
export function stripAnsi(text: string): string {
  return visible(text.replace(SEQ, ""));
}

/** A streaming stripper: feed chunks, get safe text (a cut sequence waits for its end). */
export class AnsiStream {
  private held = "";
  private cr = false;

  push(chunk: string): string {
    let text = this.held + chunk;
    this.held = "";
    // A CR at the very end may be the first half of CR LF.
    if (this.cr) {
      this.cr = false;
      text = `\r${text}`;
    }
    text = text.replace(SEQ, "");
    const partial = PARTIAL.exec(text);
    if (partial && partial[0].length > 0 && partial[0].length < 256) {
      this.held = partial[0];
      text = text.slice(0, partial.index);
    }
    if (text.endsWith("\r")) {
      this.cr = true;
      text = text.slice(0, -1);
    }
    return visible(text);
  }

  /** The end of the stream: whatever was held back is shown as visible text. */
  flush(): string {
    const rest = (this.cr ? "\n" : "") + this.held;
    this.held = "";
    this.cr = false;
    return visible(rest);
  }
}
