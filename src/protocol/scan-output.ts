/**
 * The block finder (docs/protocol.md rules 1–5) as an incremental state machine fed in chunks. Batch
 * parsing is this scanner fed the whole text once, so streaming and batch agree by construction.
 *
 * The machine reads the text in one of a few modes. Where a decision needs text that has not
 * arrived (is this backtick run a code span? is this `<ACTION` an opener?), it reads on
 * tentatively and, if the guess fails, goes back to the start of the tentative region once. Every
 * region is re-read a bounded number of times (see `spanFail` and `tagFail`), so the total work
 * stays linear in the output length whatever the chunking.
 *
 * Each mode reads a run of characters in a local loop over `win`, a flat string ending at the
 * end of the text received so far, and jumps over characters that cannot change its state: prose
 * looks only at newlines, backticks and `<` (long plain stretches are skipped with native
 * searches, see `char-finder.ts`), a block only at `<`. So plain text costs next to nothing, a
 * batch parse copies nothing, and a stream of one-character chunks reads each new chunk in place.
 * A whole output without any `<` cannot hold a tag, so `scanOutput` answers it without the machine.
 * Between pushes the scanner also knows which characters could change its state (`waitingFor`), so
 * a short chunk holding none of them is stored and passed over without running the machine at all:
 * with one-character chunks, the cost of a push is then mostly the cost of keeping the character.
 *
 * It stays one class, longer than most files here, because its modes share the line, run and
 * tentative-region state; the single-purpose matchers live in `tag-watchers.ts` and the verdict in
 * `conclude-scan.ts`.
 */
import type { FinishReason } from '../llm/types.js';
import { CharFinder } from './char-finder.js';
import { ChunkText } from './chunk-text.js';
import { concludeScan, type ScanFacts } from './conclude-scan.js';
import { resolveParseOptions, type ParseOptions, type ResolvedParseOptions } from './parse-options.js';
import { AFTER_SPACE, LOUD, quietStates, type QuietState, type QuietStates, type ScanProgress } from './quiet-states.js';
import { NO_STOPS, stopChars, type StopChars } from './stop-chars.js';
import type { ParsedOutput } from './types.js';
import { BlockWatcher, CloseTagWatcher, FencedCodeWatcher } from './tag-watchers.js';
import { VisibleText, trimAscii, trimAsciiRange } from './visible-text.js';
import { isNameStartChar, isXmlSpace } from './xml-chars.js';

export type { ScanProgress } from './quiet-states.js';

/** How the model turn ended, when it differs from the scanner's options. */
export type ScanFinish = { finishReason?: FinishReason; stopSequence?: string };

/** A streaming `<ACTION>` parser: push chunks as they arrive, then `end` once. */
export type ActionScanner = {
  /**
   * Scans a chunk; returns the visible text it completed and whether `</ACTION>` has been seen.
   * The returned object may be shared between pushes and scanners, and is then frozen.
   */
  push(chunk: string): ScanProgress;
  /** Ends the output and returns the same result `parseOutput` gives for the whole text. */
  end(finish?: ScanFinish): ParsedOutput;
  /**
   * Like `end`, and also returns the last visible delta (the text `push` held back), so the
   * deltas of every `push` plus this one concatenate to `parsed.text`.
   */
  finish(finish?: ScanFinish): ScanProgress & { parsed: ParsedOutput };
};

const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BACKTICK = 0x60;
const TILDE = 0x7e;
const DASH = 0x2d;
const BANG = 0x21;

// Modes.
const PROSE = 0; // outside any hidden region
const TAG = 1; // after `<` in prose: which tag is this?
const SPAN = 2; // after an unmatched backtick run: is it a code span?
const FENCE_INFO = 3; // a backtick fence line before its end: is it a fence?
const FENCE = 4; // inside fenced code
const COMMENT = 5; // inside `<!-- … -->`
const HIDER = 6; // inside <think>, <thinking> or <OBSERVATION>
const BLOCK = 7; // inside <ACTION>
const DONE = 8; // a second block was found: nothing more matters

// Tag phases after `<` in prose.
const TAG_NAME = 0;
const TAG_HIDER_SPACE = 1;
const TAG_ACTION_SPACE = 2;
const TAG_SLASH = 3;
const TAG_ATTRIBUTES = 4;

/**
 * The tag names that matter in prose, by first letter. `think` is a prefix of `thinking`, so the
 * letters of a tag are compared with one target name.
 */
const THINKING = 'thinking';
const THINK_LENGTH = 5;
const OBSERVATION = 'observation';
const ACTION = 'action';

/** The characters that matter in prose, once a line's start has been read. */
const PROSE_CHARS = ['\n', '`', '<'];
/** Plain text is read in a loop this far; past that, native searches are cheaper. */
const LOOP_BEFORE_SEARCH = 32;
/** Mid-line in prose, only these can change anything (see `prose`). */
const PROSE_STOPS = stopChars('\n`<');
/** Inside a comment with no `-` pending, only a `-` can start its end. */
const COMMENT_STOPS = stopChars('-');

/**
 * Creates a streaming `<ACTION>` scanner. The concatenation of the `visible` deltas equals the
 * final `text`; text that might still turn out to be an opener, a think tag or trailing
 * whitespace is held back until it is known.
 *
 * @example
 * const scanner = createActionScanner();
 * for await (const chunk of chunks) show(scanner.push(chunk).visible);
 * const { visible, parsed } = scanner.finish({ finishReason: 'stop' });
 * show(visible);
 */
export function createActionScanner(options?: ParseOptions): ActionScanner {
  // The scanner itself, not a wrapper of closures: the call per chunk is then a known method that
  // the engine inlines, which matters for one-character chunks.
  return new Scanner(resolveParseOptions(options));
}

/** Scans a whole output at once: the scanner fed one chunk, without computing visible deltas. */
export function scanOutput(output: string, options?: ParseOptions): ParsedOutput {
  // Every tag the scanner looks for starts with `<`. Without one, nothing is hidden and nothing is
  // called, so the scanner would return the whole output, trimmed; skip building it.
  if (output.indexOf('<') < 0) return { text: trimAscii(output), calls: [], hasBlock: false };
  return new Scanner(resolveParseOptions(options)).parse(output);
}

class Scanner implements ActionScanner {
  private readonly text = new ChunkText();
  /** The text from `winStart` to the end of what has arrived, as one flat string. */
  private win = '';
  private winStart = 0;
  /** Finds the next newline, backtick or `<` of `win` natively; reset with the window. */
  private proseFinder: CharFinder | undefined;
  private pos = 0;
  private ended = false;
  private result: ParsedOutput | undefined;
  private mode = PROSE;

  // Prose lines: indent of the current line while it may still open a fence (-1: it cannot).
  private lineIndent = 0;
  private lineStart = 0;
  private lineBlank = true;
  // A backtick or tilde run being read.
  private runLength = 0;
  private runStart = 0;
  private runAtLineStart = false;
  private tildeLength = 0;

  // The tag being read after `<`: the name its first letter chose, how many letters (or dashes after `!`) were read.
  private tagStart = 0;
  private tagTarget = '';
  private tagLength = 0;
  private tagBang = false;
  private tagPhase = TAG_NAME;
  private tagSlash = false;

  // A pending code span: the opening run and the runs seen since (start, length pairs).
  private spanLength = 0;
  private spanEnd = 0;
  private spanRuns: number[] | undefined;
  // After a span failed: for each run start before `oracleEnd`, the end of its closing run (-1: none).
  private oracle: Map<number, number> | undefined;
  private oracleEnd = -1;
  // The first `<` inside a tentative region: visible text stops there until it is resolved.
  private uncertainLt = -1;
  private uncertainSaved = -1;

  // Fenced code.
  private fenced: FencedCodeWatcher | undefined;
  private fenceLength = 0;
  private fenceStart = 0;
  private fenceLineStart = 0;
  private fenceFromSpan = false;

  // Hidden regions: think sections before the block are (start, end) pairs, end -1 while open.
  private dashes = 0;
  private hiderWatcher: CloseTagWatcher | undefined;
  private hiderThink = false;
  private thinks: number[] | undefined;
  private thinkIndex = 0;

  // The block.
  private blockWatcher: BlockWatcher | undefined;
  private openerStart = -1;
  private openerEnd = -1;
  private openerAttributes = false;
  private openerSelfClosing = false;
  private closerStart = -1;
  private closerEnd = -1;
  private secondOpenerAt = -1;

  // Streaming only: what `push` has shown so far.
  private visible: VisibleText | undefined;
  private emittedTo = 0;
  /** Between pushes: the characters that could change the state now, undefined when any could. */
  private stops: StopChars | undefined;
  /** Between pushes: whether a chunk without a stop character would be visible text, all of it at once. */
  private stopsVisible = false;
  /** Between pushes: what the quiet path does with a one-character chunk (see `push`). */
  private quiet: QuietState = LOUD;
  /** `quiet.answers`, read by `push` without a step through `quiet`. */
  private quietAnswers = LOUD.answers;
  /** `quiet.shifts`, likewise. */
  private quietShifts = LOUD.shifts;
  /** Between pushes: 0, or `AFTER_SPACE` when the quiet path left one space held in the trimmer. */
  private quietShift = 0;
  /** The quiet states of the last stop characters, kept to skip a lookup per machine push. */
  private quietStops: StopChars | undefined;
  private quietStates: QuietStates | undefined;

  constructor(private readonly options: ResolvedParseOptions) {}

  push(chunk: string): ScanProgress {
    // A one-character ASCII chunk the state is not waiting for: the quiet automaton answers it and
    // the text keeps it, without the machine and without allocating (see `quiet-states.ts`). This
    // method stays this small so that the engine inlines it into the caller's loop.
    if (typeof chunk === 'string' && chunk.length === 1) {
      const code = chunk.charCodeAt(0);
      if (code < 0x80) {
        const answer = this.quietAnswers[code + this.quietShift];
        if (answer !== undefined && this.text.stageChar(code)) {
          this.quietShift = this.quietShifts[code] as number;
          return answer;
        }
      }
    }
    return this.pushSlowly(chunk);
  }

  /** `push` for any other chunk. */
  private pushSlowly(chunk: string): ScanProgress {
    this.catchUp();
    const stops = this.stops;
    // While the state waits for characters a short chunk does not hold, reading it would only move
    // past it: skip the machine. Before the block (outside think sections) it is all visible text.
    if (stops !== undefined && typeof chunk === 'string' && this.text.appendQuiet(chunk, stops)) {
      this.pos += chunk.length;
      if (!this.stopsVisible) return { visible: '', closed: this.closerEnd >= 0 };
      this.emittedTo = this.pos;
      const visible = (this.visible as VisibleText).feed(chunk);
      this.settleQuiet();
      return { visible, closed: false };
    }
    return this.pushToMachine(chunk);
  }

  /**
   * Brings the position (and before the block, the emitted position and the trimmer) up to the
   * characters the quiet path took since the last other push: they only moved the scanner past them.
   */
  private catchUp(): void {
    const at = this.text.length;
    if (this.pos === at || this.ended) return;
    this.pos = at;
    if (this.quiet.visible) {
      this.emittedTo = at;
      (this.visible as VisibleText).quietCaughtUp(this.quietShift !== 0);
    }
  }

  /** Sets the quiet path's state from the scanner's state now. */
  private settleQuiet(): void {
    this.quietShift = 0;
    const stops = this.stops;
    if (stops === undefined) {
      this.setQuiet(LOUD);
      return;
    }
    this.text.makeStage();
    if (stops !== this.quietStops) {
      this.quietStops = stops;
      this.quietStates = quietStates(stops);
    }
    const states = this.quietStates as QuietStates;
    if (!this.stopsVisible) {
      this.setQuiet(this.closerEnd >= 0 ? states.hiddenClosed : states.hidden);
      return;
    }
    const hold = (this.visible as VisibleText).quietHold();
    this.setQuiet(hold < 0 ? LOUD : states.visible);
    if (hold === 1) this.quietShift = AFTER_SPACE;
  }

  private setQuiet(quiet: QuietState): void {
    this.quiet = quiet;
    this.quietAnswers = quiet.answers;
    this.quietShifts = quiet.shifts;
  }

  private pushToMachine(chunk: string): ScanProgress {
    if (this.ended || typeof chunk !== 'string') return { visible: '', closed: this.closerEnd >= 0 };
    this.append(chunk);
    this.run();
    const visible = this.emit(this.frontier());
    this.stops = this.waitingFor();
    // Before the block everything is visible but think sections; `emittedTo` lags `pos` while something is held back.
    this.stopsVisible = this.openerStart < 0 && this.emittedTo === this.pos && !(this.mode === HIDER && this.hiderThink);
    if (this.stopsVisible) this.visible ??= new VisibleText();
    this.settleQuiet();
    return { visible, closed: this.closerEnd >= 0 };
  }

  /** After a run, the characters that could change the state; undefined when any could. */
  private waitingFor(): StopChars | undefined {
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

  end(finish?: ScanFinish): ParsedOutput {
    return this.finish(finish).parsed;
  }

  finish(finish?: ScanFinish): ScanProgress & { parsed: ParsedOutput } {
    if (this.result !== undefined) return { visible: '', closed: this.closerEnd >= 0, parsed: this.result };
    this.catchUp();
    this.ended = true;
    this.stops = undefined;
    this.setQuiet(LOUD);
    this.quietShift = 0;
    this.run();
    const visible = this.emit(this.visibleEnd());
    const parsed = this.conclude(finish);
    this.text.releaseStage();
    return { visible, closed: this.closerEnd >= 0, parsed };
  }

  /** The whole output in one call (batch parsing). */
  parse(output: string): ParsedOutput {
    this.append(output);
    this.ended = true;
    this.run();
    return this.conclude(undefined);
  }

  private append(chunk: string): void {
    const at = this.text.length;
    this.text.append(chunk);
    if (chunk.length === 0) return;
    if (this.pos === at) {
      // Everything before has been read: the new chunk is the whole window.
      this.win = chunk;
      this.winStart = at;
      this.proseFinder = undefined;
    } else {
      this.reseat();
    }
  }

  /** Makes the window start at `pos` (after going back to re-read a tentative region). */
  private reseat(): void {
    this.win = this.text.slice(this.pos, this.text.length);
    this.winStart = this.pos;
    this.proseFinder = undefined;
  }

  private conclude(finish: ScanFinish | undefined): ParsedOutput {
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

  // ── The main loop ──────────────────────────────────────────────────────────

  private run(): void {
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
        if (this.fenceFromSpan) this.spanFail(this.fenceLineStart);
        else this.mode = FENCE; // a fence opened on the last line hides nothing
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

  // ── Prose: line starts (fences), backtick runs (code spans), tags ─────────────

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
        this.tagStart = this.pos;
        this.tagTarget = '';
        this.tagLength = 0;
        this.tagBang = false;
        this.tagPhase = TAG_NAME;
        this.mode = TAG;
        this.pos++;
        return;
      }
      index++;
    }
    this.pos = base + length;
  }

  /** Line-start and run bookkeeping shared by prose and pending spans; true when it consumed `code` (at `pos`). */
  private lineAndRuns(code: number): boolean {
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
  private endRun(): void {
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

  private endTildes(): void {
    const length = this.tildeLength;
    this.tildeLength = 0;
    if (length >= 3) this.openFence(TILDE, length, true);
  }

  // ── Tags in prose ─────────────────────────────────────────────────────────

  private tag(): void {
    const win = this.win;
    const base = this.winStart;
    while (this.mode === TAG) {
      let index = this.pos - base;
      if (index < 0 || index >= win.length) return;
      if (this.tagPhase === TAG_NAME && !this.tagBang) {
        // The letters of the name, in one loop: each must continue the only name the tag can still be.
        for (; index < win.length; index++) {
          const code = win.charCodeAt(index);
          const lower = code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
          if (lower < 0x61 || lower > 0x7a) break;
          if (this.tagLength === 0) {
            this.tagTarget = lower === 0x74 /* t */ ? THINKING : lower === 0x6f /* o */ ? OBSERVATION : lower === 0x61 /* a */ ? ACTION : '';
            if (this.tagTarget === '') return this.tagFail();
          } else if (this.tagTarget.charCodeAt(this.tagLength) !== lower) {
            return this.tagFail();
          }
          this.tagLength++;
        }
        this.pos = base + index;
        if (index === win.length) return;
      }
      this.tagChar(win.charCodeAt(index));
    }
  }

  /** The tag name read so far when it is a whole name that matters, else ''. */
  private tagName(): string {
    const target = this.tagTarget;
    if (this.tagLength === target.length && this.tagLength > 0) return target;
    return target === THINKING && this.tagLength === THINK_LENGTH ? 'think' : '';
  }

  /** Reads the character at `pos` of a tag after `<` (other than a letter of its name). */
  private tagChar(code: number): void {
    switch (this.tagPhase) {
      case TAG_NAME: {
        if (this.tagBang) {
          if (code !== DASH) return this.tagFail();
          this.pos++;
          if (++this.tagLength === 2) {
            this.mode = COMMENT;
            this.dashes = 0;
          }
          return;
        }
        if (this.tagLength === 0 && code === BANG) {
          this.tagBang = true;
          this.pos++;
          return;
        }
        const name = this.tagName();
        if (name === '') return this.tagFail();
        const space = isXmlSpace(code);
        if (name === ACTION) {
          if (code === GT) return this.opener(false, false);
          if (code === SLASH) this.tagPhase = TAG_SLASH;
          else if (space) this.tagPhase = TAG_ACTION_SPACE;
          else return this.tagFail();
          this.pos++;
          return;
        }
        if (code === GT) return this.openHider();
        if (!space) return this.tagFail();
        this.tagPhase = TAG_HIDER_SPACE;
        this.pos++;
        return;
      }
      case TAG_HIDER_SPACE:
        if (code === GT) return this.openHider();
        if (!isXmlSpace(code)) return this.tagFail();
        this.pos++;
        return;
      case TAG_ACTION_SPACE:
        if (code === GT) return this.opener(false, false);
        if (isXmlSpace(code)) {
          this.pos++;
          return;
        }
        if (code === SLASH) {
          this.tagPhase = TAG_SLASH;
          this.pos++;
          return;
        }
        // `<ACTION id="1">`: attributes. An attribute value cannot hold `<`, so a `<` ends the attempt.
        if (!isNameStartChar(code) && !(code >= 0xd800 && code <= 0xdbff)) return this.tagFail();
        this.tagPhase = TAG_ATTRIBUTES;
        this.tagSlash = false;
        this.pos++;
        return;
      case TAG_SLASH:
        return code === GT ? this.opener(false, true) : this.tagFail();
      default:
        if (code === GT) return this.opener(true, this.tagSlash);
        if (code === LT) return this.tagFail();
        this.tagSlash = code === SLASH;
        this.pos++;
    }
  }

  /** Not a tag we know: the `<` is text, and what follows it is read again as prose. */
  private tagFail(): void {
    // The region read since `<` holds no other `<` (a `<` ends every attempt), so a character is re-read this way at most once.
    this.pos = this.tagStart + 1;
    this.mode = PROSE;
    this.lineIndent = -1;
    this.lineBlank = false;
  }

  private opener(attributes: boolean, selfClosing: boolean): void {
    this.pos++;
    this.lineIndent = -1;
    if (this.openerStart >= 0) {
      // After the block: a second block (rule 4); nothing after it can change the outcome.
      this.secondOpenerAt = this.tagStart;
      this.mode = DONE;
      return;
    }
    this.openerStart = this.tagStart;
    this.openerEnd = this.pos;
    this.openerAttributes = attributes;
    this.openerSelfClosing = selfClosing;
    if (selfClosing) {
      this.closerStart = this.pos;
      this.closerEnd = this.pos;
      this.mode = PROSE;
    } else {
      this.mode = BLOCK;
      this.blockWatcher = new BlockWatcher();
    }
  }

  private openHider(): void {
    const name = this.tagName();
    this.pos++;
    this.mode = HIDER;
    (this.hiderWatcher ??= new CloseTagWatcher()).reset(name);
    // Reasoning is not speech: think sections before the block are cut from the visible text.
    this.hiderThink = name !== 'observation' && this.openerStart < 0;
    if (this.hiderThink) (this.thinks ??= []).push(this.tagStart, -1);
  }

  private comment(): void {
    const win = this.win;
    const base = this.winStart;
    const length = win.length;
    let index = this.pos - base;
    let dashes = this.dashes;
    while (index < length) {
      const code = win.charCodeAt(index++);
      if (code === DASH) {
        dashes++;
      } else if (code === GT && dashes >= 2) {
        this.pos = base + index;
        this.mode = PROSE;
        this.lineIndent = -1;
        return;
      } else {
        dashes = 0;
      }
    }
    this.dashes = dashes;
    this.pos = base + length;
  }

  // ── Code spans ────────────────────────────────────────────────────────────

  /** A pending span: only backtick runs and paragraph ends matter until it closes or fails. */
  private span(): void {
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

  private endSpanRun(): void {
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

  private endSpanTildes(): void {
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
  private spanFail(paragraphEnd: number): void {
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
  private fenceInfo(): void {
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

  private openFence(char: number, length: number, openLine: boolean): void {
    this.mode = FENCE;
    this.uncertainLt = -1;
    (this.fenced ??= new FencedCodeWatcher()).open(char, length, openLine);
  }

  private fence(): void {
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

  private hider(): void {
    const end = (this.hiderWatcher as CloseTagWatcher).scan(this.win, this.pos - this.winStart);
    if (end < 0) {
      this.pos = this.winStart + this.win.length;
      return;
    }
    this.pos = this.winStart + end;
    if (this.hiderThink) (this.thinks as number[])[(this.thinks as number[]).length - 1] = this.pos;
    this.mode = PROSE;
    this.lineIndent = -1;
  }

  // ── Inside the block ──────────────────────────────────────────────────────

  private block(): void {
    const watcher = this.blockWatcher as BlockWatcher;
    const end = watcher.scan(this.win, this.pos - this.winStart, this.winStart);
    if (end < 0) {
      this.pos = this.winStart + this.win.length;
      return;
    }
    this.pos = this.winStart + end;
    this.closerStart = watcher.closerStart;
    this.closerEnd = this.pos;
    this.mode = PROSE;
    this.lineIndent = -1;
  }

  // ── Visible text ──────────────────────────────────────────────────────────

  /** Where the visible text ends once the output is complete. */
  private visibleEnd(): number {
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

  /** Everything before this position is settled: visible, think or block. */
  private frontier(): number {
    if (this.openerStart >= 0) return this.openerStart;
    if (this.mode === TAG) return this.tagStart;
    if ((this.mode === SPAN || this.mode === FENCE_INFO) && this.uncertainLt >= 0) return this.uncertainLt;
    return this.pos;
  }

  /** Emits the settled visible text up to `limit`, skipping think sections. */
  private emit(limit: number): string {
    if (limit <= this.emittedTo) return '';
    const visible = (this.visible ??= new VisibleText());
    const thinks = this.thinks;
    if (thinks === undefined || this.thinkIndex >= thinks.length) {
      const piece = this.slice(this.emittedTo, limit);
      this.emittedTo = limit;
      return visible.feed(piece);
    }
    let delta = '';
    let from = this.emittedTo;
    while (from < limit) {
      const thinkStart = thinks[this.thinkIndex];
      if (thinkStart !== undefined && thinkStart <= from) {
        const thinkEnd = thinks[this.thinkIndex + 1] as number;
        if (thinkEnd < 0) {
          from = limit; // an open think section hides everything read so far
          break;
        }
        from = Math.max(from, thinkEnd);
        this.thinkIndex += 2;
        continue;
      }
      const stop = thinkStart === undefined ? limit : Math.min(thinkStart, limit);
      delta += visible.feed(this.slice(from, stop));
      from = stop;
    }
    this.emittedTo = Math.max(this.emittedTo, from);
    return delta;
  }

  /** The received text between two positions, from the window when it holds them. */
  private slice(from: number, to: number): string {
    return from >= this.winStart ? this.win.slice(from - this.winStart, to - this.winStart) : this.text.slice(from, to);
  }
}
