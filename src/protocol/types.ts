/**
 * The protocol's vocabulary: categories, limits, and the shapes a model's output takes on its way
 * from text to validated calls.
 */
export type {
  Args,
  CallCategory,
  CallRejection,
  Issue,
  MalformedCategory,
  ProtocolCategory,
  RejectionCode,
} from '../bus/event-data.js';
import type { Args, MalformedCategory } from '../bus/event-data.js';

/** Configurable limits (docs/protocol.md rules 6 and 8); defaults in `DEFAULT_LIMITS`. */
export type ProtocolLimits = {
  /** Characters from `<ACTION>` to `</ACTION>` inclusive (JS string length). */
  maxActionChars: number;
  /** Calls in one block, or native calls in one turn. */
  maxCallsPerAction: number;
  /** Element depth: ACTION = 0, call = 1, argument = 2; JSON literals add their nesting. */
  maxDepth: number;
  /** Issues a call rejected for its arguments reports at most, so one correction can fix them all. */
  maxIssues: number;
};

export const DEFAULT_LIMITS: Readonly<ProtocolLimits> = Object.freeze({
  maxActionChars: 262_144,
  maxCallsPerAction: 16,
  maxDepth: 16,
  maxIssues: 5,
});

/** One argument element of an XML call, as written. */
export type RawArgument = {
  name: string;
  /** The element's inner text exactly as written (CDATA, comments and markup kept). */
  raw: string;
  /** True for `<name/>`. */
  selfClosing: boolean;
  /** Offset of the element's `<` in the model output. */
  offset: number;
  /**
   * Offset in the model output of the first character of `raw` (just after the open tag's `>`,
   * whatever whitespace precedes it); for a self-closing element, of its `/>`. Pass it to
   * `splitElements(raw, innerOffset)` so nested offsets are exact.
   */
  innerOffset: number;
};

/** A call as the model wrote it, before names and arguments are checked. */
export type RawCall =
  | { format: 'xml'; callId: string; name: string; args: RawArgument[]; offset: number }
  | { format: 'native'; callId: string; name: string; argumentsText: string };

/** What is wrong with a block, for the model and for `action.malformed`. */
export type MalformedProblem = {
  category: MalformedCategory;
  message: string;
  /** Offset in the model output where the problem was found, when there is one. */
  offset?: number;
};

/** The result of scanning one model output (docs/protocol.md rules 1–9 structure; names come later). */
export type ParsedOutput = {
  /** The visible response: the text before the block, or the whole text when there is none. */
  text: string;
  /** The calls of the block in the order written; empty when there is no block. */
  calls: RawCall[];
  /** True when an `<ACTION>` block (or native calls) was found, even a malformed one. */
  hasBlock: boolean;
  /** Text after `</ACTION>`: ignored, reported for the log. */
  trailing?: string;
  problem?: MalformedProblem;
};

/** A call that passed every check and may be dispatched. */
export type ToolCall = { callId: string; name: string; args: Args };
