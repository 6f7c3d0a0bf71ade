/**
 * The block finder (docs/protocol.md rules 1–5) as an incremental state machine fed in chunks. Batch
 * parsing is this scanner fed the whole text once, so streaming and batch agree by construction:
 * a batch parse copies nothing, and a stream of one-character chunks reads each new chunk in place.
 *
 * The scanner is one object whose class is split across modules as a chain of subclasses, each
 * layer a concern: `ScanWindow` (the received text and the window the modes read), `CodeReader`
 * (code spans and fences), `TagReader` (tags in prose and the regions they open), `BlockFinder`
 * (the main loop, prose and the verdict) and `StreamingScanner` (push, visible deltas, the quiet
 * path; it also gives every layer's state its first value). A chain rather than free functions or
 * helper objects because the modes share the line, run and tentative-region state, and because
 * every call between layers then stays a monomorphic method call on one class, which the engine
 * inlines: this scanner is hot.
 */
import type { ActionScanner } from './action-scanner.js';
import { resolveParseOptions, type ParseOptions } from './parse-options.js';
import { StreamingScanner } from './streaming-scanner.js';
import type { ParsedOutput } from './types.js';
import { trimAscii } from './visible-text.js';

export type { ActionScanner, ScanFinish } from './action-scanner.js';
export type { ScanProgress } from './quiet-states.js';

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
  return new StreamingScanner(resolveParseOptions(options));
}

/** Scans a whole output at once: the scanner fed one chunk, without computing visible deltas. */
export function scanOutput(output: string, options?: ParseOptions): ParsedOutput {
  // Every tag the scanner looks for starts with `<`. Without one, nothing is hidden and nothing is
  // called, so the scanner would return the whole output, trimmed; skip building it.
  if (output.indexOf('<') < 0) return { text: trimAscii(output), calls: [], hasBlock: false };
  return new StreamingScanner(resolveParseOptions(options)).parse(output);
}
