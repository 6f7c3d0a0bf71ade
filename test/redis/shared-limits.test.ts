import { afterAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/bus/index.js';
import { streamKeyOf } from '../../src/redis/index.js';
import { scene as counters } from './fixtures/counters-scene.js';
import { failWithoutRedisUnderCi, findRedis } from './redis-server.js';
import { COUNTERS, runInProcess, streamEvents, troupe } from './worker-processes.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

/** Runs the counters scene on a coordinator and two workers it starts; its summary line and the events stream. */
async function onTwoWorkers(name: string, options: readonly string[]) {
  const coordinator = troupe(['run', COUNTERS, '--redis', redis!.url, '--workers', '2', '--redis-name', name, '--partitions', '4', '--seed', '7', '--quiet', ...options]);
  expect(await coordinator.exited, coordinator.stderr()).toBe(0);
  return { summary: coordinator.stdout().trim(), events: await streamEvents(redis!.admin, streamKeyOf(name)) };
}

const peakOf = (summary: string): number => Number(/at most (\d+) calls at once/.exec(summary)?.[1]);

describe.runIf(redis !== undefined)("a scene's limits and budget on workers", () => {
  it('spends the scene budget once across workers: as many calls as in one process, one announcement, and the run ends with budget', async () => {
    const { summary, events } = await onTwoWorkers(redis!.scene('budget'), ['--npcs', '12', '--ticks', '5', '--budget-calls', '30']);
    const alone = await runInProcess(counters, 7, { npcs: 12, 'budget-calls': 30 }, 5);
    expect(alone.result.reason).toBe('budget');
    expect(alone.events.filter((event) => event.type === 'tool.completed')).toHaveLength(30);

    expect(events.filter((event) => event.type === 'tool.completed')).toHaveLength(30);
    // Each worker would have allowed 30 of its own without the shared budget: 60 calls were asked for.
    expect(events.filter((event) => event.type === 'action.parsed').length).toBeGreaterThan(30);
    const announced = events.filter((event) => event.type === 'budget.exhausted') as Envelope<'budget.exhausted'>[];
    expect(announced).toHaveLength(1);
    expect(announced[0]!.data).toMatchObject({ budget: 'counters', kind: 'toolCalls', limit: 30 });
    expect(summary).toMatch(/after 3 ticks, .* \(budget\)$/);
    expect(events.find((event) => event.type === 'scene.stopped')?.data).toMatchObject({ reason: 'budget' });
  }, 90_000);

  it('holds a tool limit across workers: never more calls at once than the scene allows, where without it there are more', async () => {
    const run = ['--npcs', '8', '--ticks', '2', '--delay-ms', '60', '--peak'];
    const limited = await onTwoWorkers(redis!.scene('limited'), [...run, '--bump-limit', '2']);
    const free = await onTwoWorkers(redis!.scene('free'), run);
    expect(peakOf(limited.summary)).toBe(2);
    expect(peakOf(free.summary)).toBeGreaterThan(2);
    expect(limited.events.filter((event) => event.type === 'tool.completed')).toHaveLength(16);
  }, 90_000);

  it('holds a turn limit across workers', async () => {
    const limited = await onTwoWorkers(redis!.scene('turns'), ['--npcs', '8', '--ticks', '2', '--delay-ms', '60', '--peak', '--turn-limit', '3']);
    expect(peakOf(limited.summary)).toBeLessThanOrEqual(3);
    expect(peakOf(limited.summary)).toBeGreaterThan(0);
    expect(limited.events.filter((event) => event.type === 'tool.completed')).toHaveLength(16);
  }, 90_000);
});
