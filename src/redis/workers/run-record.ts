import type { Redis } from 'ioredis';
import type { SceneRecipe } from '../../bus/event-data.js';
import { CATALOGUE_VERSION } from '../../bus/events.js';
import { RedisError } from '../redis-error.js';
import type { RunKeys } from './keys.js';

/** The `format` of a run record. */
export const RUN_FORMAT = 'troupe-run';
/** The version of the run's layout in Redis (keys, scripts, entries). 1: the first. */
export const RUN_VERSION = 1;

/**
 * What the coordinator writes to `troupe:<scene>:run` for workers to build the same scene: the
 * recipe (as a session log's), the hash of the scene's code, the run's id and partition count.
 */
export type RunRecord = {
  format: typeof RUN_FORMAT;
  version: number;
  catalogue: number;
  run: string;
  scene: string;
  recipe: SceneRecipe;
  partitions: number;
  /** How long a turn may go unacknowledged before another worker takes it over. */
  claimIdleMs: number;
  state: 'running' | 'ended';
  /** The coordinator's last sign of life (wall ms): a run whose coordinator died is not joined. */
  beat: number;
  /** The scene's events stream key. */
  stream: string;
  /** The events stream's last entry when the run began: a worker replays the run's events after it. */
  eventsFrom: string;
};

/** Reads the run record; undefined when there is none (or it is not JSON). */
export async function readRunRecord(client: Redis, keys: RunKeys): Promise<RunRecord | undefined> {
  const text = await client.get(keys.run);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as RunRecord;
  } catch {
    return undefined;
  }
}

/**
 * Refuses to join a run this process cannot take part in: another layout or catalogue version,
 * or scene code other than the coordinator's (`definitionHash` is this process's).
 */
export function checkRunFits(record: RunRecord, definitionHash: string, where: string): void {
  const refuse = (why: string): never => {
    throw new RedisError('redis_run_mismatch', `cannot join run ${record.run} of scene "${record.scene}" at ${where}: ${why}`);
  };
  if (record.format !== RUN_FORMAT || record.version !== RUN_VERSION) refuse(`it is run layout ${String(record.format)} v${String(record.version)}; this troupe runs ${RUN_FORMAT} v${RUN_VERSION}`);
  if (record.catalogue !== CATALOGUE_VERSION) refuse(`its events are catalogue version ${record.catalogue}, and this troupe speaks version ${CATALOGUE_VERSION}`);
  const theirs = record.recipe.definitionHash;
  if (theirs !== definitionHash) refuse(`this worker's scene code differs from the coordinator's (definition hash ${theirs.slice(0, 12)}…, here ${definitionHash.slice(0, 12)}…): run the same code everywhere`);
}
