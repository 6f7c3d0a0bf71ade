import { describe, expect, expectTypeOf, it } from 'vitest';
import { ToolSchemaError } from '../../src/errors.js';
import { compiledParametersOf, defineTool } from '../../src/tools/define-tool.js';
import type { ToolDefinition } from '../../src/tools/types.js';

const base = {
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' }, count: { type: 'integer' } }, required: ['id'] },
  execute: async () => ({ name: 'Ana' }),
} satisfies ToolDefinition;

describe('defineTool', () => {
  it('returns a frozen tool with kind "tool" and the options given', () => {
    const tool = defineTool({ ...base, readOnly: true, timeoutMs: 500, retry: { attempts: 3 }, concurrency: 2 });
    expect(tool.kind).toBe('tool');
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.parameters)).toBe(true);
    expect(tool).toMatchObject({ name: 'lookup_player', readOnly: true, timeoutMs: 500, concurrency: 2 });
    expect(tool.retry).toEqual({ attempts: 3, backoffMs: 100, maxBackoffMs: 5000 });
  });

  it('leaves options that were not given out, for the dispatcher defaults', () => {
    const tool = defineTool(base);
    expect(Object.keys(tool).sort()).toEqual(['description', 'execute', 'kind', 'name', 'parameters']);
  });

  it('compiles the validator once and keeps it', () => {
    const tool = defineTool(base);
    const compiled = compiledParametersOf(tool);
    expect(compiled?.validate({ id: 'x' })).toBe(true);
    expect(compiledParametersOf(tool)).toBe(compiled);
  });

  it('copies the schema, so later edits by the host change nothing', () => {
    const parameters = { type: 'object', properties: { id: { type: 'string' } } };
    const tool = defineTool({ ...base, parameters });
    (parameters.properties as Record<string, unknown>)['id'] = { type: 'integer' };
    expect(tool.parameters).toEqual({ type: 'object', properties: { id: { type: 'string' } } });
  });

  it('types execute arguments from the parameters', () => {
    const tool = defineTool({ ...base, parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, execute: async ({ id }) => id.toUpperCase() });
    expectTypeOf(tool.execute).parameter(0).toEqualTypeOf<{ id: string }>();
  });

  it.each([
    ['execute is not a function', { execute: 'run' }, 'execute must be a function'],
    ['description is missing', { description: undefined }, 'description must be a string'],
    ['timeoutMs is negative', { timeoutMs: -1 }, 'timeoutMs must be an integer from 0'],
    ['timeoutMs is NaN', { timeoutMs: Number.NaN }, 'timeoutMs must be an integer'],
    ['timeoutMs overflows a timer', { timeoutMs: 2 ** 31 }, 'timeoutMs must be an integer from 0 (no limit) to 2147483647'],
    ['concurrency is 0', { concurrency: 0 }, 'concurrency must be an integer ≥ 1 or Infinity'],
    ['concurrency is fractional', { concurrency: 1.5 }, 'concurrency must be'],
    ['retry.attempts is 0', { retry: { attempts: 0 } }, 'retry.attempts must be an integer from 1'],
    ['retry has an unknown key', { retry: { attempts: 2, delay: 5 } }, 'retry has an unknown option "delay"'],
    ['retry backoff is inverted', { retry: { attempts: 2, backoffMs: 500, maxBackoffMs: 100 } }, 'must not be less than'],
    ['readOnly is a string', { readOnly: 'yes' }, 'readOnly must be true or false'],
    ['needsApproval is a string', { needsApproval: 'always' }, 'needsApproval must be a boolean or a function'],
    ['verbatimParams names an unknown parameter', { verbatimParams: ['ids'] }, 'verbatimParams names "ids", which is not a parameter (did you mean "id"?)'],
    ['verbatimParams names a non-string parameter', { verbatimParams: ['count'] }, 'which is not a string parameter'],
    ['verbatimParams is not an array', { verbatimParams: 'id' }, 'verbatimParams must be an array'],
    ['an option is misspelled', { timeout: 5 }, 'unknown option "timeout"; did you mean "timeoutMs"?'],
    ['parameters are not plain data', { parameters: { type: 'object', properties: { a: { default: () => 1 } } } }, 'plain JSON data'],
  ])('throws when %s', (_label, override, fragment) => {
    const attempt = () => defineTool({ ...base, ...override } as unknown as ToolDefinition);
    expect(attempt).toThrow(ToolSchemaError);
    expect(attempt).toThrow(fragment);
  });

  it('accepts Infinity concurrency, timeoutMs 0 and a predicate for needsApproval', () => {
    const tool = defineTool({ ...base, concurrency: Number.POSITIVE_INFINITY, timeoutMs: 0, needsApproval: ({ id }) => id === 'x', verbatimParams: ['id'] });
    expect(tool.verbatimParams).toEqual(['id']);
  });

  it('throws for a non-object definition', () => {
    expect(() => defineTool(null as unknown as ToolDefinition)).toThrow(ToolSchemaError);
  });
});
