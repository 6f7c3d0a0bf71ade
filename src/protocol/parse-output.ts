/**
 * The batch entry of the `<ACTION>` protocol: one model output in, its visible text and raw calls
 * out. It is the streaming scanner fed the whole text at once, so both always agree.
 */
import { scanOutput } from './scan-output.js';
import type { ParseOptions } from './parse-options.js';
import type { ParsedOutput } from './types.js';

export type { ParseOptions } from './parse-options.js';
export { createActionScanner, type ActionScanner, type ScanFinish, type ScanProgress } from './scan-output.js';

/**
 * Parses one model output (docs/protocol.md rules 1–8): finds the `<ACTION>` block, splits it into raw
 * calls, and returns the visible text before it. Never throws; a problem is in `problem`.
 *
 * @example
 * const parsed = parseOutput('Looking.\n<ACTION><read_file><path>a.ts</path></read_file></ACTION>');
 * // parsed.text === 'Looking.'; parsed.calls[0].name === 'read_file'
 */
export function parseOutput(text: string, options?: ParseOptions): ParsedOutput {
  return scanOutput(typeof text === 'string' ? text : '', options);
}
