/**
 * The native format (docs/protocol.md rule 17, the parts that need no registry): the provider's tool
 * calls become raw calls. The content is never scanned for `<ACTION>`: with native calling, text
 * is only speech.
 */
import type { NativeToolCall } from '../llm/types.js';
import { resolveParseOptions, type ParseOptions } from './parse-options.js';
import type { ParsedOutput, RawCall } from './types.js';

/**
 * Turns a provider response with native tool calls into raw calls: more than
 * `maxCallsPerAction` → `limit_exceeded`, a repeated id → `duplicate_call_id`. An empty id gets
 * `options.callId(index)`. The arguments stay text; the validate stage checks them.
 *
 * @example
 * parseNativeCalls({ text: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] })
 * // → { text: '', hasBlock: true, calls: [{ format: 'native', callId: 'c1', name: 'read_file', argumentsText: '{"path":"a.ts"}' }] }
 */
export function parseNativeCalls(response: { text: string; toolCalls?: NativeToolCall[] }, options?: ParseOptions): ParsedOutput {
  const { limits, callId } = resolveParseOptions(options);
  const text = typeof response.text === 'string' ? response.text.trim() : '';
  const toolCalls = Array.isArray(response.toolCalls) ? response.toolCalls : [];
  if (toolCalls.length === 0) return { text, calls: [], hasBlock: false };
  if (toolCalls.length > limits.maxCallsPerAction) {
    return {
      text,
      calls: [],
      hasBlock: true,
      problem: {
        category: 'limit_exceeded',
        message: `The turn has ${toolCalls.length} tool calls; the limit is ${limits.maxCallsPerAction}. Make at most ${limits.maxCallsPerAction} calls per turn.`,
      },
    };
  }
  const given = new Set<string>();
  for (const call of toolCalls) {
    const id = stringOf(call?.id);
    if (id === '') continue;
    if (given.has(id)) {
      return {
        text,
        calls: [],
        hasBlock: true,
        problem: {
          category: 'duplicate_call_id',
          message: `Two tool calls share the id ${JSON.stringify(id)}; each call needs its own id.`,
        },
      };
    }
    given.add(id);
  }
  const calls: RawCall[] = toolCalls.map((call, index) => {
    let id = stringOf(call?.id);
    if (id === '') {
      // A generated id must not collide with one the provider gave.
      id = callId(index);
      while (given.has(id)) id = `${id}_`;
      given.add(id);
    }
    return { format: 'native', callId: id, name: stringOf(call?.name), argumentsText: stringOf(call?.arguments) };
  });
  return { text, calls, hasBlock: true };
}

/** Provider adapters are typed, but a broken one must not make the parser throw. */
function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
