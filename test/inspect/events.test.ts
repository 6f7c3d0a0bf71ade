import { connect } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createBus, type Bus } from '../../src/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import { CATALOGUE_VERSION } from '../../src/bus/index.js';
import { createEventHistory } from '../../src/inspect/index.js';
import { inspect, openEvents, TOKEN, troupeFrames } from './helpers.js';

const say = (bus: Bus, text: string, agent = 'a') => bus.publish('agent.said', { text }, { agent, scene: 's' });
const ids = (frames: { id?: string }[]) => frames.map((frame) => frame.id);

/** A bus with counted ids and a history that has seen all of it. */
function recorded(size?: number) {
  const bus = createBus({ ids: sequentialIds('e') });
  const history = createEventHistory(bus, size === undefined ? {} : { size });
  return { bus, history };
}

describe('GET /events: framing and replay', () => {
  it('sends retry, then the history, then live events, each framed with its envelope id', async () => {
    const { bus, history } = recorded();
    say(bus, 'before');
    const inspector = await inspect({ bus, history });
    const stream = await openEvents(inspector.port);
    say(bus, 'after');
    await stream.until((frames) => troupeFrames(frames).length === 2);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-store');
    expect(stream.frames[0]).toEqual({ event: 'message', id: undefined, data: '', retry: 1000 });
    expect(ids(troupeFrames(stream.frames))).toEqual(['e-1', 'e-2']);
    expect(stream.events()[1]).toEqual({ v: CATALOGUE_VERSION, id: 'e-2', type: 'agent.said', at: expect.any(Number), agent: 'a', scene: 's', data: { text: 'after' } });
    stream.close();
  });

  it('resumes after Last-Event-ID (header or ?lastEventId=): in order, no duplicates', async () => {
    const { bus, history } = recorded();
    for (let n = 1; n <= 5; n++) say(bus, String(n));
    const inspector = await inspect({ bus, history });
    const byHeader = await openEvents(inspector.port, '', { 'last-event-id': 'e-2' });
    const byQuery = await openEvents(inspector.port, '?lastEventId=e-4');
    say(bus, '6');
    await byHeader.until((frames) => troupeFrames(frames).length === 4);
    await byQuery.until((frames) => troupeFrames(frames).length === 2);
    expect(ids(troupeFrames(byHeader.frames))).toEqual(['e-3', 'e-4', 'e-5', 'e-6']);
    expect(ids(troupeFrames(byQuery.frames))).toEqual(['e-5', 'e-6']);
    expect(byHeader.frames.some((frame) => frame.event === 'gap')).toBe(false);
    byHeader.close();
    byQuery.close();
  });

  it('sends a gap first when the id is no longer held, counting what it missed, then all it holds', async () => {
    const { bus, history } = recorded(3);
    for (let n = 1; n <= 6; n++) say(bus, String(n));
    const inspector = await inspect({ bus, history });
    const stream = await openEvents(inspector.port, '', { 'last-event-id': 'e-1' });
    await stream.until((frames) => troupeFrames(frames).length === 3);
    expect(stream.frames.slice(1).map((frame) => [frame.event, frame.id ?? JSON.parse(frame.data)])).toEqual([
      ['gap', { missed: 2, reason: 'history', kept: 3 }], // e-2 and e-3
      ['troupe', 'e-4'],
      ['troupe', 'e-5'],
      ['troupe', 'e-6'],
    ]);
    const foreign = await openEvents(inspector.port, '', { 'last-event-id': 'other-run-7' });
    await foreign.until((frames) => troupeFrames(frames).length === 3);
    expect(JSON.parse(foreign.frames[1]!.data)).toEqual({ missed: null, reason: 'history', kept: 3 });
    stream.close();
    foreign.close();
  });

  it('a server restarted on the same port with the same history resumes its clients without gaps or duplicates', async () => {
    const { bus, history } = recorded();
    const first = await inspect({ bus, history });
    const port = first.port;
    const stream = await openEvents(port);
    for (let n = 1; n <= 3; n++) say(bus, String(n));
    await stream.until((frames) => troupeFrames(frames).length === 3);
    await first.close();
    await stream.ended;
    for (let n = 4; n <= 6; n++) say(bus, String(n)); // published while no server runs
    const second = await inspect({ bus, history, port });
    const resumed = await openEvents(second.port, '', { 'last-event-id': troupeFrames(stream.frames).at(-1)!.id! });
    say(bus, '7');
    await resumed.until((frames) => troupeFrames(frames).length === 4);
    expect([...ids(troupeFrames(stream.frames)), ...ids(troupeFrames(resumed.frames))]).toEqual(['e-1', 'e-2', 'e-3', 'e-4', 'e-5', 'e-6', 'e-7']);
    resumed.close();
  });

  it('serves deep, cyclic and huge data guarded (placeholders), and the stream goes on', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history, maxEventChars: 10_000 });
    const stream = await openEvents(inspector.port);
    const cyclic: Record<string, unknown> = { name: 'loop', big: 10n };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { bottom: true };
    for (let level = 0; level < 200; level++) deep = { deeper: deep };
    const base = { callId: 'c', name: 't', args: {}, durationMs: 1, attempt: 1 };
    bus.publish('tool.completed', { ...base, output: cyclic });
    bus.publish('tool.completed', { ...base, output: deep });
    bus.publish('tool.completed', { ...base, output: 'x'.repeat(5_000_000) });
    bus.publish('tool.completed', { ...base, output: { apiKey: 'sk-live-0123456789abcdefghij', note: `token ${TOKEN}` } });
    say(bus, 'still streaming');
    await stream.until((frames) => troupeFrames(frames).length === 5);
    const [circular, tooDeep, huge, secret, after] = stream.events();
    expect(circular!.data.output).toEqual({ name: 'loop', big: '10n', self: '[Circular]' });
    expect(JSON.stringify(tooDeep!.data)).toContain('[Depth limit]');
    expect(huge!.data).toMatchObject({ $truncated: true, chars: expect.any(Number) });
    expect(troupeFrames(stream.frames)[2]!.data.length).toBeLessThanOrEqual(10_000);
    expect(secret!.data.output).toEqual({ apiKey: '[redacted]', note: 'token [redacted]' });
    expect(after!.data).toEqual({ text: 'still streaming' });
    stream.close();
  });
});

describe('GET /events: per-client policies', () => {
  it('coalesce: a burst of deltas reaches the client as one event per agent and round, under the last id', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history });
    const stream = await openEvents(inspector.port, '?policy=coalesce');
    for (const text of ['Wel', 'come', ' in']) bus.publish('llm.delta', { round: 1, text, attempt: 1 }, { agent: 'innkeeper' });
    bus.publish('llm.response', { round: 1, text: 'Welcome in', finishReason: 'stop', latencyMs: 5 }, { agent: 'innkeeper' });
    await stream.until((frames) => troupeFrames(frames).length === 2);
    expect(stream.events().map((event) => [event.id, event.type, event.data.text])).toEqual([
      ['e-3', 'llm.delta', 'Welcome in'],
      ['e-4', 'llm.response', 'Welcome in'],
    ]);
    stream.close();
  });

  it('drop-oldest: a client that falls behind gets a gap with the count, then the newest events', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history, queue: 5 });
    const stream = await openEvents(inspector.port, '?policy=drop-oldest');
    for (let n = 1; n <= 20; n++) say(bus, String(n));
    await stream.until((frames) => troupeFrames(frames).length === 5);
    expect(stream.frames.slice(1).map((frame) => frame.id ?? frame.data)).toEqual(['{"missed":15,"reason":"drop-oldest"}', 'e-16', 'e-17', 'e-18', 'e-19', 'e-20']);
    stream.close();
  });

  it('sample: only the latest waiting tick and world value per path; the rest in order', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history });
    const stream = await openEvents(inspector.port, '?policy=sample');
    for (let n = 1; n <= 10; n++) {
      bus.publish('scene.tick', { tick: n }, { scene: 's' });
      bus.publish('world.changed', { path: 'ale', value: 10 - n, tick: n }, { scene: 's' });
      if (n % 5 === 0) say(bus, `tick ${n}`);
    }
    await stream.until((frames) => frames.some((frame) => frame.id === 'e-22'));
    expect(stream.events().map((event) => [event.id, event.type])).toEqual([
      ['e-11', 'agent.said'],
      ['e-20', 'scene.tick'],
      ['e-21', 'world.changed'],
      ['e-22', 'agent.said'],
    ]);
    expect(stream.events()[2]!.data).toEqual({ path: 'ale', value: 0, tick: 10 });
    expect(JSON.parse(stream.frames.find((frame) => frame.event === 'gap')!.data)).toEqual({ missed: 18, reason: 'sample' });
    stream.close();
  });

  it('all: a client whose queue fills is dropped; it resumes from the history with Last-Event-ID', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history, queue: 10 });
    const stream = await openEvents(inspector.port);
    for (let n = 1; n <= 50; n++) say(bus, String(n)); // one burst: 50 wait before the first is written
    await stream.ended;
    expect(inspector.notices).toEqual([expect.objectContaining({ kind: 'client_dropped', policy: 'all', max: 10 })]);
    const resumed = await openEvents(inspector.port, '', { 'last-event-id': troupeFrames(stream.frames).at(-1)?.id ?? '' });
    await resumed.until((frames) => troupeFrames(frames).length === 50 - troupeFrames(stream.frames).length);
    expect([...ids(troupeFrames(stream.frames)), ...ids(troupeFrames(resumed.frames))]).toEqual(Array.from({ length: 50 }, (_, index) => `e-${index + 1}`));
    resumed.close();
  });

  it('refuses an unknown policy', async () => {
    const { bus } = recorded();
    const inspector = await inspect({ bus });
    const stream = await openEvents(inspector.port, '?policy=latest');
    expect(stream.status).toBe(400);
  });
});

describe('a client that never reads', () => {
  it('is dropped once its socket and queue are full, while the bus and a reading client go on', async () => {
    const { bus, history } = recorded(100_000);
    const inspector = await inspect({ bus, history, queue: 100, maxEventChars: 100_000 });
    const counted = { all: 0 };
    bus.on('*', () => void counted.all++);
    // A raw socket that sends the request and never reads a byte of the answer.
    const stuck = connect(inspector.port, '127.0.0.1');
    stuck.pause();
    stuck.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${inspector.port}\r\nX-Troupe-Token: ${TOKEN}\r\n\r\n`);
    await new Promise((resolve) => stuck.once('connect', resolve));
    const reader = await openEvents(inspector.port);
    const text = 'y'.repeat(16_000);
    let published = 0;
    while (!inspector.notices.some((notice) => notice.kind === 'client_dropped') && published < 50_000) {
      for (let n = 0; n < 50; n++) say(bus, text);
      published += 50;
      await reader.until((frames) => troupeFrames(frames).length === published);
      await turn();
    }
    expect(inspector.notices).toEqual([expect.objectContaining({ kind: 'client_dropped', policy: 'all', max: 100 })]);
    expect(counted.all).toBe(published);
    expect(ids(troupeFrames(reader.frames))).toEqual(Array.from({ length: published }, (_, index) => `e-${index + 1}`));
    stuck.destroy();
    reader.close();
  });

  it('does not keep close() waiting', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history, maxEventChars: 100_000 });
    const stuck = connect(inspector.port, '127.0.0.1');
    stuck.pause();
    stuck.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${inspector.port}\r\nX-Troupe-Token: ${TOKEN}\r\n\r\n`);
    await new Promise((resolve) => stuck.once('connect', resolve));
    await turn();
    const text = 'z'.repeat(16_000);
    for (let n = 0; n < 2_000; n++) say(bus, text); // ~32 MB: more than the socket takes
    await turn();
    await inspector.close();
    expect(inspector.notices).toEqual([]);
    stuck.destroy();
  });
});
