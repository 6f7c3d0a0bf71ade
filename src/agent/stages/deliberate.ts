import type { TroupeEvents } from '../../bus/events.js';
import { errorMessage } from '../../errors.js';
import type { ChatMessage, ModelRequest, ModelResponse } from '../../llm/types.js';
import { RunRequest, type SignalSource } from '../../llm/request-signal.js';
import type { AgentConfig } from '../agent-config.js';
import { addUsage, chargeAll, ONE_MODEL_CALL, usageSpend, type SharedVerdict } from '../budget.js';
import { pricedUsage } from '../../llm/prices.js';
import { withUsage } from '../estimate-usage.js';
import { firstAttempt, retryModel } from '../call-model.js';
import type { ModelCallRecord } from '../run/run-record.js';
import { NO_OUTCOME, pushTo, type RunState } from '../run/run-state.js';
import { streamModel, type StreamedReply } from '../stream-model.js';
import { budgetVerdict, refusedByBudget } from './checkpoint.js';
import { parseOptionsFor } from './parse.js';
import type { StageEvent, StagePort } from './stage-port.js';
import { OUTPUT_NAME } from '../output-schema.js';

/** Opens a round and asks the model; reports `model.responded` or `model.failed`. */
export function deliberate(run: RunState, config: AgentConfig, port: StagePort): void {
  // Aborted before the first call (a signal that was already aborted): ask the model nothing.
  if (port.aborted) return port.send('aborted');
  const refused = refusedByBudget(run, config, port, ONE_MODEL_CALL);
  if (refused === true) return;
  if (refused !== false) return port.wait(refused, afterBudget, budgetUnanswered, 'drop');
  openRound(run, config, port);
}

/** A budget shared across processes answered: the round opens, or the run ends with `budget`. */
function afterBudget(verdict: SharedVerdict, run: RunState, config: AgentConfig, port: StagePort): StageEvent | undefined {
  return budgetVerdict(verdict, run, config, port, ONE_MODEL_CALL) ?? openRound(run, config, port);
}

function budgetUnanswered(error: unknown, run: RunState): StageEvent {
  run.error = `the shared budget did not answer: ${errorMessage(error)}`;
  return 'model.failed';
}

/** Opens a round (the budgets allowed its model call) and asks the model. */
function openRound(run: RunState, config: AgentConfig, port: StagePort): undefined {
  run.round++;
  run.outcome = NO_OUTCOME;
  // The last round's output is observed already: a run that ends before this round's answer must not keep it twice.
  run.parsed = undefined;
  if (run.nudging) {
    run.messages.push({
      role: 'user',
      content:
        `You have used all ${config.maxRounds} rounds of tool calls. Reply now with your final answer ` +
        'in plain text, without an <ACTION> block; no more tools will run.',
    });
  }
  prepareRequest(run, config, port);
  return undefined;
}

/**
 * Lets `onBeforeModel` shape the request, then asks the model. A run continued in `deliberating`
 * before its model call was sent starts here.
 */
export function prepareRequest(run: RunState, config: AgentConfig, port: StagePort): void {
  const hook = config.onBeforeModel;
  if (hook === undefined) return askModel(run, config, port, undefined);
  let rewritten: ReturnType<typeof hook>;
  try {
    // A copy: the hook shapes this request only, never the run's history.
    rewritten = hook(structuredClone(run.messages), { agent: config.name, round: run.round, nudge: run.nudging, signal: port.signal });
  } catch (error) {
    return port.send(beforeModelFailed(error, run));
  }
  port.wait(rewritten, rewrote, beforeModelFailed);
}

/** Asks the model with what `onBeforeModel` gave: its messages, or the history when it gave none. */
function rewrote(messages: ChatMessage[] | undefined, run: RunState, config: AgentConfig, port: StagePort): StageEvent | undefined {
  if (messages === undefined) return askModel(run, config, port, undefined);
  const problem = messageListProblem(messages);
  if (problem !== undefined) return beforeModelFailed(new Error(problem), run);
  return askModel(run, config, port, messages);
}

/** Publishes `llm.request` and sends the round's request (`messages`: the hook's, in place of the history). */
function askModel(run: RunState, config: AgentConfig, port: StagePort, messages: ChatMessage[] | undefined): undefined {
  const { provider } = config;
  const data: TroupeEvents['llm.request'] = {
    round: run.round,
    provider: provider.name,
    messageCount: (messages ?? run.messages).length,
    nudge: run.nudging,
  };
  if (provider.model !== undefined) data.model = provider.model;
  run.cause = port.publish('llm.request', data).id;
  run.askedAt = port.now();
  if (messages !== undefined) run.askedMessages = messages;
  sendRequest(run, config, port);
  return undefined;
}

/** Sends the request the run has asked (a run continued in `deliberating` after its `llm.request` starts here). */
export function sendRequest(run: RunState, config: AgentConfig, port: StagePort): void {
  const { provider } = config;
  const request = modelRequest(run, config, port.abortFlag);
  if (config.stream && provider.stream !== undefined) {
    const xml = config.protocol === 'xml' ? parseOptionsFor(run, config, undefined) : undefined;
    port.wait(streamModel(provider, request, config.modelRetry, port.publisher, xml, port), streamedReply, modelFailed);
    return;
  }
  // A provider that answers at once (a scripted brain) is parsed in this same step.
  let first: ModelResponse | Promise<ModelResponse>;
  try {
    first = firstAttempt(provider, request);
  } catch (thrown) {
    firstAttemptFailed(thrown, run, config, port);
    return;
  }
  port.wait(first, responded, firstAttemptFailed);
}

/** The first attempt threw or rejected: the retries go on from here, with the request the run asked (made again, the same). */
function firstAttemptFailed(thrown: unknown, run: RunState, config: AgentConfig, port: StagePort): undefined {
  const request = modelRequest(run, config, port.abortFlag);
  port.wait(retryModel(config.provider, request, config.modelRetry, port.publisher, thrown, port), responded, modelFailed);
  return undefined;
}

function streamedReply(streamed: StreamedReply, run: RunState, config: AgentConfig, port: StagePort): StageEvent {
  run.streamed = streamed.parsed;
  return responded(streamed.response, run, config, port);
}

/** The request for the round the run has asked. */
function modelRequest(run: RunState, config: AgentConfig, source: SignalSource): ModelRequest {
  const request: ModelRequest = new RunRequest(run.askedMessages ?? run.messages, source, run.round, config.name);
  if (config.protocol === 'native' && config.toolSpecs !== undefined) {
    // The nudge still declares the tools (providers refuse a history of calls to undeclared
    // tools) but forbids calling them.
    request.tools = config.toolSpecs;
    request.toolChoice = run.nudging ? 'none' : config.toolChoice;
  }
  if (config.output?.native === true) request.output = { name: OUTPUT_NAME, schema: config.output.compiled.schema };
  if (config.protocol === 'xml' && !run.nudging) request.stop = STOP_AT_CLOSER;
  if (config.temperature !== undefined) request.temperature = config.temperature;
  if (config.maxTokens !== undefined) request.maxTokens = config.maxTokens;
  return request;
}

/** Records the model's reply and publishes `llm.response`. */
function responded(response: ModelResponse, run: RunState, config: AgentConfig, port: StagePort): StageEvent {
  // A provider that resolves something malformed fails the run; it must never hang it.
  if (response === null || typeof response !== 'object' || typeof response.text !== 'string') {
    run.error = `model call failed: the provider returned ${response === null ? 'null' : typeof response} instead of a response with text`;
    return 'model.failed';
  }
  // A provider that sent no usage (a stream stopped at `</ACTION>`, a server that reports none):
  // counted by the tokenizer, marked estimated.
  response = withUsage(response, requestOf(run, config), config.provider);
  if (response.usage !== undefined && config.price !== undefined) response = { ...response, usage: pricedUsage(response.usage, config.price) };
  run.response = response;
  // The model has now answered the last observation (a brain reads it from the run until here).
  run.observation = undefined;
  if (response.usage !== undefined) {
    addUsage(run.usage, response.usage);
    const spend = usageSpend(response.usage);
    chargeAll(config.budgets, spend);
  }
  const answeredAt = port.now();
  const data: TroupeEvents['llm.response'] = {
    round: run.round,
    text: response.text,
    finishReason: response.finishReason,
    latencyMs: answeredAt - run.askedAt!,
  };
  run.modelCalls = pushTo(run.modelCalls, modelCallRecord(run, answeredAt, response));
  if (response.toolCalls !== undefined) data.toolCalls = response.toolCalls;
  if (response.stopSequence !== undefined) data.stopSequence = response.stopSequence;
  if (response.passed === true) data.passed = true;
  if (response.usage !== undefined) data.usage = response.usage;
  run.askedAt = undefined;
  run.askedMessages = undefined;
  run.cause = port.publish('llm.response', data).id;
  return 'model.responded';
}

/** The round's entry in `result.modelCalls`: one literal, whatever it holds (a crowd makes one per turn). */
function modelCallRecord(run: RunState, endedAt: number, response: ModelResponse): ModelCallRecord {
  const { round, askedAt } = run;
  const startedAt = askedAt!;
  const { finishReason, usage } = response;
  const latencyMs = endedAt - startedAt;
  return run.nudging ? { round, nudge: true, startedAt, endedAt, latencyMs, finishReason, usage } : { round, startedAt, endedAt, latencyMs, finishReason, usage };
}

/** What the model was sent this round, as far as counting its tokens goes. */
function requestOf(run: RunState, config: AgentConfig): Pick<ModelRequest, 'messages' | 'tools'> {
  const messages = run.askedMessages ?? run.messages;
  return config.protocol === 'native' && config.toolSpecs !== undefined ? { messages, tools: config.toolSpecs } : { messages };
}

function modelFailed(error: unknown, run: RunState): StageEvent {
  run.error = `model call failed: ${errorMessage(error)}`;
  return 'model.failed';
}

/** A throwing or misbehaving `onBeforeModel` is the host's bug: the run fails, naming it. */
function beforeModelFailed(error: unknown, run: RunState): StageEvent {
  run.error = `onBeforeModel failed: ${errorMessage(error)}`;
  return 'model.failed';
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function messageListProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return `it must return an array of messages or undefined, got ${messages === null ? 'null' : typeof messages}`;
  if (messages.length === 0) return 'it returned no messages';
  for (const [index, message] of messages.entries()) {
    const { role, content, callId, name } = (message ?? {}) as { role?: unknown; content?: unknown; callId?: unknown; name?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role) || typeof content !== 'string') {
      return `message ${index} is not a chat message ({ role: 'system' | 'user' | 'assistant' | 'tool', content: string })`;
    }
    // Providers pair a tool message with its call by id: one without would be refused there, later and less clearly.
    if (role === 'tool' && (typeof callId !== 'string' || typeof name !== 'string')) return `message ${index} is a tool message without its callId and name`;
  }
  return undefined;
}

const STOP_AT_CLOSER: readonly string[] = Object.freeze(['</ACTION>']);
