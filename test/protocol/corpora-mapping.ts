/**
 * How the third-party corpora in `test/protocol/corpora/` map onto troupe's protocol (documented in
 * docs/protocol-corpora.md). Data only comes from there; nothing here is upstream code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolSchemaError } from '../../src/errors.js';
import { toToolName } from '../../src/tools/check-tool-schema.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { JsonSchema, Tool } from '../../src/tools/types.js';
import { valueProblem } from '../../src/tools/value-problem.js';

/** The corpora, kept in the repository (sources and licenses in its README). */
export const CORPORA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'corpora');

/** The rows of one JSONL corpus file (stored gzipped when large: `<file>.gz`). */
export function readJsonl<T = Record<string, unknown>>(file: string): T[] {
  const plain = path.join(CORPORA_DIR, file);
  const text = existsSync(plain) ? readFileSync(plain, 'utf8') : gunzipSync(readFileSync(`${plain}.gz`)).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** Decodes the corpus encodings of long strings (`{"$rle": [...]}`). */
export function decodeInput(input: unknown): string {
  if (typeof input === 'string') return input;
  const segments = (input as { $rle?: unknown[] } | null)?.$rle;
  if (!Array.isArray(segments)) return '';
  return segments.map((segment) => (typeof segment === 'string' ? segment : (segment as { char: string; repeat: number }).char.repeat((segment as { repeat: number }).repeat))).join('');
}

// BFCL and vLLM use Python, Java and JavaScript type names; JSON Schema has its own.
const TYPE_MAP: Readonly<Record<string, string | undefined>> = {
  dict: 'object', float: 'number', double: 'number', tuple: 'array', String: 'string', char: 'string',
  Array: 'array', ArrayList: 'array', HashMap: 'object', long: 'integer', Boolean: 'boolean', any: undefined, '': undefined,
};

/**
 * A BFCL (or vLLM) parameter schema as standard draft-07: type names mapped, the non-standard
 * `optional` dropped, `default` dropped on the parameters object and wherever the schema rejects
 * it (troupe refuses such defaults at registration), `format` dropped (the secure meta-schema wants a `maxLength` beside
 * it), `required` entries kept only for declared properties, an `enum` on an array of scalars
 * moved to its `items`.
 */
export function mapSchema(schema: unknown, top = true): JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return {};
  const source = schema as JsonSchema;
  const mapped: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'optional' || key === 'format' || (top && key === 'default')) continue;
    if (key === 'type') {
      const type = typeof value === 'string' && Object.hasOwn(TYPE_MAP, value) ? TYPE_MAP[value] : value;
      if (type !== undefined) mapped['type'] = type;
    } else if (key === 'properties' && typeof value === 'object' && value !== null) {
      mapped['properties'] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, mapSchema(child, false)]));
    } else if (key === 'items') {
      mapped['items'] = Array.isArray(value) ? value.map((child) => mapSchema(child, false)) : mapSchema(value, false);
    } else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') {
      mapped[key] = Array.isArray(value) ? value.map((child) => mapSchema(child, false)) : value;
    } else {
      mapped[key] = value;
    }
  }
  if (top) mapped['type'] = 'object';
  const properties = (mapped['properties'] ?? {}) as JsonSchema;
  if (Array.isArray(mapped['required'])) {
    const required = mapped['required'].filter((name) => typeof name === 'string' && Object.hasOwn(properties, name));
    if (required.length > 0) mapped['required'] = required;
    else delete mapped['required'];
  }
  // Live BFCL schemas put `enum` on an array of strings where the items are meant: move it there.
  if (mapped['type'] === 'array' && Array.isArray(mapped['enum']) && !mapped['enum'].some((option) => Array.isArray(option))) {
    mapped['items'] = { ...((mapped['items'] ?? {}) as JsonSchema), enum: mapped['enum'] };
    delete mapped['enum'];
  }
  if (Object.hasOwn(mapped, 'default') && valueProblem(mapped, mapped, mapped['default']) !== undefined) delete mapped['default'];
  return mapped;
}

/** A corpus function definition as a troupe tool, or why it cannot be one. */
export type Registration = { ok: true; tool: Tool; originalName: string } | { ok: false; reason: string; originalName: string };

/** Registers one corpus function (`{ name, description, parameters }`), mapping its name with `toToolName`. */
export function registerFunction(definition: { name: string; description?: string; parameters?: unknown }): Registration {
  try {
    const tool = defineTool({
      name: toToolName(definition.name),
      description: definition.description ?? '',
      parameters: mapSchema(definition.parameters ?? { type: 'object', properties: {} }),
      execute: async () => null,
    });
    return { ok: true, tool, originalName: definition.name };
  } catch (error) {
    if (!(error instanceof ToolSchemaError)) throw error;
    return { ok: false, reason: error.message, originalName: definition.name };
  }
}

/**
 * The first acceptable BFCL ground-truth value of a parameter: `""` and `null` (Python's None)
 * mean "may be omitted" and are skipped; dicts, also inside lists, hold a list of acceptable values
 * per key, resolved the same way.
 */
export function pickAcceptable(values: unknown): { value: unknown } | undefined {
  if (!Array.isArray(values)) return { value: values };
  for (const value of values) {
    if (value === '' || value === null) continue;
    return { value: resolveNested(value) };
  }
  return undefined;
}

function resolveNested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveNested);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (!entries.every(([, child]) => Array.isArray(child))) return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of entries) {
    const picked = pickAcceptable(child);
    if (picked !== undefined) result[key] = picked.value;
  }
  return result;
}

/** Tallies outcomes per category, for the report and the documented pass rates. */
export class Tally {
  constructor(readonly verbose = process.env['CORPORA_REPORT_VERBOSE'] === '1') {}

  readonly counts = new Map<string, number>();
  readonly examples = new Map<string, string[]>();

  add(category: string, example = ''): void {
    this.counts.set(category, (this.counts.get(category) ?? 0) + 1);
    const list = this.examples.get(category) ?? [];
    if (list.length < 12 && example !== '') list.push(example.slice(0, 200));
    this.examples.set(category, list);
  }

  get(category: string): number {
    return this.counts.get(category) ?? 0;
  }

  report(title: string): string {
    const lines = [...this.counts.entries()].sort((a, b) => b[1] - a[1]).map(([category, count]) => `  ${count}\t${category}${(this.examples.get(category) ?? []).slice(0, this.verbose ? 12 : 1).map((example) => `\n\t\te.g. ${example}`).join('')}`);
    return `${title}\n${lines.join('\n')}`;
  }
}
