import { errorMessage } from '../../errors.js';
import type { SignalSource } from '../../llm/request-signal.js';
import { dispatchCallsNow, type CallResult, type DispatchOptions } from '../../tools/dispatch-calls.js';
import type { AgentConfig } from '../agent-config.js';
import { roundCalls, type RoundCall, type RunState } from '../run/run-state.js';
import { budgetVerdict, refusedByBudget } from './checkpoint.js';
import type { StageEvent, StagePort } from './stage-port.js';

/** Runs the round's approved calls; reports `dispatch.settled`, `aborted` or `dispatch.failed`. */
export function dispatch(run: RunState, config: AgentConfig, port: StagePort): void {
  // Aborted by a subscriber during parse or validate: nothing of the round starts.
  if (port.aborted) return port.send('aborted');
  const runnable = callsToRun(run);
  // The whole round fits the budgets or none of it runs.
  const spend = { toolCalls: runnable.length };
  const refused = refusedByBudget(run, config, port, spend);
  if (refused === true) return;
  if (refused !== false) return port.wait(refused, (verdict) => budgetVerdict(verdict, run, config, port, spend) ?? void runCalls(run, config, port, runnable), dispatchFailed, 'drop');
  runCalls(run, config, port, runnable);
}

/** The round's calls that may run and have not: approved (or ungated), with no result yet. */
export function callsToRun(run: RunState): RoundCall[] {
  return roundCalls(run).filter((entry) => entry.result === undefined && (entry.approval === undefined || (entry.approval.status === 'decided' && entry.approval.approved)));
}

/** Dispatches `runnable` and records each call's result on it (a run continued mid-dispatch starts here). */
export function runCalls(run: RunState, config: AgentConfig, port: StagePort, runnable: RoundCall[]): void {
  const { limiter, toolLimiters } = port.limiters();
  const options = new RunDispatchOptions(port.abortFlag);
  options.agent = config.name;
  options.publish = port.publisher;
  options.limiter = limiter;
  options.toolLimiters = toolLimiters;
  // An approval-gated call makes the whole round run in the model's order.
  options.sequential = anyGated(roundCalls(run));
  options.defaultTimeoutMs = config.toolTimeoutMs;
  // Durations on the bus clock: a run with an injected clock gives the same events every time.
  options.clock = config.bus.clock;
  options.bus = config.bus;
  if (config.scene !== undefined) options.scene = config.scene;
  if (config.log !== undefined) options.assertRecorded = config.log.assertRecorded;
  if (config.journal !== undefined) options.journal = config.journal;
  if (config.engine !== 'compiled') options.engine = config.engine;
  let work: ReturnType<typeof dispatchCallsNow>;
  try {
    work = dispatchCallsNow(
      runnable.map((entry) => ({ call: entry.call, tool: config.registry.get(entry.call.name)! })),
      options,
    );
  } catch (error) {
    return port.send(dispatchFailed(error, run));
  }
  // Aborted: the calls that ran are recorded, and the run ends `aborted`.
  port.wait(work, recordResults, dispatchFailed, 'report');
}

/** Gives each call that was run its result, in the model's order. */
function recordResults(results: CallResult[], run: RunState): StageEvent {
  // The calls without a result are the ones just run: the same list, in the same order.
  const ran = callsToRun(run);
  for (let index = 0; index < results.length; index++) ran[index]!.result = results[index];
  return 'dispatch.settled';
}

function anyGated(calls: readonly RoundCall[]): boolean {
  for (let index = 0; index < calls.length; index++) if (calls[index]!.approval !== undefined) return true;
  return false;
}

function dispatchFailed(error: unknown, run: RunState): StageEvent {
  run.error = `dispatch failed: ${errorMessage(error)}`;
  return 'dispatch.failed';
}

/**
 * A run's dispatch options. `signal` is the run's, made only if something waits on it: tools that
 * answer at once never do (a getter on the class, since a getter in an object literal costs more
 * than the dispatch it serves).
 */
class RunDispatchOptions implements DispatchOptions {
  declare agent: string;
  declare publish: DispatchOptions['publish'];
  declare limiter: DispatchOptions['limiter'];
  declare toolLimiters: DispatchOptions['toolLimiters'];
  declare sequential: boolean;
  declare defaultTimeoutMs: DispatchOptions['defaultTimeoutMs'];
  declare clock: DispatchOptions['clock'];
  declare bus: DispatchOptions['bus'];
  declare scene?: string;
  declare assertRecorded?: DispatchOptions['assertRecorded'];
  declare journal?: DispatchOptions['journal'];
  declare engine?: DispatchOptions['engine'];

  constructor(readonly abortFlag: SignalSource) {}

  get signal(): AbortSignal {
    return this.abortFlag.signal();
  }
}
