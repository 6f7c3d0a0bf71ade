/**
 * `readParameters`: what a tool's `parameters` say, as the JSON Schema troupe validates with and
 * shows the model, plus the Standard Schema when the definition gave one (its `validate` runs after
 * AJV). A Standard Schema gives its JSON Schema through the Standard JSON Schema interface
 * (`~standard.jsonSchema`, https://standardschema.dev), which zod 4.2+ and arktype ship and valibot
 * adds with `toStandardJsonSchema`: one general path, no adapter per library.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { ToolSchemaError, errorMessage } from '../errors.js';
import { toDraft07 } from './to-draft-07.js';
import type { JsonSchema } from './types.js';

/** A tool's parameters as `defineTool` uses them. */
export type ReadParameters = {
  /** The JSON Schema, draft-07 forms; not yet copied, frozen or checked. */
  schema: unknown;
  /** The Standard Schema whose `validate` runs after AJV, when the parameters were one. */
  standard: StandardSchemaV1 | undefined;
};

/** What to do when a library's schemas cannot give a JSON Schema, by `~standard.vendor`. */
const VENDOR_HINTS: Readonly<Record<string, string>> = {
  valibot: 'wrap it: parameters: toStandardJsonSchema(schema), from @valibot/to-json-schema',
  zod: 'zod 4.2 or newer gives one; with an older zod, pass z.toJSONSchema(schema) (or zod-to-json-schema) instead',
  arktype: 'a current arktype (2.1.28 or newer) gives one; or pass schema.toJsonSchema() instead',
  effect: 'pass JSONSchema.make(schema) instead, and annotate execute\'s argument with Schema.Type',
};

/**
 * Reads `parameters`: a Standard Schema is asked for its input JSON Schema (draft-07, else 2020-12),
 * and any JSON Schema is rewritten to draft-07 forms (`toDraft07`). Throws `ToolSchemaError` for a
 * Standard Schema that cannot give a JSON Schema, naming its library and what to do.
 */
export function readParameters(toolName: string, parameters: unknown): ReadParameters {
  const standard = standardProps(parameters);
  if (standard === undefined) return { schema: toDraft07(parameters, toolName), standard: undefined };
  const vendor = typeof standard.vendor === 'string' ? standard.vendor : 'unknown';
  const converter = standard.jsonSchema;
  if (typeof converter !== 'object' || converter === null || typeof converter.input !== 'function') {
    const hint = VENDOR_HINTS[vendor] ?? 'pass its JSON Schema as parameters instead';
    throw new ToolSchemaError(
      toolName,
      `parameters are a ${vendor} Standard Schema that cannot give a JSON Schema (it has no ~standard.jsonSchema), which troupe needs to validate arguments and show them to the model; ${hint}`,
    );
  }
  const schema = inputSchema(toolName, vendor, converter);
  const validates = typeof (standard as Partial<StandardSchemaV1.Props>).validate === 'function';
  return { schema: toDraft07(schema, toolName), standard: validates ? (parameters as StandardSchemaV1) : undefined };
}

/** The `~standard` properties of a Standard Schema (an object or, as arktype's are, a function), else `undefined`. */
function standardProps(parameters: unknown): Partial<StandardJSONSchemaV1.Props> | undefined {
  if ((typeof parameters !== 'object' && typeof parameters !== 'function') || parameters === null) return undefined;
  if (!('~standard' in parameters)) return undefined;
  const props = (parameters as { '~standard': unknown })['~standard'];
  return typeof props === 'object' && props !== null ? (props as Partial<StandardJSONSchemaV1.Props>) : undefined;
}

/** Draft-07 when the library writes it (the spec recommends both), else 2020-12, rewritten later. */
function inputSchema(toolName: string, vendor: string, converter: StandardJSONSchemaV1.Converter): JsonSchema {
  let firstError: unknown;
  for (const target of ['draft-07', 'draft-2020-12'] as const) {
    try {
      const schema = converter.input({ target });
      if (typeof schema === 'object' && schema !== null) return schema;
      firstError ??= new Error(`~standard.jsonSchema.input returned ${typeof schema}`);
    } catch (error) {
      firstError ??= error;
    }
  }
  throw new ToolSchemaError(
    toolName,
    `parameters: the ${vendor} schema could not be written as JSON Schema (${errorMessage(firstError)}); keep to what JSON Schema can say (no transforms of the input, dates or functions) and check the rest in execute`,
    { cause: firstError },
  );
}
