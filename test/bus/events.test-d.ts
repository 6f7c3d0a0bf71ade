import { expectTypeOf, test } from 'vitest';
import { createBus, type Envelope } from '../../src/index.js';

test('publish checks data against the catalogue', () => {
  const bus = createBus();
  bus.publish('tool.failed', {
    callId: 'c',
    name: 't',
    args: {},
    error: { kind: 'timeout', message: 'slow', retryable: true },
    attempt: 1,
    durationMs: 5,
  });
  // @ts-expect-error: wrong data for 'tool.failed'
  bus.publish('tool.failed', { callId: 'c', name: 't' });
  // @ts-expect-error: not a kind of tool error
  bus.publish('tool.failed', { callId: 'c', name: 't', args: {}, error: { kind: 'oops', message: '', retryable: false }, attempt: 1, durationMs: 1 });
  // @ts-expect-error: not an event type
  bus.publish('tool.exploded', {});
});

test('subscriptions narrow the envelope', () => {
  const bus = createBus();
  bus.on('tool.completed', (event) => {
    expectTypeOf(event.type).toEqualTypeOf<'tool.completed'>();
    expectTypeOf(event.data.durationMs).toEqualTypeOf<number>();
  });
  bus.on('agent.*', (event) => {
    expectTypeOf(event.type).toEqualTypeOf<'agent.spawned' | 'agent.state' | 'agent.triggered' | 'agent.said' | 'agent.observation' | 'agent.finished'>();
  });
  bus.on('*', (event) => {
    if (event.type === 'agent.finished') expectTypeOf(event.data.reason).toEqualTypeOf<'final_answer' | 'max_rounds' | 'turn_ended' | 'budget' | 'aborted' | 'error'>();
  });
  expectTypeOf<Envelope<'world.changed'>['data']>().toEqualTypeOf<{ path: string; value: unknown; tick: number }>();
  expectTypeOf<Envelope<'tool.progress'>['data']>().toEqualTypeOf<{ callId: string; name: string; progress: number; total?: number; message?: string }>();
});
