import type { AgentSnapshot } from '../agent/run/agent-snapshot.js';
import { decodePlain, encodePlain } from '../agent/run/plain-value.js';
import { SceneError } from '../errors.js';
import type { Budget } from '../agent/budget.js';
import type { Bus } from '../bus/bus.js';
import type { ReplayTarget } from '../record/replay-driver.js';
import type { JsonValue } from '../bus/event-data.js';
import type { MemberSnapshot, SceneMember } from './scene-member.js';
import type { SpeechLog } from './speech-log.js';
import type { WorldState } from './world-types.js';
import type { SceneSnapshot } from './types.js';

/**
 * The version of `SceneSnapshot`. Bump it when a snapshot of the old shape cannot be read.
 *
 * Version history:
 * - 1: the first scene snapshot: counters, world, speech, budget, members with their agents.
 */
export const SCENE_SNAPSHOT_VERSION: SceneSnapshot['v'] = 1;

export type { SceneSnapshot } from './types.js';

/** A member of a decoded snapshot: the scene's part and the agent's. */
export type MemberParts = MemberSnapshot & { agent: AgentSnapshot };

/** Writes a scene's parts as a snapshot: a deep, JSON-safe copy that shares nothing with the scene. */
export function writeSceneSnapshot(parts: Omit<SceneSnapshot, 'v' | 'kind' | 'members'> & { members: MemberParts[] }): SceneSnapshot {
  return { ...(encodePlain(parts) as Omit<SceneSnapshot, 'v' | 'kind'>), v: SCENE_SNAPSHOT_VERSION, kind: 'troupe.scene' };
}

/** Checks a snapshot for scene `name` and decodes its members; throws a `SceneError` naming what does not fit. */
export function readSceneSnapshot(name: string, snapshot: unknown): Omit<SceneSnapshot, 'members'> & { members: MemberParts[] } {
  const fail = (problem: string): never => {
    throw new SceneError(`scene "${name}": cannot restore this snapshot: ${problem}`);
  };
  if (snapshot === null || typeof snapshot !== 'object') return fail('it is not an object');
  const value = snapshot as Partial<SceneSnapshot>;
  if (value.kind !== 'troupe.scene') return fail('it is not a scene snapshot (kind is not "troupe.scene")');
  if (value.v !== SCENE_SNAPSHOT_VERSION) return fail(`it has version ${String(value.v)}; this troupe reads version ${SCENE_SNAPSHOT_VERSION}`);
  if (value.scene !== name) return fail(`it is scene "${String(value.scene)}"'s`);
  for (const key of ['tick', 'rotation', 'turns', 'failures', 'seed'] as const) {
    if (!Number.isSafeInteger(value[key])) return fail(`its ${key} is not an integer`);
  }
  if (!Array.isArray(value.members)) return fail('it has no members');
  return decodePlain(value) as Omit<SceneSnapshot, 'members'> & { members: MemberParts[] };
}

/** What a snapshot reads and a restore writes of a scene (its runtime, seen through this shape). */
export type DurableParts = {
  readonly name: string;
  readonly bus: Bus;
  readonly members: ReadonlyMap<string, SceneMember>;
  setPrivate(member: SceneMember, key: string, value: JsonValue, cause?: string): void;
  readonly seed: number;
  readonly world: WorldState;
  /** What the scene spends: its budget, or one without limits (usage is counted either way). */
  readonly meter: Budget;
  readonly order: readonly SceneMember[];
  readonly speech: SpeechLog;
  tickCount: number;
  rotation: number;
  turnCount: number;
  failures: number;
  hasStarted: boolean;
  startedAt: number | undefined;
};

/** The scene between ticks as plain data; throws a `SceneError` while a turn runs. */
export function sceneSnapshot(scene: DurableParts): SceneSnapshot {
  const busy = scene.order.find((member) => member.busy);
  if (busy !== undefined) throw new SceneError(`scene "${scene.name}": snapshot() is taken between ticks, and agent "${busy.name}" is taking its turn`);
  return writeSceneSnapshot({
    scene: scene.name,
    seed: scene.seed,
    tick: scene.tickCount,
    rotation: scene.rotation,
    turns: scene.turnCount,
    failures: scene.failures,
    started: scene.hasStarted,
    world: scene.world.snapshot(),
    speech: scene.speech.snapshot(),
    budget: scene.meter.snapshot(),
    members: scene.order.map((member) => ({ ...member.snapshot(), agent: member.runtime.snapshot() })),
  });
}

/** Takes up a snapshot in a scene of the same name and cast that has not started. */
export function restoreScene(scene: DurableParts, snapshot: unknown): void {
  if (scene.hasStarted) throw new SceneError(`scene "${scene.name}" has started; restore a snapshot into a scene before it runs`);
  const parts = readSceneSnapshot(scene.name, snapshot);
  const cast = (names: readonly string[]) => names.join(', ');
  const names = parts.members.map((member) => member.name);
  const ours = scene.order.map((member) => member.name);
  if (cast(names) !== cast(ours)) throw new SceneError(`scene "${scene.name}": the snapshot's cast (${cast(names)}) is not this scene's (${cast(ours)})`);
  scene.world.set('', parts.world as Record<string, JsonValue>);
  scene.speech.restore(parts.speech);
  if (parts.budget !== undefined) scene.meter.restore(parts.budget);
  parts.members.forEach((saved, index) => {
    const member = scene.order[index]!;
    member.restore(saved);
    // A member snapshot is taken between turns: its agent has no run, and resumes at once.
    void member.runtime.resume(saved.agent);
  });
  scene.tickCount = parts.tick;
  scene.rotation = parts.rotation;
  scene.turnCount = parts.turns;
  scene.failures = parts.failures;
  if (parts.started) {
    scene.hasStarted = true;
    scene.startedAt = performance.now();
  }
}

/** What a resume drives: the scene's agents, its bus, and how recorded changes are applied. */
export function sceneReplayTarget(scene: DurableParts): ReplayTarget {
  return {
    agent: (name) => scene.members.get(name)?.runtime,
    publish: (event) => void scene.bus.publish(event.type, event.data as never, { agent: event.agent, scene: event.scene, cause: event.cause }),
    applyWorld: (path, value, writer) => {
      if (value === undefined) scene.world.delete(path, writer);
      else scene.world.set(path, value as JsonValue, writer);
    },
    applyPrivate: (agent, path, value, cause) => {
      const member = scene.members.get(agent);
      if (member !== undefined) scene.setPrivate(member, path, value as JsonValue, cause);
    },
    requestApprovalsAgain: () => {
      let count = 0;
      for (const member of scene.members.values()) count += member.runtime.requestApprovalsAgain();
      return count;
    },
  };
}
