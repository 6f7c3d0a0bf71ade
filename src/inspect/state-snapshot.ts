import type { Agent } from '../agent/agent-options.js';
import type { Envelope } from '../bus/events.js';
import type { Scene } from '../scene/types.js';
import type { AgentSummary } from './agent-tally.js';
import type { InspectorState } from './inspector-options.js';
import type { TickGate } from './tick-gate.js';

/** What `/state` is built from. */
export type StateSource = {
  mode: 'live' | 'log';
  scene: Scene | undefined;
  agents: ReadonlyMap<string, Agent>;
  gate: TickGate | undefined;
  /** The held events: the whole story for a log, or a bus without a scene. */
  events: () => readonly Envelope[];
  /** Each agent as every event seen tells it, evicted or held (the history's tally). */
  summaries?: () => readonly AgentSummary[];
};

/**
 * The state `/state` answers. A live scene answers for itself (each agent's machine state, turns
 * taken and how its last run ended, from the scene's own members); a log, or a bare bus, is folded
 * from its events: the scene's name, each agent as every event seen told it (evicted ones too),
 * the world as the `world.changed` events left it, the last tick.
 */
export function stateSnapshot(source: StateSource): InspectorState {
  const { scene, gate } = source;
  // Agents the host gave beside (or instead of) a scene: their own state, their turns from the events.
  const summaries = new Map((source.summaries?.() ?? []).map((summary) => [summary.name, summary]));
  const standalone = [...source.agents.values()].map((agent): AgentState => ({ ...summaryState(summaries.get(agent.name)), name: agent.name, state: agent.state as string }));
  if (scene !== undefined && source.mode === 'live') {
    return {
      mode: 'live',
      scene: scene.name,
      clock: scene.clockMode,
      paused: gate?.paused ?? false,
      started: scene.started,
      stopped: scene.stopped,
      canControl: true,
      agents: [...[...scene.agents.values()].map((member) => memberState(member)), ...standalone],
      world: scene.world.snapshot(),
      tick: scene.tick,
    };
  }
  const events = source.events();
  const folded = foldEvents(events);
  const live = source.mode === 'live';
  const agents = new Map<string, AgentState>();
  // In the order agents first appeared, evicted events included.
  for (const summary of summaries.values()) agents.set(summary.name, summaryState(summary));
  for (const [name, state] of folded.agents) agents.set(name, { ...summaryState(summaries.get(name)), name, state });
  for (const agent of standalone) agents.set(agent.name, agent);
  return {
    mode: source.mode,
    scene: folded.scene,
    clock: null,
    paused: false,
    started: folded.started,
    stopped: folded.stopped,
    canControl: live && source.agents.size > 0,
    agents: [...agents.values()],
    world: folded.world,
    tick: folded.tick,
    ...(!live && { ended: folded.ended, events: events.length, resumes: folded.resumes }),
  };
}

type AgentState = InspectorState['agents'][number];

function memberState(member: Scene['agents'] extends ReadonlyMap<string, infer T> ? T : never): AgentState {
  const state: AgentState = { name: member.name, state: member.agent.state as string, turns: member.turns };
  if (member.lastReason !== undefined) state.lastReason = member.lastReason;
  return state;
}

function summaryState(summary: AgentSummary | undefined): AgentState {
  if (summary === undefined) return { name: '', state: 'idle', turns: 0 };
  const state: AgentState = { name: summary.name, state: summary.state, turns: summary.turns };
  if (summary.lastReason !== undefined) state.lastReason = summary.lastReason;
  return state;
}

type Folded = {
  scene: string | null;
  agents: Map<string, string>;
  world: Record<string, unknown>;
  tick: number;
  started: boolean;
  stopped: boolean;
  /** How the events end: `interrupted` when the scene (or an agent's run) they started never ended. */
  ended: 'closed' | 'interrupted';
  resumes: NonNullable<InspectorState['resumes']>;
};

/**
 * Replays what the events say about the scene, in order. A log may hold several segments: the
 * run, then each resume (`log.opened` of kind `resume`), which takes up the scene where the one
 * before left it — stopped from outside, or cut off by a crash — so the scene is not stopped
 * after it. The events end `interrupted` when the scene started and did not stop, or, without a
 * scene, when an agent's run started and did not finish: the writer died with the log open.
 */
export function foldEvents(events: readonly Envelope[]): Folded {
  const folded: Folded = { scene: null, agents: new Map(), world: {}, tick: 0, started: false, stopped: false, ended: 'closed', resumes: [] };
  /** Agents whose last run started and did not finish. */
  const running = new Set<string>();
  for (const event of events) {
    if (folded.scene === null && typeof event.scene === 'string') folded.scene = event.scene;
    switch (event.type) {
      case 'log.opened':
        if (event.data.kind === 'resume') {
          folded.stopped = false;
          const { run, fromTick, checkpoint } = event.data;
          folded.resumes.push({ id: event.id, run: String(run), tick: folded.tick, fromTick: typeof fromTick === 'number' ? fromTick : 0, ...(typeof checkpoint === 'number' && { checkpoint }) });
        }
        break;
      case 'run.started':
        if (typeof event.agent === 'string') running.add(event.agent);
        break;
      case 'agent.finished':
        if (typeof event.agent === 'string') running.delete(event.agent);
        break;
      case 'agent.spawned':
        if (!folded.agents.has(event.data.name)) folded.agents.set(event.data.name, 'idle');
        break;
      case 'agent.state':
        if (typeof event.agent === 'string') folded.agents.set(event.agent, String(event.data.to));
        break;
      case 'scene.started':
      case 'scene.tick':
      case 'scene.stopped':
        if (event.type === 'scene.started') {
          folded.started = true;
          // The world the scene started from; the changes after it apply on top (older logs have none).
          if (isRecord(event.data.world)) folded.world = event.data.world as Record<string, unknown>;
        }
        if (event.type === 'scene.stopped') folded.stopped = true;
        if (typeof event.data.tick === 'number') folded.tick = Math.max(folded.tick, event.data.tick);
        break;
      case 'world.changed':
        if (typeof event.data.path === 'string') folded.world = setPath(folded.world, event.data.path.split('.'), event.data.value);
        break;
      default:
    }
  }
  const open = folded.started ? !folded.stopped : running.size > 0;
  folded.ended = open ? 'interrupted' : 'closed';
  return folded;
}

/**
 * `world` with `value` at `keys` (removed when undefined: the log drops `value` then). Containers
 * along the path are copied, never changed: they belong to earlier events' data. Keys are defined
 * as own data, so a log's `__proto__` key cannot reach a prototype.
 */
function setPath(world: Record<string, unknown>, keys: string[], value: unknown): Record<string, unknown> {
  if (keys.length === 1 && keys[0] === '') return isRecord(value) ? value : {};
  return setAt(world, keys, 0, value) as Record<string, unknown>;
}

function setAt(node: unknown, keys: readonly string[], index: number, value: unknown): unknown {
  if (index === keys.length) return value;
  const key = keys[index]!;
  const copy: Record<string, unknown> = isRecord(node) ? (Array.isArray(node) ? [...(node as unknown[])] : { ...node }) as Record<string, unknown> : {};
  if (index === keys.length - 1 && value === undefined) {
    if (Array.isArray(copy) && /^\d+$/.test(key)) copy.splice(Number(key), 1);
    else delete copy[key];
    return copy;
  }
  define(copy, key, setAt(Object.hasOwn(copy, key) ? copy[key] : undefined, keys, index + 1, value));
  return copy;
}

function define(node: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
