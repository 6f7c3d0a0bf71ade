import { createBus, type Bus } from '../bus/bus.js';
import { randomIds, sequentialIds } from '../bus/ids.js';
import { ConfigError } from '../errors.js';
import type { ReplayHooks } from '../record/session-log.js';
import type { SceneClock } from './scene-clock.js';
import type { SceneOptions } from './types.js';

/**
 * The bus of scene `name`: the host's, or one of its own. A stepped scene runs on simulated time
 * (`elapsedMs`) with counted ids, so the same seed gives the same events. A log being resumed
 * (`replay`) decides the bus's ids and checks each event as it is made.
 */
export function sceneBus(name: string, options: SceneOptions, clock: SceneClock, elapsedMs: () => number, replay: ReplayHooks | undefined): Bus {
  if (replay !== undefined && options.bus !== undefined) throw new ConfigError(`scene "${name}": a resumed scene makes its own bus; leave \`bus\` out`);
  if (options.bus !== undefined) return options.bus;
  const ids = replay?.ids ?? options.ids;
  return createBus(
    clock.intervalMs === undefined ? { ids: ids ?? sequentialIds(name), clock: elapsedMs, tap: replay?.tap } : { ids: ids ?? randomIds(), tap: replay?.tap },
  );
}
