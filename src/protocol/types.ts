/**
 * The vocabulary of PROTOCOL.md: categories, limits, and the shapes a model's output takes on its
 * way from text to validated calls.
 */

/** Problems with the block as a whole; published as `action.malformed`. */
export type MalformedCategory =
  | 'unclosed_action'
  | 'multiple_action_blocks'
  | 'action_in_code_fence'
  | 'empty_action'
  | 'malformed_xml'
  | 'malformed_call'
  | 'attributes_not_supported'
  | 'doctype_forbidden'
  | 'invalid_character'
  | 'limit_exceeded'
  | 'duplicate_call_id';

/** Problems with one call; published as `tool.rejected`. */
export type CallCategory =
  | 'unknown_tool'
  | 'not_permitted'
  | 'validation_error'
  | 'duplicate_param'
  | 'invalid_arguments_json'
  | 'forbidden_name';

/** Every category of PROTOCOL.md (except `tool_schema_rejected`, which throws at registration). */
export type ProtocolCategory = MalformedCategory | CallCategory;

/** Configurable limits (PROTOCOL.md rules 6 and 8); defaults in `DEFAULT_LIMITS`. */
export type ProtocolLimits = {
  /** Characters from `<ACTION>` to `</ACTION>` inclusive (JS string length). */
  maxActionChars: number;
  /** Calls in one block, or native calls in one turn. */
  maxCallsPerAction: number;
  /** Element depth: ACTION = 0, call = 1, argument = 2; JSON literals add their nesting. */
  maxDepth: number;
};

export const DEFAULT_LIMITS: Readonly<ProtocolLimits> = Object.freeze({
  maxActionChars: 262_144,
  maxCallsPerAction: 16,
  maxDepth: 16,
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

/** The result of scanning one model output (PROTOCOL.md rules 1–9 structure; names come later). */
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

/** One problem with one call, worded for the model. */
export type Issue = {
  category: ProtocolCategory;
  message: string;
  /** JSON pointer into the arguments (`/players/0/id`), when the problem is inside them. */
  path?: string;
  /** The AJV keyword (`type`, `required`, `enum`, …) for `validation_error`. */
  keyword?: string;
  /** The argument or tool name concerned. */
  property?: string;
  /** What is allowed instead (tool names, parameter names, enum values, a type). */
  allowed?: string[];
  /** The nearest allowed name, when one is close enough to be a likely typo. */
  suggestion?: string;
};

/** The coarse rejection codes of the bus (DESIGN.md §4). */
export type RejectionCode = 'unknown_tool' | 'not_permitted' | 'invalid_arguments' | 'denied';

/** A call that was refused before running; published as `tool.rejected`. */
export type CallRejection = {
  callId: string;
  name: string;
  code: RejectionCode;
  category: ProtocolCategory | 'denied';
  issues: Issue[];
  message: string;
  suggestion?: string;
};

/** Validated arguments: plain JSON data, frozen before a tool sees it. */
export type Args = Readonly<Record<string, unknown>>;

/** A call that passed every check and may be dispatched. */
export type ToolCall = { callId: string; name: string; args: Args };
