/**
 * Conversion plans: what argument conversion needs to know about one position in a tool's
 * parameters (its `$ref` target, declared types, union order, the subschemas of its properties,
 * items and branches), worked out the first time a call reaches that position and kept for every
 * later call. The answers are exactly those of the `schema-walk` readers; only the work is shared.
 */
import {
  isObject, itemNode, MAX_REF_HOPS, own, pointerSegment, resolveNode, schemaTypes, TYPE_PRIORITY,
  type SchemaNode,
} from './schema-walk.js';
import type { JsonSchema } from './types.js';

/** How an element typed by a (resolved) position is converted. */
export type PlanShape =
  | { kind: 'text' }
  | { kind: 'branches'; branches: readonly SchemaPlan[] }
  | { kind: 'options'; options: readonly unknown[] }
  | { kind: 'typed'; types: readonly string[]; ordered: readonly string[]; orderedIfBlank: readonly string[]; hasArray: boolean };

/** A property lookup: the child's plan and its escaped pointer segment, or a closed object's refusal. */
export type PropertyPlan = OpenProperty | { closed: true };
type OpenProperty = { closed: false; child: SchemaPlan; segment: string };

/** One position in a tool's parameters; every field past `node` is filled in on first use. */
export type SchemaPlan = {
  readonly root: JsonSchema;
  readonly node: SchemaNode;
  /** Plans of `$ref` targets by pointer, shared by every plan of one root so recursive schemas stay finite. */
  readonly targets: Map<string, SchemaPlan>;
  resolved?: SchemaPlan;
  types?: readonly string[];
  shape?: PlanShape;
  declared?: ReadonlyMap<string, OpenProperty>;
  known?: readonly string[];
  patterns?: ReadonlyArray<{ test: RegExp | undefined; plan: SchemaPlan }>;
  other?: PropertyPlan;
  items?: { bound: number; byIndex: Array<SchemaPlan | undefined>; rest: SchemaPlan | undefined };
};

/** Types tried in this order for whitespace-only text: `""` reads as null first, never as a number. */
const BLANK_PRIORITY = ['null', 'string', 'array', 'object'] as const;

// Only frozen roots (`defineTool` deep-freezes every schema) are cached: a schema that can still change gets
// a fresh plan per call, which is always right.
const rootPlans = new WeakMap<JsonSchema, SchemaPlan>();

/** The plan of a tool's whole parameters object. */
export function rootPlan(root: JsonSchema): SchemaPlan {
  const cached = rootPlans.get(root);
  if (cached !== undefined) return cached;
  const plan = newPlan(root, { schema: root, pointer: '' }, new Map());
  if (Object.isFrozen(root)) rootPlans.set(root, plan);
  return plan;
}

/** The plan after following local `$ref`s (`resolveNode`); the plan itself when it has none. */
export function resolvedPlan(plan: SchemaPlan): SchemaPlan {
  if (plan.resolved !== undefined) return plan.resolved;
  let resolved = plan;
  if (typeof own(plan.node.schema, '$ref') === 'string') {
    const node = resolveNode(plan.root, plan.node);
    if (node.schema === undefined) {
      resolved = newPlan(plan.root, node, plan.targets);
    } else {
      resolved = plan.targets.get(node.pointer) ?? newPlan(plan.root, node, plan.targets);
      plan.targets.set(node.pointer, resolved);
    }
  }
  plan.resolved = resolved;
  return resolved;
}

/** `schemaTypes` of the plan's own schema. */
export function planTypes(plan: SchemaPlan): readonly string[] {
  plan.types ??= schemaTypes(plan.root, plan.node.schema);
  return plan.types;
}

/** How `convertElement` treats an element typed by this (resolved) plan. */
export function planShape(plan: SchemaPlan): PlanShape {
  if (plan.shape !== undefined) return plan.shape;
  plan.shape = computeShape(plan);
  return plan.shape;
}

function computeShape(plan: SchemaPlan): PlanShape {
  const { schema, pointer } = plan.node;
  if (!isObject(schema)) return { kind: 'text' };
  if (!Object.hasOwn(schema, 'type')) {
    for (const key of ['anyOf', 'oneOf']) {
      const list = own(schema, key);
      if (Array.isArray(list)) {
        const branches = list.map((branch, index) => newPlan(plan.root, { schema: branch as JsonSchema, pointer: `${pointer}/${key}/${index}` }, plan.targets));
        return { kind: 'branches', branches };
      }
    }
    const options = Object.hasOwn(schema, 'const') ? [own(schema, 'const')] : own(schema, 'enum');
    if (Array.isArray(options)) return { kind: 'options', options };
  }
  const types = planTypes(plan);
  if (types.length === 0) return { kind: 'text' };
  return {
    kind: 'typed',
    types,
    ordered: TYPE_PRIORITY.filter((type) => types.includes(type)),
    orderedIfBlank: BLANK_PRIORITY.filter((type) => types.includes(type)),
    hasArray: types.includes('array'),
  };
}

/** `declaredProperties` of this plan's schema, with each name's plan (`findProperty` order: first wins). */
export function declaredOf(plan: SchemaPlan): ReadonlyMap<string, OpenProperty> {
  if (plan.declared !== undefined) return plan.declared;
  const declared = new Map<string, OpenProperty>();
  collectDeclared(plan, plan.node, 0, declared);
  plan.declared = declared;
  return declared;
}

/** The names `declaredProperties` lists for this plan's schema, in its order. */
export function knownNames(plan: SchemaPlan): readonly string[] {
  plan.known ??= [...declaredOf(plan).keys()];
  return plan.known;
}

function collectDeclared(plan: SchemaPlan, node: SchemaNode, depth: number, declared: Map<string, OpenProperty>): void {
  const properties = own(node.schema, 'properties');
  if (isObject(properties)) {
    for (const key of Object.keys(properties)) {
      if (declared.has(key)) continue;
      const segment = pointerSegment(key);
      const child = newPlan(plan.root, { schema: properties[key] as JsonSchema, pointer: `${node.pointer}/properties/${segment}` }, plan.targets);
      declared.set(key, { closed: false, child, segment });
    }
  }
  const all = own(node.schema, 'allOf');
  if (!Array.isArray(all) || depth > MAX_REF_HOPS) return;
  for (let index = 0; index < all.length; index += 1) {
    const entry = resolveNode(plan.root, { schema: all[index] as JsonSchema, pointer: `${node.pointer}/allOf/${index}` });
    collectDeclared(plan, entry, depth + 1, declared);
  }
}

/**
 * `propertyNode` for an element named `name` inside an object typed by this plan: declared
 * properties, then `patternProperties`, then `additionalProperties`.
 */
export function propertyPlan(plan: SchemaPlan, name: string): PropertyPlan {
  const declared = declaredOf(plan).get(name);
  if (declared !== undefined) return declared;
  plan.patterns ??= patternPlans(plan);
  for (const { test, plan: child } of plan.patterns) {
    if (test?.test(name) === true) return { closed: false, child, segment: pointerSegment(name) };
  }
  plan.other ??= otherPropertyPlan(plan);
  return plan.other.closed ? plan.other : { closed: false, child: plan.other.child, segment: pointerSegment(name) };
}

function patternPlans(plan: SchemaPlan): Array<{ test: RegExp | undefined; plan: SchemaPlan }> {
  const patterns = own(plan.node.schema, 'patternProperties');
  if (!isObject(patterns)) return [];
  return Object.entries(patterns).map(([pattern, schema]) => ({
    // Compiled once; without the `g` or `y` flag a RegExp keeps no state between tests.
    test: compilePattern(pattern),
    plan: newPlan(plan.root, { schema: schema as JsonSchema, pointer: `${plan.node.pointer}/patternProperties/${pointerSegment(pattern)}` }, plan.targets),
  }));
}

function otherPropertyPlan(plan: SchemaPlan): PropertyPlan {
  const additional = own(plan.node.schema, 'additionalProperties');
  if (additional === false) return { closed: true };
  const child = isObject(additional)
    ? { schema: additional, pointer: `${plan.node.pointer}/additionalProperties` }
    : { schema: undefined, pointer: plan.node.pointer };
  return { closed: false, child: newPlan(plan.root, child, plan.targets), segment: '' };
}

/** `itemNode` for item `index` of an array typed by this plan. */
export function itemPlan(plan: SchemaPlan, index: number): SchemaPlan {
  plan.items ??= itemPlans(plan);
  const items = plan.items;
  if (index >= items.bound) {
    items.rest ??= newPlan(plan.root, itemNode(plan.node, items.bound), plan.targets);
    return items.rest;
  }
  let item = items.byIndex[index];
  if (item === undefined) {
    item = newPlan(plan.root, itemNode(plan.node, index), plan.targets);
    items.byIndex[index] = item;
  }
  return item;
}

function itemPlans(plan: SchemaPlan): NonNullable<SchemaPlan['items']> {
  const prefix = own(plan.node.schema, 'prefixItems');
  const tuple = own(plan.node.schema, 'items');
  // Items from `bound` on all share one subschema (`items`, `additionalItems`, or none).
  const bound = Math.max(Array.isArray(prefix) ? prefix.length : 0, Array.isArray(tuple) ? tuple.length : 0);
  return { bound, byIndex: [], rest: undefined };
}

function newPlan(root: JsonSchema, node: SchemaNode, targets: Map<string, SchemaPlan>): SchemaPlan {
  return { root, node, targets };
}

function compilePattern(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}
