import { describe, expect, it } from 'vitest';
import { parseNativeCalls } from '../../src/protocol/parse-native.js';
import type { NativeToolCall } from '../../src/llm/types.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

const call = (id: string, name = 'read_file', args = '{"path":"a.ts"}'): NativeToolCall => ({ id, name, arguments: args });

describe('parseNativeCalls (rule 17)', () => {
  it('turns tool calls into raw native calls in order', () => {
    expect(parseNativeCalls({ text: ' Reading. ', toolCalls: [call('c1'), call('c2', 'list', '')] })).toEqual({
      text: 'Reading.',
      hasBlock: true,
      calls: [
        { format: 'native', callId: 'c1', name: 'read_file', argumentsText: '{"path":"a.ts"}' },
        { format: 'native', callId: 'c2', name: 'list', argumentsText: '' },
      ],
    });
  });

  it.each([
    ['no toolCalls', undefined],
    ['an empty list', []],
  ])('%s → text only, never scanning the content for <ACTION>', (_label, toolCalls) => {
    const text = 'Done. <ACTION><read_file><path>a</path></read_file></ACTION>';
    expect(parseNativeCalls({ text, ...(toolCalls && { toolCalls }) })).toEqual({ text, calls: [], hasBlock: false });
  });

  it('gives calls without an id one from callId, avoiding ids already used', () => {
    const parsed = parseNativeCalls({ text: '', toolCalls: [call(''), call('call_1'), call('')] });
    expect(parsed.calls.map((raw) => raw.callId)).toEqual(['call_1_', 'call_1', 'call_3']);
    const custom = parseNativeCalls({ text: '', toolCalls: [call('')] }, { callId: (index) => `t-${index}` });
    expect(custom.calls[0]?.callId).toBe('t-0');
  });

  it('rejects duplicate ids → duplicate_call_id', () => {
    expect(parseNativeCalls({ text: '', toolCalls: [call('x'), call('y'), call('x')] })).toMatchObject({
      calls: [],
      hasBlock: true,
      problem: { category: 'duplicate_call_id' },
    });
  });

  it('limits the number of calls → limit_exceeded', () => {
    const many = Array.from({ length: 17 }, (_, index) => call(`c${index}`));
    expect(parseNativeCalls({ text: '', toolCalls: many }).problem?.category).toBe('limit_exceeded');
    expect(parseNativeCalls({ text: '', toolCalls: many.slice(0, 3) }, { limits: { maxCallsPerAction: 2 } }).problem?.category).toBe('limit_exceeded');
    expect(parseNativeCalls({ text: '', toolCalls: many.slice(0, 16) }).calls).toHaveLength(16);
  });

  it('keeps names and arguments as written (checked later) and survives a broken adapter', () => {
    const broken = [{ id: 7, name: null, arguments: undefined }] as unknown as NativeToolCall[];
    expect(parseNativeCalls({ text: '', toolCalls: broken }).calls).toEqual([{ format: 'native', callId: 'call_1', name: '', argumentsText: '' }]);
    const proto = parseNativeCalls({ text: '', toolCalls: [call('a', '__proto__', '{"__proto__":{"polluted":1}}')] });
    expect(proto.calls[0]).toMatchObject({ name: '__proto__', argumentsText: '{"__proto__":{"polluted":1}}' });
  });
});
