import type { RepairSource } from '../../bus/event-data.js';
import { errorMessage } from '../../errors.js';
import type { ChatMessage, ModelRequest, ModelResponse, Provider } from '../../llm/types.js';
import { checkLooseArguments, looseArguments, rawCallWith } from '../../tools/loose-arguments.js';
import type { LooseArgs } from '../../tools/types.js';
import { validateCalls } from '../../tools/validate-calls.js';
import type { AgentConfig } from '../agent-config.js';
import type { RepairContext, RepairedCall } from '../agent-options.js';
import { addUsage, budgetedModelCall } from '../budget.js';
import type { RoundOutcome, RunState } from '../run/run-state.js';
import type { StageEvent, StagePort } from './stage-port.js';
import { acceptCalls, validationOptions } from './validate.js';

/**
 * Tries the agent's repair on the rejected call, once per round. A fix is validated again with the
 * rest of the block; `repair.settled` is reported whatever came of it, and the guards read the round.
 */
export function repair(run: RunState, config: AgentConfig, port: StagePort): void {
  const { rejection } = run.outcome as Extract<RoundOutcome, { kind: 'rejected' }>;
  const calls = run.parsed!.calls;
  const index = calls.findIndex((candidate) => candidate.callId === rejection.callId);
  const raw = calls[index];
  const { callId, name, issues } = rejection;
  // The run's own signal, kept: a model call the repair makes later must never take another run's.
  const signal = port.signal;
  let by: RepairSource = 'function';
  const failed = (reason: string): StageEvent => {
    run.cause = port.publish('tool.repair.failed', { callId, name, by, reason, issues }).id;
    return 'repair.settled';
  };
  if (raw === undefined) return port.send(failed('the rejected call is not in the block'));
  const loose = looseArguments(raw, config.limits);
  const before: LooseArgs = loose.ok ? loose.value : {};
  const context: RepairContext = {
    agent: config.name,
    round: run.round,
    signal,
    call: { callId, name: raw.name, format: raw.format, args: structuredClone(before), ...(raw.format === 'native' && { argumentsText: raw.argumentsText }) },
    tools: toolViews(config),
    complete: (messages, options) => {
      by = 'model';
      return repairModelCall(run, config, signal, messages, options);
    },
  };
  const onFix = (fixed: RepairedCall | undefined): StageEvent => {
    if (fixed === undefined || fixed === null) return failed('the repair offered no fix');
    if (typeof fixed !== 'object' || (fixed.name !== undefined && typeof fixed.name !== 'string')) {
      return failed('the repair must return { name?: string, args: object } or undefined');
    }
    const checked = checkLooseArguments(fixed.args, config.limits, 'repair');
    if (!checked.ok) return failed(checked.problem);
    const outcome = validateCalls(calls.with(index, rawCallWith(raw, checked.value, fixed.name ?? raw.name)), validationOptions(config));
    if (!outcome.ok) {
      const problem = outcome.problem;
      return failed(`the repaired block was rejected too: ${problem.kind === 'malformed' ? problem.problem.message : problem.rejection.message}`);
    }
    const after = outcome.value[index]!;
    run.repairs++;
    const view = { name: after.name, args: after.args };
    run.cause = port.publish('tool.repaired', { callId, name, before: { name: raw.name, args: before }, after: view, by, issues }).id;
    acceptCalls(run, config, port, outcome.value, { callId, name: raw.name, problem: rejection.message, after: view });
    return 'repair.settled';
  };
  const threw = (error: unknown): StageEvent => failed(`the repair threw: ${errorMessage(error)}`);
  let answer: ReturnType<NonNullable<AgentConfig['repair']>>;
  try {
    answer = config.repair!(rejection, context);
  } catch (error) {
    return port.send(threw(error));
  }
  port.wait(answer, onFix, threw);
}

/** The agent's tools as a repair sees them (the ones it may call). */
function toolViews(config: AgentConfig): RepairContext['tools'] {
  const { registry, allowed } = config;
  return registry
    .tools()
    .filter((tool) => allowed === undefined || allowed.has(tool.name))
    .map(({ name, description, parameters }) => ({ name, description, parameters }));
}

/** A repair's extra model call: budgeted and counted like a deliberation, not published as one. */
async function repairModelCall(
  run: RunState,
  config: AgentConfig,
  signal: AbortSignal,
  messages: ChatMessage[],
  options: { provider?: Provider; maxTokens?: number } = {},
): Promise<ModelResponse> {
  // Refused at once, before anything is spent: an aborted run makes no more model calls.
  signal.throwIfAborted();
  const request: ModelRequest = { messages, signal, round: run.round, agent: config.name };
  if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
  // Refused before anything is spent when a budget has no model call left.
  const response = await budgetedModelCall(config.budgets, options.provider ?? config.provider, request, '', config.prices);
  if (response?.usage !== undefined && !run.finished) addUsage(run.usage, response.usage);
  return response;
}
