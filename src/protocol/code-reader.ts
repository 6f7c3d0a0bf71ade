/**
 * The Markdown half of the block finder: code spans and fenced code hide what they hold, so an
 * `<ACTION>` written there is quoted, not called. Whether a backtick run opens a span, or a line of
 * backticks a fence, depends on text that may not have arrived; the readers here read on
 * tentatively and go back once when the guess fails, so each region is re-read a bounded number of
 * times (see `spanFail`). Its state is declared here and given first values in `StreamingScanner`.
 */
import * as modes from './scan-modes.js';
import { ScanWindow } from './scan-window.js';
import { FencedCodeWatcher } from './tag-watchers.js';

// Local copies (see `scan-modes.ts`).
const { FENCE, FENCE_INFO, PROSE, SPAN } = modes;

const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LT = 0x3c;
const BACKTICK = 0x60;
const TILDE = 0x7e;

/**
 * The block finder's line, run, code-span and fence state, with the readers of the `SPAN`,
 * `FENCE_INFO` and `FENCE` modes and the run bookkeeping prose shares with them.
 */
export abstract class CodeReader extends ScanWindow {
  // Prose lines: indent of the current line while it may still open a fence (-1: it cannot).
  protected abstract lineIndent: number;
  protected abstract lineStart: number;
  protected abstract lineBlank: boolean;
  // A backtick or tilde run being read.
  protected abstract runLength: number;
  protected abstract runStart: number;
  protected abstract runAtLineStart: boolean;
  protected abstract tildeLength: number;

  // A pending code span: the opening run and the runs seen since (start, length pairs).
  protected abstract spanLength: number;
  protected abstract spanEnd: number;
  protected abstract spanRuns: number[] | undefined;
  // After a span failed: for each run start before `oracleEnd`, the end of its closing run (-1: none).
  protected abstract oracle: Map<number, number> | undefined;
  protected abstract oracleEnd: number;
  // The first `<` inside a tentative region: visible text stops there until it is resolved.
  protected abstract uncertainLt: number;
  protected abstract uncertainSaved: number;

  // Fenced code.
  protected abstract fenced: FencedCodeWatcher | undefined;
  protected abstract fenceLength: number;
  protected abstract fenceStart: number;
  protected abstract fenceLineStart: number;
  protected abstract fenceFromSpan: boolean;

  /** Line-start and run bookkeeping shared by prose and pending spans; true when it consumed `code` (at `pos`). */
  protected lineAndRuns(code: number): boolean {
    if (code === LF) {
      this.lineIndent = 0;
      this.lineStart = this.pos + 1;
      this.lineBlank = true;
      this.pos++;
      return true;
    }
    if (code !== SPACE && code !== TAB && code !== CR) this.lineBlank = false;
    if (this.lineIndent >= 0) {
      if (code === SPACE && this.lineIndent < 3) {
        this.lineIndent++;
        this.pos++;
        return true;
      }
      // A fourth space or a tab makes indented text, which is not code here (rule 1) but cannot open a fence.
      const fenceable = code !== SPACE;
      this.lineIndent = -1;
      if (fenceable && code === TILDE) {
        this.tildeLength = 1;
        this.pos++;
        return true;
      }
      if (fenceable && code === BACKTICK) {
        this.startRun(true);
        return true;
      }
    }
    if (code === BACKTICK) {
      this.startRun(false);
      return true;
    }
    return false;
  }

  private startRun(atLineStart: boolean): void {
    this.runLength = 1;
    this.runStart = this.pos;
    this.runAtLineStart = atLineStart;
    this.pos++;
  }

  /** A backtick run in prose ended: a fence line, a known span, or a span to look for. */
  protected endRun(): void {
    const length = this.runLength;
    const start = this.runStart;
    this.runLength = 0;
    if (this.runAtLineStart && length >= 3) {
      this.startFenceInfo(start, length, false);
      return;
    }
    if (start < this.oracleEnd) {
      const closeEnd = this.oracle?.get(start) ?? -1;
      if (closeEnd > this.pos) this.pos = closeEnd; // the span hides everything up to its closing run
      return;
    }
    this.mode = SPAN;
    this.spanLength = length;
    this.spanEnd = this.pos;
    if (this.spanRuns !== undefined) this.spanRuns.length = 0;
    this.uncertainLt = -1;
  }

  /** A tilde run at a line start ended: three or more open a fence. */
  protected endTildes(): void {
    const length = this.tildeLength;
    this.tildeLength = 0;
    if (length >= 3) this.openFence(TILDE, length, true);
  }

  // ── Code spans ────────────────────────────────────────────────────────────

  /** A pending span: only backtick runs and paragraph ends matter until it closes or fails. */
  protected span(): void {
    const win = this.win;
    const base = this.winStart;
    const length = win.length;
    let index = this.pos - base;
    while (index < length) {
      let code = win.charCodeAt(index);
      if (this.runLength > 0) {
        if (code !== BACKTICK) {
          this.pos = base + index;
          return this.endSpanRun();
        }
        this.runLength++;
        index++;
        continue;
      }
      if (this.tildeLength > 0) {
        if (code !== TILDE) {
          this.pos = base + index;
          return this.endSpanTildes();
        }
        this.tildeLength++;
        index++;
        continue;
      }
      if (this.lineIndent < 0) {
        // Mid-line, only a newline, a backtick or the first `<` can change anything.
        let blank = this.lineBlank;
        const firstLt = this.uncertainLt < 0;
        while (code !== LF && code !== BACKTICK && (code !== LT || !firstLt)) {
          if (code !== SPACE && code !== TAB && code !== CR) blank = false;
          if (++index === length) break;
          code = win.charCodeAt(index);
        }
        this.lineBlank = blank;
        if (index === length) break;
      }
      this.pos = base + index;
      // A span cannot cross a blank line.
      if (code === LF && this.lineBlank) return this.spanFail(this.lineStart);
      if (this.lineAndRuns(code)) {
        index = this.pos - base;
        continue;
      }
      if (code === LT && this.uncertainLt < 0) this.uncertainLt = this.pos;
      index++;
    }
    this.pos = base + length;
  }

  /** A backtick run in a pending span ended: a fence line, the span's closing run, or a run to remember. */
  protected endSpanRun(): void {
    const length = this.runLength;
    const start = this.runStart;
    this.runLength = 0;
    if (this.runAtLineStart && length >= 3) {
      this.startFenceInfo(start, length, true);
      return;
    }
    if (length === this.spanLength) {
      this.mode = PROSE;
      if (this.spanRuns !== undefined) this.spanRuns.length = 0;
      this.uncertainLt = -1;
      this.lineIndent = -1;
      return;
    }
    (this.spanRuns ??= []).push(start, length);
  }

  /** A tilde run at a line start in a pending span ended. */
  protected endSpanTildes(): void {
    const length = this.tildeLength;
    this.tildeLength = 0;
    // A fence line ends the paragraph, and a span cannot cross it.
    if (length >= 3) this.spanFail(this.lineStart);
  }

  /**
   * The pending span has no closing run before `paragraphEnd`: its opening run is literal. Every
   * run of the paragraph is known now, so the text after the opening run is read again as prose
   * with an oracle answering each run's question at once; no run before `paragraphEnd` starts a
   * pending span again, so each character is re-read this way at most once.
   */
  protected spanFail(paragraphEnd: number): void {
    const runs = this.spanRuns ?? [];
    const oracle = new Map<number, number>();
    const nextEndByLength = new Map<number, number>();
    for (let index = runs.length - 2; index >= 0; index -= 2) {
      const start = runs[index] as number;
      const length = runs[index + 1] as number;
      if (start >= paragraphEnd) continue;
      oracle.set(start, nextEndByLength.get(length) ?? -1);
      nextEndByLength.set(length, start + length);
    }
    this.oracle = oracle;
    this.oracleEnd = paragraphEnd;
    runs.length = 0;
    this.pos = this.spanEnd;
    this.mode = PROSE;
    this.runLength = 0;
    this.tildeLength = 0;
    this.lineIndent = -1;
    this.lineBlank = false;
    this.uncertainLt = -1;
  }

  // ── Fenced code ───────────────────────────────────────────────────────────

  private startFenceInfo(start: number, length: number, fromSpan: boolean): void {
    this.mode = FENCE_INFO;
    this.fenceStart = start;
    this.fenceLength = length;
    this.fenceLineStart = this.lineStart;
    this.fenceFromSpan = fromSpan;
    this.uncertainSaved = this.uncertainLt;
    if (!fromSpan) this.uncertainLt = -1;
  }

  /** The rest of a line that starts with three or more backticks: a fence only if no backtick follows. */
  protected fenceInfo(): void {
    const win = this.win;
    const base = this.winStart;
    const length = win.length;
    for (let index = this.pos - base; index < length; index++) {
      const code = win.charCodeAt(index);
      if (code === BACKTICK) {
        // Not a fence: read the line again, the run now as an ordinary backtick run.
        this.pos = this.fenceStart;
        this.mode = this.fenceFromSpan ? SPAN : PROSE;
        this.lineIndent = -1;
        this.uncertainLt = this.uncertainSaved;
        return;
      }
      if (code === LF) {
        this.pos = base + index;
        if (this.fenceFromSpan) return this.spanFail(this.fenceLineStart);
        this.pos++;
        this.openFence(BACKTICK, this.fenceLength, false);
        return;
      }
      if (code === LT && this.uncertainLt < 0) this.uncertainLt = base + index;
    }
    this.pos = base + length;
  }

  /** At the end of the output, settles a fence line still in question. */
  protected endFenceInfo(): void {
    if (this.fenceFromSpan) this.spanFail(this.fenceLineStart);
    else this.mode = FENCE; // a fence opened on the last line hides nothing
  }

  private openFence(char: number, length: number, openLine: boolean): void {
    this.mode = FENCE;
    this.uncertainLt = -1;
    (this.fenced ??= new FencedCodeWatcher()).open(char, length, openLine);
  }

  /** The `FENCE` mode: reads up to the end of the closing fence line. */
  protected fence(): void {
    const end = (this.fenced as FencedCodeWatcher).scan(this.win, this.pos - this.winStart);
    if (end < 0) {
      this.pos = this.winStart + this.win.length;
      return;
    }
    this.pos = this.winStart + end;
    this.mode = PROSE;
    this.lineIndent = 0;
    this.lineStart = this.pos;
    this.lineBlank = true;
  }
}
