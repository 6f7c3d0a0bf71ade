import { expectTypeOf, test } from 'vitest';
import { createAgent, createBus, scriptedProvider, type AgentMemory } from '../../src/index.js';
import { type CompactionPolicy, type VariableRead } from '../../src/agent/memory/index.js';

test('memory.compacted is in the catalogue, and its data is checked', () => {
  const bus = createBus();
  bus.on('memory.*', (event) => {
    expectTypeOf(event.type).toEqualTypeOf<'memory.compacted'>();
    expectTypeOf(event.data.afterTokens).toEqualTypeOf<number>();
  });
  // @ts-expect-error: missing the token counts
  bus.publish('memory.compacted', { policy: 'drop-oldest' });
});

test('agent.memory is typed, and undefined without the option', () => {
  const agent = createAgent({ name: 'a', provider: scriptedProvider([]), memory: { history: 'compact' } });
  expectTypeOf(agent.memory).toEqualTypeOf<AgentMemory | undefined>();
  expectTypeOf(agent.memory!.readVar('$r1')).toEqualTypeOf<VariableRead>();
  // @ts-expect-error: history is 'full' or 'compact'
  createAgent({ name: 'b', provider: scriptedProvider([]), memory: { history: 'short' } });
  const policy: CompactionPolicy = { name: 'none', compact: ({ turns }) => ({ turns, dropped: 0, summarized: 0 }) };
  createAgent({ name: 'c', provider: scriptedProvider([]), memory: { compaction: policy } });
});
