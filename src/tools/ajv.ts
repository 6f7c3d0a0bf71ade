/**
 * The one place troupe configures AJV (docs/protocol.md rule 16): the validator options, the formats it
 * knows, and the meta-schema checks every tool's `parameters` must pass before it is compiled.
 */
import { createRequire } from 'node:module';
import type { Ajv, AnySchemaObject, ErrorObject, Options, ValidateFunction } from 'ajv';

// AJV is some sixty CommonJS modules: loaded at the first tool definition rather than at
// `import('troupe')`, which keeps the import fast for code that only reads the types or the bus.
const require = createRequire(import.meta.url);
let AjvClass: typeof Ajv | undefined;
function ajvClass(): typeof Ajv {
  return (AjvClass ??= (require('ajv') as { Ajv: typeof Ajv }).Ajv);
}
import type { JsonSchema } from './types.js';


/** Exactly the options of docs/protocol.md rule 16: no coercion, no removal, own properties only. */
export const AJV_OPTIONS = Object.freeze({
  strict: true,
  allowUnionTypes: true,
  allErrors: false,
  coerceTypes: false,
  useDefaults: true,
  removeAdditional: false,
  ownProperties: true,
  $data: false,
} as const satisfies Options);

// Strict mode throws on a `format` it does not know, and MCP schemas use the standard ones often.
// These few are checked with bounded patterns (the secure meta-schema already demands `maxLength`
// next to every `format`); the other standard names are accepted as annotations and not checked.
const CHECKED_FORMATS = {
  date: /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/,
  time: /^(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[zZ]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/,
  'date-time':
    /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[tT ](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[zZ]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/,
  uuid: /^(?:urn:uuid:)?[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/,
  email: /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/,
  ipv4: /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
} as const;

/** Standard format names accepted without a check (annotations for the model). */
export const ANNOTATION_FORMATS: readonly string[] = Object.freeze([
  'hostname', 'idn-hostname', 'idn-email', 'ipv6', 'uri-reference', 'iri', 'iri-reference', 'uri-template',
  'json-pointer', 'relative-json-pointer', 'regex', 'duration', 'byte', 'binary', 'password',
  'int32', 'int64', 'float', 'double',
]);

/** Every format name a tool schema may use. */
export const KNOWN_FORMATS: readonly string[] = Object.freeze([...Object.keys(CHECKED_FORMATS), ...ANNOTATION_FORMATS]);

const formats: NonNullable<Options['formats']> = {
  ...CHECKED_FORMATS,
  ...Object.fromEntries(ANNOTATION_FORMATS.map((name) => [name, true])),
};

/**
 * A fresh AJV instance with the rule-16 options, for compiling one tool's parameters (with
 * `allErrors` for the validator that lists every issue of a rejected call).
 *
 * One instance per tool keeps compiled schemas from piling up in a shared cache and lets two tools
 * use the same `$id`. The instance skips AJV's own meta-schema pass (`validateSchema: false`):
 * `checkMetaSchemas` has already run it, with validators compiled once for the whole process.
 */
export function createAjv(overrides?: Pick<Options, 'allErrors'>): Ajv {
  return new (ajvClass())({ ...AJV_OPTIONS, ...overrides, validateSchema: false, formats });
}

// The checker compiles the two meta-schemas once, at the first tool definition rather than at
// import: compiling them is most of the cost of importing troupe. It is non-strict because the
// meta-schemas themselves use keywords strict mode would refuse. Nothing mutates it afterwards.
let metaValidators: { draft07: ValidateFunction; secure: ValidateFunction } | undefined;

function metaSchemas(): { draft07: ValidateFunction; secure: ValidateFunction } {
  if (metaValidators === undefined) {
    const secureMetaSchema = require('ajv/lib/refs/json-schema-secure.json') as AnySchemaObject;
    const checker = new (ajvClass())({ strict: false, allErrors: false, validateFormats: false });
    metaValidators = { draft07: checker.getSchema('http://json-schema.org/draft-07/schema') as ValidateFunction, secure: checker.compile(secureMetaSchema) };
  }
  return metaValidators;
}

const DRAFT_07_IDS = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);

/** What is wrong with a schema, as a JSON pointer into it and a sentence. */
export type SchemaFault = { path: string; message: string };

/** Runs the draft-07 and secure meta-schemas on one (sub)schema; the first fault, if any. */
export function checkMetaSchemas(schema: unknown, basePath = ''): SchemaFault | undefined {
  if (typeof schema === 'object' && schema !== null && Object.hasOwn(schema, '$schema')) {
    const declared = (schema as JsonSchema)['$schema'];
    if (typeof declared !== 'string' || !DRAFT_07_IDS.has(declared)) {
      return {
        path: `${basePath}/$schema`,
        message: `"$schema" is ${JSON.stringify(declared)}; troupe reads JSON Schema draft-07 and 2020-12, so remove "$schema" or set it to "http://json-schema.org/draft-07/schema#" or "https://json-schema.org/draft/2020-12/schema"`,
      };
    }
  }
  const { draft07, secure } = metaSchemas();
  if (!draft07(schema)) return fault(draft07.errors, basePath, 'is not a valid JSON Schema (draft-07)');
  if (!secure(schema)) return fault(secure.errors, basePath, 'fails the secure meta-schema');
  return undefined;
}

function fault(errors: ErrorObject[] | null | undefined, basePath: string, what: string): SchemaFault {
  const error = errors?.[0];
  const path = `${basePath}${error?.instancePath ?? ''}`;
  const detail = error === undefined ? '' : describeMetaError(error);
  return { path: path === '' ? '/' : path, message: `${what}: ${detail}` };
}

function describeMetaError(error: ErrorObject): string {
  // The secure meta-schema's `dependencies` say why in their own descriptions; say it plainly.
  if (error.keyword === 'required' && typeof error.params['missingProperty'] === 'string') {
    const missing = error.params['missingProperty'];
    if (missing === 'maxLength') return '"pattern" and "format" need a "maxLength" (unbounded strings make matching slow)';
    if (missing === 'maxItems') return '"uniqueItems" on an array of objects or arrays needs a "maxItems"';
    if (missing === 'propertyNames') return '"patternProperties" needs "propertyNames" with a "maxLength"';
    return `"${missing}" is required here`;
  }
  if (error.keyword === 'enum' && Array.isArray(error.params['allowedValues'])) {
    return `${error.message ?? 'must be one of'}: ${error.params['allowedValues'].map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return error.message ?? error.keyword;
}
