import pLimit from 'p-limit';
import type { AgentStateName } from '../../machines/agent.machine.js';
import type { RepairSource, TroupeEvents } from '../bus/events.js';
import { parseNativeCalls } from '../protocol/parse-native.js';
import { parseOutput, type ParseOptions } from '../protocol/parse-output.js';
import type { MalformedProblem, ParsedOutput, ToolCall } from '../protocol/types.js';
import { createToolLimiters } from '../tools/acquire-slot.js';
import { dispatchTurnNow, type CallResult } from '../tools/dispatch-turn.js';
import { checkLooseArguments, looseArguments, rawCallWith } from '../tools/loose-arguments.js';
import type { LooseArgs } from '../tools/types.js';
import { validateCalls } from '../tools/validate-calls.js';
import { freezeArgs } from '../tools/freeze-args.js';
import type { AgentRuntime } from './agent-runtime.js';
import { callModel } from './call-model.js';
import { streamModel } from './stream-model.js';
import type { ChatMessage, MessageImage, ModelRequest, ModelResponse, Provider } from '../llm/types.js';
import type { RepairContext, RepairedCall } from './agent-options.js';
import { IMAGES_FOLLOW, callImages, describeCall, observationText, repairNote, wrapObservation, type ObservationOptions, type ObservedCall, type RepairedNote, type TurnOutcome } from './observation-text.js';
import type { RunState, Turn, TurnCall } from './run-state.js';
import { hashKey, stableHash, stableKey } from './stable-key.js';
import { addUsage, budgetedModelCall, ONE_MODEL_CALL, spendFrom, type Spend } from './budget.js';

/**
 * The stages the machine names, as functions of the runtime. Only `deliberate`, the approval
 * checks and `dispatch` go asynchronous; they report back to the machine with an event.
 */

/** Publishes `agent.state` for the state just entered. */
export function entered(host: AgentRuntime, state: AgentStateName): void {
  const from = host.state;
  host.state = state;
  if (from !== state) host.publish('agent.state', STATE_CHANGES[from][state]);
}

const STATE_NAMES: readonly AgentStateName[] = [
  'idle',
  'deliberating',
  'parsing',
  'validating',
  'repairing',
  'awaitingApproval',
  'dispatching',
  'awaitingResultApproval',
  'observing',
  'done',
  'failed',
];

/**
 * Every `agent.state` payload, made once and frozen: a scene of many agents publishes several
 * per turn, and a shared immutable object costs no allocation.
 */
const STATE_CHANGES = Object.freeze(
  Object.fromEntries(
    STATE_NAMES.map((from) => [from, Object.freeze(Object.fromEntries(STATE_NAMES.map((to) => [to, Object.freeze({ from, to })])))]),
  ),
) as Readonly<Record<AgentStateName, Readonly<Record<AgentStateName, TroupeEvents['agent.state']>>>>;

const NO_TURN: RunState['turn'] = Object.freeze({ kind: 'none' });

/** Asks the model for the next turn; reports `model.responded` or `model.failed`. */
export function deliberate(host: AgentRuntime): void {
  const run = active(host);
  // Aborted before the first call (a signal that was already aborted): ask the model nothing.
  if (run.controller.signal.aborted) return host.send(run, 'aborted');
  if (refusedByBudget(host, run, ONE_MODEL_CALL)) return;
  run.round++;
  run.turn = NO_TURN;
  // The last round's output is observed already: a run that ends before this round's answer must not keep it twice.
  run.parsed = undefined;
  if (run.nudging) {
    run.messages.push({
      role: 'user',
      content:
        `You have used all ${host.config.maxRounds} rounds of tool calls. Reply now with your final answer ` +
        'in plain text, without an <ACTION> block; no more tools will run.',
    });
  }
  const request = host.request(run);
  const hook = host.config.onBeforeModel;
  if (hook === undefined) return ask(host, run, request);
  let rewritten: ReturnType<typeof hook>;
  try {
    // A copy: the hook shapes this request only, never the run's history.
    rewritten = hook(structuredClone(run.messages), { agent: host.name, round: run.round, nudge: run.nudging, signal: run.controller.signal });
  } catch (error) {
    return beforeModelFailed(host, run, error);
  }
  const onMessages = (messages: ChatMessage[] | undefined): void => {
    if (host.current !== run || run.finished || run.controller.signal.aborted) return;
    if (messages === undefined) return ask(host, run, request);
    const problem = messageListProblem(messages);
    if (problem !== undefined) return beforeModelFailed(host, run, new Error(problem));
    ask(host, run, { ...request, messages });
  };
  if (rewritten instanceof Promise) {
    rewritten.then(onMessages, (error: unknown) => {
      if (host.current === run && !run.finished && !run.controller.signal.aborted) beforeModelFailed(host, run, error);
    });
  } else {
    onMessages(rewritten);
  }
}

/** A throwing or misbehaving `onBeforeModel` is the host's bug: the run fails, naming it. */
function beforeModelFailed(host: AgentRuntime, run: RunState, error: unknown): void {
  run.error = `onBeforeModel failed: ${error instanceof Error ? error.message : String(error)}`;
  host.send(run, 'model.failed');
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

/** Sends the request to the model and reports its answer to the machine. */
function ask(host: AgentRuntime, run: RunState, request: ModelRequest): void {
  const { provider } = host.config;
  const requestData: TroupeEvents['llm.request'] = { round: run.round, provider: provider.name, messageCount: request.messages.length, nudge: run.nudging };
  if (provider.model !== undefined) requestData.model = provider.model;
  const requested = host.publish('llm.request', requestData);
  run.cause = requested.id;
  const startedAt = host.config.bus.clock();
  const onResponse = (response: ModelResponse): void => {
    if (host.current !== run || run.finished) return;
    // A provider that resolves something malformed fails the run; it must never hang it.
    if (response === null || typeof response !== 'object' || typeof response.text !== 'string') {
      run.error = `model call failed: the provider returned ${response === null ? 'null' : typeof response} instead of a response with text`;
      return host.send(run, 'model.failed');
    }
    run.response = response;
    // The model has now answered the last observation (a brain reads it from the run until here).
    run.observation = undefined;
    if (response.usage !== undefined) {
      addUsage(run.usage, response.usage);
      for (const budget of host.config.budgets) budget.charge({ tokens: response.usage.totalTokens });
    }
    const data: TroupeEvents['llm.response'] = {
      round: run.round,
      text: response.text,
      finishReason: response.finishReason,
      latencyMs: host.config.bus.clock() - startedAt,
    };
    if (response.toolCalls !== undefined) data.toolCalls = response.toolCalls;
    if (response.usage !== undefined) data.usage = response.usage;
    run.cause = host.publish('llm.response', data).id;
    host.send(run, 'model.responded');
  };
  const onError = (error: unknown): void => {
    if (run.controller.signal.aborted) return host.send(run, 'aborted');
    run.error = `model call failed: ${error instanceof Error ? error.message : String(error)}`;
    host.send(run, 'model.failed');
  };
  if (host.config.stream && provider.stream !== undefined) {
    const xml = host.config.protocol === 'xml' ? parseOptionsFor(host, run, undefined) : undefined;
    streamModel(provider, request, host.config.modelRetry, host.publishAsAgent, xml).then((turn) => {
      if (host.current !== run || run.finished) return;
      run.streamed = turn.parsed;
      onResponse(turn.response);
    }, onError);
    return;
  }
  const answer = callModel(provider, request, host.config.modelRetry, host.publishAsAgent);
  // A provider that answered at once (a scripted brain) is parsed in this same step.
  if (answer instanceof Promise) answer.then(onResponse, onError);
  else onResponse(answer);
}

/** Turns the model's output into visible text and raw calls (or a malformed-block problem). */
export function parse(host: AgentRuntime): void {
  const run = active(host);
  const response = run.response!;
  const { protocol, limits, logger } = host.config;
  let parsed: ParsedOutput;
  if (protocol === 'xml') {
    if (response.toolCalls?.length) {
      logger.warn({ agent: host.name, calls: response.toolCalls.length }, 'native tool calls ignored: protocol is xml');
    }
    // A streamed turn was parsed as it arrived, by the scanner that found the visible text.
    parsed = run.streamed ?? parseOutput(response.text, parseOptionsFor(host, run, response));
    run.streamed = undefined;
  } else {
    if (/<ACTION[\s>]/i.test(response.text)) {
      logger.warn({ agent: host.name }, 'an <ACTION> block in the text is ignored: protocol is native');
    }
    parsed = parseNativeCalls(response, { limits, callId: callIdsFor(host, run) });
  }
  run.parsed = parsed;
  run.messages.push(
    response.toolCalls?.length && protocol === 'native'
      ? { role: 'assistant', content: response.text, toolCalls: response.toolCalls }
      : { role: 'assistant', content: rawAssistantText(response.text, response.stopSequence) },
  );
  if (parsed.text !== '') {
    run.text = parsed.text;
    host.publish('agent.said', { text: parsed.text });
  }
  if (parsed.trailing !== undefined) host.publish('action.trailing', { text: parsed.trailing });
  if (run.nudging || response.passed === true) return;
  if (parsed.problem !== undefined) {
    reportMalformed(host, run, parsed.problem);
  } else if (parsed.calls.length === 0 && parsed.text === '') {
    run.turn = { kind: 'empty' };
  }
}

/** The call ids of this round: `<agent>/<run>.<round>.<n>`, stable for the log and for resume. */
function callIdsFor(host: AgentRuntime, run: RunState): (index: number) => string {
  return (index) => `${host.name}/${run.number}.${run.round}.${index + 1}`;
}

/** How the XML of this round is parsed; `response` adds how the model stopped. */
function parseOptionsFor(host: AgentRuntime, run: RunState, response: ModelResponse | undefined): ParseOptions {
  const options: ParseOptions = { limits: host.config.limits, callId: callIdsFor(host, run) };
  if (response !== undefined) {
    options.finishReason = response.finishReason;
    if (response.stopSequence !== undefined) options.stopSequence = response.stopSequence;
  }
  return options;
}

/** Checks names and arguments of the turn's calls; marks the calls that need approval. */
export function validate(host: AgentRuntime): void {
  const run = active(host);
  const calls = run.parsed!.calls;
  const { registry, allowed, limits } = host.config;
  const outcome = validateCalls(calls, { registry, limits, ...(allowed !== undefined && { allowed }) });
  if (!outcome.ok) {
    const problem = outcome.problem;
    if (problem.kind === 'malformed') {
      reportMalformed(host, run, problem.problem);
    } else {
      const rejection = problem.rejection;
      run.cause = host.publish('tool.rejected', rejection).id;
      run.turn = { kind: 'rejected', rejection, callCount: calls.length };
      run.lastIssues = rejection.issues;
    }
    return;
  }
  acceptCalls(host, run, outcome.value, undefined);
}

/** Publishes `action.parsed` for the validated calls and makes them the turn's. */
function acceptCalls(host: AgentRuntime, run: RunState, validated: ToolCall[], repaired: RepairedNote | undefined): void {
  // Frozen from here on: the arguments a subscriber, a predicate or an approver sees are the ones that run.
  const calls = validated.map((call) => ({ ...call, args: freezeArgs(call.args) }));
  run.cause = host.publish('action.parsed', {
    calls: calls.map(({ callId, name, args }) => ({ callId, name, args })),
  }).id;
  const entries: TurnCall[] = calls.map((call) => {
    const tool = host.config.registry.get(call.name)!;
    return { call, tool, gate: approvalGate(tool.needsApproval, call.args) };
  });
  run.turn = repaired === undefined ? { kind: 'calls', calls: entries } : { kind: 'calls', calls: entries, repaired };
}

/**
 * Tries the agent's repair on the rejected call, once per turn. A fix is validated again with the
 * rest of the block; it reports `repair.settled` whatever came of it, and the guards read the turn.
 */
export function repair(host: AgentRuntime): void {
  const run = active(host);
  const { rejection } = run.turn as Extract<Turn, { kind: 'rejected' }>;
  const calls = run.parsed!.calls;
  const index = calls.findIndex((candidate) => candidate.callId === rejection.callId);
  const raw = calls[index];
  const { callId, name, issues } = rejection;
  let by: RepairSource = 'function';
  const failed = (reason: string): void => {
    if (host.current !== run || run.finished || run.controller.signal.aborted) return;
    run.cause = host.publish('tool.repair.failed', { callId, name, by, reason, issues }).id;
    host.send(run, 'repair.settled');
  };
  if (raw === undefined) return failed('the rejected call is not in the block');
  const { limits } = host.config;
  const loose = looseArguments(raw, limits);
  const before: LooseArgs = loose.ok ? loose.value : {};
  const context: RepairContext = {
    agent: host.name,
    round: run.round,
    signal: run.controller.signal,
    call: { callId, name: raw.name, format: raw.format, args: structuredClone(before), ...(raw.format === 'native' && { argumentsText: raw.argumentsText }) },
    tools: toolViews(host),
    complete: (messages, options) => {
      by = 'model';
      return repairModelCall(host, run, messages, options);
    },
  };
  const onFix = (fixed: RepairedCall | undefined): void => {
    if (host.current !== run || run.finished || run.controller.signal.aborted) return;
    if (fixed === undefined || fixed === null) return failed('the repair offered no fix');
    if (typeof fixed !== 'object' || (fixed.name !== undefined && typeof fixed.name !== 'string')) {
      return failed('the repair must return { name?: string, args: object } or undefined');
    }
    const checked = checkLooseArguments(fixed.args, limits, 'repair');
    if (!checked.ok) return failed(checked.problem);
    const { registry, allowed } = host.config;
    const outcome = validateCalls(calls.with(index, rawCallWith(raw, checked.value, fixed.name ?? raw.name)), {
      registry,
      limits,
      ...(allowed !== undefined && { allowed }),
    });
    if (!outcome.ok) {
      const problem = outcome.problem;
      return failed(`the repaired block was rejected too: ${problem.kind === 'malformed' ? problem.problem.message : problem.rejection.message}`);
    }
    const after = outcome.value[index]!;
    run.repairs++;
    const view = { name: after.name, args: after.args };
    run.cause = host.publish('tool.repaired', { callId, name, before: { name: raw.name, args: before }, after: view, by, issues }).id;
    acceptCalls(host, run, outcome.value, { callId, name: raw.name, problem: rejection.message, after: view });
    host.send(run, 'repair.settled');
  };
  const reject = (error: unknown): void => failed(`the repair threw: ${error instanceof Error ? error.message : String(error)}`);
  let answer: ReturnType<NonNullable<typeof host.config.repair>>;
  try {
    answer = host.config.repair!(rejection, context);
  } catch (error) {
    return reject(error);
  }
  if (answer instanceof Promise) answer.then(onFix, reject);
  else onFix(answer);
}

/** The agent's tools as a repair sees them (the ones it may call). */
function toolViews(host: AgentRuntime): RepairContext['tools'] {
  const { registry, allowed } = host.config;
  return registry
    .tools()
    .filter((tool) => allowed === undefined || allowed.has(tool.name))
    .map(({ name, description, parameters }) => ({ name, description, parameters }));
}

/** A repair's extra model call: budgeted and counted like a deliberation, not published as one. */
async function repairModelCall(
  host: AgentRuntime,
  run: RunState,
  messages: ChatMessage[],
  options: { provider?: Provider; maxTokens?: number } = {},
): Promise<ModelResponse> {
  // Refused at once, before anything is spent: an aborted run makes no more model calls.
  run.controller.signal.throwIfAborted();
  const request: ModelRequest = { messages, signal: run.controller.signal, round: run.round, agent: host.name };
  if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens;
  const response = await budgetedModelCall(host.config.budgets, options.provider ?? host.config.provider, request, '');
  if (response?.usage !== undefined && host.current === run) addUsage(run.usage, response.usage);
  return response;
}

/** Publishes `action.malformed` and makes the turn one the model must correct. */
function reportMalformed(host: AgentRuntime, run: RunState, problem: MalformedProblem): void {
  const { category, message, offset } = problem;
  run.cause = host.publish('action.malformed', {
    code: category,
    category,
    message,
    ...(offset !== undefined && { offset }),
  }).id;
  run.turn = { kind: 'malformed', problem };
}

function approvalGate(needsApproval: TurnCall['tool']['needsApproval'], args: TurnCall['call']['args']): TurnCall['gate'] {
  if (needsApproval === undefined || needsApproval === false) return false;
  if (needsApproval === true) return true;
  try {
    const answer = needsApproval(args);
    return answer instanceof Promise ? answer : answer === true;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Settles approval predicates, then parks on the calls a human must decide. */
export function requestApproval(host: AgentRuntime): void {
  const run = active(host);
  const entries = (run.turn as Extract<RunState['turn'], { kind: 'calls' }>).calls;
  // Predicates may be async: settle them all, then park on whatever still needs a human.
  Promise.all(
    entries.map(async (entry) => {
      if (entry.gate instanceof Promise) {
        try {
          entry.gate = (await entry.gate) === true;
        } catch (error) {
          entry.gate = error instanceof Error ? error : new Error(String(error));
        }
      }
    }),
  ).then(() => {
    for (const entry of entries) {
      // A subscriber may abort, or even finish and restart, the run between two requests.
      if (host.current !== run || run.finished || run.controller.signal.aborted) return;
      if (entry.decision !== undefined) continue;
      if (entry.gate instanceof Error) {
        // Fail closed: a predicate that throws never lets its call run.
        decide(host, run, entry, false, `approval check failed: ${entry.gate.message}`, false);
      } else if (entry.gate === true) {
        // Pending from here on: approve() before its request is published is refused.
        entry.argsKey = stableKey(entry.call.args);
        entry.argsHash = hashKey(entry.argsKey);
        const { callId, name, args } = entry.call;
        host.publish('tool.approval.requested', { callId, name, args, argsHash: entry.argsHash });
      }
    }
    if (host.current === run && !run.finished) settleApprovalsIfDone(host, run);
  });
}

/** Records the host's decision on a parked call; the turn moves on once every call is decided. */
export function decide(host: AgentRuntime, run: RunState, entry: TurnCall, approved: boolean, reason: string, asked = true): boolean {
  entry.decision = { approved, reason };
  // The decision holds at once; it is announced (and the turn moves on) once the caller returns,
  // so an approve() from inside a `tool.approval.requested` subscriber never overtakes that event.
  queueMicrotask(() => {
    if (host.current !== run || run.finished) return;
    const { callId, name } = entry.call;
    entry.announced = true;
    if (asked) host.publish('tool.approval.resolved', { callId, name, approved, reason });
    if (!approved) {
      host.publish('tool.rejected', { callId, name, code: 'denied', category: 'denied', issues: [], message: reason });
    }
    settleApprovalsIfDone(host, run);
  });
  return true;
}

function settleApprovalsIfDone(host: AgentRuntime, run: RunState): void {
  const turn = run.turn;
  if (turn.kind !== 'calls') return;
  const waiting = turn.calls.some((entry) => entry.gate !== false && entry.announced !== true);
  if (!waiting && host.state === 'awaitingApproval') host.send(run, 'approval.settled');
}

/** The turn's completed calls whose tool may hold results for approval, with their results. */
export function heldResults(turn: Extract<Turn, { kind: 'calls' }>): { entry: TurnCall; result: Extract<CallResult, { status: 'completed' }> }[] {
  const results = turn.results ?? [];
  const held: { entry: TurnCall; result: Extract<CallResult, { status: 'completed' }> }[] = [];
  let next = 0;
  for (const entry of turn.calls) {
    // Results line up with the calls that ran: denied calls have none.
    if (entry.decision !== undefined && !entry.decision.approved) continue;
    const result = results[next++];
    const gate = entry.tool.needsResultApproval;
    if (result?.status === 'completed' && gate !== undefined && gate !== false) held.push({ entry, result });
  }
  return held;
}

/** Settles result-approval predicates, then holds the results a human must decide. */
export function requestResultApproval(host: AgentRuntime): void {
  const run = active(host);
  const held = heldResults(run.turn as Extract<Turn, { kind: 'calls' }>);
  for (const { entry, result } of held) entry.resultGate = resultGate(entry.tool.needsResultApproval, result.output, entry.call.args);
  Promise.all(
    held.map(async ({ entry }) => {
      if (entry.resultGate instanceof Promise) {
        try {
          entry.resultGate = (await entry.resultGate) === true;
        } catch (error) {
          entry.resultGate = error instanceof Error ? error : new Error(String(error));
        }
      }
    }),
  ).then(() => {
    for (const { entry, result } of held) {
      if (host.current !== run || run.finished || run.controller.signal.aborted) return;
      if (entry.resultDecision !== undefined) continue;
      if (entry.resultGate instanceof Error) {
        // Fail closed: a predicate that throws withholds the result.
        decideResult(host, run, entry, false, `result approval check failed: ${entry.resultGate.message}`);
      } else if (entry.resultGate === true) {
        entry.outputHash = stableHash(result.output);
        const { callId, name, args } = entry.call;
        host.publish('tool.result.approval.requested', { callId, name, args, output: result.output, outputHash: entry.outputHash });
      }
    }
    if (host.current === run && !run.finished) settleResultsIfDone(host, run);
  });
}

function resultGate(needs: TurnCall['tool']['needsResultApproval'], output: unknown, args: TurnCall['call']['args']): NonNullable<TurnCall['resultGate']> {
  if (needs === undefined || needs === false) return false;
  if (needs === true) return true;
  try {
    const answer = needs(output, args);
    return answer instanceof Promise ? answer : answer === true;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Records the host's decision on a held result; the turn is observed once every result is decided. */
export function decideResult(host: AgentRuntime, run: RunState, entry: TurnCall, approved: boolean, reason: string): boolean {
  entry.resultDecision = { approved, reason };
  // As with call approvals: announced after the caller returns, never ahead of the request event.
  queueMicrotask(() => {
    if (host.current !== run || run.finished) return;
    const { callId, name } = entry.call;
    entry.resultAnnounced = true;
    host.publish('tool.result.approval.resolved', { callId, name, approved, reason });
    settleResultsIfDone(host, run);
  });
  return true;
}

function settleResultsIfDone(host: AgentRuntime, run: RunState): void {
  const turn = run.turn;
  if (turn.kind !== 'calls') return;
  const waiting = heldResults(turn).some(({ entry }) => entry.resultGate !== false && entry.resultAnnounced !== true);
  if (!waiting && host.state === 'awaitingResultApproval') host.send(run, 'results.settled');
}

/** Runs the turn's approved calls; reports `dispatch.settled`, `aborted` or `dispatch.failed`. */
export function dispatch(host: AgentRuntime): void {
  const run = active(host);
  // Aborted by a subscriber during parse or validate: nothing of the turn starts.
  if (run.controller.signal.aborted) return host.send(run, 'aborted');
  const turn = run.turn as Extract<RunState['turn'], { kind: 'calls' }>;
  const runnable = turn.calls.filter((entry) => entry.decision === undefined || entry.decision.approved);
  // The whole turn fits the budgets or none of it runs.
  if (refusedByBudget(host, run, { toolCalls: runnable.length })) return;
  const { config } = host;
  const onResults = (results: CallResult[]): void => {
    if (host.current !== run || run.finished) return;
    turn.results = results;
    // Aborted: `finish` records the calls that ran, as it does for results held for approval.
    host.send(run, run.controller.signal.aborted ? 'aborted' : 'dispatch.settled');
  };
  const onFailure = (error: unknown): void => {
    run.error = `dispatch failed: ${error instanceof Error ? error.message : String(error)}`;
    host.send(run, 'dispatch.failed');
  };
  let outcome: CallResult[] | Promise<CallResult[]>;
  try {
    outcome = dispatchTurnNow(
      runnable.length === turn.calls.length ? turn.calls : runnable,
      {
        signal: run.controller.signal,
        agent: config.name,
        ...(config.scene !== undefined && { scene: config.scene }),
        publish: host.publishAsAgent,
        // Made at the first dispatch: an agent that never calls a tool never pays for them.
        limiter: (config.limiter ??= pLimit({ concurrency: config.concurrency, rejectOnClear: true })),
        toolLimiters: (config.toolLimiters ??= createToolLimiters()),
        // An approval-gated call makes the whole turn run in the model's order.
        sequential: turn.calls.some((entry) => entry.gate !== false),
        defaultTimeoutMs: config.toolTimeoutMs,
        // Durations on the bus clock: a run with an injected clock gives the same events every time.
        clock: config.bus.clock,
        bus: config.bus,
        ...(config.log !== undefined && { assertRecorded: config.log.assertRecorded.bind(config.log) }),
      },
    );
  } catch (error) {
    return onFailure(error);
  }
  // Tools that all answered at once: the observation follows in this same step, with no hop
  // through the microtask queue (the machine takes the event from its mailbox).
  if (outcome instanceof Promise) outcome.then(onResults, onFailure);
  else onResults(outcome);
}

/** Writes the turn's observation into the history and on the bus. */
export function observe(host: AgentRuntime): void {
  const run = active(host);
  const turn = run.turn;
  const options: ObservationOptions = { maxOutputChars: host.config.maxObservationChars };
  let outcome: TurnOutcome;
  let observed: ObservedCall[] = [];
  if (turn.kind === 'calls') {
    observed = recordCalls(run, turn.calls);
    outcome = turn.repaired === undefined ? { kind: 'calls', calls: observed } : { kind: 'calls', calls: observed, repaired: turn.repaired };
    run.corrections = 0;
    // Corrected: the earlier problems no longer describe how the run is going.
    run.lastIssues = undefined;
  } else if (turn.kind === 'malformed' || turn.kind === 'empty' || turn.kind === 'rejected') {
    outcome = turn;
    run.corrections++;
    if (turn.kind === 'malformed') run.lastIssues = [{ category: turn.problem.category, message: turn.problem.message }];
  } else {
    return;
  }
  const toolCalls = host.config.protocol === 'native' ? run.response?.toolCalls : undefined;
  const images = imageRoute(host, toolCalls !== undefined && toolCalls.length > 0);
  if (images !== 'none') options.images = 'attached';
  const { text: plain, ok } = observationText(outcome, options);
  // Compact history stores each result in a variable and names it under the observation.
  const text = host.config.memory?.observed(run, observed, plain) ?? plain;
  run.observation = { text, ok, calls: observed };
  run.cause = host.publish('agent.observation', { text, ok, round: run.round }).id;
  if (toolCalls?.length) {
    const shown: MessageImage[] = [];
    // Every native call needs its own tool message, whatever became of it.
    for (const call of toolCalls) {
      const entry = observed.find((item) => item.callId === call.id);
      const repaired = turn.kind === 'calls' && turn.repaired?.callId === call.id ? `${repairNote(turn.repaired)}\n` : '';
      const content = entry !== undefined ? repaired + describeCall(entry, options) : text;
      const message: ChatMessage = { role: 'tool', callId: call.id, name: call.name, content: host.config.memory?.toolMessage(call.id, content) ?? content };
      const attached = entry !== undefined && images !== 'none' ? callImages(entry) : [];
      if (attached.length > 0 && images === 'tool') message.images = attached;
      else shown.push(...attached);
      run.messages.push(message);
    }
    // A provider whose tool results are text only sees the images right after them.
    if (shown.length > 0) run.messages.push({ role: 'user', content: IMAGES_FOLLOW, images: shown });
  } else {
    const attached = images === 'none' ? [] : observed.flatMap(callImages);
    run.messages.push(attached.length > 0 ? { role: 'user', content: wrapObservation(text), images: attached } : { role: 'user', content: wrapObservation(text) });
  }
}


/** Where this turn's images go: in the tool messages, in a user message, or nowhere (placeholders). */
function imageRoute(host: AgentRuntime, native: boolean): 'tool' | 'user' | 'none' {
  const accepts = host.config.provider.accepts;
  if (native && accepts?.imagesInToolResults === true) return 'tool';
  return accepts?.imagesInUserMessages === true ? 'user' : 'none';
}

/** Adds the turn's calls to the run's history (once) and returns them as observed. */
function recordCalls(run: RunState, entries: TurnCall[]): ObservedCall[] {
  const turn = run.turn as Extract<RunState['turn'], { kind: 'calls' }>;
  const results = turn.results ?? [];
  const observed: ObservedCall[] = [];
  let next = 0;
  for (const entry of entries) {
    const { callId, name } = entry.call;
    if (entry.decision !== undefined && !entry.decision.approved) {
      observed.push({ status: 'denied', callId, name, reason: entry.decision.reason });
      run.history.push({ callId, name, round: run.round, outcome: 'denied', durationMs: 0, attempts: 0 });
      continue;
    }
    const result = results[next++];
    if (result === undefined) continue;
    run.dispatched++;
    if (entry.resultDecision !== undefined && !entry.resultDecision.approved) {
      // The call ran; the model hears only that its result was withheld, and why.
      observed.push({ status: 'result_rejected', callId, name, reason: entry.resultDecision.reason });
      run.history.push({ callId, name, round: run.round, outcome: 'result_rejected', durationMs: result.durationMs, attempts: result.attempts });
      continue;
    }
    observed.push(result);
    const outcome = result.status === 'completed' ? 'completed' : result.error.kind === 'aborted' ? 'aborted' : 'failed';
    run.history.push({ callId, name, round: run.round, outcome, durationMs: result.durationMs, attempts: result.attempts });
  }
  turn.results = undefined;
  return observed;
}

/** Ends the run in `done`: final answer, max rounds, or aborted. */
export function finish(host: AgentRuntime): void {
  const run = host.current;
  if (run === undefined) return;
  // Aborted during dispatch, or while results waited for approval: the calls ran, and the history says so.
  if (run.turn.kind === 'calls' && run.turn.results !== undefined) recordCalls(run, run.turn.calls);
  if (run.controller.signal.aborted) return host.settle(run, 'aborted');
  if (run.budgetRefusal !== undefined) return host.settle(run, 'budget');
  if (guards.turnOver(host)) return host.settle(run, 'turn_ended');
  if (run.nudging) return host.settle(run, 'max_rounds');
  host.settle(run, 'final_answer');
}

/** Ends the run in `failed`, naming why. */
export function fail(host: AgentRuntime): void {
  const run = host.current;
  if (run === undefined) return;
  if (run.error === undefined) {
    const last = run.lastIssues?.[0]?.message;
    run.error =
      `the model made ${run.corrections} invalid turns in a row (maxCorrections ${host.config.maxCorrections})` +
      (last !== undefined ? `; last problem: ${last}` : '');
  }
  host.settle(run, 'error');
}

/** The machine's guards, as functions of the runtime. */
export const guards = {
  nudged: (host: AgentRuntime) => active(host).nudging,
  malformed: (host: AgentRuntime) => {
    const kind = active(host).turn.kind;
    return kind === 'malformed' || kind === 'empty';
  },
  hasCalls: (host: AgentRuntime) => (active(host).parsed?.calls.length ?? 0) > 0,
  rejected: (host: AgentRuntime) => {
    const kind = active(host).turn.kind;
    return kind === 'rejected' || kind === 'malformed';
  },
  // Once per turn by construction: `repairing` never returns to `validating`.
  repairable: (host: AgentRuntime) => {
    const run = active(host);
    // A `tool.rejected` subscriber may have aborted the run: its `aborted` is on its way, and a
    // repair now would only spend a model call on a run that is over.
    return run.turn.kind === 'rejected' && host.config.repair !== undefined && !run.controller.signal.aborted;
  },
  needsResultApproval: (host: AgentRuntime) => {
    const turn = active(host).turn;
    if (turn.kind !== 'calls') return false;
    // Most turns have no such tool: ask without building the list.
    for (const entry of turn.calls) {
      const gate = entry.tool.needsResultApproval;
      if (gate !== undefined && gate !== false) return heldResults(turn).length > 0;
    }
    return false;
  },
  needsApproval: (host: AgentRuntime) => {
    const turn = active(host).turn;
    return turn.kind === 'calls' && turn.calls.some((entry) => entry.gate !== false);
  },
  anyApproved: (host: AgentRuntime) => {
    const turn = active(host).turn;
    return turn.kind === 'calls' && turn.calls.some((entry) => entry.decision === undefined || entry.decision.approved);
  },
  correctionsExhausted: (host: AgentRuntime) => active(host).corrections >= host.config.maxCorrections,
  abortRequested: (host: AgentRuntime) => active(host).controller.signal.aborted,
  turnOver: (host: AgentRuntime) => {
    const run = active(host);
    return run.turnRounds !== undefined && run.round >= run.turnRounds && run.observation !== undefined;
  },
  roundsExhausted: (host: AgentRuntime) => active(host).round >= host.config.maxRounds,
};

/**
 * Spends from the agent's budgets at a checkpoint. When one refuses, the run ends with `budget`
 * (announced once per budget on the bus) before anything of the checkpoint starts.
 */
function refusedByBudget(host: AgentRuntime, run: RunState, spend: Spend): boolean {
  const { budgets } = host.config;
  if (budgets.length === 0) return false;
  const budget = spendFrom(budgets, spend);
  if (budget === undefined) return false;
  const refusal = budget.exhausted!;
  run.budgetRefusal = refusal;
  run.error = refusal.message;
  if (budget.takeAnnouncement()) {
    const { message, kind, limit, used } = refusal;
    run.cause = host.publish('budget.exhausted', { budget: budget.name, kind, limit, used, message }).id;
  }
  host.send(run, 'budget.exhausted');
  return true;
}

/** Marks the next deliberation as the final-answer nudge. */
export function nudge(host: AgentRuntime): void {
  active(host).nudging = true;
}

function active(host: AgentRuntime): RunState {
  const run = host.current;
  if (run === undefined) throw new Error(`agent "${host.name}" has no active run`);
  return run;
}

/** The assistant's turn as it goes back into the history: the closer restored if a stop stripped it. */
function rawAssistantText(text: string, stopSequence: string | undefined): string {
  return stopSequence !== undefined && /^\s*<\/action\s*>\s*$/i.test(stopSequence) ? `${text}</ACTION>` : text;
}
