/**
 * The block finder's machine (docs/protocol.md rules 1–5): its main loop over the modes, prose, and the
 * verdict once the output is complete.
 *
 * The machine reads the text in one of a few modes (`scan-modes.ts`). Where a decision needs text
 * that has not arrived (is this backtick run a code span? is this `<ACTION` an opener?), it reads
 * on tentatively and, if the guess fails, goes back to the start of the tentative region once.
 * Every region is re-read a bounded number of times (see `spanFail` and `tagFail`), so the total
 * work stays linear in the output length whatever the chunking.
 *
 * Each mode reads a run of characters in a local loop over `win` and jumps over characters that
 * cannot change its state: prose looks only at newlines, backticks and `<` (long plain stretches
 * are skipped with native searches, see `char-finder.ts`), a block only at `<`. So plain text
 * costs next to nothing.
 */
import type { ScanFinish } from './action-scanner.js';
import { CharFinder } from './char-finder.js';
import { concludeScan, type ScanFacts } from './conclude-scan.js';
import type { ResolvedParseOptions } from './parse-options.js';
import * as modes from './scan-modes.js';
import { NO_STOPS, stopChars, type StopChars } from './stop-chars.js';
import { TagReader } from './tag-reader.js';
import type { BlockWatcher, CloseTagWatcher, FencedCodeWatcher } from './tag-watchers.js';
import type { ParsedOutput } from './types.js';
import { trimAscii, trimAsciiRange } from './visible-text.js';

// Local copies (see `scan-modes.ts`).
const { BLOCK, COMMENT, DONE, FENCE, FENCE_INFO, HIDER, PROSE, SPAN, TAG } = modes;

const LF = 0x0a;
const LT = 0x3c;
const BACKTICK = 0x60;
const TILDE = 0x7e;
const BANG = 0x21;

/** The characters that matter in prose, once a line's start has been read. */
const PROSE_CHARS = ['\n', '`', '<'];
/** Plain text is read in a loop this far; past that, native searches are cheaper. */
const LOOP_BEFORE_SEARCH = 32;
/** Mid-line in prose, only these can change anything (see `prose`). */
const PROSE_STOPS = stopChars('\n`<');
/** Inside a comment with no `-` pending, only a `-` can start its end. */
const COMMENT_STOPS = stopChars('-');

/**
 * The block finder fed the whole output at once (`parse`), or run again after each chunk by the
 * streaming layer above it, which also asks what is settled (`frontier`) and what could change
 * the state (`waitingFor`).
 */
export abstract class BlockFinder extends TagReader {
  protected abstract readonly options: ResolvedParseOptions;
  /** The result, once the output has ended. */
  protected abstract result: ParsedOutput | undefined;

  /** The whole output in one call (batch parsing). */
  parse(output: string): ParsedOutput {
    this.append(output);
    this.ended = true;
    this.run();
    return this.conclude(undefined);
  }

  /** Reads everything received; at the end of the output, settles what was tentative too. */
  protected run(): void {
    for (;;) {
      if (this.pos < this.winStart) this.reseat();
      if (this.pos >= this.text.length) {
        if (!this.ended || !this.finishTentative()) return;
        continue;
      }
      switch (this.mode) {
        case PROSE:
          this.prose();
          break;
        case TAG:
          this.tag();
          break;
        case SPAN:
          this.span();
          break;
        case FENCE_INFO:
          this.fenceInfo();
          break;
        case FENCE:
          this.fence();
          break;
        case COMMENT:
          this.comment();
          break;
        case HIDER:
          this.hider();
          break;
        case BLOCK:
          this.block();
          break;
        default:
          this.pos = this.text.length;
      }
    }
  }

  /** At the end of the output, settles whatever was tentative; false when nothing was. */
  private finishTentative(): boolean {
    switch (this.mode) {
      case PROSE:
        if (this.runLength > 0) this.endRun();
        else if (this.tildeLength > 0) this.endTildes();
        else return false;
        return true;
      case TAG:
        this.tagFail();
        return true;
      case FENCE_INFO:
        this.endFenceInfo();
        return true;
      case SPAN:
        if (this.runLength > 0) this.endSpanRun();
        else if (this.tildeLength > 0) this.endSpanTildes();
        else this.spanFail(this.text.length);
        return true;
      default:
        return false;
    }
  }

  /** Prose: line starts (fences), backtick runs (code spans), and the `<` of tags. */
  private prose(): void {
    const win = this.win;
    const base = this.winStart;
    const length = win.length;
    let index = this.pos - base;
    while (index < length) {
      let code = win.charCodeAt(index);
      if (this.runLength > 0) {
        if (code !== BACKTICK) {
          this.pos = base + index;
          return this.endRun();
        }
        this.runLength++;
        index++;
        continue;
      }
      if (this.tildeLength > 0) {
        if (code !== TILDE) {
          this.pos = base + index;
          return this.endTildes();
        }
        this.tildeLength++;
        index++;
        continue;
      }
      if (this.lineIndent < 0) {
        // Mid-line, only a newline, a backtick or a `<` can change anything. (`lineBlank` only
        // matters while a span is pending, and a span starts at a backtick, which clears it.)
        let budget = LOOP_BEFORE_SEARCH;
        while (code !== LF && code !== BACKTICK && code !== LT) {
          if (++index === length) break;
          if (--budget === 0 && length - index > LOOP_BEFORE_SEARCH) {
            // A long plain stretch: native searches find its end.
            index = (this.proseFinder ??= new CharFinder(win, PROSE_CHARS)).next(index);
            if (index === length) break;
          }
          code = win.charCodeAt(index);
        }
        if (index === length) break;
      }
      this.pos = base + index;
      if (this.lineAndRuns(code)) {
        index = this.pos - base;
        continue;
      }
      if (code === LT) {
        // Only `!` or the first letter of think, thinking, observation or action can follow the `<`
        // of a tag that matters; anything else would fail at once, so `<` is plain text (`a < b`, `<b>`).
        const next = index + 1 < length ? win.charCodeAt(index + 1) | 0x20 : -1;
        if (next !== -1 && next !== 0x74 /* t */ && next !== 0x6f /* o */ && next !== 0x61 /* a */ && next !== (BANG | 0x20)) {
          index++;
          continue;
        }
        return this.startTag();
      }
      index++;
    }
    this.pos = base + length;
  }

  /** After a run, the characters that could change the state; undefined when any could. */
  protected waitingFor(): StopChars | undefined {
    switch (this.mode) {
      case PROSE:
        return this.runLength === 0 && this.tildeLength === 0 && this.lineIndent < 0 ? PROSE_STOPS : undefined;
      case FENCE:
        return (this.fenced as FencedCodeWatcher).stops();
      case COMMENT:
        return this.dashes === 0 ? COMMENT_STOPS : undefined;
      case HIDER:
        return (this.hiderWatcher as CloseTagWatcher).stops();
      case BLOCK:
        return (this.blockWatcher as BlockWatcher).stops();
      case DONE:
        return NO_STOPS;
      default:
        return undefined;
    }
  }

  /** Everything before this position is settled: visible, think or block. */
  protected frontier(): number {
    if (this.openerStart >= 0) return this.openerStart;
    if (this.mode === TAG) return this.tagStart;
    if ((this.mode === SPAN || this.mode === FENCE_INFO) && this.uncertainLt >= 0) return this.uncertainLt;
    return this.pos;
  }

  /** Where the visible text ends once the output is complete. */
  protected visibleEnd(): number {
    return this.openerStart >= 0 ? this.openerStart : this.text.length;
  }

  /** The visible text before `limit`: the output without think sections, trimmed. */
  private visibleText(limit: number): string {
    const thinks = this.thinks;
    if (thinks === undefined) {
      const whole = this.text.single();
      return whole === undefined ? trimAscii(this.text.slice(0, limit)) : trimAsciiRange(whole, 0, limit);
    }
    const pieces: string[] = [];
    let from = 0;
    for (let index = 0; index < thinks.length && from < limit; index += 2) {
      const thinkStart = thinks[index] as number;
      const thinkEnd = thinks[index + 1] as number;
      if (thinkStart >= limit) break;
      if (thinkStart > from) pieces.push(this.text.slice(from, thinkStart));
      from = thinkEnd < 0 ? limit : Math.max(from, thinkEnd);
    }
    if (from < limit) pieces.push(this.text.slice(from, limit));
    return trimAscii(pieces.join(''));
  }

  /** Hands what the scan found to `concludeScan` and keeps the result. */
  protected conclude(finish: ScanFinish | undefined): ParsedOutput {
    const facts: ScanFacts = {
      output: this.text,
      visibleText: this.visibleText(this.visibleEnd()),
      openerStart: this.openerStart,
      openerEnd: this.openerEnd,
      openerAttributes: this.openerAttributes,
      openerSelfClosing: this.openerSelfClosing,
      closerStart: this.closerStart,
      closerEnd: this.closerEnd,
      nestedAt: this.blockWatcher?.nestedAt ?? -1,
      secondOpenerAt: this.secondOpenerAt,
      exampleSeen: this.fenced?.exampleSeen ?? false,
    };
    this.result = concludeScan(facts, this.options, finish?.finishReason ?? this.options.finishReason, finish?.stopSequence ?? this.options.stopSequence);
    return this.result;
  }
}
