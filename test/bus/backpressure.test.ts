import { describe, expect, it } from 'vitest';
import { ConfigError, createBus, type Envelope } from '../../src/index.js';
import { sequentialIds, deferred } from '../../src/testing/index.js';
import { createEventQueue, subscribeBuffered, type Delivery } from '../../src/bus/index.js';

const delta = (bus: ReturnType<typeof createBus>, agent: string, text: string, round = 1) => bus.publish('llm.delta', { round, text, attempt: 1 }, { agent, scene: 's' });
const tick = (bus: ReturnType<typeof createBus>, n: number) => bus.publish('scene.tick', { tick: n }, { scene: 's' });
const said = (bus: ReturnType<typeof createBus>, text: string, agent = 'a') => bus.publish('agent.said', { text }, { agent, scene: 's' });

/** Everything a queue gives back, in order, with what each delivery reported. */
function drain(queue: ReturnType<typeof createEventQueue>) {
  const out: { id: string; type: string; text?: string; dropped: number; merged: number }[] = [];
  for (let taken = queue.take(); taken !== undefined; taken = queue.take()) {
    const data = taken.event.data as { text?: string };
    out.push({ id: taken.event.id, type: taken.event.type, ...(data.text === undefined ? {} : { text: data.text }), dropped: taken.dropped, merged: taken.merged });
  }
  return out;
}

describe('event queue policies', () => {
  it('all: keeps every event in order, and overflows past max', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'all', max: 3 });
    const outcomes = [said(bus, '1'), said(bus, '2'), said(bus, '3'), said(bus, '4')].map((event) => queue.push(event));
    expect(outcomes).toEqual(['queued', 'queued', 'queued', 'overflow']);
    expect(drain(queue).map((item) => item.id)).toEqual(['e-1', 'e-2', 'e-3', 'e-4']);
  });

  it('coalesce: merges a run of deltas of one agent, round and attempt; keeps everything else', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'coalesce' });
    const events = [
      delta(bus, 'a', 'Hel'), // e-1
      delta(bus, 'a', 'lo'), // e-2
      delta(bus, 'a', ' you'), // e-3
      delta(bus, 'b', 'Hi'), // e-4: another agent breaks the run
      delta(bus, 'a', '!'), // e-5
      delta(bus, 'a', 'Next', 2), // e-6: another round
      said(bus, 'Hello you!'), // e-7
    ];
    expect(events.map((event) => queue.push(event))).toEqual(['queued', 'merged', 'merged', 'queued', 'queued', 'queued', 'queued']);
    expect(drain(queue)).toEqual([
      // The merged event carries the id of the last piece, so resuming after it resumes after all three.
      { id: 'e-3', type: 'llm.delta', text: 'Hello you', dropped: 0, merged: 3 },
      { id: 'e-4', type: 'llm.delta', text: 'Hi', dropped: 0, merged: 1 },
      { id: 'e-5', type: 'llm.delta', text: '!', dropped: 0, merged: 1 },
      { id: 'e-6', type: 'llm.delta', text: 'Next', dropped: 0, merged: 1 },
      { id: 'e-7', type: 'agent.said', text: 'Hello you!', dropped: 0, merged: 1 },
    ]);
    // The published envelopes are left as they were.
    expect(events[0]!.data).toEqual({ round: 1, text: 'Hel', attempt: 1 });
  });

  it('coalesce: merges only what still waits; a delivered piece is never changed', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'coalesce' });
    queue.push(delta(bus, 'a', 'one'));
    const first = queue.take()!;
    queue.push(delta(bus, 'a', ' two'));
    queue.push(delta(bus, 'a', ' three'));
    expect((first.event.data as { text: string }).text).toBe('one');
    expect(drain(queue)).toEqual([{ id: 'e-3', type: 'llm.delta', text: ' two three', dropped: 0, merged: 2 }]);
  });

  it('sample: keeps only the latest waiting tick, state per agent and world path; order stays', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'sample' });
    tick(bus, 0);
    const events: Envelope[] = [
      tick(bus, 1), // e-2: replaced by e-6
      bus.publish('world.changed', { path: 'ale', value: 9, tick: 1 }, { scene: 's' }), // e-3: replaced by e-7
      bus.publish('world.changed', { path: 'door', value: 'open', tick: 1 }, { scene: 's' }), // e-4: another path, kept
      said(bus, 'kept'), // e-5: not a sampled type
      tick(bus, 2), // e-6
      bus.publish('world.changed', { path: 'ale', value: 8, tick: 2 }, { scene: 's' }), // e-7
    ];
    for (const event of events) queue.push(event);
    expect(queue.size).toBe(4);
    expect(drain(queue).map((item) => [item.id, item.dropped])).toEqual([
      ['e-4', 2],
      ['e-5', 0],
      ['e-6', 0],
      ['e-7', 0],
    ]);
    expect(queue.dropped).toBe(2);
  });

  it('sample: a flood of one sampled type holds one event, however long the subscriber waits', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'sample', max: 10 });
    const outcomes = new Set<string>();
    for (let n = 1; n <= 50_000; n++) outcomes.add(queue.push(tick(bus, n)));
    expect([...outcomes]).toEqual(['queued']);
    expect(queue.size).toBe(1);
    expect(drain(queue)).toEqual([{ id: 'e-50000', type: 'scene.tick', dropped: 49_999, merged: 1 }]);
  });

  it('drop-oldest: holds the newest max events and reports how many gave way', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'drop-oldest', max: 3 });
    for (let n = 1; n <= 10; n++) expect(queue.push(said(bus, String(n)))).toBe('queued');
    expect(drain(queue)).toEqual([
      { id: 'e-8', type: 'agent.said', text: '8', dropped: 7, merged: 1 },
      { id: 'e-9', type: 'agent.said', text: '9', dropped: 0, merged: 1 },
      { id: 'e-10', type: 'agent.said', text: '10', dropped: 0, merged: 1 },
    ]);
    expect(queue.dropped).toBe(7);
  });

  it('an uncounted push (a replay) does not count toward max', () => {
    const bus = createBus({ ids: sequentialIds() });
    const queue = createEventQueue({ policy: 'all', max: 2 });
    for (let n = 1; n <= 5; n++) expect(queue.push(said(bus, String(n)), { counted: false })).toBe('queued');
    expect(queue.push(said(bus, 'live 1'))).toBe('queued');
    expect(queue.push(said(bus, 'live 2'))).toBe('queued');
    expect(queue.push(said(bus, 'live 3'))).toBe('overflow');
  });

  it.each([
    [{ policy: 'drop-oldest' }, /drop-oldest.*needs max/],
    [{ policy: 'all', max: 0 }, /max must be a positive integer/],
    [{ policy: 'latest' }, /policy must be one of 'all', 'coalesce', 'sample', 'drop-oldest'/],
  ])('refuses %j with a clear error', (options, message) => {
    expect(() => createEventQueue(options as never)).toThrow(ConfigError);
    expect(() => createEventQueue(options as never)).toThrow(message);
  });
});

describe('subscribeBuffered', () => {
  it('never calls the handler during publish; delivers in order, one at a time, waiting for its promise', async () => {
    const bus = createBus({ ids: sequentialIds() });
    const gates = [deferred(), deferred()];
    const seen: string[] = [];
    let running = 0;
    let overlapped = false;
    const panel = subscribeBuffered(
      bus,
      'agent.said',
      async (event) => {
        running++;
        overlapped ||= running > 1;
        seen.push(event.data.text);
        await gates[seen.length - 1]?.promise;
        running--;
      },
      { policy: 'all' },
    );
    said(bus, 'one');
    said(bus, 'two');
    said(bus, 'three');
    expect(seen).toEqual([]); // publish returned before any delivery
    expect(panel.pending).toBe(3);
    await Promise.resolve();
    expect(seen).toEqual(['one']);
    gates[0]!.resolve();
    gates[1]!.resolve();
    await panel.idle();
    expect(seen).toEqual(['one', 'two', 'three']);
    expect(overlapped).toBe(false);
  });

  it('coalesce: a slow renderer gets the streamed text merged, and how many pieces it stands for', async () => {
    const bus = createBus({ ids: sequentialIds() });
    const rendered: [string, Delivery][] = [];
    const busy = deferred();
    const panel = subscribeBuffered(
      bus,
      'llm.*',
      async (event, delivery) => {
        rendered.push([event.type === 'llm.delta' ? event.data.text : event.type, delivery]);
        if (rendered.length === 1) await busy.promise;
      },
      { policy: 'coalesce', agent: 'a' },
    );
    delta(bus, 'a', 'The ');
    await Promise.resolve(); // the renderer is now busy with the first piece
    for (const word of ['quick ', 'brown ', 'fox']) delta(bus, 'a', word);
    delta(bus, 'b', 'filtered out');
    busy.resolve();
    await panel.idle();
    expect(rendered).toEqual([
      ['The ', { dropped: 0, merged: 1 }],
      ['quick brown fox', { dropped: 0, merged: 3 }],
    ]);
  });

  it('drop-oldest: a stalled handler learns how many events it missed', async () => {
    const bus = createBus({ ids: sequentialIds() });
    const stall = deferred();
    const seen: [string, number][] = [];
    const panel = subscribeBuffered(
      bus,
      '*',
      async (event, { dropped }) => {
        seen.push([event.id, dropped]);
        if (seen.length === 1) await stall.promise;
      },
      { policy: 'drop-oldest', max: 2 },
    );
    said(bus, 'first');
    await Promise.resolve();
    for (let n = 0; n < 100; n++) said(bus, String(n));
    expect(panel.pending).toBe(2);
    stall.resolve();
    await panel.idle();
    expect(seen).toEqual([
      ['e-1', 0],
      ['e-100', 98],
      ['e-101', 0],
    ]);
    expect(panel.dropped).toBe(98);
  });

  it('an overflowing bounded queue unsubscribes and says so; the publisher never notices', async () => {
    const bus = createBus();
    const stall = deferred();
    const overflows: unknown[] = [];
    let published = 0;
    bus.on('*', () => void published++);
    const panel = subscribeBuffered(bus, '*', () => stall.promise, { policy: 'all', max: 10, onOverflow: (overflow) => void overflows.push(overflow) });
    for (let n = 0; n < 1_000; n++) said(bus, String(n));
    expect(published).toBe(1_000);
    expect(overflows).toEqual([{ policy: 'all', max: 10 }]);
    expect(panel.stopped).toBe(true);
    expect(panel.pending).toBe(0);
    stall.resolve();
    await panel.idle();
  });

  it('a handler that throws or rejects is reported as bus.error; delivery goes on', async () => {
    const bus = createBus({ ids: sequentialIds() });
    const errors: Envelope<'bus.error'>[] = [];
    bus.on('bus.error', (event) => void errors.push(event));
    const seen: string[] = [];
    const panel = subscribeBuffered(
      bus,
      'agent.said',
      async (event) => {
        seen.push(event.data.text);
        if (event.data.text === 'sync') throw new Error('render failed');
        if (event.data.text === 'async') await Promise.reject(new TypeError('late failure'));
      },
      { policy: 'all' },
    );
    said(bus, 'sync');
    said(bus, 'async');
    said(bus, 'fine');
    await panel.idle();
    expect(seen).toEqual(['sync', 'async', 'fine']);
    expect(errors.map((event) => [event.data.eventId, event.data.message])).toEqual([
      ['e-1', 'Error: render failed'],
      ['e-2', 'TypeError: late failure'],
    ]);
  });

  it('a buffered bus.error subscriber that throws is not reported again (no loop)', async () => {
    const bus = createBus();
    const reported: unknown[] = [];
    const panel = subscribeBuffered(
      bus,
      '*',
      () => {
        throw new Error('always');
      },
      { policy: 'all', onError: (error) => void reported.push(error) },
    );
    said(bus, 'x');
    await panel.idle();
    await panel.idle();
    // One error for agent.said, one for the bus.error it caused, and no more.
    expect(reported).toHaveLength(2);
    panel.stop();
    panel.stop();
    said(bus, 'after stop');
    await panel.idle();
    expect(reported).toHaveLength(2);
  });
});
