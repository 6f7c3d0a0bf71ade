import type { LimitFunction } from 'p-limit';
import { ConfigError } from '../errors.js';
import type { Pacer } from './pacer.js';
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
 * `task` taking a slot of `limiter` first (none: `task` itself), held until the task says it is
 * done: on workers, turns take slots that every process of the run shares.
 */
export function limitedTask<T>(limiter: LimitFunction | undefined, task: (item: T, done: () => void) => void): (item: T, done: () => void) => void {
  if (limiter === undefined) return task;
  return (item, done) =>
    void limiter(() => new Promise<void>((ended) => task(item, () => (ended(), done())))).catch(
      // The slot never came (the queue was cleared as the scene stopped): the turn is not taken.
      done,
    );
}

/**
 * Runs `task` for every item, at most `window` in flight, in order; resolves when all are done. A
 * tick may wake a hundred thousand agents: starting them all at once would hold every run's state
 * in memory together. A task that finishes at once (calls `done` before returning) lets the next
 * start in the same loop, so a tick of synchronous turns costs no microtask per turn.
 *
 * With a `pacer`, the loop lets the event loop in when the pacer says the slice is spent, but only
 * between tasks while none is in flight: a task waiting on a promise would otherwise see the
 * pause move its settling before turns it used to follow, and the same seed must give the same
 * events. Tasks that wait on real I/O let the event loop in by themselves.
 */
export function inWindow<T>(items: readonly T[], window: number, task: (item: T, done: () => void) => void, pacer?: Pacer): Promise<void> {
  if (items.length === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let next = 0;
    let active = 0;
    let finished = 0;
    let driving = false;
    let pausing = false;
    const resume = (): void => {
      pausing = false;
      drive(true);
    };
    const done = (): void => {
      active--;
      if (++finished === items.length) resolve();
      else if (!driving && !pausing) drive();
    };
    // After a pause at least one task starts, however short the slice: progress before the next.
    const drive = (resumed = false): void => {
      driving = true;
      let mayPause = !resumed;
      while (active < window && next < items.length) {
        if (mayPause && active === 0 && pacer !== undefined && pacer.due()) {
          pausing = true;
          pacer.pause(resume);
          break;
        }
        mayPause = true;
        active++;
        task(items[next++]!, done);
      }
      driving = false;
    };
    drive();
  });
}
