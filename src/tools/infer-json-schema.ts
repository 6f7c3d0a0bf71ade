/**
 * `FromJsonSchema`: the TypeScript type of the arguments a JSON Schema literal admits, so that a
 * tool whose `parameters` are written inline (or `as const`) gets a typed `execute`.
 *
 * Type-level only. It reads the keywords tool schemas use — `type` (one or a list), `properties`,
 * `required`, `default`, `additionalProperties`, `items`, `prefixItems`, `enum`, `const`,
 * `anyOf`/`oneOf`/`allOf` and local `$ref`s into `$defs`/`definitions` — and gives `unknown` for
 * anything it cannot read, never a wrong type: a schema with a `type` (or `properties`, `items`) is read
 * by it and its applicators are left out, which may give a wider type but never a narrower one. Unlike json-schema-to-ts, an object with declared
 * `properties` has exactly those keys (no `[key: string]: unknown`), so reading an undeclared
 * argument is a compile error; and a property with a `default` is present, because the validator
 * fills defaults in before `execute` runs.
 */

/** Recursion stops here (deep or self-referencing schemas): beyond it the type is `unknown`. */
type MaxDepth = 10;

/**
 * The type of the values `TSchema` admits, `unknown` where it cannot tell.
 *
 * @example
 * const schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
 * type Args = FromJsonSchema<typeof schema>; // { id: string }
 */
export type FromJsonSchema<TSchema, TRoot = TSchema, TDepth extends unknown[] = []> = TDepth['length'] extends MaxDepth
  ? unknown
  : TSchema extends true
    ? unknown
    : TSchema extends false
      ? never
      : TSchema extends { readonly $ref: infer TRef extends string }
        ? FromJsonSchema<ResolveRef<TRoot, TRef>, TRoot, [...TDepth, unknown]>
        : TSchema extends { readonly const: infer TConst }
          ? Mutable<TConst>
          : TSchema extends { readonly enum: readonly (infer TValue)[] }
            ? Mutable<TValue>
            : TSchema extends { readonly type: unknown } | { readonly properties: unknown } | { readonly items: unknown } | { readonly prefixItems: unknown }
              ? ByType<TSchema, TypeNames<TSchema>, TRoot, [...TDepth, unknown]>
              : TSchema extends { readonly anyOf: readonly unknown[] }
                ? Branches<TSchema['anyOf'], TRoot, TDepth>
                : TSchema extends { readonly oneOf: readonly unknown[] }
                  ? Branches<TSchema['oneOf'], TRoot, TDepth>
                  : TSchema extends { readonly allOf: readonly unknown[] }
                    ? AllOf<TSchema['allOf'], TRoot, TDepth>
                    : unknown;

/** The `type` names of a schema: its `type` (one or a list), else what its other keywords imply. */
type TypeNames<TSchema> = TSchema extends { readonly type: infer TType }
  ? TType extends string
    ? TType
    : TType extends readonly (infer TName extends string)[]
      ? TName
      : never
  : TSchema extends { readonly properties: object }
    ? 'object'
    : 'array';

type ByType<TSchema, TName, TRoot, TDepth extends unknown[]> = TName extends 'string'
  ? string
  : TName extends 'number' | 'integer'
    ? number
    : TName extends 'boolean'
      ? boolean
      : TName extends 'null'
        ? null
        : TName extends 'object'
          ? ObjectOf<TSchema, TRoot, TDepth>
          : TName extends 'array'
            ? ArrayOf<TSchema, TRoot, TDepth>
            : unknown;

type ObjectOf<TSchema, TRoot, TDepth extends unknown[]> = TSchema extends { readonly properties: infer TProperties extends object }
  ? Simplify<
      { -readonly [K in keyof TProperties as K extends Present<TSchema, TProperties> ? K : never]: FromJsonSchema<TProperties[K], TRoot, TDepth> } & {
        -readonly [K in keyof TProperties as K extends Present<TSchema, TProperties> ? never : K]?: FromJsonSchema<TProperties[K], TRoot, TDepth>;
      }
    >
  : TSchema extends { readonly additionalProperties: infer TAdditional extends object }
    ? { [key: string]: FromJsonSchema<TAdditional, TRoot, TDepth> }
    : { [key: string]: unknown };

/** Keys that are always there: required ones, and those with a `default` (filled in before `execute`). */
type Present<TSchema, TProperties> =
  | (TSchema extends { readonly required: readonly (infer TKey)[] } ? TKey : never)
  | { [K in keyof TProperties]: TProperties[K] extends { readonly default: unknown } ? K : never }[keyof TProperties];

type ArrayOf<TSchema, TRoot, TDepth extends unknown[]> = TSchema extends { readonly prefixItems: infer TPrefix extends readonly unknown[] }
  ? [...Tuple<TPrefix, TRoot, TDepth>, ...Rest<TSchema extends { readonly items: infer TItems } ? TItems : true, TRoot, TDepth>]
  : TSchema extends { readonly items: infer TItems extends readonly unknown[] }
    ? [...Tuple<TItems, TRoot, TDepth>, ...Rest<TSchema extends { readonly additionalItems: infer TMore } ? TMore : true, TRoot, TDepth>]
    : TSchema extends { readonly items: infer TItems }
      ? FromJsonSchema<TItems, TRoot, TDepth>[]
      : unknown[];

type Tuple<TItems extends readonly unknown[], TRoot, TDepth extends unknown[]> = { -readonly [K in keyof TItems]: FromJsonSchema<TItems[K], TRoot, TDepth> };

type Rest<TMore, TRoot, TDepth extends unknown[]> = TMore extends false ? [] : FromJsonSchema<TMore, TRoot, TDepth>[];

type Branches<TList extends readonly unknown[], TRoot, TDepth extends unknown[]> = {
  [K in keyof TList]: FromJsonSchema<TList[K], TRoot, [...TDepth, unknown]>;
}[number];

type AllOf<TList extends readonly unknown[], TRoot, TDepth extends unknown[]> = TList extends readonly [infer THead, ...infer TTail]
  ? FromJsonSchema<THead, TRoot, [...TDepth, unknown]> & AllOf<TTail, TRoot, TDepth>
  : unknown;

/** `#/$defs/name` and `#/definitions/name` in the root; anything else reads as any value. */
type ResolveRef<TRoot, TRef extends string> = TRef extends '#'
  ? TRoot
  : TRef extends `#/$defs/${infer TName}`
    ? TRoot extends { readonly $defs: { readonly [K in TName]: infer TFound } }
      ? TFound
      : true
    : TRef extends `#/definitions/${infer TName}`
      ? TRoot extends { readonly definitions: { readonly [K in TName]: infer TFound } }
        ? TFound
        : true
      : true;

/** Literal values of `const`/`enum` as plain values (`as const` made them readonly). */
type Mutable<T> = T extends readonly unknown[] ? { -readonly [K in keyof T]: Mutable<T[K]> } : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;

/** Flattens an intersection of object types into one, so hovers and errors show plain objects. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};
