/**
 * The shapes of `defineSkill`: a skill is a tool whose body is a workflow (steps through the
 * dispatcher) or a child agent with its own tools.
 */
import type { AgentOptions } from '../agent/agent-options.js';
import type { Args, Issue } from '../protocol/types.js';
import type { ArgsOf, Tool, ToolFailure, ToolOptions, ToolParameters } from '../tools/types.js';

/**
 * What every skill shares with `defineTool`: everything but `execute`, which the skill provides.
 * `parameters` types the skill's arguments as it types a tool's (`ArgsOf`).
 */
export type SkillToolOptions<TParameters extends ToolParameters = ToolParameters> = Omit<ToolOptions<ArgsOf<TParameters>>, 'execute'> & {
  /** The skill's arguments' schema, as `defineTool` takes it. */
  parameters: TParameters;
};

/** How one step of a workflow ended; `callId` is the nested call's id (`parent/1`, `parent/2`, …). */
export type StepResult =
  | { status: 'completed'; callId: string; name: string; output: unknown }
  | { status: 'failed'; callId: string; name: string; error: ToolFailure }
  /** The step never ran: unknown tool, or arguments its schema refuses (no `tool.started`). */
  | { status: 'rejected'; callId: string; name: string; message: string; issues: Issue[] };

/** What a workflow's `run` gets beside its arguments: the way to call its tools. */
export type Steps = {
  /**
   * Runs one of the skill's tools through the dispatcher and returns its output. The arguments
   * are checked against the tool's schema like a model's native call (so they must be JSON data);
   * a rejected or failed step throws a `ToolError` naming the step, which fails the skill's call
   * unless `run` catches it.
   */
  call<TOutput = unknown>(tool: string, args?: Args): Promise<TOutput>;
  /**
   * Like `call`, but reports a rejected or failed step as a result instead of throwing. It still
   * throws when the step would call a skill already running in the chain (recursion).
   */
  tryCall(tool: string, args?: Args): Promise<StepResult>;
  /** The skill call's signal: aborted with the agent, the scene, or the skill's own timeout. */
  readonly signal: AbortSignal;
  /** The calling agent's name. */
  readonly agent: string;
  readonly scene: string | undefined;
  /** The skill call's id; its steps are `${callId}/1`, `${callId}/2`, … */
  readonly callId: string;
  /** The skill call's attempt, 1 unless the skill is retried. */
  readonly attempt: number;
};

/** A skill whose body is code: `run` calls the skill's `tools` through `steps`. */
export type WorkflowSkillDefinition<TParameters extends ToolParameters = ToolParameters, TOutput = unknown> = SkillToolOptions<TParameters> & {
  /** The tools the steps may call (by name); they need not be the agent's tools. */
  tools: readonly Tool[];
  run: (args: ArgsOf<TParameters>, steps: Steps) => TOutput | Promise<TOutput>;
};

/** One step of a declared workflow: a tool by name, and its arguments. */
export type StepSpec<TArgs extends Args = Args> = {
  tool: string;
  /**
   * Fixed arguments, or a function of the skill's arguments, the previous step's output
   * (undefined for the first step) and every output so far. Default `{}`.
   */
  args?: Args | ((input: TArgs, previous: unknown, outputs: readonly unknown[]) => Args);
};

/** A skill whose body is a fixed sequence of steps; the last step's output is the skill's. */
export type StepsSkillDefinition<TParameters extends ToolParameters = ToolParameters> = SkillToolOptions<TParameters> & {
  tools: readonly Tool[];
  steps: readonly StepSpec<ArgsOf<TParameters>>[];
};

/**
 * The child agent's options: those of `createAgent`, without what the parent decides. The child
 * runs on the parent's bus and scene, with the parent's per-tool limiters and write-ahead check,
 * and its own global tool limiter (never the parent's, whose slot the skill holds).
 */
export type ChildAgentOptions = Omit<AgentOptions, 'name' | 'bus' | 'scene' | 'limiter' | 'log'>;

/** A skill whose body is a child agent: it runs on the input and its final answer is the output. */
export type AgentSkillDefinition<TParameters extends ToolParameters = ToolParameters> = SkillToolOptions<TParameters> & {
  agent: ChildAgentOptions;
  /** The child's input (its user message). Default: the skill's arguments as JSON. */
  input?: (args: ArgsOf<TParameters>) => string;
};

/** The options of `defineSkill`: one of the three bodies. */
export type SkillDefinition<TParameters extends ToolParameters = ToolParameters, TOutput = unknown> =
  | WorkflowSkillDefinition<TParameters, TOutput>
  | StepsSkillDefinition<TParameters>
  | AgentSkillDefinition<TParameters>;
