/**
 * The bottom of the scanner's class chain (see `scan-output.ts`): the text received so far, the
 * reading position and mode, and `win`, the flat string every mode reads. Like every layer of the
 * chain, it declares its state and `StreamingScanner` gives the state its first values.
 */
import type { CharFinder } from './char-finder.js';
import type { ChunkText } from './chunk-text.js';

/**
 * The received text and the window over it that the block finder's modes read: `win` runs from
 * `winStart` to the end of the text received so far, so a batch parse reads its input in place and
 * a stream of one-character chunks reads each new chunk in place.
 */
export abstract class ScanWindow {
  protected abstract readonly text: ChunkText;
  /** The text from `winStart` to the end of what has arrived, as one flat string. */
  protected abstract win: string;
  protected abstract winStart: number;
  /** Finds the next newline, backtick or `<` of `win` natively; reset with the window. */
  protected abstract proseFinder: CharFinder | undefined;
  protected abstract pos: number;
  protected abstract ended: boolean;
  /** What the machine is reading: one of `scan-modes.ts`. */
  protected abstract mode: number;

  protected append(chunk: string): void {
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
  protected reseat(): void {
    this.win = this.text.slice(this.pos, this.text.length);
    this.winStart = this.pos;
    this.proseFinder = undefined;
  }

  /** The received text between two positions, from the window when it holds them. */
  protected slice(from: number, to: number): string {
    return from >= this.winStart ? this.win.slice(from - this.winStart, to - this.winStart) : this.text.slice(from, to);
  }
}
