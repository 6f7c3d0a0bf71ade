import { ConfigError } from '../errors.js';
import type { ClockOptions } from './types.js';

/** A scene's clock, resolved: how long a tick is, and how often one happens in wall time. */
export type SceneClock = {
  mode: ClockOptions['mode'];
  /** Simulated milliseconds per tick. */
  tickMs: number;
  /** Wall milliseconds between ticks; undefined when ticks are stepped by hand. */
  intervalMs: number | undefined;
};

/** Checks clock options and fills in their defaults (stepped, 1 s ticks). */
export function resolveClock(options: ClockOptions | undefined, scene: string): SceneClock {
  const clock = options ?? { mode: 'stepped' };
  const tickMs = clock.tickMs ?? 1_000;
  if (!(typeof tickMs === 'number' && Number.isFinite(tickMs) && tickMs > 0)) {
    throw new ConfigError(`createScene "${scene}": clock.tickMs must be a number > 0, got ${String(tickMs)}`);
  }
  switch (clock.mode) {
    case 'stepped':
      return { mode: 'stepped', tickMs, intervalMs: undefined };
    case 'real':
      return { mode: 'real', tickMs, intervalMs: tickMs };
    case 'accelerated': {
      if (!(typeof clock.speed === 'number' && Number.isFinite(clock.speed) && clock.speed > 0)) {
        throw new ConfigError(`createScene "${scene}": clock.speed must be a number > 0, got ${String(clock.speed)}`);
      }
      return { mode: 'accelerated', tickMs, intervalMs: tickMs / clock.speed };
    }
    default:
      throw new ConfigError(`createScene "${scene}": clock.mode must be 'stepped', 'real' or 'accelerated'`);
  }
}

/**
 * Runs `tasks` with at most `window` in flight, in order. A tick may wake a hundred thousand
 * agents; starting them all at once would hold every run's state in memory together.
 */
export async function inWindow<T>(items: readonly T[], window: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  const workers: Promise<void>[] = [];
  for (let index = 0; index < Math.min(window, items.length); index++) workers.push(worker());
  await Promise.all(workers);
}
