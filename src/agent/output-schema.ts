/**
 * Structured output (`createAgent({ output })`): the schema of the final answer, read and compiled
 * once like a tool's parameters, and the check that turns the answer's text into the typed value.
 */
import type { StandardSchemaV1, StandardTypedV1 } from '@standard-schema/spec';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ConfigError, errorMessage } from '../errors.js';
import type { Issue } from '../protocol/types.js';
import { checkMetaSchemas, createAjv } from '../tools/ajv.js';
import { allErrorsValidator, allIssues } from '../tools/all-issues.js';
import { describeAjvErrors } from '../tools/describe-ajv-error.js';
import type { FromJsonSchema } from '../tools/infer-json-schema.js';
import { readParameters } from '../tools/read-parameters.js';
import { pointerSegment } from '../tools/schema-walk.js';
import type { JsonSchema, ToolParameters } from '../tools/types.js';
import { deepFreeze } from '../tools/freeze-args.js';

/**
 * What `output` may be: a JSON Schema of an object (draft-07 or 2020-12; written inline or
 * `as const`, it types `result.output`), or a Standard Schema of an object that can give its JSON
 * Schema (zod 4, arktype, valibot through `toStandardJsonSchema`), whose output type it is.
 */
export type OutputSchema = ToolParameters;

/** The type of `result.output` for an `output` schema: `unknown` without one, or when the schema cannot tell. */
export type OutputOf<TSchema> = [TSchema] extends [undefined]
  ? unknown
  : TSchema extends StandardTypedV1
    ? StandardTypedV1.InferOutput<TSchema>
    : FromJsonSchema<TSchema>;

/** The name the schema goes by on the wire (OpenAI's `json_schema.name`, the AI SDK's `name`). */
export const OUTPUT_NAME = 'output';

/** An `output` schema checked and compiled: made once per schema object, shared by the agents that use it. */
export type CompiledOutput = {
  /** The JSON Schema (draft-07 forms, frozen) the answer is validated with and the model is shown. */
  schema: JsonSchema;
  validate: ValidateFunction;
  /** The Standard Schema whose `validate` runs after AJV, when `output` was one. */
  standard?: StandardSchemaV1;
  /** The every-error validator, made at the first invalid answer (`null`: it would not compile). */
  allErrors?: ValidateFunction | null;
};

const compiled = new WeakMap<object, CompiledOutput>();

/**
 * Reads and compiles `output` (once per schema object). Throws `ConfigError` naming the agent for a
 * schema that is not an object's, does not pass the meta-schemas, or does not compile.
 */
export function compileOutput(output: unknown, agent: string): CompiledOutput {
  if ((typeof output !== 'object' && typeof output !== 'function') || output === null) {
    throw new ConfigError(`createAgent "${agent}": output must be a JSON Schema or a Standard Schema (zod, arktype, valibot) of an object, got ${output === null ? 'null' : typeof output}`);
  }
  const known = compiled.get(output);
  if (known !== undefined) return known;
  const fail = (message: string): never => {
    throw new ConfigError(`createAgent "${agent}": output ${message}`);
  };
  let read: ReturnType<typeof readParameters>;
  try {
    read = readParameters(OUTPUT_NAME, output);
  } catch (error) {
    // readParameters words it for a tool: `tool "output": parameters are a zod Standard Schema that …`.
    return fail(errorMessage(error).replace(/^tool "output": parameters(?::| are)? ?/, 'is '));
  }
  const schema = deepFreeze(structuredClone(read.schema) as JsonSchema);
  if (schema['type'] !== 'object') {
    fail(`must describe an object (type "object"), got type ${JSON.stringify(schema['type'])}; wrap a list or a single value in an object's property`);
  }
  const fault = checkMetaSchemas(schema);
  if (fault !== undefined) fail(`at ${fault.path}: ${fault.message}`);
  let validate: ValidateFunction;
  try {
    validate = createAjv().compile(schema);
  } catch (error) {
    return fail(`does not compile under strict AJV (no unknown keywords or formats): ${errorMessage(error)}`);
  }
  const entry: CompiledOutput = read.standard === undefined ? { schema, validate } : { schema, validate, standard: read.standard };
  compiled.set(output, entry);
  return entry;
}

/** What the final answer came to: the value, or the issues the model is told of. */
export type AnswerCheck = { ok: true; value: unknown } | { ok: false; issues: Issue[] };

/**
 * Reads the final answer: its whole text (trimmed) as JSON, or the one fenced code block it is
 * (```json … ```); then AJV with the output schema, then the Standard Schema's `validate`, whose
 * output is the value. Up to `maxIssues` issues, worded for the model.
 */
export function checkAnswer(text: string, output: CompiledOutput, maxIssues: number): AnswerCheck {
  let value: unknown;
  try {
    value = JSON.parse(unfence(text.trim()));
  } catch (error) {
    return { ok: false, issues: [{ category: 'invalid_arguments_json', message: `The answer is not JSON: ${errorMessage(error)}` }] };
  }
  if (!output.validate(value)) {
    const errors = (output.validate.errors ?? []) as ErrorObject[];
    const first = describeAjvErrors(errors, output.schema, value);
    const issues = allIssues(first, allErrorsValidator(output, output.schema), output.schema, value, maxIssues);
    return { ok: false, issues: issues.map(asAnswerIssue) };
  }
  return output.standard === undefined ? { ok: true, value } : checkStandard(output.standard, value, maxIssues);
}

const FENCED = /^```[A-Za-z]*[^\S\n]*\n([\s\S]*?)\n?```$/;

/** The inside of a text that is one fenced code block; any other text as it is. */
function unfence(text: string): string {
  const match = FENCED.exec(text);
  return match === null || match[1]!.includes('```') ? text : match[1]!;
}

/** The tools' wording of a validation issue, said of an answer's fields instead of a call's parameters. */
function asAnswerIssue(issue: Issue): Issue {
  const message = issue.message
    .replace(/^The arguments\b/, 'The answer')
    .replace(/^Parameter "/, 'Field "')
    .replace(/^Missing required parameter\b/, 'Missing required field')
    .replace(/^Unknown parameter\b/, 'Unknown field')
    .replace(/ Parameters: /, ' Fields: ')
    .replace(/ Repeat the tag once per item, or put one <item> element per item inside it\.$/, ' Write a JSON array.')
    .replace(/ Give one child element per field, or a JSON object\.$/, ' Write a JSON object.');
  return { ...issue, message };
}

/** The Standard Schema's verdict on a value AJV accepted; synchronous, as the answer is read in one step. */
function checkStandard(standard: StandardSchemaV1, value: unknown, maxIssues: number): AnswerCheck {
  let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
  try {
    result = standard['~standard'].validate(value);
  } catch (error) {
    return { ok: false, issues: [{ category: 'validation_error', keyword: 'schema', message: `The output schema could not check the answer: ${errorMessage(error)}` }] };
  }
  if (typeof (result as { then?: unknown }).then === 'function') {
    (result as Promise<unknown>).then(ignore, ignore); // nobody awaits it: keep its rejection from being unhandled
    // The host's mistake, which no answer can fix: the corrections run out and the run's error says why.
    const vendor = standard['~standard'].vendor;
    return { ok: false, issues: [{ category: 'validation_error', keyword: 'schema', message: `The output schema (${vendor}) validated asynchronously; troupe checks the answer synchronously` }] };
  }
  const { issues } = result as StandardSchemaV1.Result<unknown>;
  if (issues === undefined) return { ok: true, value: (result as StandardSchemaV1.SuccessResult<unknown>).value };
  return { ok: false, issues: issues.slice(0, maxIssues).map(standardIssue) };
}

function standardIssue(issue: StandardSchemaV1.Issue): Issue {
  const segments = (issue.path ?? []).map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment));
  const path = segments.map((segment) => `/${pointerSegment(segment)}`).join('');
  const where = segments.length === 0 ? 'The answer' : segments.length === 1 ? `Field "${segments[0]}"` : `The value at ${path}`;
  const result: Issue = { category: 'validation_error', keyword: 'schema', message: `${where}: ${issue.message.trim() || 'is not valid'}`, path };
  if (segments.length > 0) result.property = segments.at(-1)!;
  return result;
}

function ignore(): void {}
