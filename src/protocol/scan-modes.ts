/**
 * The modes of the block finder: which kind of region its machine is reading. `BlockFinder.run`
 * dispatches on them, and each mode has one reader method (see `block-finder.ts`).
 *
 * Each module of the scanner copies the modes it uses into module-local constants
 * (`const { PROSE } = modes`) rather than reading the imported bindings: V8 reads a local constant
 * faster, and the mode is tested on every machine push (imported, the modes cost 2.5 % of a
 * streamed 1 KB output, measured).
 */

/** Mode: outside any hidden region. */
export const PROSE = 0;
/** Mode: after `<` in prose, deciding which tag this is. */
export const TAG = 1;
/** Mode: after an unmatched backtick run, deciding whether it opens a code span. */
export const SPAN = 2;
/** Mode: a backtick fence line before its end, deciding whether it is a fence. */
export const FENCE_INFO = 3;
/** Mode: inside fenced code. */
export const FENCE = 4;
/** Mode: inside `<!-- … -->`. */
export const COMMENT = 5;
/** Mode: inside <think>, <thinking> or <OBSERVATION>. */
export const HIDER = 6;
/** Mode: inside <ACTION>. */
export const BLOCK = 7;
/** Mode: a second block was found, so nothing more matters. */
export const DONE = 8;
