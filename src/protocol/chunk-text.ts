/**
 * The text a streaming scanner has received. Appending to one growing string and reading it after
 * every chunk would make V8 flatten the whole buffer once per chunk, which is quadratic for a long
 * output in small chunks. Here new chunks are concatenated into a short pending rope that is only
 * sealed (flattened once) into the list of chunks when a read reaches it or when it holds
 * `MERGE_AT` characters; small sealed chunks are merged once they add up to `MERGE_AT`. So each
 * character is copied a bounded number of times, appending costs one concatenation, and a slice
 * costs only what it touches. A batch parse is a single chunk and allocates no list.
 */

/** Small chunks are merged once they add up to this many characters, so 1-char streams stay compact. */
const MERGE_AT = 1024;

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
  length = 0;

  /** Adds a chunk at the end. */
  append(chunk: string): void {
    if (chunk.length === 0) return;
    if (this.length === 0) {
      this.first = chunk;
      this.length = chunk.length;
      this.noteSealed(chunk);
      return;
    }
    this.pending = this.pending.length === 0 ? chunk : this.pending + chunk;
    this.length += chunk.length;
    if (this.pending.length >= MERGE_AT) this.seal();
  }

  /** The whole text when it arrived as one chunk (a batch parse), so it can be read without a copy. */
  single(): string | undefined {
    return this.chunks === undefined && this.pending.length === 0 ? this.first : undefined;
  }

  /** The text between two positions, like `String.prototype.slice` with in-range arguments. */
  slice(from: number, to: number): string {
    if (to <= from) return '';
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
    starts.push(this.length - chunk.length);
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
