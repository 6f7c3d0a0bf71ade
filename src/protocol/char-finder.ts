/**
 * Jumps over plain text with the native `indexOf`: finds the next of a few characters in one
 * string, remembering each answer until the reader passes it. A reader that goes back (the
 * scanner re-reads tentative regions) gets a fresh search only when the remembered one started
 * after its position, so every search covers text the reader has not passed: linear overall.
 */
export class CharFinder {
  /** For each character, the position found (-1: none) and where that search started. */
  private readonly found: number[];
  private readonly searchedFrom: number[];

  constructor(
    private readonly text: string,
    private readonly chars: readonly string[],
  ) {
    this.found = chars.map(() => -1);
    this.searchedFrom = chars.map(() => Number.POSITIVE_INFINITY);
  }

  /** The first position at or after `from` holding one of the characters, or the text's length. */
  next(from: number): number {
    let first = this.text.length;
    for (let index = 0; index < this.chars.length; index++) {
      let at = this.found[index] as number;
      if ((this.searchedFrom[index] as number) > from || (at >= 0 && at < from)) {
        at = this.text.indexOf(this.chars[index] as string, from);
        this.found[index] = at;
        this.searchedFrom[index] = from;
      }
      if (at >= 0 && at < first) first = at;
    }
    return first;
  }
}
