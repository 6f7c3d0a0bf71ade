/**
 * The trimming half of the visible response: pieces of visible text go in, deltas come out, and
 * the deltas concatenate to the trimmed whole. Leading whitespace is dropped; trailing whitespace
 * is held back until something visible follows it, because the output may end there.
 */
import { isXmlSpace } from './xml-chars.js';

/** Held whitespace is kept as a rope of at most this many pieces, then flattened into a block. */
const HELD_PIECES = 1024;

/** A streaming trimmer whose deltas add up to `trimAscii` of the concatenation of its input. */
export class VisibleText {
  private started = false;
  /** Whitespace held back: older blocks, flattened, then a rope of the latest pieces; `heldPieces` counts them all (0: nothing held). */
  private heldBlocks: string[] | undefined;
  private held = '';
  private heldPieces = 0;

  /** Adds visible text and returns the part that can be shown now. */
  feed(piece: string): string {
    const length = piece.length;
    // Every ASCII whitespace character is at most U+0020.
    if (length > 0 && piece.charCodeAt(0) > 0x20 && piece.charCodeAt(length - 1) > 0x20) {
      // The usual piece while streaming prose: nothing to trim, nothing to hold.
      this.started = true;
      return this.heldPieces === 0 ? piece : this.release() + piece;
    }
    return this.trimmed(piece);
  }

  /**
   * How the scanner's quiet path can follow this trimmer (see `quiet-states.ts`): 0 when visible
   * text has started and nothing is held, 1 when exactly one space is held, -1 otherwise.
   */
  quietHold(): number {
    if (!this.started) return -1;
    if (this.heldPieces === 0) return 0;
    return this.heldPieces === 1 && this.held === ' ' ? 1 : -1;
  }

  /**
   * Catches up with visible text the quiet path answered itself: it had started, and left either
   * nothing or exactly one space held.
   */
  quietCaughtUp(heldSpace: boolean): void {
    this.started = true;
    this.heldBlocks = undefined;
    this.held = heldSpace ? ' ' : '';
    this.heldPieces = heldSpace ? 1 : 0;
  }

  /** `feed` for a piece that starts or ends with whitespace (or is empty). */
  private trimmed(piece: string): string {
    const length = piece.length;
    let first = 0;
    while (first < length && isXmlSpace(piece.charCodeAt(first))) first++;
    if (first === length) {
      if (this.started && length > 0) this.hold(piece);
      return '';
    }
    let last = length;
    while (isXmlSpace(piece.charCodeAt(last - 1))) last--;
    let delta: string;
    if (this.started) {
      delta = this.heldPieces === 0 ? piece.slice(0, last) : this.release() + piece.slice(0, last);
    } else {
      delta = piece.slice(first, last);
      this.started = true;
    }
    if (last < length) this.hold(piece.slice(last));
    return delta;
  }

  private hold(whitespace: string): void {
    this.held = this.heldPieces === 0 ? whitespace : this.held + whitespace;
    if (++this.heldPieces % HELD_PIECES !== 0) return;
    // Flatten now, while the rope's pieces are young garbage (see `ChunkText`).
    this.held.charCodeAt(0);
    (this.heldBlocks ??= []).push(this.held);
    this.held = '';
  }

  /** The held whitespace, which something visible now follows. */
  private release(): string {
    const held = this.heldBlocks === undefined ? this.held : this.heldBlocks.join('') + this.held;
    this.heldBlocks = undefined;
    this.held = '';
    this.heldPieces = 0;
    return held;
  }
}

/** Removes ASCII whitespace (space, TAB, LF, CR) at both ends. */
export function trimAscii(text: string): string {
  return trimAsciiRange(text, 0, text.length);
}

/** `trimAscii(text.slice(from, to))`, slicing once. */
export function trimAsciiRange(text: string, from: number, to: number): string {
  let start = from;
  let end = to;
  while (start < end && isXmlSpace(text.charCodeAt(start))) start++;
  while (end > start && isXmlSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
