import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scene as crowd } from '../../scenes/crowd/index.js';
import type { Envelope } from '../../src/bus/index.js';
import { streamKeyOf } from '../../src/redis/index.js';
import { ownerOf, partitionOf } from '../../src/redis/workers/partition.js';
import { scene as chorus } from './fixtures/chorus-scene.js';
import { scene as counters } from './fixtures/counters-scene.js';
import { failWithoutRedisUnderCi, findRedis } from './redis-server.js';
import { askedCalls, CHORUS, COUNTERS, eventually, holdFile, runInProcess, streamEvents, troupe } from './worker-processes.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

describe.runIf(redis !== undefined)('a scene across worker processes', () => {
  const url = redis?.url ?? '';

  it('runs to the end on a coordinator and three workers, asking for the same calls and ending in the same world as one process', async () => {
    const name = redis!.scene('counters');
    const workers = [1, 2, 3].map((n) => troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', `w${n}`]));
    const coordinator = troupe(['run', COUNTERS, '--redis', url, '--workers', '3', '--wait-workers', '--redis-name', name, '--partitions', '8', '--seed', '5', '--ticks', '5', '--npcs', '12', '--quiet']);
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    for (const worker of workers) expect(await worker.exited, worker.stderr()).toBe(0);

    const alone = await runInProcess(counters, 5, { npcs: 12, 'delay-ms': 0, 'hold-file': '', 'hold-at': 1 }, 5);
    // The summary holds the final world (read from the coordinator's replica) and the turns.
    expect(coordinator.stdout().trim()).toBe(alone.summary);
    expect(alone.summary).toMatch(/^counters \{"a":\d+,"b":\d+,"c":\d+\} after 5 ticks, 60 turns/);
    const events = await streamEvents(redis!.admin, streamKeyOf(name));
    expect(askedCalls(events)).toEqual(askedCalls(alone.events));
    // Every worker took part; each agent's events came from one worker per tick, after that tick's scene.tick.
    const byWorker = new Set(events.map((event) => event.worker).filter((worker) => worker !== undefined));
    expect([...byWorker].sort()).toEqual(['w1', 'w2', 'w3']);
    expect(events.filter((event) => event.type === 'scene.tick').map((event) => (event as Envelope<'scene.tick'>).data.tick)).toEqual([1, 2, 3, 4, 5]);
    expect(events.at(-1)?.type).toBe('scene.stopped');
    // world.changed events in the stream add up to the final counters: no update was lost or doubled.
    const changes = events.filter((event) => event.type === 'world.changed');
    expect(changes).toHaveLength(60);
    const total = JSON.parse(/counters (\{.*\}) after/.exec(alone.summary!)![1]!) as Record<string, number>;
    const calls = events.filter((event) => event.type === 'tool.completed') as Envelope<'tool.completed'>[];
    expect(calls.reduce((sum, event) => sum + (event.data.args.by as number), 0)).toBe(total.a! + total.b! + total.c!);
  }, 90_000);

  it('starts the workers itself with --workers N, and the crowd asks for the same steps as in one process', async () => {
    const name = redis!.scene('crowd');
    const coordinator = troupe(['run', 'crowd', '--redis', url, '--workers', '3', '--redis-name', name, '--seed', '9', '--ticks', '4', '--npcs', '40', '--quiet']);
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    expect(coordinator.stderr()).toMatch(/worker 1: .*joined run/);
    const alone = await runInProcess(crowd, 9, { npcs: 40 }, 4);
    const events = await streamEvents(redis!.admin, streamKeyOf(name));
    expect(askedCalls(events)).toHaveLength(160);
    expect(askedCalls(events)).toEqual(askedCalls(alone.events));
  }, 90_000);

  it('goes on when a worker is killed mid-tick: another takes its turns over, no call runs twice and none that completed is lost', async () => {
    const name = redis!.scene('takeover');
    const stream = streamKeyOf(name);
    const workers = [1, 2, 3].map((n) => troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', `k${n}`]));
    const coordinator = troupe(['run', COUNTERS, '--redis', url, '--workers', '3', '--wait-workers', '--redis-name', name, '--partitions', '6', '--claim-idle-ms', '400', '--seed', '3', '--ticks', '8', '--npcs', '12', '--delay-ms', '80', '--quiet']);
    // Killed mid-tick: once it has committed a tick, while a turn it holds has calls journaled as started.
    const midCall = async (consumer: string): Promise<boolean> => {
      for (let p = 0; p < 6; p++) {
        const held = (await redis!.admin.xpending(`troupe:${name}:turns:${p}`, 'workers', '-', '+', 10, consumer)) as unknown[];
        if (held.length === 0) continue;
        const journal = await redis!.admin.xrange(`troupe:${name}:journal:${p}`, '-', '+');
        const keys = (kind: string) => journal.filter(([, fields]) => fields[fields.indexOf('kind') + 1] === kind).map(([, fields]) => fields[fields.indexOf('key') + 1]);
        const ended = new Set(keys('ended'));
        if (keys('started').some((key) => !ended.has(key))) return true;
      }
      return false;
    };
    await eventually(async () => (await streamEvents(redis!.admin, stream)).some((event) => event.worker === 'k1') && (await midCall('k1')), 'worker k1 in the middle of its calls', 30_000, 5);
    workers[0]!.child.kill('SIGKILL');
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    expect(await workers[0]!.exited).toBe('SIGKILL');
    for (const worker of workers.slice(1)) expect(await worker.exited, worker.stderr()).toBe(0);
    expect(workers.slice(1).map((worker) => worker.stderr()).join('')).toMatch(/taken over/);

    const events = await streamEvents(redis!.admin, stream);
    // Every agent took every tick's turn, exactly once in the stream.
    const asked = askedCalls(events);
    expect(asked).toHaveLength(12 * 8);
    expect(new Set(asked.map((line) => line.split(' ').slice(0, 2).join(' '))).size).toBe(12 * 8);
    // A call the dead worker started and never finished is not run again: its outcome is unknown.
    const interrupted = events.filter((event) => event.type === 'tool.interrupted') as Envelope<'tool.interrupted'>[];
    expect(interrupted.length).toBeGreaterThan(0);
    for (const event of interrupted) expect(event.data.rerun).toBe(false);
    const completed = events.filter((event) => event.type === 'tool.completed') as Envelope<'tool.completed'>[];
    const sum = (list: readonly Envelope<'tool.completed' | 'tool.interrupted'>[]) => list.reduce((total, event) => total + (event.data.args.by as number), 0);
    const world = JSON.parse(/counters (\{.*\}) after/.exec(coordinator.stdout())![1]!) as Record<string, number>;
    const total = world.a! + world.b! + world.c!;
    // Each completed call's update is in the world once; an unknown one may or may not have landed.
    expect(total).toBeGreaterThanOrEqual(sum(completed));
    expect(total).toBeLessThanOrEqual(sum(completed) + sum(interrupted));
    expect(completed.length + interrupted.length).toBe(12 * 8);
  }, 90_000);

  it('moves partitions when workers join and leave between ticks, and the run asks for the same calls and ends in the same world', async () => {
    const name = redis!.scene('moves');
    const stream = streamKeyOf(name);
    const first = troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', 'm1']);
    const hold = holdFile();
    const coordinator = troupe(['run', COUNTERS, '--redis', url, '--workers', '1', '--wait-workers', '--redis-name', name, '--partitions', '8', '--seed', '11', '--ticks', '9', '--npcs', '10', '--delay-ms', '30', '--hold-file', hold.path, '--hold-at', '3', '--quiet']);
    const ticked = (tick: number) => async () => (await streamEvents(redis!.admin, stream)).some((event) => event.type === 'scene.tick' && (event as Envelope<'scene.tick'>).data.tick === tick);
    // Tick 3 is held until the two new workers have joined: they share the work from tick 4 on.
    await eventually(ticked(3), 'tick 3');
    const later = ['m2', 'm3'].map((id) => troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', id]));
    await eventually(async () => later.every((worker) => /joined run/.test(worker.stderr())), 'm2 and m3 to join');
    hold.release();
    await eventually(ticked(6), 'tick 6');
    // Leaves after the tick in progress; its partitions go on, from what it committed, on the others.
    first.child.kill('SIGTERM');
    expect(await first.exited, first.stderr()).toBe(143);
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    for (const worker of later) expect(await worker.exited, worker.stderr()).toBe(0);

    const alone = await runInProcess(counters, 11, { npcs: 10, 'delay-ms': 30, 'hold-file': '', 'hold-at': 1 }, 9);
    expect(coordinator.stdout().trim()).toBe(alone.summary);
    const events = await streamEvents(redis!.admin, stream);
    expect(askedCalls(events)).toEqual(askedCalls(alone.events));
    const workersOf = (tick: number) => new Set(events.filter((event) => event.type === 'agent.triggered' && (event as Envelope<'agent.triggered'>).data.tick === tick).map((event) => event.worker));
    expect([...workersOf(1)]).toEqual(['m1']);
    expect([...workersOf(9)].sort()).toEqual(['m2', 'm3']);
  }, 90_000);

  it('carries speech and triggers from one worker to the next, also for partitions that move, as one process does', async () => {
    const name = redis!.scene('chorus');
    const stream = streamKeyOf(name);
    const first = troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', 'c1']);
    const second = troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', 'c2']);
    const hold = holdFile();
    const coordinator = troupe(['run', CHORUS, '--redis', url, '--workers', '2', '--wait-workers', '--redis-name', name, '--partitions', '8', '--seed', '4', '--ticks', '8', '--voices', '9', '--delay-ms', '20', '--hold-file', hold.path, '--hold-at', '3', '--quiet']);
    const ticked = (tick: number) => async () => (await streamEvents(redis!.admin, stream)).some((event) => event.type === 'scene.tick' && (event as Envelope<'scene.tick'>).data.tick === tick);
    await eventually(ticked(3), 'tick 3');
    const third = troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', 'c3']);
    await eventually(async () => /joined run/.test(third.stderr()), 'c3 to join');
    hold.release();
    await eventually(ticked(5), 'tick 5');
    // c1 leaves once it holds its turns of the tick: a worker asked to leave finishes the tick it
    // has read. Turns it had not read yet would go to another worker, which runs them after its
    // own, so their agents could hear that tick's speech early (a limit the docs state).
    const readByFirst = async (): Promise<boolean> => {
      const assignment = JSON.parse((await redis!.admin.get(`troupe:${name}:assignment`)) ?? 'null') as { tick: number; owners: string[] } | null;
      if (assignment === null || assignment.tick < 5) return false;
      for (const [p, owner] of assignment.owners.entries()) {
        if (owner !== 'c1') continue;
        const pending = (await redis!.admin.xpending(`troupe:${name}:turns:${p}`, 'workers', '-', '+', 10, 'c1')) as unknown[];
        if (pending.length === 0 && (await redis!.admin.hget(`troupe:${name}:committed`, `${assignment.tick}:${p}`)) === null) return false;
      }
      return true;
    };
    await eventually(readByFirst, 'c1 to hold its turns of the tick', 30_000, 2);
    first.child.kill('SIGTERM');
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    for (const worker of [second, third]) expect(await worker.exited, worker.stderr()).toBe(0);

    const alone = await runInProcess(chorus, 4, { voices: 9, 'delay-ms': 20, 'hold-file': '', 'hold-at': 1 }, 8);
    // The same notes (objects compared as values: keys made by concurrent writes may come in another order).
    const notes = (summary: string) => JSON.parse(/chorus (\{.*\}) after/.exec(summary)![1]!) as unknown;
    expect(notes(coordinator.stdout())).toEqual(notes(alone.summary!));
    expect(coordinator.stdout().replace(/\{.*\}/, '')).toBe(`${alone.summary!.replace(/\{.*\}/, '')}\n`);
    const events = await streamEvents(redis!.admin, stream);
    // What each voice heard, and why it woke, at each of its turns.
    expect(askedCalls(events)).toEqual(askedCalls(alone.events));
    expect(askedCalls(alone.events).some((line) => line.includes('caller>voice-4:round 3@3'))).toBe(true);
  }, 90_000);

  it('ends quiet when one process would, not while speech of the last tick is still on its way to another worker', async () => {
    const name = redis!.scene('quiet');
    // The caller and its one listener on different workers: the listener hears the caller a tick later, there.
    const ids = ['q1', 'q2'];
    const partitions = [2, 3, 4, 5, 6, 7, 8].find((count) => ownerOf(partitionOf('caller', count), ids) !== ownerOf(partitionOf('voice-1', count), ids))!;
    const workers = ids.map((id) => troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', id]));
    const coordinator = troupe(['run', CHORUS, '--redis', url, '--workers', '2', '--wait-workers', '--redis-name', name, '--partitions', String(partitions), '--seed', '6', '--ticks', '20', '--voices', '1', '--once', '--quiet']);
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    for (const worker of workers) expect(await worker.exited, worker.stderr()).toBe(0);
    const alone = await runInProcess(chorus, 6, { voices: 1, once: true, 'delay-ms': 0, 'hold-file': '', 'hold-at': 1 }, 20);
    expect(alone.summary).toBe('chorus {"voice-1":1} after 2 ticks, 2 turns (quiet)');
    expect(coordinator.stdout()).toBe(`${alone.summary}\n`);
    expect(askedCalls(await streamEvents(redis!.admin, streamKeyOf(name)))).toEqual(askedCalls(alone.events));
  }, 90_000);

  it('rides out dropped connections: the workers and the coordinator reconnect, and the run ends as it would in one process', async () => {
    const name = redis!.scene('drops');
    const stream = streamKeyOf(name);
    const workers = ['d1', 'd2'].map((id) => troupe(['worker', '--redis', url, '--scene', name, '--once', '--id', id]));
    const coordinator = troupe(['run', COUNTERS, '--redis', url, '--workers', '2', '--wait-workers', '--redis-name', name, '--partitions', '4', '--seed', '2', '--ticks', '6', '--npcs', '8', '--delay-ms', '20', '--quiet']);
    const ticked = (tick: number) => async () => (await streamEvents(redis!.admin, stream)).some((event) => event.type === 'scene.tick' && (event as Envelope<'scene.tick'>).data.tick === tick);
    const pids = new Set([coordinator.child.pid, ...workers.map((worker) => worker.child.pid)].map(String));
    const dropAll = async (): Promise<number> => {
      const clients = String(await redis!.admin.client('LIST')).split('\n');
      let dropped = 0;
      for (const line of clients) {
        const client = /^id=(\d+) .*name=troupe:(?:worker|coordinator):(\d+)/.exec(line);
        if (client !== null && pids.has(client[2]!)) dropped += Number(await redis!.admin.client('KILL', 'ID', client[1]!));
      }
      return dropped;
    };
    await eventually(ticked(2), 'tick 2');
    expect(await dropAll()).toBeGreaterThanOrEqual(3);
    await eventually(ticked(4), 'tick 4');
    expect(await dropAll()).toBeGreaterThanOrEqual(3);
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    for (const worker of workers) expect(await worker.exited, worker.stderr()).toBe(0);
    expect(coordinator.stderr()).toMatch(/lost the connection to Redis/);

    const alone = await runInProcess(counters, 2, { npcs: 8, 'delay-ms': 20, 'hold-file': '', 'hold-at': 1 }, 6);
    expect(coordinator.stdout().trim()).toBe(alone.summary);
    expect(askedCalls(await streamEvents(redis!.admin, stream))).toEqual(askedCalls(alone.events));
  }, 90_000);

  it('refuses a worker whose scene code differs from the coordinator\'s, in one line', async () => {
    const name = redis!.scene('mismatch');
    // A copy of the fixture beside it, so that it imports the very modules the CLI runs on (a copy
    // elsewhere importing them by URL gets modules of its own, and a scene the CLI does not know).
    const dir = mkdtempSync(join(dirname(COUNTERS), '.tmp-'));
    try {
      const file = join(dir, 'counters-scene.ts');
      writeFileSync(file, readFileSync(COUNTERS, 'utf8').replace('../../../src/index.js', '../../../../src/index.js'));
      const coordinator = troupe(['run', file, '--redis', url, '--workers', '1', '--wait-workers', '--redis-name', name, '--seed', '1', '--quiet']);
      await eventually(async () => (await redis!.admin.exists(`troupe:${name}:run`)) === 1, 'the run record');
      appendFileSync(file, '\n// changed after the run began\n');
      const worker = troupe(['worker', '--redis', url, '--scene', name, '--once']);
      expect(await worker.exited).toBe(1);
      const lines = worker.stderr().trim().split('\n');
      expect(lines.at(-1)).toMatch(new RegExp(`^troupe worker: cannot join run \\w+ of scene "${name}" at redis://[^:]+:\\d+: this worker's scene code differs from the coordinator's \\(definition hash [0-9a-f]{12}…, here [0-9a-f]{12}…\\): run the same code everywhere$`));
      coordinator.child.kill('SIGTERM');
      expect(await coordinator.exited).toBe(143);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
