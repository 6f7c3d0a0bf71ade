/**
 * The streaming layer of the block finder: `push`, the visible deltas, and the quiet path. Between
 * pushes the scanner knows which characters could change its state (`waitingFor`), so a short
 * chunk holding none of them is stored and passed over without running the machine at all: with
 * one-character chunks, the cost of a push is then mostly the cost of keeping the character.
 */
import type { ActionScanner, ScanFinish } from './action-scanner.js';
import { BlockFinder } from './block-finder.js';
import type { CharFinder } from './char-finder.js';
import { ChunkText } from './chunk-text.js';
import type { ResolvedParseOptions } from './parse-options.js';
import {
  AFTER_SPACE,
  LOUD,
  QUIET_HIDDEN,
  QUIET_NONE,
  quietStates,
  type QuietState,
  type QuietStates,
  type ScanProgress,
} from './quiet-states.js';
import * as modes from './scan-modes.js';
import type { StopChars } from './stop-chars.js';
import type { BlockWatcher, CloseTagWatcher, FencedCodeWatcher } from './tag-watchers.js';
import type { ParsedOutput } from './types.js';
import { VisibleText } from './visible-text.js';

// Local copies (see `scan-modes.ts`).
const { HIDER, PROSE } = modes;

const SPACE = 0x20;
/** Chunks up to this long may take the quiet path; longer ones are cheaper through the machine's native searches. */
const QUIET_CHUNK = 64;

/**
 * The `<ACTION>` scanner behind both entry points: `createActionScanner` returns one, and
 * `scanOutput` parses with one (through `parse`), so that the machine's code only ever sees this
 * one class and its property accesses and calls stay monomorphic.
 */
export class StreamingScanner extends BlockFinder implements ActionScanner {
  // The state of every layer gets its first value here, in the one class `new` is called on, and
  // the layers below have no fields and no constructors. A field in a base class gives it a
  // constructor to run, and V8 (Node 20) does not inline a super constructor call: five layers
  // cost about 25 ns a scanner, 4 % of a 1 KB batch parse (measured). The layers declare the
  // fields, with their meaning, as abstract.

  // ScanWindow.
  protected override readonly text = new ChunkText();
  protected override win = '';
  protected override winStart = 0;
  protected override proseFinder: CharFinder | undefined;
  protected override pos = 0;
  protected override ended = false;
  protected override mode = PROSE;
  // CodeReader.
  protected override lineIndent = 0;
  protected override lineStart = 0;
  protected override lineBlank = true;
  protected override runLength = 0;
  protected override runStart = 0;
  protected override runAtLineStart = false;
  protected override tildeLength = 0;
  protected override spanLength = 0;
  protected override spanEnd = 0;
  protected override spanRuns: number[] | undefined;
  protected override oracle: Map<number, number> | undefined;
  protected override oracleEnd = -1;
  protected override uncertainLt = -1;
  protected override uncertainSaved = -1;
  protected override fenced: FencedCodeWatcher | undefined;
  protected override fenceLength = 0;
  protected override fenceStart = 0;
  protected override fenceLineStart = 0;
  protected override fenceFromSpan = false;
  // TagReader.
  protected override tagStart = 0;
  protected override tagTarget = '';
  protected override tagLength = 0;
  protected override tagBang = false;
  protected override tagPhase = 0; // `startTag` sets it before it is read
  protected override tagSlash = false;
  protected override dashes = 0;
  protected override hiderWatcher: CloseTagWatcher | undefined;
  protected override hiderThink = false;
  protected override thinks: number[] | undefined;
  protected override blockWatcher: BlockWatcher | undefined;
  protected override openerStart = -1;
  protected override openerEnd = -1;
  protected override openerAttributes = false;
  protected override openerSelfClosing = false;
  protected override closerStart = -1;
  protected override closerEnd = -1;
  protected override secondOpenerAt = -1;
  // BlockFinder (and `options`, below).
  protected override result: ParsedOutput | undefined;

  // Streaming only: what `push` has shown so far.
  private visible: VisibleText | undefined;
  private emittedTo = 0;
  private thinkIndex = 0;
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
  /** `quiet.kind`, `quiet.loud` and `quiet.hiddenAnswer`, likewise, for chunks of several characters. */
  private quietKind = QUIET_NONE;
  private quietLoud = LOUD.loud;
  private quietHidden = LOUD.hiddenAnswer;
  /** Between pushes: 0, or `AFTER_SPACE` when the quiet path left one space held in the trimmer. */
  private quietShift = 0;
  /** The quiet states of the last stop characters, kept to skip a lookup per machine push. */
  private quietStops: StopChars | undefined;
  private quietStates: QuietStates | undefined;

  constructor(protected override readonly options: ResolvedParseOptions) {
    super();
  }

  push(chunk: string): ScanProgress {
    // A short chunk the state is not waiting for: the quiet path answers it and the text keeps it,
    // without the machine (see `quiet-states.ts`). A one-character ASCII chunk is answered from a
    // table and allocates nothing. This method stays this small so that the engine inlines it into
    // the caller's loop.
    if (typeof chunk === 'string') {
      const length = chunk.length;
      if (length === 1) {
        const code = chunk.charCodeAt(0);
        if (code < 0x80) {
          const answer = this.quietAnswers[code + this.quietShift];
          if (answer !== undefined && this.text.stageChar(code)) {
            this.quietShift = this.quietShifts[code] as number;
            return answer;
          }
        }
      } else if (length > 1 && length <= QUIET_CHUNK && this.text.stageQuiet(chunk, this.quietLoud)) {
        // Every character is loud in `LOUD`, so only a hidden or a visible state gets here.
        if (this.quietKind === QUIET_HIDDEN) return this.quietHidden;
        // Visible text: the chunk itself, after the space the trimmer held if it held one.
        if (chunk.charCodeAt(length - 1) !== SPACE) {
          const spaceBefore = this.quietShift !== 0;
          this.quietShift = 0;
          return { visible: spaceBefore ? ' ' + chunk : chunk, closed: false };
        }
        const answer = this.showBeforeSpace(chunk, length);
        if (answer !== undefined) return answer;
      }
    }
    return this.pushSlowly(chunk);
  }

  /**
   * The answer to visible text of several characters that the quiet path has stored, ending in a
   * space. The trimmer is followed as for one character (see `quiet-states.ts`): it holds that space
   * back, and it holds at most one, so a chunk ending in two spaces is taken back and left to the
   * machine (undefined).
   */
  private showBeforeSpace(chunk: string, length: number): ScanProgress | undefined {
    if (chunk.charCodeAt(length - 2) === SPACE) {
      this.text.takeBack(length);
      return undefined;
    }
    const shown = chunk.slice(0, length - 1);
    const spaceBefore = this.quietShift !== 0;
    this.quietShift = AFTER_SPACE;
    return { visible: spaceBefore ? ' ' + shown : shown, closed: false };
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
    this.quietKind = quiet.kind;
    this.quietLoud = quiet.loud;
    this.quietHidden = quiet.hiddenAnswer;
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
}
