/**
 * `steps` of a workflow skill: each step is validated like a model's call and run through the
 * dispatcher that runs the skill, as a nested call with its own `tool.*` events.
 */
import { DEFAULT_LIMITS, type Args, type Issue, type ProtocolLimits } from '../protocol/types.js';
import type { Registry } from '../tools/registry.js';
import { ToolError } from '../tools/tool-error.js';
import { validateCalls } from '../tools/validate-calls.js';
import { refuseRecursion, type SkillFrame } from './skill-frame.js';
import type { StepResult, Steps } from './types.js';
import { errorMessage } from '../errors.js';

/**
 * Limits for step arguments. They are the skill's own data, not model output: no size cap, and a
 * depth bound only against runaway nesting (the checking JSON parser recurses).
 */
const STEP_LIMITS: Readonly<ProtocolLimits> = Object.freeze({
  ...DEFAULT_LIMITS,
  maxActionChars: Number.MAX_SAFE_INTEGER,
  maxDepth: 64,
});

/** Makes the `steps` handed to one run of a workflow skill. */
export function createSteps(frame: SkillFrame, registry: Registry): Steps {
  return new WorkflowSteps(frame, registry);
}

class WorkflowSteps implements Steps {
  readonly #frame: SkillFrame;
  readonly #registry: Registry;
  /** Steps started so far: the `n` of `${callId}/${n}`. */
  #count = 0;

  constructor(frame: SkillFrame, registry: Registry) {
    this.#frame = frame;
    this.#registry = registry;
  }

  get signal(): AbortSignal {
    return this.#frame.context.signal;
  }

  get agent(): string {
    return this.#frame.context.agent;
  }

  get scene(): string | undefined {
    return this.#frame.context.scene;
  }

  get callId(): string {
    return this.#frame.context.callId;
  }

  get attempt(): number {
    return this.#frame.context.attempt;
  }

  async call<TOutput = unknown>(tool: string, args?: Args): Promise<TOutput> {
    const result = await this.tryCall(tool, args);
    if (result.status === 'completed') return result.output as TOutput;
    throw stepError(this.#frame.skill, result);
  }

  async tryCall(tool: string, args: Args = {}): Promise<StepResult> {
    const frame = this.#frame;
    // Numbered before anything can fail, so ids follow the order of the calls in `run`.
    const callId = `${frame.prefix}/${++this.#count}`;
    const name = String(tool);
    refuseRecursion(frame, name);
    let argumentsText: string | undefined;
    try {
      argumentsText = JSON.stringify(args);
    } catch (error) {
      return notJson(callId, name, errorMessage(error));
    }
    if (argumentsText === undefined) return notJson(callId, name, `got ${typeof args}`);
    // A native call's path: the same names, permission, JSON and schema checks a model gets.
    const outcome = validateCalls([{ format: 'native', callId, name, argumentsText }], {
      registry: this.#registry,
      limits: STEP_LIMITS,
    });
    if (!outcome.ok) {
      const { problem } = outcome;
      if (problem.kind === 'rejected') return rejected(callId, name, problem.rejection.message, problem.rejection.issues);
      const { category, message } = problem.problem;
      return rejected(callId, name, message, [{ category, message }]);
    }
    const call = outcome.value[0]!;
    const [result] = await frame.dispatcher.dispatch([{ call, tool: this.#registry.get(name)! }], frame.path);
    if (result === undefined) throw new ToolError(`skill "${frame.skill}": the dispatcher returned no result for step ${callId}`);
    return result.status === 'completed'
      ? { status: 'completed', callId, name, output: result.output }
      : { status: 'failed', callId, name, error: result.error };
  }
}

function notJson(callId: string, name: string, detail: string): StepResult {
  const message = `Arguments for "${name}" must be an object of JSON data: ${detail}`;
  return rejected(callId, name, message, [{ category: 'invalid_arguments_json', message }]);
}

function rejected(callId: string, name: string, message: string, issues: Issue[]): StepResult {
  return { status: 'rejected', callId, name, message, issues };
}

/**
 * The error a failed step throws. A rejected step is the skill's own mistake (`execution`); a
 * failed one keeps the nested failure's kind, retryability and hint, so the model and the retry
 * policy see what really went wrong.
 */
function stepError(skill: string, result: Exclude<StepResult, { status: 'completed' }>): ToolError {
  const step = `skill "${skill}" step "${result.name}" (${result.callId})`;
  if (result.status === 'rejected') return new ToolError(`${step} was rejected: ${result.message}`, { kind: 'execution', retryable: false });
  const { kind, message, retryable, hint } = result.error;
  return new ToolError(`${step} failed: ${message}`, { kind, retryable, ...(hint !== undefined && { hint }) });
}
