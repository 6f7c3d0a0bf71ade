import { createBus } from '../../src/bus/bus.js';
import type { Envelope, EventType } from '../../src/bus/events.js';
import { sequentialIds, steppedClock } from '../../src/bus/ids.js';
import type { Args, ToolCall } from '../../src/protocol/types.js';
import type { DispatchOptions, Publish } from '../../src/tools/dispatch-calls.js';
import type { Tool, ToolDefinition } from '../../src/tools/types.js';

/** A Tool built by hand (defineTool lives elsewhere); read-only unless told otherwise. */
export function makeTool(name: string, execute: ToolDefinition['execute'], extra: Partial<ToolDefinition> = {}): Tool {
  return {
    kind: 'tool',
    name,
    description: `${name} (test tool)`,
    parameters: { type: 'object', properties: {} },
    readOnly: true,
    execute,
    ...extra,
  } as Tool;
}

let nextCall = 0;
/** A validated call; ids are unique across a test file. */
export function call(name: string, args: Args = {}, callId = `call-${++nextCall}`): ToolCall {
  return { callId, name, args };
}

/** Pairs a tool with a call of it. */
export function entry(tool: Tool, args: Args = {}, callId?: string): { call: ToolCall; tool: Tool } {
  return { call: call(tool.name, args, callId), tool };
}

/** A bus that records every envelope, and dispatch options bound to it. */
export function harness(overrides: Partial<DispatchOptions> = {}) {
  const bus = createBus({ ids: sequentialIds('e'), clock: steppedClock() });
  const events: Envelope[] = [];
  bus.on('*', (event) => {
    if (typeof event === 'object') events.push(event); // envelopes only (see session-log.ts)
  });
  const controller = new AbortController();
  const publish: Publish = (type, data) => bus.publish(type, data, { agent: 'tester' });
  const options: DispatchOptions = { signal: controller.signal, agent: 'tester', publish, ...overrides };
  return {
    bus,
    events,
    controller,
    options,
    /** `type:callId[:attempt]` lines, the easiest order to assert. */
    trace: (types: EventType[] = ['tool.started', 'tool.completed', 'tool.failed']) =>
      events
        .filter((event) => types.includes(event.type))
        .map((event) => {
          const data = event.data as { callId: string; attempt?: number };
          return `${event.type}:${data.callId}${data.attempt === undefined ? '' : `#${data.attempt}`}`;
        }),
    of: <K extends EventType>(type: K) => events.filter((event) => event.type === type) as Envelope<K>[],
  };
}

export { deferred } from '../../src/testing/deferred.js';

/** Lets pending promise callbacks run (no timers involved). */
export async function flush(rounds = 20): Promise<void> {
  for (let index = 0; index < rounds; index++) await Promise.resolve();
}

/** A promise that settles only when the signal aborts (a well-behaved slow tool). */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
