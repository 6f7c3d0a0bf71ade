/**
 * The trimming half of the visible response: pieces of visible text go in, deltas come out, and
 * the deltas concatenate to the trimmed whole. Leading whitespace is dropped; trailing whitespace
 * is held back until something visible follows it, because the output may end there.
 */
import { isXmlSpace } from './xml-chars.js';

/** A streaming trimmer whose deltas add up to `trimAscii` of the concatenation of its input. */
export class VisibleText {
  private started = false;
  private held = '';

  /** Adds visible text and returns the part that can be shown now. */
  feed(piece: string): string {
    let first = 0;
    while (first < piece.length && isXmlSpace(piece.charCodeAt(first))) first++;
    if (first === piece.length) {
      if (this.started) this.held += piece;
      return '';
    }
    let last = piece.length;
    while (isXmlSpace(piece.charCodeAt(last - 1))) last--;
    let delta: string;
    if (this.started) {
      delta = this.held.length === 0 ? piece.slice(0, last) : this.held + piece.slice(0, last);
    } else {
      delta = piece.slice(first, last);
      this.started = true;
    }
    this.held = last < piece.length ? piece.slice(last) : '';
    return delta;
  }
}

/** Removes ASCII whitespace (space, TAB, LF, CR) at both ends. */
export function trimAscii(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isXmlSpace(text.charCodeAt(start))) start++;
  while (end > start && isXmlSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
