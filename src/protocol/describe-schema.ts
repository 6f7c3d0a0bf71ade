/**
 * Parameter lists for the manifest: one line per parameter with its type, required mark, enum,
 * default, bounds and description; nested objects (and arrays of objects) indented below.
 */
import { declaredProperties, isObject, itemNode, own, propertyNode, resolveNode, type SchemaNode } from '../tools/schema-walk.js';
import type { JsonSchema } from '../tools/types.js';

/** Nested parameter lists stop at this depth (recursive schemas would never end). */
const MAX_LIST_DEPTH = 3;

/** `- name (type, required, …): description` lines for an object schema's properties. */
export function describeParameterLines(root: JsonSchema, node: SchemaNode = { schema: root, pointer: '' }, depth = 0): string[] {
  const required = own(node.schema, 'required');
  const lines: string[] = [];
  const indent = '  '.repeat(depth);
  for (const name of declaredProperties(root, node.schema)) {
    const child = resolveNode(root, propertyNode(root, node, name).child);
    const marks = [describeType(root, child, 0)];
    if (Array.isArray(required) && required.includes(name)) marks.push('required');
    marks.push(...constraints(child.schema));
    const description = own(child.schema, 'description') ?? own(propertyNode(root, node, name).child.schema, 'description');
    const text = typeof description === 'string' && description.trim() !== '' ? `: ${description.trim().replace(/\s+/g, ' ')}` : '';
    lines.push(`${indent}- ${name} (${marks.join(', ')})${text}`);
    if (depth + 1 < MAX_LIST_DEPTH) lines.push(...nestedLines(root, child, depth + 1));
  }
  return lines;
}

/** A short type phrase: `string`, `integer or null`, `array of object`, `one of "a", "b"`. */
export function describeType(root: JsonSchema, node: SchemaNode, depth: number): string {
  const schema = node.schema;
  if (!isObject(schema)) return 'any';
  if (Object.hasOwn(schema, 'const')) return `exactly ${JSON.stringify(own(schema, 'const'))}`;
  const options = own(schema, 'enum');
  if (Array.isArray(options)) return `one of ${options.map((option) => JSON.stringify(option)).join(', ')}`;
  const declared = own(schema, 'type');
  const types = typeof declared === 'string' ? [declared] : Array.isArray(declared) ? (declared as string[]) : [];
  if (types.length === 0) {
    for (const key of ['anyOf', 'oneOf']) {
      const branches = own(schema, key);
      if (!Array.isArray(branches) || depth > MAX_LIST_DEPTH) continue;
      return branches
        .map((branch, index) => describeType(root, resolveNode(root, { schema: branch as JsonSchema, pointer: `${node.pointer}/${key}/${index}` }), depth + 1))
        .join(' | ');
    }
    return 'any';
  }
  return types
    .map((type) => {
      if (type !== 'array') return type;
      const items = own(schema, 'items');
      if (Array.isArray(items)) {
        return `array [${items.map((_, index) => describeType(root, resolveNode(root, itemNode(node, index)), depth + 1)).join(', ')}]`;
      }
      if (items === undefined || depth > MAX_LIST_DEPTH) return 'array';
      return `array of ${describeType(root, resolveNode(root, itemNode(node, 0)), depth + 1)}`;
    })
    .join(' or ');
}

function nestedLines(root: JsonSchema, node: SchemaNode, depth: number): string[] {
  if (declaredProperties(root, node.schema).length > 0) return describeParameterLines(root, node, depth);
  const items = resolveNode(root, itemNode(node, 0));
  if (own(node.schema, 'items') !== undefined && declaredProperties(root, items.schema).length > 0) {
    return [`${'  '.repeat(depth)}- each item:`, ...describeParameterLines(root, items, depth + 1)];
  }
  return [];
}

function constraints(schema: unknown): string[] {
  const marks: string[] = [];
  if (isObject(schema) && Object.hasOwn(schema, 'default')) marks.push(`default ${JSON.stringify(own(schema, 'default'))}`);
  const bounds: Array<[string, string]> = [
    ['minimum', 'minimum'], ['maximum', 'maximum'], ['exclusiveMinimum', 'greater than'], ['exclusiveMaximum', 'less than'],
    ['multipleOf', 'multiple of'], ['minLength', 'at least {} characters'], ['maxLength', 'at most {} characters'],
    ['minItems', 'at least {} items'], ['maxItems', 'at most {} items'],
  ];
  for (const [key, label] of bounds) {
    const value = own(schema, key);
    // zod writes every integer's safe range as bounds; integers are held to it anyway, so say nothing.
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    if (typeof value === 'number') marks.push(label.includes('{}') ? label.replace('{}', String(value)) : `${label} ${value}`);
  }
  if (own(schema, 'uniqueItems') === true) marks.push('items unique');
  const format = own(schema, 'format');
  if (typeof format === 'string') marks.push(`format ${format}`);
  const pattern = own(schema, 'pattern');
  if (typeof pattern === 'string') marks.push(`matching /${pattern}/`);
  return marks;
}
