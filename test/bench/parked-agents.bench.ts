import { createAgent, createBus, defineTool, scriptedProvider, type Provider } from '../../src/index.js';
import { settledHeap, type Row } from './measure.js';

/**
 * Heap per agent parked at a model call: N agents, each inside `run()`, each waiting on a model
 * call that has not answered. What a scene of idle NPCs costs while their models think. Twice:
 * with one provider shared by all, and with a `scriptedProvider` of each agent's own (a function
 * script whose answer waits), as a test or a crowd of distinct brains has.
 */
export async function benchParkedAgents(count: number): Promise<Row[]> {
  const tool = defineTool({
    name: 'look_around',
    description: 'Describe the surroundings.',
    parameters: { type: 'object', properties: { radius: { type: 'integer', minimum: 1, maximum: 10 } } },
    readOnly: true,
    execute: () => 'a quiet square',
  });
  const tools = [tool];
  const shared = await parked(count, tools, (pending) => {
    const provider: Provider = {
      name: 'parked',
      complete: () => new Promise((resolve) => pending.push(() => resolve({ text: 'Nothing to do.', finishReason: 'stop' }))),
    };
    return () => provider;
  });
  const own = await parked(count, tools, (pending) => () =>
    scriptedProvider(() => new Promise((resolve) => pending.push(() => resolve('Nothing to do.')))),
  );
  const label = count.toLocaleString('en-US');
  return [
    { name: `heap per parked agent (${label} agents)`, iterations: count, usPerOp: Number.NaN, note: `${Math.round(shared).toLocaleString('en-US')} bytes` },
    {
      name: `heap per parked agent, own scriptedProvider (${label} agents)`,
      iterations: count,
      usPerOp: Number.NaN,
      note: `${Math.round(own).toLocaleString('en-US')} bytes; target ≤ 5 KB`,
    },
  ];
}

/** Bytes per agent of `count` agents parked at a model call, each with the provider `providers` makes it. */
async function parked(count: number, tools: readonly ReturnType<typeof defineTool>[], providers: (pending: (() => void)[]) => () => Provider): Promise<number> {
  const pending: (() => void)[] = [];
  const providerFor = providers(pending);
  const bus = createBus();
  const before = settledHeap();
  const agents = [];
  const runs = [];
  for (let index = 0; index < count; index++) {
    const agent = createAgent({ name: `npc-${index}`, tools, provider: providerFor(), bus });
    agents.push(agent);
    runs.push(agent.run('Anything happening?'));
  }
  await new Promise((resolve) => setImmediate(resolve));
  if (pending.length !== count) throw new Error(`expected ${count} parked model calls, saw ${pending.length}`);
  const after = settledHeap();
  for (const release of pending) release();
  const results = await Promise.all(runs);
  if (results.some((result) => result.reason !== 'final_answer')) throw new Error('a parked agent did not finish');
  return (after - before) / count;
}
