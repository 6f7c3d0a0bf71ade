import { describe, expect, it } from 'vitest';
import { defineTool, isToolResult } from '../../src/tools/index.js';
import { callResultOutput } from '../../src/mcp/call-result.js';
import { convertSchema } from '../../src/mcp/convert-schema.js';
import type { McpConnection } from '../../src/mcp/mcp-connection.js';
import type { McpApprovalPolicy } from '../../src/mcp/mcp-options.js';
import { makeTool } from '../../src/mcp/mcp-tool.js';
import { defaultServerName, mapToolNames } from '../../src/mcp/tool-names.js';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('tool names', () => {
  it.each([
    ['mcp-servers/everything', 'everything'],
    ['secure-filesystem-server', 'secure-filesystem-server'],
    ['@acme/mail server', 'mail_server'],
    ['9lives', 'mcp9lives'],
    ['', 'mcp'],
    [undefined, 'mcp'],
    ['x'.repeat(40), 'x'.repeat(32)],
  ])('the default prefix of %j is %j', (reported, expected) => {
    expect(defaultServerName(reported)).toBe(expected);
  });

  it('maps names in order, replaces what the rule refuses, caps the length and keeps every name apart', () => {
    const long = `${'a'.repeat(70)}`;
    const mapped = mapToolNames('gh', ['create_issue', 'search.code', 'search code', 'search_code', 'ünïcode', long, `${long}b`, 'taken'], ['gh__taken']);
    expect([...mapped.values()].slice(0, 5)).toEqual(['gh__create_issue', 'gh__search_code', 'gh__search_code_2', 'gh__search_code_3', 'gh___n_code']);
    const [first, second] = [mapped.get(long)!, mapped.get(`${long}b`)!];
    expect(first).toHaveLength(64);
    expect(first).toMatch(/^gh__a+_[0-9a-f]{8}$/);
    expect(second).not.toBe(first);
    expect(mapped.get('taken')).toBe('gh__taken_2');
    expect([...mapped.values()].every((name) => /^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(name))).toBe(true);
  });
});

describe('convertSchema', () => {
  it.each([
    [
      '$schema and the root $id dropped, $defs to definitions with refs rewritten',
      { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'urn:x', ...object({ a: { $ref: '#/$defs/A' }, b: { $ref: '#/$defs/A/properties/c' } }), $defs: { A: object({ c: { type: 'string' } }) } },
      { ...object({ a: { $ref: '#/definitions/A' }, b: { $ref: '#/definitions/A/properties/c' } }), definitions: { A: object({ c: { type: 'string' } }) } },
    ],
    [
      'prefixItems to a draft-07 tuple, items to additionalItems',
      object({ p: { type: 'array', prefixItems: [{ type: 'string' }], items: false, minItems: 1 } }),
      object({ p: { type: 'array', items: [{ type: 'string' }], additionalItems: false, minItems: 1 } }),
    ],
    [
      'dependentRequired and dependentSchemas to dependencies',
      object({ a: { type: 'string' }, b: { type: 'string' } }, { dependentRequired: { a: ['b'] }, dependentSchemas: { b: { type: 'object', maxProperties: 2 } } }),
      object({ a: { type: 'string' }, b: { type: 'string' } }, { dependencies: { a: ['b'], b: { type: 'object', maxProperties: 2 } } }),
    ],
    [
      'draft-04 boolean exclusive bounds to numbers',
      object({ n: { type: 'number', minimum: 1, exclusiveMinimum: true, maximum: 9, exclusiveMaximum: false } }),
      object({ n: { type: 'number', exclusiveMinimum: 1, maximum: 9 } }),
    ],
    [
      'keywords without a draft-07 form left to the server',
      object({ a: { type: 'array', contains: { type: 'string' }, minContains: 2 } }, { unevaluatedProperties: false }),
      object({ a: { type: 'array', contains: { type: 'string' } } }),
    ],
    [
      'unbounded pattern and format, unknown formats and uniqueItems over objects left to the server, named in the description',
      object({
        code: { type: 'string', pattern: '^[a-z]+$', description: 'A code.' },
        when: { type: 'string', format: 'date-time', maxLength: 40 },
        id: { type: 'integer', format: 'int64' },
        tint: { type: 'string', format: 'color', maxLength: 9 },
        rows: { type: 'array', items: { type: 'object' }, uniqueItems: true },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      }),
      object({
        code: { type: 'string', description: 'A code. (pattern: ^[a-z]+$)' },
        when: { type: 'string', format: 'date-time', maxLength: 40 },
        id: { type: 'integer', description: '(format: int64)' },
        tint: { type: 'string', maxLength: 9, description: '(format: color)' },
        rows: { type: 'array', items: { type: 'object' }, description: '(items must be unique)' },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      }),
    ],
    ['an undeclared required name declared', object({ a: { type: 'string' } }, { required: ['a', 'b'] }), object({ a: { type: 'string' }, b: {} }, { required: ['a', 'b'] })],
  ])('%s', (_title, input, expected) => {
    const converted = convertSchema(input);
    expect(converted.ok && converted.value.parameters).toEqual(expected);
    // Every converted schema registers.
    expect(() => defineTool({ name: 't', description: '', parameters: (converted as { value: { parameters: Record<string, unknown> } }).value.parameters, execute: () => 1 })).not.toThrow();
  });

  it('renames root properties the parameter rule refuses, and says how to map them back', () => {
    // Parsed from JSON, as a server's schema is: `__proto__` is then an ordinary key.
    const converted = convertSchema(
      JSON.parse(
        '{"type":"object","properties":{"first name":{"type":"string"},"action":{"type":"string"},"2fa":{"type":"boolean"},"__proto__":{"type":"string"},"ok":{"type":"string"}},"required":["first name","action"],"dependencies":{"action":["first name"]}}',
      ),
    );
    expect(converted.ok).toBe(true);
    const { parameters, renamed } = (converted as { value: { parameters: Record<string, unknown>; renamed: ReadonlyMap<string, string> } }).value;
    expect(Object.keys(parameters['properties'] as object)).toEqual(['first_name', 'action_', 'p2fa', 'p__proto__', 'ok']);
    expect(parameters['required']).toEqual(['first_name', 'action_']);
    expect(parameters['dependencies']).toEqual({ action_: ['first_name'] });
    expect([...renamed]).toEqual([['first_name', 'first name'], ['action_', 'action'], ['p2fa', '2fa'], ['p__proto__', '__proto__']]);
  });

  it.each([
    [[], 'not an object'],
    [{ type: 'string' }, 'MCP tools take an object'],
    [object({}, { $defs: { A: {} }, definitions: { A: {} } }), '"$defs" and "definitions" both define "A"'],
    [object({ a: { type: 'array', prefixItems: {} } }), '"prefixItems" is not an array'],
  ])('refuses %j: %s', (input, problem) => {
    expect(convertSchema(input)).toEqual({ ok: false, problem: expect.stringContaining(problem) });
  });

  it('refuses a schema nested too deep instead of overflowing', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 200; level++) deep = { type: 'object', properties: { x: deep } };
    expect(convertSchema(deep)).toEqual({ ok: false, problem: expect.stringContaining('deeper than 64') });
  });
});

describe('callResultOutput', () => {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

  it('gives one text part as a string and no content as an empty string', () => {
    expect(callResultOutput({ content: [{ type: 'text', text: 'hi' }] })).toBe('hi');
    expect(callResultOutput({ content: [] })).toBe('');
    expect(callResultOutput({})).toBe('');
  });

  it('keeps structured content first and drops the text copies of it', () => {
    const structured = { items: [1, 2] };
    const output = callResultOutput({ structuredContent: structured, content: [{ type: 'text', text: '{"items":[1,2]}' }, { type: 'text', text: '[1, 2]' }, { type: 'text', text: 'Two items.' }] });
    expect(isToolResult(output) && output.parts).toEqual([{ type: 'json', value: structured }, { type: 'text', text: 'Two items.' }]);
  });

  it('takes structured content of any JSON value, as later specs allow', () => {
    const output = callResultOutput({ structuredContent: 42, content: [{ type: 'text', text: '42' }] });
    expect(isToolResult(output) && output.parts).toEqual([{ type: 'json', value: 42 }]);
  });

  it('caps the number of parts', () => {
    const content = Array.from({ length: 70 }, (_, index) => ({ type: 'image', data: png.toString('base64'), mimeType: 'image/png', index }));
    const output = callResultOutput({ content });
    const parts = isToolResult(output) ? output.parts : [];
    expect(parts).toHaveLength(64);
    expect(parts[63]).toEqual({ type: 'text', text: '[7 more content items not shown]' });
  });

  it('throws a ToolError (execution) with the server\'s text for isError', () => {
    expect(() => callResultOutput({ isError: true, content: [{ type: 'text', text: 'no such city' }] })).toThrow(expect.objectContaining({ name: 'ToolError', kind: 'execution', retryable: false, message: 'no such city' }));
    expect(() => callResultOutput({ isError: true })).toThrow('the MCP server reported an error and gave no message');
  });
});

describe('annotations and the approval policy', () => {
  const connection = {} as McpConnection;
  const listed = (name: string, annotations?: Record<string, unknown>) => ({ name, description: `${name} things`, inputSchema: object({}), ...(annotations && { annotations }) });
  const approvalOf = (policy: McpApprovalPolicy, annotations?: Record<string, unknown>) => {
    const made = makeTool(listed('t', annotations), 's__t', { server: 's', connection, approval: policy, timeoutMs: 1_500, retry: { attempts: 2 } });
    if (!made.ok) throw new Error(made.problem);
    return made.value;
  };

  it.each([
    [undefined, true], // no annotations: the spec's defaults say "may destroy"
    [{ readOnlyHint: true }, false],
    [{ destructiveHint: false }, false],
    [{ readOnlyHint: false, destructiveHint: true }, true],
    [{ idempotentHint: true }, true],
    [{ readOnlyHint: true, destructiveHint: true }, false], // destructiveHint means nothing for a read-only tool
  ])("'destructive' with annotations %j asks: %s", (annotations, asks) => {
    expect(approvalOf('destructive', annotations).tool.needsApproval === true).toBe(asks);
  });

  it('reads readOnlyHint and idempotentHint, and applies timeoutMs and retry to every tool', () => {
    expect(approvalOf('never', { readOnlyHint: true }).tool).toMatchObject({ readOnly: true, timeoutMs: 1_500, retry: { attempts: 2 } });
    expect(approvalOf('never', { idempotentHint: true }).tool).toMatchObject({ idempotent: true });
    expect(approvalOf('never', { readOnlyHint: 'yes' }).tool).not.toHaveProperty('readOnly');
  });

  it("'always', 'never' and a predicate, which fails closed when it throws", () => {
    expect(approvalOf('always', { readOnlyHint: true }).tool.needsApproval).toBe(true);
    expect(approvalOf('never').tool).not.toHaveProperty('needsApproval');
    const seen: unknown[] = [];
    expect(approvalOf((tool) => (seen.push(tool), tool.annotations.openWorldHint === true), { openWorldHint: true }).tool.needsApproval).toBe(true);
    expect(seen).toEqual([{ server: 's', name: 't', toolName: 's__t', description: 't things', annotations: { openWorldHint: true } }]);
    const broken = approvalOf(() => {
      throw new Error('boom');
    });
    expect(broken.tool.needsApproval).toBe(true);
    expect(broken.approvalProblem).toBe('the approval predicate threw (boom); the tool asks for approval');
  });
});
