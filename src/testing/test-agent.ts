import { createAgent } from '../agent/create-agent.js';
import type { Agent, AgentOptions } from '../agent/agent-options.js';
import { createBus } from '../bus/bus.js';
import { sequentialIds, steppedClock } from '../bus/ids.js';
import { recordEvents, type EventRecord } from './record-events.js';

/**
 * An agent for tests: deterministic ids and clock, every event recorded from the start.
 *
 * @example
 * const { agent, events } = testAgent({ provider: scriptedProvider(['Hello.']) });
 * await agent.run('hi');
 * expect(events.types().at(-1)).toBe('agent.finished');
 */
export function testAgent(options: Partial<AgentOptions> & Pick<AgentOptions, 'provider'>): { agent: Agent; events: EventRecord } {
  const bus = options.bus ?? createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
  const events = recordEvents(bus);
  const agent = createAgent({ name: 'tester', ...options, bus });
  return { agent, events };
}
