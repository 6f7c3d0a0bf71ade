/**
 * Turns AJV's first error into an `Issue` worded for the model: what was wrong, where, what is
 * allowed, and a nearest-name suggestion when one is likely.
 */
import type { ErrorObject } from 'ajv';
import type { Issue } from '../protocol/types.js';
import { atPointer, declaredProperties, isObject, own, resolveSchema, schemaTypes } from './schema-walk.js';
import { suggestName } from './suggest-name.js';
import type { JsonSchema } from './types.js';

/** Received values are quoted up to this many characters. */
const MAX_QUOTED = 60;

/**
 * The issue for a failed validation. With `allErrors: false` AJV stops at the first error, except
 * that a failing `anyOf`/`oneOf` also lists its branches' errors before its own: report the
 * applicator then, since "must be integer" alone would hide the other allowed forms.
 */
export function describeAjvErrors(errors: readonly ErrorObject[], root: JsonSchema, args: unknown): Issue {
  const applicator = errors.find((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const error = applicator ?? (errors[0] as ErrorObject);
  const path = error.instancePath;
  const where = path === '' ? 'The arguments' : path.split('/').length === 2 ? `Parameter "${unescape(path.slice(1))}"` : `The value at ${path}`;
  const received = valueAt(args, path);
  const parentSchema = schemaAt(root, error.schemaPath);
  const base: Issue = { category: 'validation_error', keyword: error.keyword, message: '', path };
  const property = lastSegment(path);
  if (property !== undefined) base.property = property;

  switch (error.keyword) {
    case 'required': {
      const missing = String(error.params['missingProperty']);
      const known = declaredProperties(root, parentSchema);
      const sent = isObject(received) ? Object.keys(received).filter((key) => !known.includes(key)) : [];
      const typo = sent.find((key) => suggestName(key, [missing]) === missing);
      const list = describeParameters(root, parentSchema);
      return {
        ...base,
        path: `${path}/${missing}`,
        property: missing,
        message: `Missing required parameter "${missing}"${path === '' ? '' : ` in ${path}`}.${typo === undefined ? '' : ` You sent "${typo}": did you mean "${missing}"?`} Parameters: ${list}.`,
        allowed: known,
        ...(typo !== undefined && { suggestion: missing }),
      };
    }
    case 'additionalProperties': {
      const extra = String(error.params['additionalProperty']);
      const known = declaredProperties(root, parentSchema);
      const near = suggestName(extra, known);
      return {
        ...base,
        path: `${path}/${extra}`,
        property: extra,
        message: `Unknown parameter "${extra}"${path === '' ? '' : ` in ${path}`}.${near === undefined ? '' : ` Did you mean "${near}"?`} Allowed: ${known.join(', ') || '(none)'}.`,
        allowed: known,
        ...(near !== undefined && { suggestion: near }),
      };
    }
    case 'enum': {
      const options = (error.params['allowedValues'] as unknown[] | undefined) ?? [];
      const texts = options.map((option) => JSON.stringify(option));
      const near = typeof received === 'string' ? suggestName(received, options.filter((option): option is string => typeof option === 'string')) : undefined;
      return {
        ...base,
        message: `${where} is ${quote(received)}, which is not allowed. Use one of: ${texts.join(', ')}.${near === undefined ? '' : ` Did you mean ${JSON.stringify(near)}?`}`,
        allowed: texts,
        ...(near !== undefined && { suggestion: near }),
      };
    }
    case 'const':
      return { ...base, message: `${where} must be ${JSON.stringify(error.params['allowedValue'])}, got ${quote(received)}.` };
    case 'type': {
      const expected = String(error.params['type']).split(',').join(' or ');
      return { ...base, message: `${where} must be ${withArticle(expected)}, got ${quote(received)}.${typeHint(expected, received)}`, allowed: String(error.params['type']).split(',') };
    }
    case 'anyOf':
    case 'oneOf': {
      const branches = own(parentSchema, error.keyword);
      const forms = Array.isArray(branches) ? branches.map((branch) => describeForm(root, branch)) : [];
      const detail = errors[0] !== undefined && errors[0] !== error ? ` (first form: ${errors[0].instancePath || 'value'} ${errors[0].message ?? ''})` : '';
      const lead = error.keyword === 'oneOf' && error.params['passingSchemas'] !== null && error.params['passingSchemas'] !== undefined
        ? 'matches more than one of the allowed forms'
        : 'does not match any allowed form';
      return { ...base, message: `${where} is ${quote(received)}, which ${lead}: ${forms.join(' | ')}.${detail}` };
    }
    default:
      return { ...base, message: `${where} ${error.message ?? `fails "${error.keyword}"`}${received === undefined ? '' : `, got ${quote(received)}`}.` };
  }
}

/** `id (string, required), limit (integer)`: the parameters of an object schema with their types. */
export function describeParameters(root: JsonSchema, schema: unknown): string {
  const required = own(schema, 'required');
  const names = declaredProperties(root, schema);
  if (names.length === 0) return '(none)';
  const properties = own(schema, 'properties');
  return names
    .map((name) => {
      const types = schemaTypes(root, resolveSchema(root, own(properties, name)));
      const marks = [types.join(' | ') || 'any', ...(Array.isArray(required) && required.includes(name) ? ['required'] : [])];
      return `${name} (${marks.join(', ')})`;
    })
    .join(', ');
}

function describeForm(root: JsonSchema, branch: unknown): string {
  const resolved = resolveSchema(root, branch);
  const types = schemaTypes(root, resolved);
  const options = own(resolved, 'enum');
  if (Array.isArray(options)) return options.map((option) => JSON.stringify(option)).join(' | ');
  if (Object.hasOwn(isObject(resolved) ? resolved : {}, 'const')) return JSON.stringify(own(resolved, 'const'));
  if (types.includes('object')) {
    const names = declaredProperties(root, resolved);
    return names.length > 0 ? `object with ${names.join(', ')}` : 'object';
  }
  return types.join(' | ') || 'any value';
}

function typeHint(expected: string, received: unknown): string {
  if (typeof received !== 'string') return '';
  if (/integer|number/.test(expected)) {
    if (/^-?\d+$/.test(received.trim()) && received.trim().replace('-', '').length > 15) return ' Integers must be at most 2^53 − 1 in magnitude.';
    return ' Write a plain JSON number such as 42 or -3.5 (no leading zeros, hex, underscores or units).';
  }
  if (expected.includes('boolean')) return ' Write true or false.';
  if (expected.includes('array')) return ' Repeat the tag once per item, or put one <item> element per item inside it.';
  if (expected.includes('object')) return ' Give one child element per field, or a JSON object.';
  return '';
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function quote(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') {
    const shown = value.length > MAX_QUOTED ? `${value.slice(0, MAX_QUOTED)}…` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let current = data;
  for (const segment of pointer.slice(1).split('/')) {
    const key = unescape(segment);
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isObject(current) && Object.hasOwn(current, key)) current = current[key];
    else return undefined;
  }
  return current;
}

/** The schema object holding the failing keyword (`#/properties/x/type` → the schema at `/properties/x`). */
function schemaAt(root: JsonSchema, schemaPath: string): unknown {
  const pointer = schemaPath.replace(/^#/, '').split('/').slice(0, -1).join('/');
  try {
    return atPointer(root, decodeURIComponent(pointer));
  } catch {
    return undefined;
  }
}

function lastSegment(pointer: string): string | undefined {
  if (pointer === '') return undefined;
  return unescape(pointer.slice(pointer.lastIndexOf('/') + 1));
}

function unescape(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
