/**
 * Third-party corpora (BFCL, Roo Code, Cline, vLLM, Hermes) through troupe's
 * render → parse → validate path. Pass counts are floors measured when this was written; a
 * regression fails, an improvement should raise the floor. Set CORPORA_REPORT=1 to print the
 * categories behind docs/protocol-corpora.md.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { exampleCall } from '../../src/protocol/manifest.js';
import { parseOutput } from '../../src/protocol/parse-output.js';
import { renderAction } from '../../src/protocol/render-call.js';
import { DEFAULT_LIMITS, type RawCall } from '../../src/protocol/types.js';
import { toToolName } from '../../src/tools/check-tool-schema.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';
import { validateCalls, type ValidationProblem } from '../../src/tools/validate-calls.js';
import { decodeInput, pickAcceptable, readJsonl, registerFunction, Tally, type Registration } from './corpora-mapping.js';

const REPORT = process.env['CORPORA_REPORT'] === '1';
const limits = DEFAULT_LIMITS;

type FunctionDef = { name: string; description?: string; parameters?: unknown };
type BfclRow = { id: string; category: string; expected_behavior: string; functions: FunctionDef[]; ground_truth: Array<Record<string, Record<string, unknown>>> | null };

function problemLabel(problem: ValidationProblem): string {
  if (problem.kind === 'malformed') return `malformed: ${problem.problem.category}`;
  const issue = problem.rejection.issues[0];
  return `rejected: ${problem.rejection.category}${issue?.keyword === undefined ? '' : ` (${issue.keyword})`}`;
}

function registrationLabel(reason: string): string {
  if (/tool name .* must match/.test(reason)) return 'tool name outside ^[A-Za-z][A-Za-z0-9_-]{0,63}$';
  if (/property .* must match/.test(reason)) return 'property name outside the name pattern (e.g. _from, _class)';
  if (/reserved name/.test(reason)) return 'reserved property name (action/think/…)';
  if (/strictTypes/.test(reason)) return 'strict AJV: keyword without its type (strictTypes)';
  if (/strictTuples|is \d+-tuple/.test(reason)) return 'strict AJV: tuple without bounds';
  if (/unknown keyword/.test(reason)) return 'strict AJV: unknown keyword';
  if (/not a valid JSON Schema/.test(reason)) return 'not a valid draft-07 schema (unknown type name)';
  if (/secure meta-schema/.test(reason)) return 'secure meta-schema';
  return `other: ${reason.slice(0, 80)}`;
}

/** True when `actual` holds every value of `expected`; extra object keys are AJV defaults. */
function matches(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((item, index) => matches(item, actual[index]));
  if (typeof expected === 'object' && expected !== null) {
    return typeof actual === 'object' && actual !== null && !Array.isArray(actual) && Object.entries(expected).every(([key, value]) => Object.hasOwn(actual, key) && matches(value, (actual as Record<string, unknown>)[key]));
  }
  return isDeepStrictEqual(expected, actual);
}

type Run = { ok: true; value: Array<{ name: string; args: Record<string, unknown> }> } | { ok: false; label: string };

function outcomeLabel(result: Run, expected: Array<{ name: string; args: Record<string, unknown> }>): string {
  if (!result.ok) return result.label;
  return result.value.length === expected.length && expected.every((call, index) => matches(call.args, result.value[index]?.args)) ? 'pass' : 'value differs';
}

function detail(result: Run, expected: Array<{ name: string; args: Record<string, unknown> }>): string {
  if (!result.ok) return '';
  for (const [index, call] of expected.entries()) {
    for (const [key, value] of Object.entries(call.args)) {
      const got = result.value[index]?.args[key];
      if (!matches(value, got)) return `${key}: ${JSON.stringify(value)} → ${JSON.stringify(got)}`;
    }
  }
  return '';
}

/** `parseOutput` → `validateCalls` for one text, never throwing (a throw fails the test). */
function run(text: string, tools: readonly Tool[]) {
  const parsed = parseOutput(text);
  if (parsed.problem !== undefined) return { ok: false as const, label: `malformed: ${parsed.problem.category}`, text: parsed.text, calls: parsed.calls };
  const outcome = validateCalls(parsed.calls, { registry: createRegistry(tools), limits });
  if (!outcome.ok) return { ok: false as const, label: problemLabel(outcome.problem), text: parsed.text, calls: parsed.calls };
  return { ok: true as const, value: outcome.value, text: parsed.text, calls: parsed.calls };
}

describe('BFCL v4 single-turn', () => {
  it('registers the function schemas and round-trips each ground-truth call', () => {
    const rows = readJsonl<BfclRow>('bfcl_v4_single_turn.jsonl');
    const cache = new Map<string, Registration>();
    const registrations = new Tally();
    const calls = new Tally();
    let nativePasses = 0;
    for (const row of rows) {
      const registered = row.functions.map((definition) => {
        const key = JSON.stringify(definition);
        let registration = cache.get(key);
        if (registration === undefined) {
          registration = registerFunction(definition);
          cache.set(key, registration);
          registrations.add(registration.ok ? 'registered' : registrationLabel(registration.reason), registration.ok ? '' : `${definition.name}: ${registration.reason}`);
        }
        return registration;
      });
      if (row.expected_behavior !== 'call' || row.ground_truth === null) continue;
      const byName = new Map(registered.filter((entry) => entry.ok).map((entry) => [entry.originalName, entry.tool] as const));
      const failed = new Map(registered.filter((entry) => !entry.ok).map((entry) => [entry.originalName, entry.reason] as const));
      const expected: Array<{ name: string; args: Record<string, unknown> }> = [];
      let skip: string | undefined;
      for (const call of row.ground_truth) {
        for (const [name, params] of Object.entries(call)) {
          if (!byName.has(name)) {
            skip = failed.has(name) ? `tool not registered: ${registrationLabel(failed.get(name) as string)}` : 'ground truth names a function not offered';
            continue;
          }
          const args: Record<string, unknown> = {};
          for (const [param, values] of Object.entries(params)) {
            const picked = pickAcceptable(values);
            if (picked !== undefined) args[param] = picked.value;
          }
          expected.push({ name: toToolName(name), args });
        }
      }
      if (skip !== undefined) {
        calls.add(skip, row.id);
        continue;
      }
      const tools = [...byName.values()];
      const xml = outcomeLabel(run(`Calling.\n${renderAction(expected)}`, tools), expected);
      // The same values as native JSON arguments: what fails here too is the corpus disagreeing with itself.
      const nativeCalls = expected.map((call, index): RawCall => ({ format: 'native', callId: `n${index}`, name: call.name, argumentsText: JSON.stringify(call.args) }));
      const nativeOutcome = validateCalls(nativeCalls, { registry: createRegistry(tools), limits });
      const native = outcomeLabel(nativeOutcome.ok ? { ok: true, value: nativeOutcome.value } : { ok: false, label: problemLabel(nativeOutcome.problem) }, expected);
      if (native === 'pass') nativePasses += 1;
      if (xml === 'pass') calls.add('pass');
      else if (native === 'pass') calls.add(`XML only: ${xml}${row.category.includes('java') ? ' [Java/JS]' : ''}`, `${row.id} ${detail(run(`x\n${renderAction(expected)}`, tools), expected)}`);
      else calls.add(`ground truth fails its own schema (native too): ${native}${row.category.includes('java') ? ' [Java/JS]' : ''}`, row.id);
    }
    if (REPORT) console.log(`${registrations.report('BFCL unique function schemas')}\n${calls.report('BFCL rows with ground truth')}\nnative path passes: ${nativePasses}`);
    expect(cache.size).toBe(3264);
    expect(registrations.get('registered')).toBeGreaterThanOrEqual(MEASURED.bfclRegistered);
    expect(calls.get('pass')).toBeGreaterThanOrEqual(MEASURED.bfclPass);
    expect(nativePasses).toBeGreaterThanOrEqual(MEASURED.bfclNativePass);

    // The manifest's few-shot examples, on real schemas: every registered tool's example parses and validates.
    const examples = new Tally();
    for (const registration of cache.values()) {
      if (!registration.ok) continue;
      const call = exampleCall(registration.tool);
      if (call === undefined) {
        examples.add('no example (schema too unusual to guess)', registration.tool.name);
        continue;
      }
      const result = run(`Example.\n${renderAction([call])}`, [registration.tool]);
      examples.add(result.ok ? 'example valid' : `example invalid: ${result.label}`, registration.tool.name);
    }
    if (REPORT) console.log(examples.report('BFCL manifest examples'));
    // The rest have a required parameter no value can satisfy (an integer enum of strings).
    expect(examples.get('example valid')).toBeGreaterThanOrEqual(registrations.get('registered') - MEASURED.bfclNoExample);
    expect(examples.counts.size - (examples.get('no example (schema too unusual to guess)') > 0 ? 1 : 0)).toBe(1);
    // About 10 s alone on two cores, mostly AJV compiling 3,264 schemas; room for a loaded machine.
  }, 90_000);
});

type RooRow = { id: string; kind: string; input: unknown; expected: unknown };
type Block = { type: string; name?: string; params?: Record<string, string>; partial?: boolean; content?: string };

/** Tools for Roo/Cline rows: every parameter a string; `content` kept verbatim as those parsers do. */
function stringTools(blocks: Block[]): Tool[] {
  const params = new Map<string, Set<string>>();
  for (const block of blocks) {
    const set = params.get(block.name as string) ?? new Set();
    for (const key of Object.keys(block.params ?? {})) set.add(key);
    params.set(block.name as string, set);
  }
  return [...params.entries()].map(([name, keys]) =>
    defineTool({
      name,
      description: name,
      parameters: { type: 'object', properties: Object.fromEntries([...keys].map((key) => [key, { type: 'string' }])) },
      ...(keys.has('content') && { verbatimParams: ['content'] }),
      execute: async () => null,
    }),
  );
}

describe('Roo Code and Cline XML parser cases', () => {
  it('wraps complete tool uses in <ACTION> and compares the parameters', () => {
    const rows = [...readJsonl<RooRow>('roo_code_parser_tests.jsonl'), ...readJsonl<RooRow>('cline_parser_tests.jsonl')];
    const tally = new Tally();
    for (const row of rows) {
      if (!row.kind.startsWith('xml_text_parser') || !Array.isArray(row.expected)) continue;
      const blocks = (row.expected as Block[]).filter((block) => !(block.type === 'text' && (block.content ?? '') === ''));
      const tools = blocks.filter((block) => block.type === 'tool_use');
      if (tools.length === 0) {
        tally.add('n/a: text only (no call expected; troupe sees text outside <ACTION>)');
        continue;
      }
      if (tools.some((block) => block.partial === true || block.name === '')) {
        tally.add('n/a: partial tool use (an unclosed block never runs in troupe)', row.id);
        continue;
      }
      const first = blocks.indexOf(tools[0] as Block);
      const last = blocks.lastIndexOf(tools[tools.length - 1] as Block);
      if (blocks.slice(first, last + 1).some((block) => block.type === 'text')) {
        tally.add('n/a: text between tool uses (troupe takes one block per turn)', row.id);
        continue;
      }
      const input = decodeInput(row.input);
      const start = input.indexOf(`<${tools[0]?.name}>`);
      const closer = `</${tools[tools.length - 1]?.name}>`;
      const end = input.lastIndexOf(closer);
      if (start < 0 || end < start) {
        tally.add('n/a: tool tag not found verbatim', row.id);
        continue;
      }
      const text = `${input.slice(0, start)}<ACTION>${input.slice(start, end + closer.length)}</ACTION>${input.slice(end + closer.length)}`;
      const result = run(text, stringTools(tools));
      if (!result.ok) {
        tally.add(result.label, row.id);
        continue;
      }
      const same = result.value.length === tools.length && tools.every((block, index) => isDeepStrictEqual(result.value[index]?.args, block.params));
      tally.add(same ? 'pass' : 'value differs', `${row.id}: ${JSON.stringify(result.value.map((call) => call.args)).slice(0, 160)}`);
    }
    if (REPORT) console.log(tally.report('Roo + Cline XML rows'));
    expect(tally.get('pass')).toBeGreaterThanOrEqual(MEASURED.rooClinePass);
  });
});

type VllmRow = {
  id: string;
  format: string;
  tools?: Array<{ function: FunctionDef }>;
  input: string;
  expected: {
    tools_called: boolean;
    tool_calls?: Array<{ name: string; arguments?: unknown; arguments_json?: string }>;
    tool_calls_named?: Record<string, unknown[]>;
  };
};

/** Qwen3-Coder `<tool_call><function=f><parameter=p>v</parameter></function></tool_call>` as troupe XML. */
function qwenToAction(input: string): string | undefined {
  const start = input.indexOf('<tool_call>');
  const end = input.lastIndexOf('</tool_call>');
  if (start < 0 || end < 0) return undefined;
  const stack: string[] = [];
  const body = input
    .slice(start, end + '</tool_call>'.length)
    .replace(/<\/?tool_call>/g, '')
    .replace(/<(function|parameter)=([^>\n]+)>|<\/(function|parameter)>/g, (_match, _open: string, name: string | undefined) => {
      if (name !== undefined) {
        stack.push(name);
        return `<${name}>`;
      }
      return `</${stack.pop() ?? ''}>`;
    });
  return `${input.slice(0, start)}<ACTION>${body}</ACTION>${input.slice(end + '</tool_call>'.length)}`;
}

/** Hermes `<tool_call>{"name", "arguments"}</tool_call>` bodies as native calls (arguments as the provider would send them). */
function hermesToNative(input: string): RawCall[] | undefined {
  const calls: RawCall[] = [];
  const pattern = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;
  for (const match of input.matchAll(pattern)) {
    let envelope: { name?: unknown; arguments?: unknown };
    try {
      envelope = JSON.parse(match[1] as string) as typeof envelope;
    } catch {
      return undefined; // the envelope is the provider's to parse; a broken one yields no call
    }
    const argumentsText = typeof envelope.arguments === 'string' ? envelope.arguments : JSON.stringify(envelope.arguments ?? {});
    calls.push({ format: 'native', callId: `c${calls.length}`, name: String(envelope.name), argumentsText });
  }
  return calls;
}

function permissiveTools(names: Iterable<string>): Tool[] {
  return [...new Set(names)].map((name) => defineTool({ name, description: name, parameters: { type: 'object' }, execute: async () => null }));
}

function expectedArguments(call: { arguments?: unknown; arguments_json?: string }): unknown {
  return call.arguments_json !== undefined ? JSON.parse(call.arguments_json) : call.arguments;
}

describe('vLLM and Hermes tool-call samples', () => {
  it('maps Qwen3-Coder XML to <ACTION> and Hermes JSON to native calls', () => {
    const rows = readJsonl<VllmRow>('vllm_tool_parser_samples.jsonl');
    const qwen = new Tally();
    const native = new Tally();
    for (const row of rows) {
      const named = Object.entries(row.expected.tool_calls_named ?? {}).flatMap(([name, list]) => list.map((args) => ({ name, arguments: args })));
      const expectedCalls = row.expected.tools_called ? (row.expected.tool_calls ?? named) : [];
      if (row.format === 'qwen3_coder_xml') {
        const tools = (row.tools ?? []).map(({ function: definition }) => registerFunction(definition)).flatMap((entry) => (entry.ok ? [entry.tool] : []));
        const text = qwenToAction(row.input);
        if (text === undefined) {
          qwen.add(expectedCalls.length === 0 ? 'pass' : 'n/a: no complete <tool_call>', row.id);
          continue;
        }
        const result = run(text, tools);
        if (!result.ok) {
          qwen.add(expectedCalls.length === 0 ? 'pass' : result.label, row.id); // no call either way: they agree
          continue;
        }
        const same = isDeepStrictEqual(result.value.map((call) => [call.name, call.args]), expectedCalls.map((call) => [call.name, expectedArguments(call)]));
        qwen.add(same ? 'pass' : 'value differs', `${row.id}: ${JSON.stringify(result.value.map((call) => call.args)).slice(0, 200)}`);
        continue;
      }
      const calls = hermesToNative(row.input);
      if (calls === undefined || calls.length === 0) {
        native.add(expectedCalls.length === 0 ? 'pass' : 'envelope not JSON', row.id);
        continue;
      }
      const tools = permissiveTools(calls.map((call) => call.name));
      const outcome = validateCalls(calls, { registry: createRegistry(tools), limits });
      if (!outcome.ok) {
        native.add(problemLabel(outcome.problem), row.id);
        continue;
      }
      const same = isDeepStrictEqual(outcome.value.map((call) => [call.name, call.args]), expectedCalls.map((call) => [call.name, expectedArguments(call)]));
      native.add(same ? 'pass' : 'value differs', row.id);
    }

    for (const row of readJsonl<Record<string, unknown>>('hermes_function_calling_samples.jsonl')) {
      const id = String(row['id']);
      let calls: RawCall[] | undefined;
      let expected: Array<[string, unknown]> = [];
      let schemas: FunctionDef[] = [];
      if (typeof row['prompt_and_output'] === 'string') {
        const text = row['prompt_and_output'];
        schemas = JSON.parse(text.slice(text.indexOf('<tools>') + 7, text.indexOf('</tools>'))) as FunctionDef[];
        calls = hermesToNative(text.slice(text.lastIndexOf('ASSISTANT:')));
        expected = ((row['expected'] as { tool_calls: Array<{ name: string; arguments: unknown }> }).tool_calls).map((call) => [call.name, call.arguments]);
      } else if (Array.isArray(row['assistant_turns'])) {
        const turns = row['assistant_turns'] as Array<{ tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> | null }>;
        calls = turns.flatMap((turn) => (turn.tool_calls ?? []).map((call) => ({ format: 'native' as const, callId: call.id, name: call.function.name, argumentsText: call.function.arguments })));
        expected = (row['expected'] as { tool_calls_per_turn: Array<Array<{ name: string; arguments: unknown }>> }).tool_calls_per_turn.flat().map((call) => [call.name, call.arguments]);
      } else {
        native.add('n/a: prompted JSON list with "params"/"output" (not a native call shape)', id);
        continue;
      }
      const tools = schemas.length > 0 ? schemas.map((definition) => registerFunction(definition)).flatMap((entry) => (entry.ok ? [entry.tool] : [])) : permissiveTools((calls ?? []).map((call) => call.name));
      const outcome = validateCalls(calls ?? [], { registry: createRegistry(tools), limits });
      if (!outcome.ok) {
        native.add(problemLabel(outcome.problem), id);
        continue;
      }
      native.add(isDeepStrictEqual(outcome.value.map((call) => [call.name, call.args]), expected) ? 'pass' : 'value differs', id);
    }
    if (REPORT) console.log(`${qwen.report('vLLM Qwen3-Coder → <ACTION>')}\n${native.report('vLLM Hermes + Hermes → native')}`);
    expect(qwen.get('pass')).toBeGreaterThanOrEqual(MEASURED.qwenPass);
    expect(native.get('pass')).toBeGreaterThanOrEqual(MEASURED.nativePass);
  });
});

/** Floors measured on the corpora as stored (see docs/protocol-corpora.md). */
const MEASURED = {
  bfclRegistered: 3227,
  bfclPass: 2371,
  bfclNativePass: 2383,
  bfclNoExample: 1,
  rooClinePass: 36,
  qwenPass: 14,
  nativePass: 16,
};

