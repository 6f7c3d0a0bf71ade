import type { Tool } from '../../tools/types.js';
import type { AgentConfig } from '../agent-config.js';
import { errorMessage } from '../../errors.js';
import { stableHash } from '../stable-key.js';
import { roundCalls, type Approval, type RoundCall, type RunState } from '../run/run-state.js';
import type { StageEvent, StagePort } from './stage-port.js';

/**
 * One gate for the host's approvals, used twice: before a call runs (`needsApproval`) and before a
 * completed call's result reaches the model (`needsResultApproval`). A gate asks each tool's
 * predicate, requests a decision for what it holds (bound to the hash of the arguments or the
 * output), takes the host's decisions, announces them in order, and fails closed: a predicate that
 * throws refuses, never asks.
 */
export type Gate = {
  /** Where a round's call keeps this gate's approval. */
  readonly field: 'approval' | 'resultApproval';
  /** The machine state in which the gate waits for decisions. */
  readonly parked: 'awaitingApproval' | 'awaitingResultApproval';
  /** What the machine is told once every decision is announced. */
  readonly settled: Extract<StageEvent, 'approval.settled' | 'results.settled'>;
  /** How a predicate that threw is reported. */
  readonly checkFailed: string;
  /** The tool's predicate (or flag) for this call, when the gate applies to it. */
  predicate(entry: RoundCall, tool: Tool): Tool['needsApproval'] | Tool['needsResultApproval'];
  /** Calls the predicate for this call. */
  ask(predicate: (...args: never[]) => unknown, entry: RoundCall): unknown;
  /** What an approval binds to: the arguments, or the output. */
  subject(entry: RoundCall): unknown;
  /** Publishes the request for a decision. */
  request(entry: RoundCall, hash: string, port: StagePort): void;
  /** Publishes a decision (`asked` false: a predicate threw, and nobody was asked). */
  announce(entry: RoundCall, decision: Decided, port: StagePort): void;
};

type Decided = Extract<Approval, { status: 'decided' }>;
type Predicate = (...args: never[]) => unknown;

/** The gate in front of a call: `tool.approval.requested` and `.resolved`; a refusal is `tool.rejected` (`denied`). */
export const CALL_GATE: Gate = Object.freeze({
  field: 'approval',
  parked: 'awaitingApproval',
  settled: 'approval.settled',
  checkFailed: 'approval check failed',
  predicate: (_entry, tool) => tool.needsApproval,
  ask: (predicate, entry) => (predicate as (args: unknown) => unknown)(entry.call.args),
  subject: (entry) => entry.call.args,
  request(entry, hash, port) {
    const { callId, name, args } = entry.call;
    port.publish('tool.approval.requested', { callId, name, args, argsHash: hash });
  },
  announce(entry, { approved, reason, asked }, port) {
    const { callId, name } = entry.call;
    if (asked) port.publish('tool.approval.resolved', { callId, name, approved, reason });
    if (!approved) port.publish('tool.rejected', { callId, name, code: 'denied', category: 'denied', issues: [], message: reason });
  },
} satisfies Gate);

/** The gate in front of a completed call's result: `tool.result.approval.requested` and `.resolved`. */
export const RESULT_GATE: Gate = Object.freeze({
  field: 'resultApproval',
  parked: 'awaitingResultApproval',
  settled: 'results.settled',
  checkFailed: 'result approval check failed',
  // Failed calls have no result to hold.
  predicate: (entry, tool) => (entry.result?.status === 'completed' ? tool.needsResultApproval : undefined),
  ask: (predicate, entry) => (predicate as (output: unknown, args: unknown) => unknown)(outputOf(entry), entry.call.args),
  subject: outputOf,
  request(entry, hash, port) {
    const { callId, name, args } = entry.call;
    port.publish('tool.result.approval.requested', { callId, name, args, output: outputOf(entry), outputHash: hash });
  },
  // Announced even when nobody was asked: the result was withheld, and readers must see why.
  announce(entry, { approved, reason }, port) {
    const { callId, name } = entry.call;
    port.publish('tool.result.approval.resolved', { callId, name, approved, reason });
  },
} satisfies Gate);

const ASK: Approval = Object.freeze({ status: 'ask' });
const CHECKING: Approval = Object.freeze({ status: 'checking' });

/**
 * Asks the predicates of the round's calls whether to hold them. Answers that are known at once
 * are recorded at once; otherwise the gate waits for all of them, then moves on (`advance`).
 */
export function checkApprovals(gate: Gate, run: RunState, config: AgentConfig, port: StagePort, only?: (entry: RoundCall) => boolean): void {
  // Most rounds have no gated tool: nothing to ask, nothing to allocate.
  if (!anyPredicate(gate, run, config)) return settleNow(gate, run, port);
  const asked: RoundCall[] = [];
  const answers: unknown[] = [];
  for (const entry of roundCalls(run)) {
    if (only !== undefined && !only(entry)) continue;
    const predicate = gate.predicate(entry, config.registry.get(entry.call.name)!);
    if (predicate === undefined || predicate === false) continue;
    if (predicate === true) {
      entry[gate.field] = ASK;
      continue;
    }
    try {
      answers.push(gate.ask(predicate as Predicate, entry));
    } catch (error) {
      entry[gate.field] = refusal(gate, error);
      continue;
    }
    entry[gate.field] = CHECKING;
    asked.push(entry);
  }
  // Answers are taken together, so that requests go out in the model's order.
  const settled = answers.some(isThenable)
    ? Promise.all(answers.map((answer) => Promise.resolve(answer).then((value) => value === true, (error: unknown) => refusal(gate, error))))
    : answers.map((answer) => answer === true);
  port.wait(settled, (values) => {
    asked.forEach((entry, index) => {
      const value = values[index];
      if (value === true) entry[gate.field] = ASK;
      else if (value === false) delete entry[gate.field];
      else entry[gate.field] = value!;
    });
    return advance(gate, run, port);
  }, () => undefined);
}

function anyPredicate(gate: Gate, run: RunState, config: AgentConfig): boolean {
  if (!(gate.field === 'approval' ? config.gated.calls : config.gated.results)) return false;
  for (const entry of roundCalls(run)) {
    const predicate = gate.predicate(entry, config.registry.get(entry.call.name)!);
    if (predicate !== undefined && predicate !== false) return true;
  }
  return false;
}

/** With nothing to check: moves the gate on at once (it reports `settled` when it is parked). */
function settleNow(gate: Gate, run: RunState, port: StagePort): void {
  const event = advance(gate, run, port);
  if (event !== undefined) port.send(event);
}

/** Opens the gate of calls on entering its parked state; checks still running open it when they end. */
export function openCallGate(run: RunState, port: StagePort): void {
  if (roundCalls(run).some((entry) => entry.approval?.status === 'checking')) return;
  settleNow(CALL_GATE, run, port);
}

/**
 * Moves the gate on while it is parked: requests decisions in the model's order (stopping at a
 * call whose predicate has not answered), refuses the calls whose predicate threw, and reports
 * `settled` once every decision is announced.
 */
export function advance(gate: Gate, run: RunState, port: StagePort): StageEvent | undefined {
  if (port.state !== gate.parked) return undefined;
  for (const entry of roundCalls(run)) {
    const approval = entry[gate.field];
    if (approval === undefined) continue;
    if (approval.status === 'checking') return undefined;
    if (approval.status === 'ask') {
      // Pending from here on: a decision before its request is published is refused.
      const hash = stableHash(gate.subject(entry));
      entry[gate.field] = { status: 'requested', hash };
      gate.request(entry, hash, port);
    } else if (approval.status === 'refused') {
      decide(gate, run, entry, false, approval.reason, false, port);
    }
  }
  return settledIfDone(gate, run);
}

/**
 * Records a decision. It holds at once; it is announced (and the gate moves on) once the caller
 * returns, so that a decision taken inside a request's subscriber never overtakes that request.
 */
export function decide(gate: Gate, run: RunState, entry: RoundCall, approved: boolean, reason: string, asked: boolean, port: StagePort): void {
  entry[gate.field] = { status: 'decided', approved, reason, asked, announced: false };
  port.defer(() => announce(gate, run, entry, port));
}

/** Publishes a decision once, then moves the gate on. */
export function announce(gate: Gate, run: RunState, entry: RoundCall, port: StagePort): StageEvent | undefined {
  const approval = entry[gate.field];
  if (approval?.status !== 'decided' || approval.announced) return undefined;
  approval.announced = true;
  gate.announce(entry, approval, port);
  return advance(gate, run, port);
}

/** The calls whose decision the host is asked for and has not given. */
export function pendingEntries(gate: Gate, run: RunState | undefined): RoundCall[] {
  return run === undefined ? [] : roundCalls(run).filter((entry) => entry[gate.field]?.status === 'requested');
}

function settledIfDone(gate: Gate, run: RunState): StageEvent | undefined {
  for (const entry of roundCalls(run)) {
    const approval = entry[gate.field];
    if (approval !== undefined && !(approval.status === 'decided' && approval.announced)) return undefined;
  }
  return gate.settled;
}

/** A predicate that threw refuses: the gate fails closed. */
function refusal(gate: Gate, error: unknown): Approval {
  return { status: 'refused', reason: `${gate.checkFailed}: ${errorMessage(error)}` };
}

function outputOf(entry: RoundCall): unknown {
  return entry.result?.status === 'completed' ? entry.result.output : undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * Takes up a gate restored from a snapshot: predicates that were deciding are asked again,
 * decisions not yet announced are announced, and (`requestAgain`) requests still waiting are
 * published again for whoever decides now.
 */
export function reopenGate(gate: Gate, run: RunState, config: AgentConfig, port: StagePort, requestAgain: boolean): void {
  const checking = new Set<RoundCall>();
  for (const entry of roundCalls(run)) {
    const approval = entry[gate.field];
    if (approval?.status === 'checking') checking.add(entry);
    else if (approval?.status === 'requested' && requestAgain) gate.request(entry, approval.hash, port);
    else if (approval?.status === 'decided' && !approval.announced) port.defer(() => announce(gate, run, entry, port));
  }
  if (checking.size > 0) return checkApprovals(gate, run, config, port, (entry) => checking.has(entry));
  settleNow(gate, run, port);
}
