import { anthropicProvider, type AnthropicProviderOptions } from '../../src/llm/anthropic/index.js';
import type { ModelRequest, Provider, StreamEvent } from '../../src/llm/types.js';
import { MODEL } from './transcripts/anthropic.js';
import type { WireServer } from './wire-server.js';

export const KEY = 'sk-ant-api03-test-key-one-0000000000000000';
export const SECOND_KEY = 'sk-ant-api03-test-key-two-1111111111111111';

/** An Anthropic adapter pointed at the wire server, with a fixed clock for the key ring. */
export function adapter(server: WireServer, options: Partial<AnthropicProviderOptions> = {}): Provider {
  return anthropicProvider({ model: MODEL, apiKey: KEY, baseURL: server.url, clock: () => 1_000, ...options });
}

/** A one-question request; `overrides` adds tools, stop sequences, a signal… */
export function ask(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [
      { role: 'system', content: 'You are the referee.' },
      { role: 'user', content: 'Who is player 7?' },
    ],
    signal: new AbortController().signal,
    round: 1,
    agent: 'referee',
    ...overrides,
  };
}

/** Every event of a stream, and the error that ended it (if one did). */
export async function drain(events: AsyncIterable<StreamEvent>): Promise<{ events: StreamEvent[]; error?: unknown }> {
  const seen: StreamEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return { events: seen, error };
  }
  return { events: seen };
}

/** The body the server received for request `index`. */
export function bodyOf(server: WireServer, index = 0): Record<string, unknown> {
  return server.requests[index]!.body as Record<string, unknown>;
}
