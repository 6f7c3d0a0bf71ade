/**
 * The shape of the streaming `<ACTION>` parser, apart from its implementation
 * (`streaming-scanner.ts`) so that every layer of it can name these types.
 */
import type { FinishReason } from '../llm/types.js';
import type { ScanProgress } from './quiet-states.js';
import type { ParsedOutput } from './types.js';

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
