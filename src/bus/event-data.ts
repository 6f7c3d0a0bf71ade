/**
 * The words the event catalogue speaks: every type an event's data is made of. They live at the
 * bottom of the dependency graph, beside the catalogue, so that the bus knows no tools, agents or
 * scenes, and the modules that own each idea (protocol, tools, providers, scenes) re-export them
 * from here rather than the bus reaching up to them.
 */

/** Plain JSON: what the world and private state hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Validated arguments: plain JSON data, frozen before a tool sees it. */
export type Args = Readonly<Record<string, unknown>>;

/** Problems with the `<ACTION>` block as a whole; published as `action.malformed`. */
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

/** Every protocol category (except `tool_schema_rejected`, which throws at registration). */
export type ProtocolCategory = MalformedCategory | CallCategory;

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

/** The coarse rejection codes of `tool.rejected`. */
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

/** Why a tool call failed. `rate_limit`: the service said too many requests (HTTP 429). */
export type ToolErrorKind = 'execution' | 'timeout' | 'network' | 'rate_limit' | 'permission' | 'not_found' | 'aborted' | 'unknown';

/** A tool failure as the bus and the model see it. */
export type ToolFailure = {
  kind: ToolErrorKind;
  message: string;
  retryable: boolean;
  /** What the model could do about it ("check the path exists"), when troupe can tell. */
  hint?: string;
};

/**
 * How far a running call has got, as its tool reports it (`context.progress`): work done so far,
 * out of `total` when the tool knows it, and a short note.
 */
export type ToolProgress = { progress: number; total?: number; message?: string };

/** The media types an image part may have: the ones every supported provider takes. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** A rich result's part as events describe it: its size, never its bytes. */
export type ResultPartInfo =
  | { type: 'text'; chars: number }
  | { type: 'json'; chars: number }
  | { type: 'image'; mediaType: ImageMediaType; bytes: number; sha256: string };

/** A native function call as the provider returned it: `arguments` is raw JSON text. */
export type NativeToolCall = { id: string; name: string; arguments: string };

/**
 * Token counts for one model call, or summed over a run. `estimated` marks counts troupe made with
 * a tokenizer because the provider sent none (a stream stopped at `</ACTION>`, a server that
 * reports no usage); a sum that includes any estimate keeps the mark, and so does a cost worked
 * out from it. `costUsd`: what the call cost at its model's price (docs/budgets.md, Prices), when
 * the agent's price table knows the model.
 */
export type Usage = { inputTokens: number; outputTokens: number; totalTokens: number; estimated?: true; costUsd?: number };

/** How a model's reply ended. `stop_sequence` carries the sequence the provider stripped. */
export type FinishReason = 'stop' | 'length' | 'stop_sequence' | 'tool_calls' | 'content_filter' | 'refusal' | 'error';

/** Why a provider call failed. */
export type ProviderErrorKind =
  | 'rate_limit'
  | 'server'
  | 'network'
  | 'timeout'
  | 'auth'
  | 'bad_request'
  | 'aborted'
  | 'script'
  | 'unknown';

/** What a budget can cap. */
export type BudgetKind = 'modelCalls' | 'tokens' | 'toolCalls' | 'wallMs' | 'costUsd';

/** Why a run ended. */
export type RunReason = 'final_answer' | 'max_rounds' | 'turn_ended' | 'budget' | 'aborted' | 'error';

/** One call of a run, with what became of it: the run's call history. */
export type CallRecord = {
  callId: string;
  name: string;
  round: number;
  /** `result_rejected`: the call ran, but its result was withheld from the model. */
  outcome: 'completed' | 'failed' | 'rejected' | 'denied' | 'aborted' | 'result_rejected';
  durationMs: number;
  attempts: number;
};

/** Totals of a run. */
export type RunStats = {
  rounds: number;
  /** Calls dispatched (completed or failed). */
  calls: number;
  corrections: number;
  /** Rejected calls the agent's `repair` fixed, so they ran. */
  repairs: number;
  durationMs: number;
  usage: Usage;
  history: CallRecord[];
};

/**
 * Why a scene agent deliberates: the scene started, an event it subscribes to, a timer, speech or
 * a message from another agent, its round-robin turn, or the tick of an every-tick scene.
 */
export type TriggerReason = 'start' | 'event' | 'timer' | 'message' | 'turn' | 'tick';

/** A call before or after repair: its tool name and arguments (loose before, validated after). */
export type RepairedCallView = { name: string; args: Readonly<Record<string, unknown>> };

/** Who repaired: the agent's repair function alone, or one that asked a model. */
export type RepairSource = 'function' | 'model';

/**
 * How to build a scene again, as the session log records it at the start of each run: which scene
 * (a shipped one, a folder or a file), its options, seed and ticks, the model it ran on, and a hash
 * of its definition, so that a resume refuses to continue with other code or other settings.
 */
export type SceneRecipe = {
  scene: string;
  /** Where the scene's definition was loaded from: a scene shipped with troupe, or a path. */
  source: { kind: 'shipped' | 'folder' | 'file'; path?: string };
  options: Record<string, JsonValue>;
  seed: number;
  /** The ticks the run was asked for (absent: until the scene ends by itself). */
  ticks?: number;
  /** The model the scene's members ran on (`--model`), with the protocol they spoke. */
  model?: { spec: string; protocol?: 'xml' | 'native' };
  /** SHA-256 of the scene's source files, to refuse a resume with changed code. */
  definitionHash: string;
  /** How `troupe run` answered approval requests (`--approve`), which a resume answers the same way. */
  approve?: 'ask' | 'all' | 'none';
  /** The MCP servers `troupe run` started (`--mcp`), each as its words: a resume starts them again. */
  mcp?: string[][];
  /** How often the log is checkpointed (`--checkpoints`), which a resume keeps to: every N ticks, or `false`. */
  checkpoints?: { everyTicks: number } | false;
};
