import type { Bus } from '../bus/bus.js';
import type { SceneMember } from './scene-member.js';
import type { ResolvedScene } from './scene-options.js';
import type { SpeechLog } from './speech-log.js';
import type { SceneResult, TickReport } from './types.js';

/** What the Redis workers drive of a scene made by `createScene`: its members, and a tick of some of them. */
export type PartedScene = {
  readonly bus: Bus;
  readonly members: ReadonlyMap<string, SceneMember>;
  readonly order: readonly SceneMember[];
  readonly speech: SpeechLog;
  readonly schedule: ResolvedScene['schedule'];
  tickCount: number;
  turnCount: number;
  failures: number;
  /** Tick `tick` for `members` alone: their timers, then their due turns; no `scene.tick`. */
  advancePart(tick: number, members: readonly SceneMember[]): Promise<TickReport>;
  /** Stops the scene, saying why (`detail`: a spent budget's refusal). */
  stop(reason: string, detail?: string): Promise<SceneResult>;
};
