import type { AgentStateName } from '../../../machines/agent.machine.js';
import { TroupeError } from '../../errors.js';
import type { BudgetSnapshot } from '../budget.js';
import type { MemorySnapshot } from '../memory/agent-memory.js';
import { decodePlain, encodePlain } from './plain-value.js';
import type { RunState } from './run-state.js';

/**
 * The version of `AgentSnapshot`. Bump it when a snapshot of the old shape cannot be read.
 *
 * Version history:
 * - 1: the first snapshot: machine state, run state, memory, generator, budgets.
 */
export const SNAPSHOT_VERSION = 1;

/**
 * An agent as plain data: what `agent.snapshot()` returns and `agent.resume()` continues from.
 * JSON-safe (image bytes and rich results are tagged objects), so it survives
 * `JSON.parse(JSON.stringify(snapshot))` unchanged.
 */
export type AgentSnapshot = {
  v: typeof SNAPSHOT_VERSION;
  kind: 'troupe.agent';
  agent: string;
  /** The machine's state when the snapshot was taken. */
  state: AgentStateName;
  /** Runs started so far (the next run's number is one more: call ids never repeat). */
  runs: number;
  /** The run in progress, encoded; absent between runs. */
  run?: unknown;
  memory?: unknown;
  /** The seeded generator's state, once it has been used. */
  random?: number[];
  /** The budgets the agent spends from, by name. */
  budgets?: BudgetSnapshot[];
};

/** What an agent is made of, decoded from a snapshot. */
export type AgentParts = {
  state: AgentStateName;
  runs: number;
  run: RunState | undefined;
  memory: MemorySnapshot | undefined;
  random: number[] | undefined;
  budgets: BudgetSnapshot[];
};

/** States a run can be snapshotted in: the ones where it waits for something outside the step. */
const RESTING: ReadonlySet<AgentStateName> = new Set<AgentStateName>([
  'idle',
  'deliberating',
  'repairing',
  'awaitingApproval',
  'dispatching',
  'awaitingResultApproval',
  'done',
  'failed',
]);

/** Writes an agent's parts as a snapshot: a deep, JSON-safe copy that shares nothing with the agent. */
export function writeSnapshot(agent: string, parts: AgentParts): AgentSnapshot {
  const snapshot: AgentSnapshot = { v: SNAPSHOT_VERSION, kind: 'troupe.agent', agent, state: parts.state, runs: parts.runs };
  if (parts.run !== undefined) snapshot.run = encodePlain(parts.run);
  if (parts.memory !== undefined) snapshot.memory = encodePlain(parts.memory);
  if (parts.random !== undefined) snapshot.random = [...parts.random];
  if (parts.budgets.length > 0) snapshot.budgets = parts.budgets.map((budget) => ({ ...budget }));
  return snapshot;
}

/** Checks a snapshot for `agent` and decodes it; throws a `TroupeError` naming what does not fit. */
export function readSnapshot(agent: string, snapshot: unknown): AgentParts {
  const fail = (problem: string): never => {
    throw new TroupeError('invalid_config', `agent "${agent}": cannot resume from this snapshot: ${problem}`);
  };
  if (snapshot === null || typeof snapshot !== 'object') return fail('it is not an object');
  const value = snapshot as Partial<AgentSnapshot>;
  if (value.kind !== 'troupe.agent') return fail('it is not an agent snapshot (kind is not "troupe.agent")');
  if (value.v !== SNAPSHOT_VERSION) return fail(`it has version ${String(value.v)}; this troupe reads version ${SNAPSHOT_VERSION}`);
  if (value.agent !== agent) return fail(`it is agent "${String(value.agent)}"'s`);
  if (typeof value.state !== 'string' || !RESTING.has(value.state)) return fail(`its state ${JSON.stringify(value.state)} is not one a run rests in`);
  if (!Number.isSafeInteger(value.runs) || value.runs! < 0) return fail('its run count is not an integer ≥ 0');
  const run = value.run === undefined ? undefined : (decodePlain(value.run) as RunState);
  const idle = value.state === 'idle' || value.state === 'done' || value.state === 'failed';
  if (idle !== (run === undefined)) return fail(idle ? `it holds a run but its state is ${value.state}` : `its state is ${value.state} but it holds no run`);
  if (run !== undefined && (typeof run !== 'object' || !Array.isArray(run.messages) || typeof run.round !== 'number' || typeof run.outcome !== 'object')) {
    return fail('its run is not a run state');
  }
  // Snapshots taken before runs kept their full records: the records start empty there (the
  // lists themselves are made at their first entry).
  if (run !== undefined) {
    const answered = run.messages.findIndex((message) => message.role === 'assistant');
    run.contextLength ??= answered === -1 ? run.messages.length : answered;
  }
  if (value.random !== undefined && !(Array.isArray(value.random) && value.random.every(Number.isSafeInteger))) return fail('its generator state is not a list of integers');
  return {
    state: value.state,
    runs: value.runs!,
    run,
    memory: value.memory === undefined ? undefined : (decodePlain(value.memory) as MemorySnapshot),
    random: value.random,
    budgets: Array.isArray(value.budgets) ? value.budgets : [],
  };
}
