import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScene, defineTool, type Envelope } from '../../src/index.js';
import { readLog } from '../../src/record/index.js';
import { createEventHistory } from '../../src/inspect/index.js';
import { control, inspect, openEvents, pageHeaders, send, troupeFrames } from './helpers.js';

/** Runs a small stepped scene with a session log; returns the log's path. */
async function loggedRun(): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'troupe-inspect-log-')), 'session.jsonl');
  const scene = createScene({ name: 'cellar', seed: 3, log: path, world: { sign: 'The Cellar', ale: 3, door: { open: false } } });
  const draw = defineTool({
    name: 'draw',
    description: 'Draw one ale.',
    parameters: { type: 'object', properties: {} },
    execute: (_args, { agent }) => scene.world.update('ale', (left) => (left as number) - 1, { agent }),
  });
  scene.add({ name: 'cellarer', tools: [draw], brain: (perception) => (perception.round === 1 ? '<ACTION><draw></draw></ACTION>' : null), triggers: [{ every: 1 }] });
  scene.world.set('door.open', true);
  await scene.run({ ticks: 2 });
  return path;
}

describe('serving a session log', () => {
  it('replays the logged events with their ids and answers /state from them; no controls', async () => {
    const { events, quarantined } = readLog(await loggedRun());
    expect(quarantined).toEqual([]);
    const inspector = await inspect({ events });
    const stream = await openEvents(inspector.port);
    await stream.until((frames) => troupeFrames(frames).length === events.length);
    expect(troupeFrames(stream.frames).map((frame) => frame.id)).toEqual(events.map((event) => event.id));
    expect(stream.events().at(-1)).toMatchObject({ type: 'scene.stopped' });

    const reply = await send(inspector.port, { path: '/state', headers: pageHeaders(inspector.port) });
    expect(JSON.parse(reply.text)).toEqual({
      mode: 'log',
      scene: 'cellar',
      clock: null,
      paused: false,
      started: true,
      stopped: true,
      canControl: false,
      agents: [{ name: 'cellarer', state: 'done', turns: 2, lastReason: 'turn_ended' }], // its last agent.state, its turns, how its last run ended
      // The world scene.started carried (the sign never changed), with the logged changes on top.
      world: { sign: 'The Cellar', door: { open: true }, ale: 1 },
      tick: 2,
      // The log ends as its run did, closed; it holds no resume.
      ended: 'closed',
      events: events.length,
      resumes: [],
    });
    expect(await control(inspector.port, { type: 'pause' })).toEqual({ status: 409, body: { error: 'this is a session log: nothing to control' } });
    stream.close();
  });

  it('resumes a log stream from Last-Event-ID like a live one', async () => {
    const { events } = readLog(await loggedRun());
    const inspector = await inspect({ events });
    const stream = await openEvents(inspector.port, '', { 'last-event-id': events[4]!.id });
    await stream.until((frames) => troupeFrames(frames).length === events.length - 5);
    expect(troupeFrames(stream.frames).map((frame) => frame.id)).toEqual(events.slice(5).map((event) => event.id));
    stream.close();
  });

  it('serves a hostile log without breaking: damaged ids, prototype keys in world paths', async () => {
    const events = [
      { id: 'x-1', type: 'scene.started', at: 0, scene: 'odd', data: { tick: 0, seed: 1, agents: [] } },
      { id: 'x-2', type: 'world.changed', at: 1, scene: 'odd', data: { path: '__proto__.polluted', value: true, tick: 0 } },
      { id: 'bad\nid', type: 'agent.said', at: 2, data: { text: 'id with a line break' } },
      { id: 'x-4', type: 'world.changed', at: 3, scene: 'odd', data: { path: 'a.b', tick: 0 } },
    ] as unknown as Envelope[];
    const inspector = await inspect({ history: createEventHistory(events) });
    const stream = await openEvents(inspector.port);
    await stream.until((frames) => troupeFrames(frames).length === 4);
    expect(troupeFrames(stream.frames).map((frame) => frame.id)).toEqual(['x-1', 'x-2', undefined, 'x-4']);
    const reply = await send(inspector.port, { path: '/state', headers: pageHeaders(inspector.port) });
    const state = JSON.parse(reply.text) as { mode: string; world: Record<string, unknown> };
    expect(state.mode).toBe('log');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(state.world)).toEqual(['__proto__', 'a']);
    stream.close();
  });
});
