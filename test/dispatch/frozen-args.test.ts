import { describe, expect, it } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { freezeArgs } from '../../src/tools/freeze-args.js';
import type { Args } from '../../src/protocol/types.js';
import { entry, harness, makeTool } from './helpers.js';

// The tool gets a deep-frozen deep copy; mutating it throws (ES modules are
// strict) and changes nothing; the logged args equal the validated args.
describe('dispatchCalls: frozen arguments', () => {
  const validated = (): Args => ({ id: 7, tags: ['a', 'b'], filter: { team: 'red', nested: { depth: 1 } } });

  it.each([
    ['a top-level field', (args: Args) => void ((args as Record<string, unknown>).id = 8)],
    ['a new field', (args: Args) => void ((args as Record<string, unknown>).extra = true)],
    ['a nested array', (args: Args) => void (args.tags as string[]).push('c')],
    ['a nested object', (args: Args) => void (((args.filter as Record<string, unknown>).nested as Record<string, unknown>).depth = 2)],
    ['a delete', (args: Args) => void delete (args as Record<string, unknown>).id],
  ])('throws when the tool writes %s, and the logged args stay the validated ones', async (_label, mutate) => {
    const h = harness();
    const args = validated();
    let received: Args | undefined;
    const tool = makeTool('mutator', (given) => {
      received = given;
      mutate(given);
      return 'mutated';
    });
    const [result] = await dispatchCalls([entry(tool, args)], h.options);
    expect(result).toMatchObject({ status: 'failed', error: { kind: 'execution' } });
    expect(result?.status === 'failed' && result.error.message).toMatch(/^TypeError: /);
    expect(args).toEqual(validated()); // the caller's object is untouched …
    expect(Object.isFrozen(args)).toBe(false); // … and not frozen: the tool got a copy
    const started = h.of('tool.started')[0];
    expect(started?.data.args).toBe(received); // the tool got exactly what was logged
    expect(started?.data.args).toEqual(validated());
    expect(h.of('tool.failed')[0]?.data.args).toEqual(validated());
    expect(result?.args).toEqual(validated());
  });

  it('keeps a hostile own __proto__ key as data', async () => {
    const h = harness();
    const args = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Args;
    const tool = makeTool('echo', (given) => Object.keys(given));
    const [result] = await dispatchCalls([entry(tool, args)], h.options);
    expect(result).toMatchObject({ status: 'completed', output: ['__proto__', 'x'] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('freezeArgs', () => {
  const isDeepFrozen = (value: unknown): boolean =>
    typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen));

  it.each([
    ['plain JSON', { id: 7, tags: ['a', { b: [1, null, true] }], deep: { er: { still: 'x' } }, empty: {}, none: [] }],
    ['a null-prototype object', { inner: Object.assign(Object.create(null) as object, { k: 1 }) }],
    ['nesting deeper than the direct copy goes', JSON.parse(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`) as Args],
  ])('copies and deep-freezes %s', (_label, args) => {
    const frozen = freezeArgs(args);
    expect(frozen).not.toBe(args);
    expect(frozen).toEqual({ ...args });
    expect(isDeepFrozen(frozen)).toBe(true);
    expect(Object.isFrozen(args)).toBe(false);
  });

  it('falls back to structuredClone for values that are not plain JSON', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const when = new Date(0);
    const frozen = freezeArgs({ when, cyclic }) as { when: Date; cyclic: Record<string, unknown> };
    expect(frozen.when).toEqual(when);
    expect(frozen.when).not.toBe(when);
    expect(frozen.cyclic.self).toBe(frozen.cyclic);
    expect(Object.isFrozen(frozen.cyclic)).toBe(true);
  });

  it('copies once: a copy it made is returned as it is, any other object is copied', () => {
    const args = { to: 'ana', tags: ['a'] };
    const frozen = freezeArgs(args);
    expect(frozen).not.toBe(args);
    expect(freezeArgs(frozen)).toBe(frozen);
    // Frozen by someone else, shallowly: still copied, and deeply frozen.
    const shallow = Object.freeze({ to: 'bo', tags: ['b'] });
    const copy = freezeArgs(shallow);
    expect(copy).not.toBe(shallow);
    expect(Object.isFrozen(copy.tags)).toBe(true);
    // A JavaScript caller of dispatchCalls may pass no object at all: returned as it is, as before.
    expect(freezeArgs(null as unknown as Args)).toBeNull();
  });

  it('marks its copies invisibly: same keys, same JSON, and a clone of one is copied again', () => {
    const frozen = freezeArgs({ to: 'ana', tags: ['a'] });
    expect(Reflect.ownKeys(frozen)).toEqual(['to', 'tags']);
    expect(JSON.stringify(frozen)).toBe('{"to":"ana","tags":["a"]}');
    const cloned = structuredClone(frozen);
    expect(freezeArgs(cloned)).not.toBe(cloned);
    // The structuredClone fallback marks its copy too.
    const dated = freezeArgs({ when: new Date(0) });
    expect(freezeArgs(dated)).toBe(dated);
  });

  it('throws on a function, which only a host bug puts in validated args', () => {
    expect(() => freezeArgs({ callback: () => 1 })).toThrow();
  });
});
