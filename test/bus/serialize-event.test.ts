import { describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { CATALOGUE_VERSION, type Envelope } from '../../src/bus/events.js';
import { safeJson, serializeEnvelope } from '../../src/bus/serialize-event.js';
import { createRedactor } from '../../src/record/redact.js';

const parse = (text: string): unknown => JSON.parse(text);

// Deep, cyclic and huge event data, and tool outputs that are hard to serialize (a 50 MB output,
// a circular output, BigInt and functions): serialization is guarded and never throws.
describe('safeJson', () => {
  it('replaces what JSON cannot say with readable placeholders', () => {
    const value: Record<string, unknown> = {
      big: 123n,
      fn: function lookup() {},
      arrow: () => 1,
      sym: Symbol('s'),
      error: new RangeError('out of range'),
      map: new Map<unknown, unknown>([['k', 1], [2, 'two']]),
      set: new Set(['a', 'b']),
      date: new Date(0),
      bytes: new Uint8Array(16),
      lone: 'x\uD800y\uDC00',
      pair: '😀',
      missing: undefined,
      throwing: { toJSON: () => { throw new Error('nope'); } },
    };
    value.self = value;
    const result = safeJson(value);
    expect(parse(result.text)).toEqual({
      big: '123n',
      fn: '[Function lookup]',
      arrow: '[Function arrow]',
      sym: '[Symbol(s)]',
      error: { name: 'RangeError', message: 'out of range' },
      map: [['k', 1], [2, 'two']],
      set: ['a', 'b'],
      date: '1970-01-01T00:00:00.000Z',
      bytes: '[Uint8Array 16 bytes]',
      lone: 'x\uFFFDy\uFFFD',
      pair: '😀',
      throwing: '[Unserializable: Error: nope]',
      self: '[Circular]',
    });
    expect(result.truncated).toBe(false);
    expect(result.issues).toEqual(expect.arrayContaining([
      '$.big: BigInt written as a string',
      '$.self: circular reference',
      '$.lone: lone surrogates replaced with U+FFFD',
      '$.throwing: unserializable (Error: nope)',
    ]));
  });

  it('names where each issue is, through arrays, maps, sets and a throwing part, and goes on after it', () => {
    const inner: Record<string, unknown> = { n: 1n };
    const hostile = { get boom(): never { throw new Error('getter'); } };
    const result = safeJson({ list: [{ deep: [0, 2n] }], map: new Map([['k', 3n]]), set: new Set([4n]), inner, after: hostile, last: 5n });
    expect(result.issues).toEqual([
      '$.list[0].deep[1]: BigInt written as a string',
      '$.map[0]: BigInt written as a string',
      '$.set[0]: BigInt written as a string',
      '$.inner.n: BigInt written as a string',
      '$.last: BigInt written as a string',
    ]);
    expect(parse(result.text)).toMatchObject({ after: { boom: '[Unserializable: Error: getter]' }, last: '5n' });
  });

  it('marks shared (non-cyclic) references as data, not as cycles', () => {
    const shared = { a: 1 };
    expect(parse(safeJson({ x: shared, y: shared }).text)).toEqual({ x: { a: 1 }, y: { a: 1 } });
  });

  it('stops at maxDepth (default 64) without a stack overflow, even 100 000 levels deep', () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let index = 0; index < 100_000; index++) {
      const next = {};
      deep.next = next;
      deep = next;
    }
    const result = safeJson(root);
    expect(result.text.split('"next"').length - 1).toBe(64);
    expect(result.text).toContain('"[Depth limit]"');
    expect(safeJson(root, { maxDepth: 2 }).text).toBe('{"next":{"next":"[Depth limit]"}}');
  });

  it('survives getters and proxies that throw', () => {
    const hostile = { get boom() { throw new Error('getter'); }, fine: 1 };
    expect(parse(safeJson(hostile).text)).toEqual({ boom: '[Unserializable: Error: getter]', fine: 1 });
    const proxy = new Proxy({}, { ownKeys: () => { throw new Error('trap'); } });
    expect(safeJson({ proxy }).text).toBe('{"proxy":"[Unserializable: Error: trap]"}');
  });

  it('keeps an own __proto__ key as data, without polluting', () => {
    const text = safeJson(JSON.parse('{"__proto__":{"polluted":true}}')).text;
    expect(text).toBe('{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('serializes a 50 MB string whole, or cuts it at maxChars with a marker without copying it', () => {
    const huge = 'a'.repeat(50 * 1024 * 1024);
    const whole = safeJson({ output: huge });
    expect(whole.text.length).toBe(huge.length + '{"output":""}'.length);
    const cut = safeJson({ output: huge }, { maxChars: 1_000 });
    expect(cut.truncated).toBe(true);
    expect(cut.text.length).toBeLessThan(1_100);
    expect(cut.text).toMatch(/…\[truncated at 1000 characters]$/);
  });

  it('never splits a surrogate pair when cutting', () => {
    const text = safeJson('😀'.repeat(10), { maxChars: 4 }).text; // '"😀…': the pair is kept whole
    expect((text as unknown as { isWellFormed(): boolean }).isWellFormed()).toBe(true);
  });

  it('gives "null" for a bare undefined and keeps JSON rules for NaN', () => {
    expect(safeJson(undefined).text).toBe('null');
    expect(safeJson({ n: Number.NaN, i: Number.POSITIVE_INFINITY }).text).toBe('{"n":null,"i":null}');
  });
});

describe('serializeEnvelope', () => {
  const bus = createBus();

  it('adds the catalogue version and keeps the envelope fields', () => {
    const event = bus.publish('agent.said', { text: 'hi' }, { agent: 'ana', scene: 'tavern' });
    expect(parse(serializeEnvelope(event).text)).toEqual({ v: CATALOGUE_VERSION, ...event });
  });

  it('serializes deep, cyclic and exotic tool output without throwing', () => {
    const output: Record<string, unknown> = { n: 2n ** 70n, fn: () => 1 };
    output.loop = output;
    const event = bus.publish('tool.completed', { callId: 'c', name: 't', args: {}, output, durationMs: 1, attempt: 1 });
    const line = parse(serializeEnvelope(event).text) as Envelope<'tool.completed'>;
    expect(line.data.output).toEqual({ n: '1180591620717411303424n', fn: '[Function fn]', loop: '[Circular]' });
  });

  it('with maxChars gives way in data only, so the line stays valid JSON', () => {
    const event = bus.publish('tool.completed', { callId: 'c', name: 't', args: {}, output: 'z'.repeat(1_000_000), durationMs: 1, attempt: 1 });
    const result = serializeEnvelope(event, { maxChars: 4_096 });
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(4_096);
    const line = parse(result.text) as Record<string, unknown>;
    expect(line).toMatchObject({ v: CATALOGUE_VERSION, id: event.id, type: 'tool.completed' });
    expect(line.data).toMatchObject({ $truncated: true, chars: expect.any(Number), preview: expect.stringMatching(/^{"callId":"c"/) });
  });

  it('keeps the short top-level strings of truncated data beside the marker (redacted), so the event can still be answered', () => {
    const secret = 'sk-live-0123456789abcdefghij';
    const event = bus.publish('tool.approval.requested', { callId: 'c-9', name: 'pay', args: { note: 'y'.repeat(10_000) }, argsHash: 'ab'.repeat(32) });
    const withKey = bus.publish('tool.approval.requested', { callId: secret, name: 'x'.repeat(300), args: { note: 'y'.repeat(10_000) }, argsHash: 'cd'.repeat(32) });
    const line = parse(serializeEnvelope(event, { maxChars: 4_096 }).text) as { data: Record<string, unknown> };
    expect(line.data).toMatchObject({ $truncated: true, callId: 'c-9', name: 'pay', argsHash: 'ab'.repeat(32) });
    expect(line.data).not.toHaveProperty('args');
    const redacted = parse(serializeEnvelope(withKey, { maxChars: 4_096, redactor: createRedactor() }).text) as { data: Record<string, unknown> };
    expect(redacted.data.callId).toBe('[redacted]');
    expect(redacted.data).not.toHaveProperty('name');
  });
});
