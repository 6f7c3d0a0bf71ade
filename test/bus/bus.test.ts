import { describe, expect, it, vi } from 'vitest';
import { createBus, type Envelope } from '../../src/index.js';
import { sequentialIds, steppedClock } from '../../src/testing/index.js';

const started = { callId: 'c1', name: 'lookup', args: {}, attempt: 1 };

describe('bus', () => {
  it('delivers by exact type, prefix and wildcard, with the envelope', () => {
    const bus = createBus({ ids: sequentialIds('ev'), clock: steppedClock(100, 10) });
    const exact: Envelope[] = [];
    const prefix: Envelope[] = [];
    const nested: Envelope[] = [];
    const all: Envelope[] = [];
    bus.on('tool.started', (event) => void exact.push(event));
    bus.on('tool.*', (event) => void prefix.push(event));
    bus.on('tool.approval.*', (event) => void nested.push(event));
    bus.on('*', (event) => void all.push(event));

    const envelope = bus.publish('tool.started', started, { agent: 'a', scene: 's', cause: 'ev-0' });
    bus.publish('tool.approval.requested', { callId: 'c2', name: 'pay', args: {}, argsHash: 'h' });
    bus.publish('agent.said', { text: 'hi' });

    expect(envelope).toEqual({ id: 'ev-1', type: 'tool.started', at: 100, agent: 'a', scene: 's', cause: 'ev-0', data: started });
    expect(exact.map((event) => event.id)).toEqual(['ev-1']);
    expect(prefix.map((event) => event.id)).toEqual(['ev-1', 'ev-2']);
    expect(nested.map((event) => event.id)).toEqual(['ev-2']);
    expect(all.map((event) => event.at)).toEqual([100, 110, 120]);
  });

  it('filters by agent and scene', () => {
    const bus = createBus();
    const seen: string[] = [];
    bus.on('*', (event) => void seen.push(`${event.agent}/${event.scene}`), { agent: 'a', scene: 's1' });
    bus.publish('agent.said', { text: '1' }, { agent: 'a', scene: 's1' });
    bus.publish('agent.said', { text: '2' }, { agent: 'b', scene: 's1' });
    bus.publish('agent.said', { text: '3' }, { agent: 'a', scene: 's2' });
    bus.publish('agent.said', { text: '4' });
    expect(seen).toEqual(['a/s1']);
  });

  it('unsubscribes, twice harmlessly, and once() fires once', () => {
    const bus = createBus();
    const handler = vi.fn();
    const once = vi.fn();
    const stop = bus.on('agent.said', handler);
    bus.once('agent.*', once);
    bus.publish('agent.said', { text: 'a' });
    stop();
    stop();
    bus.publish('agent.said', { text: 'b' });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(once).toHaveBeenCalledTimes(1);
    expect(bus.hasSubscribers).toBe(false);
  });

  it('a channel subscribed after events of its type were delivered gets the next ones; one subscribed during a delivery gets that event if its channel is still to come', () => {
    const bus = createBus({ ids: sequentialIds('ev') });
    const seen: string[] = [];
    bus.on('agent.said', (event) => {
      seen.push(`said ${event.id}`);
      // Made while ev-1 is being delivered, on a channel ev-1 has not reached yet.
      if (event.id === 'ev-1') bus.on('*', (later) => void seen.push(`all ${later.id}`));
    });
    bus.publish('agent.said', { text: 'a' });
    const stop = bus.on('agent.*', (event) => void seen.push(`agent.* ${event.id}`));
    bus.publish('agent.said', { text: 'b' });
    stop();
    bus.publish('agent.said', { text: 'c' });
    expect(seen).toEqual(['said ev-1', 'all ev-1', 'said ev-2', 'agent.* ev-2', 'all ev-2', 'said ev-3', 'all ev-3']);
  });

  it('a throwing subscriber never stops delivery to others nor the publisher; it is reported', () => {
    const onSubscriberError = vi.fn();
    const bus = createBus({ onSubscriberError });
    const after = vi.fn();
    const errors: Envelope<'bus.error'>[] = [];
    bus.on('bus.error', (event) => void errors.push(event));
    bus.on('agent.said', () => {
      throw new TypeError('panel broke');
    });
    bus.on('agent.said', () => {
      throw 'not even an Error';
    });
    bus.on('agent.said', after);
    expect(() => bus.publish('agent.said', { text: 'hi' })).not.toThrow();
    expect(after).toHaveBeenCalledTimes(1);
    expect(errors.map((event) => event.data.message)).toEqual(['TypeError: panel broke', 'non-Error thrown: not even an Error']);
    expect(errors[0]!.data.eventType).toBe('agent.said');
    expect(onSubscriberError).toHaveBeenCalledTimes(2);
  });

  it('a throwing bus.error subscriber cannot loop', () => {
    const onSubscriberError = vi.fn();
    const bus = createBus({ onSubscriberError });
    bus.on('*', () => {
      throw new Error('always');
    });
    expect(() => bus.publish('agent.said', { text: 'x' })).not.toThrow();
    expect(onSubscriberError).toHaveBeenCalledTimes(2);
  });

  it('delivers deep, cyclic and huge data in-process untouched', () => {
    const bus = createBus();
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const received: unknown[] = [];
    bus.on('tool.completed', (event) => void received.push(event.data.output));
    const huge = 'x'.repeat(5_000_000);
    for (const output of [cyclic, huge, 10n]) {
      bus.publish('tool.completed', { callId: 'c', name: 't', args: {}, output, durationMs: 1, attempt: 1 });
    }
    expect(received[0]).toBe(cyclic);
    expect(received[1]).toBe(huge);
    expect(received[2]).toBe(10n);
  });

  it('gives the same ids and times for the same injected sources', () => {
    const run = () => {
      const bus = createBus({ ids: sequentialIds(), clock: steppedClock() });
      return [bus.publish('agent.said', { text: 'a' }), bus.publish('agent.said', { text: 'b' })];
    };
    expect(run()).toEqual(run());
  });
});
