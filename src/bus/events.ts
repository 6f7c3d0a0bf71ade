import type { AgentStateName } from '../../machines/agent.machine.js';
import type {
  Args,
  BudgetKind,
  CallRejection,
  FinishReason as ModelFinishReason,
  Issue,
  JsonValue,
  MalformedCategory,
  NativeToolCall,
  ProtocolCategory,
  ProviderErrorKind,
  RejectionCode,
  RepairedCallView,
  RepairSource,
  ResultPartInfo,
  RunReason,
  RunStats,
  SceneRecipe,
  ToolFailure,
  TriggerReason,
  Usage,
} from './event-data.js';

/**
 * The event catalogue: every bus event's type and data. No other file declares an event. Bump
 * `CATALOGUE_VERSION` when a change is not backwards compatible for readers.
 *
 * Version history:
 * - 1: the initial catalogue.
 */
export const CATALOGUE_VERSION = 1;

export type { AgentStateName };
export type { CallRecord, RepairedCallView, RepairSource, RunReason, RunStats, TriggerReason } from './event-data.js';

export type TroupeEvents = {
  'agent.spawned': { name: string; tools: string[]; protocol: 'xml' | 'native' };
  'agent.state': { from: AgentStateName; to: AgentStateName };
  'agent.triggered': { reason: TriggerReason; detail?: string; tick: number };
  'llm.request': { round: number; provider: string; model?: string; messageCount: number; nudge: boolean };
  /** Visible text as a streaming model writes it; `attempt` counts from 1 (see `llm.superseded`). */
  'llm.delta': { round: number; text: string; attempt: number };
  /** Reasoning ("thinking") text streamed by providers that send it; never part of the reply. */
  'llm.reasoning': { round: number; text: string; attempt: number };
  /** A piece of a native tool call as it streams: `index` orders the calls of the turn. */
  'llm.tool_call.delta': { round: number; attempt: number; index: number; id?: string; name?: string; argumentsDelta: string };
  /**
   * A streamed attempt failed part-way and is retried from scratch: its `llm.delta`,
   * `llm.reasoning` and `llm.tool_call.delta` events (same round and attempt) are void.
   */
  'llm.superseded': { round: number; attempt: number; reason: string };
  /**
   * The model's reply. `stopSequence`: the stop sequence the provider stripped; `passed`: a
   * scripted brain chose to do nothing. With them the reply can be taken from the log as it was.
   */
  'llm.response': {
    round: number;
    text: string;
    toolCalls?: NativeToolCall[];
    finishReason: ModelFinishReason;
    stopSequence?: string;
    passed?: true;
    usage?: Usage;
    latencyMs: number;
  };
  /** A model call failed; `retryAfterMs`: the wait the provider asked for before the next attempt. */
  'llm.error': { round: number; kind: ProviderErrorKind; message: string; retryable: boolean; attempt: number; retryAfterMs?: number };
  /** Visible text, or speech through the `say` tool; `to` names the agent it is addressed to. */
  'agent.said': { text: string; to?: string };
  'action.parsed': { calls: { callId: string; name: string; args: Args }[] };
  'action.malformed': { code: MalformedCategory; category: ProtocolCategory; message: string; offset?: number };
  /** Text the model wrote after `</ACTION>`: ignored, kept for the log. */
  'action.trailing': { text: string };
  'tool.rejected': CallRejection & { code: RejectionCode };
  /** `argsHash`: hex SHA-256 of the arguments' stable JSON key; `approve(callId, { argsHash })` binds to it. */
  'tool.approval.requested': { callId: string; name: string; args: Args; argsHash: string };
  'tool.approval.resolved': { callId: string; name: string; approved: boolean; reason?: string };
  'tool.started': { callId: string; name: string; args: Args; attempt: number };
  /**
   * `output` is what the tool returned; for a rich result (`toolResult`) it is the checked copy,
   * and `parts` describes its parts without their bytes.
   */
  'tool.completed': { callId: string; name: string; args: Args; output: unknown; durationMs: number; attempt: number; parts?: ResultPartInfo[] };
  'tool.failed': { callId: string; name: string; args: Args; error: ToolFailure; attempt: number; durationMs: number };
  /**
   * A running call reported how far it has got (`context.progress` in its tool; an MCP server's
   * progress notifications). Its `cause` is the attempt's `tool.started`; none comes after the
   * attempt has ended.
   */
  'tool.progress': { callId: string; name: string; progress: number; total?: number; message?: string };
  /** A tool kept running after its signal aborted; its late result (if any) is discarded. */
  'tool.zombie': { callId: string; name: string; settled: 'pending' | 'resolved' | 'rejected'; lateOutput?: unknown };
  'agent.observation': { text: string; ok: boolean; round: number };
  /**
   * An agent's run began (not published for a scene's turns, which `agent.triggered` announces):
   * its input, its number (call ids are `<agent>/<number>.<round>.<n>`), its `rounds` limit, and
   * how many images came with the input. When the input was a list of messages, `input` is the
   * last (the user's) and `messages` the ones before it.
   */
  'run.started': { input: string; number: number; rounds?: number; images?: number; messages?: { role: 'system' | 'user' | 'assistant'; content: string }[] };
  /**
   * A call that started before a crash and never ended: `rerun` true when it runs again under the
   * same callId (its tool is read-only or idempotent), false when the model is told its outcome is
   * unknown (a `tool.failed` of kind `unknown` follows).
   */
  'tool.interrupted': { callId: string; name: string; args: Args; rerun: boolean };
  /** An agent's private state changed (the `update_private` tool): `path` is the key written. */
  'private.changed': { path: string; value: unknown; tick: number };
  'agent.finished': { reason: RunReason; text: string; rounds: number; stats: RunStats; error?: string; issues?: Issue[] };
  /** A budget refused a checkpoint; published once per budget. `scope` is the budget's name. */
  'budget.exhausted': { budget: string; kind: BudgetKind; limit: number; used: number; message: string };
  /** `world`: the world as the scene starts (a frozen copy; createScene always sets it), so a log replays from it. */
  'scene.started': { tick: number; seed: number; agents: string[]; world?: JsonValue };
  'scene.tick': { tick: number };
  /** The scene began to stop (`stop()`, Ctrl-C, a budget): what follows until `scene.stopped` is its shutting down. */
  'scene.stopping': { tick: number; reason: string };
  'scene.stopped': { tick: number; reason: string; detail?: string };
  /** A named event of the scene's own (the `publish_event` tool, or `scene.emit`). */
  'scene.event': { name: string; payload?: unknown };
  /** A committed change of the world state; `value` is frozen, `undefined` when the path was removed. */
  'world.changed': { path: string; value: unknown; tick: number };
  /** A subscriber threw; delivery to the others went on. */
  'bus.error': { eventType: string; eventId: string; message: string };
  /** The session log could not write an event, or quarantined a torn line. */
  'log.error': { message: string; path?: string };
  /**
   * Written by the session log's owner at the start of each run and each resume, not published on
   * a bus: `run` names the segment; a resume names the run it continues and where it took up.
   */
  'log.opened': { run: string; kind: 'run' | 'resume'; recipe?: SceneRecipe; resumes?: string; fromTick?: number; checkpoint?: number };
  /** A checkpoint of the scene was written beside the log (not published on a bus). */
  'log.checkpoint': { number: number; tick: number; file: string; sha256: string };
  /**
   * The agent's `repair` turned a rejected call into one that passed validation; it runs as if the
   * model had written `after`. `by` is `model` when the repair asked a model.
   */
  'tool.repaired': { callId: string; name: string; before: RepairedCallView; after: RepairedCallView; by: RepairSource; issues: Issue[] };
  /** The agent's `repair` declined, threw, or gave a call that failed validation again; the rejection stands. */
  'tool.repair.failed': { callId: string; name: string; by: RepairSource; reason: string; issues: Issue[] };
  /** A completed call's result waits for the host before the model sees it. */
  /** `outputHash`: hex SHA-256 of the output's stable JSON key; `approveResult(callId, { outputHash })` binds to it. */
  'tool.result.approval.requested': { callId: string; name: string; args: Args; output: unknown; outputHash: string };
  /** The host approved or rejected a held result (or its predicate threw: rejected, never asked). */
  'tool.result.approval.resolved': { callId: string; name: string; approved: boolean; reason?: string };
  /** The inspector paused or resumed a stepped scene (its tick gate); `tick` is the last tick run. */
  'inspector.paused': { paused: boolean; tick: number };
  /**
   * An agent's kept history exceeded `memory.maxTokens` and was compacted: `policy` names the
   * policy, `fallback` says the oldest turns were dropped after it (it failed, or left too much).
   */
  'memory.compacted': {
    policy: string;
    beforeTokens: number;
    afterTokens: number;
    maxTokens: number;
    turnsDropped: number;
    turnsSummarized: number;
    turnsKept: number;
    fallback: boolean;
    error?: string;
  };
};

export type EventType = keyof TroupeEvents;

/** One envelope per type; narrowing on `type` narrows `data`. */
export type Envelope<K extends EventType = EventType> = {
  [T in K]: {
    id: string;
    type: T;
    at: number;
    scene?: string;
    agent?: string;
    cause?: string;
    data: TroupeEvents[T];
  };
}[K];

/** The event types under a dotted prefix: `'tool'` → `'tool.started' | 'tool.failed' | …`. */
export type TypesUnder<P extends string> = Extract<EventType, `${P}.${string}`>;

/** What `bus.on` accepts: an exact type, `'prefix.*'`, or `'*'`. */
export type Pattern = EventType | `${string}.*` | '*';

/** The envelopes a pattern selects. */
export type EnvelopeOf<P extends Pattern> = P extends '*'
  ? Envelope
  : P extends `${infer Prefix}.*`
    ? Envelope<TypesUnder<Prefix>>
    : P extends EventType
      ? Envelope<P>
      : never;
