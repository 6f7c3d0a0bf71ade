/**
 * The manifest's few-shot examples: built from the agent's own tools (a call, a list argument, text
 * in CDATA, an answer without a tool), or the user's own, each checked as the agent would check a
 * reply, so the model is never shown a reply troupe would reject.
 */
import { ConfigError } from '../errors.js';
import { createRegistry } from '../tools/registry.js';
import { own, propertyNode, resolveNode, schemaTypes } from '../tools/schema-walk.js';
import type { Tool } from '../tools/types.js';
import { validateCalls } from '../tools/validate-calls.js';
import { exampleCall, validExample, type ExampleCall } from './example-call.js';
import { parseOutput } from './parse-output.js';
import { renderAction } from './render-call.js';
import { DEFAULT_LIMITS } from './types.js';

/**
 * A reply to show the model: its whole text (`<ACTION>` block and all), or what it says and the
 * calls it makes (written with `renderAction`). A reply with no calls shows answering without a tool.
 */
export type ManifestExample = string | { say?: string; calls?: readonly ExampleCall[] };

/** An example as the manifest shows it: a label and the reply. */
export type ShownExample = { label: string; text: string };

/** The examples built from the tools: each kind shown once, from the first tool that has it. */
export function toolExamples(tools: readonly Tool[]): ShownExample[] {
  const call = pickExample(tools);
  const shown: ShownExample[] = [{ label: 'A call', text: call === undefined ? GENERIC : reply('I will check that.', call, tools) }];
  const list = firstOf(tools, listExample);
  if (list !== undefined) shown.push({ label: 'A list argument', text: reply('Both of them.', list, tools) });
  const text = firstOf(tools, textExample);
  if (text !== undefined) shown.push({ label: 'Text in CDATA', text: reply('Here it is.', text, tools) });
  shown.push({ label: 'No tool needed', text: 'The answer is yes.' });
  return shown;
}

/**
 * The user's examples, each rendered and checked against `tools` as the agent checks a reply:
 * one that would not parse or validate is a ConfigError naming it.
 */
export function userExamples(examples: readonly ManifestExample[], tools: readonly Tool[]): ShownExample[] {
  if (!Array.isArray(examples)) throw new ConfigError('examples must be a list of replies (a string, or { say, calls })');
  const registry = createRegistry(tools);
  return examples.map((example, index) => {
    const text = exampleText(example, index);
    const parsed = parseOutput(text);
    if (parsed.problem !== undefined) throw new ConfigError(`examples[${index}] does not parse: ${parsed.problem.message}`);
    const outcome = validateCalls(parsed.calls, { registry, limits: DEFAULT_LIMITS });
    if (!outcome.ok) {
      const { problem } = outcome;
      throw new ConfigError(`examples[${index}] is not a valid reply: ${problem.kind === 'malformed' ? problem.problem.message : problem.rejection.message}`);
    }
    return { label: `Example ${index + 1}`, text };
  });
}

function exampleText(example: ManifestExample, index: number): string {
  if (typeof example === 'string') {
    if (example.trim() === '') throw new ConfigError(`examples[${index}] is empty`);
    return example.trim();
  }
  if (example === null || typeof example !== 'object') throw new ConfigError(`examples[${index}] must be a string or { say, calls }`);
  const say = example.say?.trim() ?? '';
  const calls = example.calls ?? [];
  if (say === '' && calls.length === 0) throw new ConfigError(`examples[${index}] has neither say nor calls`);
  return calls.length === 0 ? say : `${say === '' ? '' : `${say}\n`}${renderAction(calls)}`;
}

/** A reply that says `say` and makes `call`, written as the parser reads it back. */
function reply(say: string, call: ExampleCall, tools: readonly Tool[]): string {
  const verbatimParams = tools.find((tool) => tool.name === call.name)?.verbatimParams;
  return `${say}\n${renderAction([{ ...call, ...(verbatimParams !== undefined && { verbatimParams }) }])}`;
}

/** The first tool whose example call has arguments and validates; else the first valid one at all. */
function pickExample(tools: readonly Tool[]): ExampleCall | undefined {
  let fallback: ExampleCall | undefined;
  for (const tool of tools) {
    const call = exampleCall(tool);
    if (call === undefined) continue;
    if (Object.keys(call.args).length > 0) return call;
    fallback ??= call;
  }
  return fallback;
}

function firstOf(tools: readonly Tool[], example: (tool: Tool, name: string) => ExampleCall | undefined): ExampleCall | undefined {
  for (const tool of tools) {
    const properties = own(tool.parameters, 'properties');
    if (properties === null || typeof properties !== 'object') continue;
    for (const name of Object.keys(properties)) {
      const call = example(tool, name);
      if (call !== undefined) return call;
    }
  }
  return undefined;
}

/** A call with `name`, a list parameter, given two items (written as a repeated tag). */
function listExample(tool: Tool, name: string): ExampleCall | undefined {
  if (!onlyType(tool, name, 'array')) return undefined;
  const call = exampleCall(tool, name);
  const items = call?.args[name];
  if (call === undefined || !Array.isArray(items) || items.length === 0) return undefined;
  if (items.length >= 2) return call;
  const args = { ...call.args, [name]: [items[0], another(items[0])] };
  return validExample(tool, args) ? { name: call.name, args } : undefined;
}

/** A call with `name`, a free-text parameter, given two lines with `&` and `<` (written in CDATA). */
function textExample(tool: Tool, name: string): ExampleCall | undefined {
  if (!onlyType(tool, name, 'string') || !TEXT.test(name)) return undefined;
  const call = exampleCall(tool, name);
  if (call === undefined) return undefined;
  const args = { ...call.args, [name]: CODE.test(name) ? 'if (a < b && b < c) {\n  return b;\n}' : 'Ana & Ben are here.\nTell them 3 < 5.' };
  return validExample(tool, args) ? { name: call.name, args } : undefined;
}

/** Whether the top-level parameter `name` has exactly the type `type`, free of enums and patterns. */
function onlyType(tool: Tool, name: string, type: string): boolean {
  const root = tool.parameters;
  const node = resolveNode(root, propertyNode(root, { schema: root, pointer: '' }, name).child);
  const schema = node.schema;
  if (schema === null || typeof schema !== 'object') return false;
  if (['enum', 'const', 'pattern', 'format'].some((key) => Object.hasOwn(schema, key))) return false;
  const types = schemaTypes(root, schema);
  return types.length === 1 && types[0] === type;
}

/** A second list item unlike the first. */
function another(item: unknown): unknown {
  if (typeof item === 'number') return item + 1;
  if (typeof item === 'string') return ALTERNATES[item] ?? `${item}2`;
  return structuredClone(item);
}

const ALTERNATES: Readonly<Record<string, string>> = { Ana: 'Ben', Paris: 'Rome', France: 'Spain', example: 'another', abc123: 'def456', blue: 'green', en: 'fr' };
const TEXT = /code|script|source|diff|patch|snippet|sql|html|xml|content|text|body|message|note|comment|description/i;
const CODE = /code|script|source|diff|patch|snippet|sql/i;
const GENERIC = ['I will check that.', '<ACTION>', '<tool_name>', '<argument_name>value</argument_name>', '</tool_name>', '</ACTION>'].join('\n');
