import { createAgent, createBus, defineTool, type Provider } from '../../src/index.js';
import { settledHeap, type Row } from './measure.js';

/**
 * Heap per agent parked at a model call: N agents, each inside `run()`, each waiting on a model
 * call that has not answered. What a scene of idle NPCs costs while their models think.
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
  const pending: (() => void)[] = [];
  const provider: Provider = {
    name: 'parked',
    complete: () =>
      new Promise((resolve) => pending.push(() => resolve({ text: 'Nothing to do.', finishReason: 'stop' }))),
  };
  const bus = createBus();
  const before = settledHeap();
  const agents = [];
  const runs = [];
  for (let index = 0; index < count; index++) {
    const agent = createAgent({ name: `npc-${index}`, tools, provider, bus });
    agents.push(agent);
    runs.push(agent.run('Anything happening?'));
  }
  await new Promise((resolve) => setImmediate(resolve));
  if (pending.length !== count) throw new Error(`expected ${count} parked model calls, saw ${pending.length}`);
  const parked = settledHeap();
  const perAgent = (parked - before) / count;
  for (const release of pending) release();
  const results = await Promise.all(runs);
  if (results.some((result) => result.reason !== 'final_answer')) throw new Error('a parked agent did not finish');
  return [{ name: `heap per parked agent (${count.toLocaleString('en-US')} agents)`, iterations: count, usPerOp: Number.NaN, note: `${Math.round(perAgent).toLocaleString('en-US')} bytes` }];
}
