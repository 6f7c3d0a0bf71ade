/**
 * The text a streaming scanner has received. Appending to one growing string and reading it after
 * every chunk would make V8 flatten the whole buffer once per chunk, which is quadratic for a long
 * output in small chunks. Here new chunks are concatenated into a short pending rope that is only
 * sealed (flattened once) into the list of chunks when a read reaches it or when it holds
 * `MERGE_AT` characters; small sealed chunks are merged once they add up to `MERGE_AT`. So each
 * character is copied a bounded number of times, appending costs one concatenation, and a slice
 * costs only what it touches. A batch parse is a single chunk and allocates no list.
 *
 * Even a rope costs an allocation per chunk, which dominates a stream of one-character chunks. So
 * short ASCII chunks are instead copied, a byte each, into a staging buffer that is decoded into one
 * string when it fills or when a read reaches it: storing a character then costs about as much as
 * reading it. (ASCII bytes are their own UTF-8, so the decoder is exact; any other chunk, a lone
 * surrogate included, takes the string path.)
 */

import { holdsNoStop, type StopChars } from './stop-chars.js';

/** Small chunks are merged once they add up to this many characters, so 1-char streams stay compact. */
const MERGE_AT = 1024;
/** Chunks up to this long are staged when they are ASCII (and may skip the scanner's machine); longer ones are cheaper as strings. */
const STAGE_CHUNK = 64;
/**
 * The staging buffer's first size; it doubles as it fills, up to `STAGE_MAX`, and is decoded when
 * full at that size or when a read reaches it. Decoding seldom and into large strings matters: the
 * garbage collector copies young strings, and a stream of 4 KB pieces cost it about 0.3 ns a character.
 */
const STAGE_FIRST = 1024;
const STAGE_MAX = 16 * 1024;
const ascii = new TextDecoder();
/** The stage of a text that has not staged anything yet. */
const NO_STAGE: Uint8Array = new Uint8Array(0);
/**
 * A stage given back by a finished text, for the next one: making a typed array costs about a
 * microsecond (its memory lives outside the heap), which is a tenth of a streamed 1 KB output.
 */
let spareStage: Uint8Array | undefined;

/** The received text as a list of chunks, with cheap appends and slices by position. */
export class ChunkText {
  /** The first chunk, and the only one of a batch parse. */
  private first = '';
  /** Sealed chunks (the first included) and their start positions; undefined until a second chunk is sealed. */
  private chunks: string[] | undefined;
  private starts: number[] | undefined;
  /** Chunks received since the last seal, concatenated. */
  private pending = '';
  /** Trailing sealed chunks shorter than `MERGE_AT`, merged into one once they add up to it. */
  private smallCount = 0;
  private smallLength = 0;
  /** Short ASCII chunks received after `pending`, a byte per character; allocated on first use. */
  private stage: Uint8Array = NO_STAGE;
  private staged = 0;
  /** The length of the text but the staged characters. */
  private settled = 0;

  /** The length of the text. */
  get length(): number {
    return this.settled + this.staged;
  }

  /** Adds a chunk at the end. */
  append(chunk: string): void {
    const length = chunk.length;
    if (length === 0) return;
    if (this.length === 0) {
      this.first = chunk;
      this.settled = length;
      this.noteSealed(chunk);
      return;
    }
    if (length <= STAGE_CHUNK) {
      const stage = this.roomFor(length);
      const at = this.staged;
      let index = 0;
      for (; index < length; index++) {
        const code = chunk.charCodeAt(index);
        if (code >= 0x80) break;
        stage[at + index] = code;
      }
      if (index === length) {
        this.staged = at + length;
        return;
      }
    }
    if (this.staged > 0) this.unstage();
    this.toPending(chunk);
  }

  /**
   * Adds a short chunk holding no character of `stops` at the end, checking and storing it in one
   * pass, and returns true; returns false, having added nothing, for any other chunk.
   */
  appendQuiet(chunk: string, stops: StopChars): boolean {
    const length = chunk.length;
    const stage = this.stage;
    const at = this.staged;
    if (length > STAGE_CHUNK) return false;
    if (at + length > stage.length) return this.appendQuietSlowly(chunk, stops);
    let index = 0;
    for (; index < length; index++) {
      const code = chunk.charCodeAt(index);
      if (code >= 0x80 || stops[code] === 1) break;
      // Past `staged`, so a chunk that turns out to hold a stop leaves nothing behind.
      stage[at + index] = code;
    }
    if (index < length) return this.appendQuietSlowly(chunk, stops);
    this.staged = at + length;
    return true;
  }

  /**
   * Adds a one-character ASCII chunk, given as its code, to the stage and returns true; false,
   * having added nothing, when the stage is full or not made yet (see `makeStage`).
   */
  stageChar(code: number): boolean {
    const stage = this.stage;
    const at = this.staged;
    if (at >= stage.length) return false;
    stage[at] = code;
    this.staged = at + 1;
    return true;
  }

  /**
   * Adds a short chunk holding no character of `loud` (and nothing past ASCII) to the stage and
   * returns true; false, having added nothing, for any other chunk or when the stage has no room.
   */
  stageQuiet(chunk: string, loud: StopChars): boolean {
    const length = chunk.length;
    const stage = this.stage;
    const at = this.staged;
    if (at + length > stage.length) return false;
    for (let index = 0; index < length; index++) {
      const code = chunk.charCodeAt(index);
      if (code >= 0x80 || loud[code] === 1) return false;
      // Past `staged`, so a chunk that turns out to be loud leaves nothing behind.
      stage[at + index] = code;
    }
    this.staged = at + length;
    return true;
  }

  /** Takes back the last `length` characters `stageQuiet` added. */
  takeBack(length: number): void {
    this.staged -= length;
  }

  /** Makes the stage, so that `stageChar` can take characters. */
  makeStage(): void {
    if (this.stage.length > 0) return;
    this.stage = spareStage ?? new Uint8Array(STAGE_FIRST);
    spareStage = undefined;
  }

  /**
   * Decodes the staged characters and gives the stage back for another text to use. The text can
   * still be read; appending to it makes a new stage.
   */
  releaseStage(): void {
    if (this.stage.length === 0) return;
    if (this.staged > 0) this.unstage();
    spareStage = this.stage;
    this.stage = NO_STAGE;
  }

  /** The stage, with room for `length` more characters: made, grown, or decoded first. */
  private roomFor(length: number): Uint8Array {
    this.makeStage();
    const stage = this.stage;
    if (this.staged + length <= stage.length) return stage;
    if (stage.length >= STAGE_MAX) {
      this.unstage();
      return stage;
    }
    const grown = new Uint8Array(Math.min(STAGE_MAX, stage.length * 2));
    grown.set(stage.subarray(0, this.staged));
    this.stage = grown;
    return grown;
  }

  /** `appendQuiet` for a chunk the stage cannot take as it is (not ASCII, or no room). */
  private appendQuietSlowly(chunk: string, stops: StopChars): boolean {
    if (!holdsNoStop(chunk, stops)) return false;
    this.append(chunk);
    return true;
  }

  /** The whole text when it arrived as one chunk (a batch parse), so it can be read without a copy. */
  single(): string | undefined {
    return this.chunks === undefined && this.pending.length === 0 && this.staged === 0 ? this.first : undefined;
  }

  /** The text between two positions, like `String.prototype.slice` with in-range arguments. */
  slice(from: number, to: number): string {
    if (to <= from) return '';
    if (this.staged > 0) this.unstage();
    if (this.pending.length > 0) this.seal();
    const chunks = this.chunks;
    if (chunks === undefined) return this.first.slice(from, to);
    const starts = this.starts as number[];
    let index = locate(starts, from);
    const start = starts[index] as number;
    const chunk = chunks[index] as string;
    if (to <= start + chunk.length) return chunk.slice(from - start, to - start);
    const pieces = [chunk.slice(from - start)];
    for (index++; index < chunks.length; index++) {
      const next = starts[index] as number;
      if (next >= to) break;
      const part = chunks[index] as string;
      pieces.push(to - next >= part.length ? part : part.slice(0, to - next));
    }
    return pieces.join('');
  }

  /** Adds a chunk to the pending rope; `settled` counts it here. */
  private toPending(chunk: string): void {
    this.pending = this.pending.length === 0 ? chunk : this.pending + chunk;
    this.settled += chunk.length;
    if (this.pending.length >= MERGE_AT) this.seal();
  }

  /** Decodes the staged characters into one string at the end of the pending rope. */
  private unstage(): void {
    const text = ascii.decode(this.stage.subarray(0, this.staged));
    this.staged = 0;
    this.toPending(text);
  }

  /** Moves the pending text into the list of chunks. */
  private seal(): void {
    const chunk = this.pending;
    // Reading a character makes V8 flatten the rope now, while its pieces are still young garbage;
    // a million one-character pieces kept until the end would be a heavy load for the collector.
    chunk.charCodeAt(0);
    this.pending = '';
    if (this.chunks === undefined) {
      this.chunks = [this.first];
      this.starts = [0];
    }
    const chunks = this.chunks;
    const starts = this.starts as number[];
    starts.push(this.settled - chunk.length);
    chunks.push(chunk);
    if (!this.noteSealed(chunk)) return;
    if (this.smallLength >= MERGE_AT && this.smallCount > 1) {
      // Each character takes part in at most one merge: merged chunks are never small again.
      const from = chunks.length - this.smallCount;
      const merged = chunks.splice(from).join('');
      const start = starts[from] as number;
      starts.length = from;
      chunks.push(merged);
      starts.push(start);
      this.smallCount = 0;
      this.smallLength = 0;
    }
  }

  /** Counts a sealed chunk toward the run of small trailing chunks; false (and the run reset) when it is large. */
  private noteSealed(chunk: string): boolean {
    if (chunk.length >= MERGE_AT) {
      this.smallCount = 0;
      this.smallLength = 0;
      return false;
    }
    this.smallCount++;
    this.smallLength += chunk.length;
    return true;
  }
}

/** The index of the chunk holding `position`: the last chunk first, then a binary search. */
function locate(starts: readonly number[], position: number): number {
  let high = starts.length - 1;
  if (position >= (starts[high] as number)) return high;
  let low = 0;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= position) low = middle;
    else high = middle - 1;
  }
  return low;
}
