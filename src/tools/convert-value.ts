/**
 * Schema-directed conversion of one XML argument element into a JSON value (docs/protocol.md rules
 * 10–15). There is no AJV coercion: text that does not fit the schema stays a string, so AJV
 * reports it with keyword `type`. Only structural problems (depth, duplicate keys, forbidden
 * names, malformed nested XML) stop the conversion.
 */
import type { ValidateFunction } from 'ajv';
import { failure, success, type Outcome } from '../outcome.js';
import { parseCheckedJson } from '../protocol/json-checked.js';
import { isForbiddenName } from '../protocol/forbidden-names.js';
import type { Issue, MalformedProblem, ProtocolLimits, RawArgument } from '../protocol/types.js';
import { isXmlSpace } from '../protocol/xml-chars.js';
import { decodeText, splitElements } from '../protocol/xml-elements.js';
import {
  declaredOf, itemPlan, knownNames, planShape, planTypes, propertyPlan, resolvedPlan, type SchemaPlan,
} from './convert-plan.js';
import { isObject, pointerSegment, TYPE_PRIORITY } from './schema-walk.js';
import { suggestName } from './suggest-name.js';

/** A problem that stops normalization: the block is malformed, or this call's arguments are invalid. */
export type ArgumentProblem = { kind: 'malformed'; problem: MalformedProblem } | { kind: 'invalid'; issue: Issue };

/** What conversion needs besides the element and its plan: limits, and branch validators. */
export type ConvertContext = {
  limits: ProtocolLimits;
  /** Validators for `anyOf`/`oneOf` branches by JSON pointer, to pick the branch a value fits. */
  branches?: ReadonlyMap<string, ValidateFunction> | undefined;
};

type Converted = Outcome<unknown, ArgumentProblem>;
/** `undefined` value: the text does not fit this type (only in union mode). */
type Attempt = Outcome<unknown, ArgumentProblem> | undefined;

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Characters that make `decodeText` do more than trim: references, markup and CDATA, `]]>`. */
const NEEDS_DECODING = /[&<\]]/;

/** Up to this many siblings, repeated names are found by comparing pairs instead of building a Set. */
const PAIRWISE_LIMIT = 8;

/**
 * Converts a group of sibling elements (a call's arguments, or an object's child elements) into an
 * object typed by `plan`. `childDepth` is the depth of the elements themselves (arguments are 2).
 */
export function convertChildren(
  context: ConvertContext,
  elements: readonly RawArgument[],
  plan: SchemaPlan,
  childDepth: number,
  path: string,
  verbatim: readonly string[] = [],
): Converted {
  // Almost every call names each argument once: group by name only when some name repeats.
  const groups = hasRepeatedName(elements) ? groupByName(elements) : undefined;
  const count = groups === undefined ? elements.length : groups.length;
  const result: Record<string, unknown> = {};
  for (let index = 0; index < count; index += 1) {
    const occurrences = groups?.[index];
    const first = (occurrences === undefined ? elements[index] : occurrences[0]) as RawArgument;
    const name = first.name;
    if (isForbiddenName(name)) {
      const at = `${path}/${pointerSegment(name)}`;
      return invalid({
        category: 'forbidden_name',
        message: `The argument name "${name}" at ${at} is not allowed (it names a property of Object.prototype).`,
        path: at,
        property: name,
      });
    }
    const property = propertyPlan(plan, name);
    if (property.closed) {
      const known = [...knownNames(plan)];
      const near = suggestName(name, known);
      return invalid({
        category: 'validation_error',
        keyword: 'additionalProperties',
        message: `Unknown parameter "${name}"${path === '' ? '' : ` in ${path}`}.${near === undefined ? '' : ` Did you mean "${near}"?`} Allowed: ${known.join(', ') || '(none)'}.`,
        path: `${path}/${pointerSegment(name)}`,
        property: name,
        allowed: known,
        ...(near !== undefined && { suggestion: near }),
      });
    }
    const at = `${path}/${property.segment}`;
    let converted: Converted;
    if (occurrences !== undefined && occurrences.length > 1) {
      const resolved = resolvedPlan(property.child);
      const types = planTypes(resolved);
      // Untyped (`{}` or no schema) admits arrays too: repeated tags become a list of strings.
      if (types.length > 0 && !types.includes('array')) {
        return invalid({
          category: 'duplicate_param',
          message: `Parameter "${name}" is given ${occurrences.length} times, but it takes one value${types.length > 0 ? ` (${types.join(' | ')})` : ''}. Give it once; only array parameters may repeat.`,
          path: at,
          property: name,
        });
      }
      converted = convertItems(context, occurrences, resolved, childDepth, at);
    } else {
      converted = convertElement(context, first, property.child, childDepth, at, verbatim.length > 0 && verbatim.includes(name));
    }
    if (!converted.ok) return converted;
    // A plain assignment is safe: forbidden names (the only ones with prototype setters) were refused above.
    result[name] = converted.value;
  }
  return success(result);
}

function hasRepeatedName(elements: readonly RawArgument[]): boolean {
  if (elements.length > PAIRWISE_LIMIT) return new Set(elements.map((element) => element.name)).size < elements.length;
  for (let index = 1; index < elements.length; index += 1) {
    const name = (elements[index] as RawArgument).name;
    for (let before = 0; before < index; before += 1) if ((elements[before] as RawArgument).name === name) return true;
  }
  return false;
}

/** Elements grouped by name, groups in order of first occurrence. */
function groupByName(elements: readonly RawArgument[]): RawArgument[][] {
  const groups = new Map<string, RawArgument[]>();
  for (const element of elements) {
    const group = groups.get(element.name);
    if (group === undefined) groups.set(element.name, [element]);
    else group.push(element);
  }
  return [...groups.values()];
}

/** Converts one element's content by its schema (after `$ref` resolution). */
export function convertElement(
  context: ConvertContext,
  element: RawArgument,
  unresolved: SchemaPlan,
  depth: number,
  path: string,
  verbatim = false,
): Converted {
  const plan = resolvedPlan(unresolved);
  const shape = planShape(plan);
  switch (shape.kind) {
    case 'text':
      return decode(element, verbatim);
    case 'branches':
      return convertBranches(context, element, shape.branches, depth, path, verbatim);
    case 'options':
      return matchOption(element, shape.options);
  }
  const types = shape.types;
  if (types.length === 1) {
    const attempt = convertAs(context, types[0] as string, element, plan, depth, path, verbatim, true);
    return attempt ?? decode(element, verbatim);
  }
  // A union: the first type the text fits, in TYPE_PRIORITY order (string last, since it always fits).
  const ordered = isBlank(element) ? shape.orderedIfBlank : shape.ordered;
  for (const type of ordered) {
    const attempt = convertAs(context, type, element, plan, depth, path, verbatim, false);
    if (attempt !== undefined) return attempt;
  }
  // No structure and no string in the union: a bare scalar may still be a one-item array.
  if (shape.hasArray) return convertAs(context, 'array', element, plan, depth, path, verbatim, true) ?? decode(element, verbatim);
  return decode(element, verbatim);
}

function convertAs(
  context: ConvertContext,
  type: string,
  element: RawArgument,
  plan: SchemaPlan,
  depth: number,
  path: string,
  verbatim: boolean,
  only: boolean,
): Attempt {
  if (type === 'array') return convertArray(context, element, plan, depth, path, only);
  if (type === 'object') return convertObject(context, element, plan, depth, path, only);
  const text = decode(element, verbatim && type === 'string');
  if (!text.ok || type === 'string') return text;
  const value = text.value as string;
  switch (type) {
    case 'null':
      return value === '' || value === 'null' ? success(null) : undefined;
    case 'boolean':
      return /^true$/i.test(value) ? success(true) : /^false$/i.test(value) ? success(false) : undefined;
    case 'integer':
    case 'number': {
      if (!JSON_NUMBER.test(value)) return undefined;
      const number = Number(value);
      if (!Number.isFinite(number)) return undefined;
      // A whole number past 2^53 − 1 has already been rounded: keep the text so AJV says "integer".
      if (Number.isInteger(number) && !Number.isSafeInteger(number) && type === 'integer') return undefined;
      return success(number);
    }
    default:
      return undefined;
  }
}

function convertArray(context: ConvertContext, element: RawArgument, plan: SchemaPlan, depth: number, path: string, only: boolean): Attempt {
  if (isBlank(element)) return only ? success([]) : undefined;
  const children = childElements(context, element, depth, only);
  if (children !== undefined) {
    if (!children.ok) return children;
    const items = children.value;
    // `<player><name>Ana</name><id>7</id></player>` for an array of player objects: one item, not two.
    if (items.length > 0 && isSingleObjectItem(items, plan)) {
      return wrap(convertElement(context, element, itemPlan(plan, 0), depth + 1, `${path}/0`));
    }
    return convertItems(context, items, plan, depth + 1, path);
  }
  const literal = jsonLiteral(context, element, depth, '[', path);
  if (literal !== undefined) {
    if (!literal.ok || Array.isArray(literal.value)) return literal;
    return only ? decode(element, false) : undefined;
  }
  if (!only) return undefined;
  if (depth + 1 > context.limits.maxDepth) return tooDeep(context, element);
  return wrap(convertElement(context, element, itemPlan(plan, 0), depth + 1, `${path}/0`));
}

function convertObject(context: ConvertContext, element: RawArgument, plan: SchemaPlan, depth: number, path: string, only: boolean): Attempt {
  if (isBlank(element)) return only ? success({}) : undefined;
  const children = childElements(context, element, depth, only);
  if (children !== undefined) {
    if (!children.ok) return children;
    return convertChildren(context, children.value, plan, depth + 1, path);
  }
  const literal = jsonLiteral(context, element, depth, '{', path);
  if (literal !== undefined && (!literal.ok || isObject(literal.value))) return literal;
  return only ? decode(element, false) : undefined;
}

/** Repeated elements (or child elements) as the items of an array, each typed by its item schema. */
function convertItems(context: ConvertContext, items: readonly RawArgument[], plan: SchemaPlan, depth: number, path: string): Converted {
  const values: unknown[] = [];
  for (let index = 0; index < items.length; index += 1) {
    const item = convertElement(context, items[index] as RawArgument, itemPlan(plan, index), depth, `${path}/${index}`);
    if (!item.ok) return item;
    values.push(item.value);
  }
  return success(values);
}

function convertBranches(
  context: ConvertContext,
  element: RawArgument,
  branches: readonly SchemaPlan[],
  depth: number,
  path: string,
  verbatim: boolean,
): Converted {
  let fallback: Converted | undefined;
  let best: { value: unknown; rank: number } | undefined;
  for (const branch of branches) {
    const converted = convertElement(context, element, branch, depth, path, verbatim);
    fallback ??= converted;
    if (!converted.ok) continue;
    if (fallback !== undefined && !fallback.ok) fallback = converted;
    const validate = context.branches?.get(branch.node.pointer);
    // Without a validator (a caller that compiled nothing) the most specific reading wins.
    if (validate !== undefined && !validate(structuredClone(converted.value))) continue;
    const type = typeof converted.value === 'string' ? 'string' : jsonTypeRank(converted.value);
    const rank = TYPE_PRIORITY.indexOf(type as (typeof TYPE_PRIORITY)[number]);
    if (best === undefined || rank < best.rank) best = { value: converted.value, rank };
  }
  if (best !== undefined) return success(best.value);
  return fallback ?? decode(element, verbatim);
}

function jsonTypeRank(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** `enum`/`const` without `type`: the option whose text form equals the text, else the text. */
function matchOption(element: RawArgument, options: readonly unknown[]): Converted {
  const text = decode(element, false);
  if (!text.ok) return text;
  for (const option of options) {
    const form = typeof option === 'string' ? option : JSON.stringify(option);
    if (form === text.value) return success(option);
  }
  return text;
}

/**
 * The element's child elements when its content is markup, `undefined` when it is text (or mixed
 * content, which is text). Nested XML that does not parse is a problem only when the schema wants
 * structure alone (`only`); in a union, the text reading gets its dispatch.
 */
function childElements(context: ConvertContext, element: RawArgument, depth: number, only: boolean): Outcome<RawArgument[], ArgumentProblem> | undefined {
  if (!/^\s*<(?!!\[CDATA\[)/.test(element.raw)) return undefined;
  const split = splitElements(element.raw, element.innerOffset);
  if (!split.ok) {
    if (!only && split.problem.category !== 'limit_exceeded') return undefined;
    return failure({ kind: 'malformed', problem: split.problem });
  }
  if (split.value.strayText) return undefined;
  if (split.value.elements.length === 0) return undefined; // only comments: text, which decodes to ""
  if (depth + 1 > context.limits.maxDepth) return tooDeep(context, split.value.elements[0] as RawArgument);
  return success(split.value.elements);
}

/** A JSON literal (`[…]` or `{…}`) in the element's text, parsed by the checking parser. */
function jsonLiteral(context: ConvertContext, element: RawArgument, depth: number, opener: '[' | '{', path: string): Converted | undefined {
  const text = decode(element, false);
  if (!text.ok) return text;
  const value = text.value as string;
  if (!value.startsWith(opener)) return undefined;
  const parsed = parseCheckedJson(value, { maxDepth: context.limits.maxDepth, baseDepth: depth });
  if (parsed.ok) return parsed;
  const { category, message } = parsed.problem;
  const at = `${path}${parsed.problem.path === '/' ? '' : parsed.problem.path}`;
  switch (category) {
    case 'invalid_json':
      return undefined; // rule 15: stays text, and AJV reports `type`
    case 'duplicate_param':
    case 'forbidden_name':
      return invalid({ category, message: `In the JSON value at ${path}: ${message}`, path: at });
    default:
      return failure({ kind: 'malformed', problem: { category, message: `In the JSON value at ${path}: ${message}`, offset: element.offset } });
  }
}

function isSingleObjectItem(children: readonly RawArgument[], plan: SchemaPlan): boolean {
  const item = resolvedPlan(itemPlan(plan, 0));
  if (!planTypes(item).includes('object')) return false;
  const known = declaredOf(item);
  return children.every((child) => child.name !== 'item' && known.has(child.name));
}

function decode(element: RawArgument, verbatim: boolean): Converted {
  if (element.selfClosing) return success('');
  const raw = element.raw;
  // Plain text (no reference, markup or `]]>`) decodes to itself with its ASCII whitespace trimmed.
  if (!verbatim && !NEEDS_DECODING.test(raw)) return success(trimXmlSpace(raw));
  const text = decodeText(raw, { verbatim });
  return text.ok ? text : failure({ kind: 'malformed', problem: text.problem });
}

/** Trims space, TAB, CR and LF at both ends (not `String.prototype.trim`, which trims more). */
function trimXmlSpace(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (start < end && isXmlSpace(raw.charCodeAt(start))) start += 1;
  while (end > start && isXmlSpace(raw.charCodeAt(end - 1))) end -= 1;
  return start === 0 && end === raw.length ? raw : raw.slice(start, end);
}

function isBlank(element: RawArgument): boolean {
  return element.selfClosing || /^[ \t\r\n]*$/.test(element.raw);
}

function wrap(item: Converted): Converted {
  return item.ok ? success([item.value]) : item;
}

function tooDeep(context: ConvertContext, element: RawArgument): Outcome<never, ArgumentProblem> {
  return failure({
    kind: 'malformed',
    problem: {
      category: 'limit_exceeded',
      message: `Elements are nested deeper than ${context.limits.maxDepth} levels (ACTION = 0, call = 1, argument = 2). Flatten the arguments.`,
      offset: element.offset,
    },
  });
}

function invalid(issue: Issue): Converted {
  return failure({ kind: 'invalid', issue });
}

