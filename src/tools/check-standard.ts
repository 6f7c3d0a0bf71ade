/**
 * `checkStandard`: runs a tool's Standard Schema on arguments AJV has accepted, so that what JSON
 * Schema cannot say (zod refinements, arktype narrows, valibot checks, transforms) holds too, and
 * `execute` receives the schema's output — the type it was promised.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ToolSchemaError, errorMessage } from '../errors.js';
import { failure, success, type Outcome } from '../outcome.js';
import type { Args, Issue } from '../protocol/types.js';
import { pointerSegment } from './schema-walk.js';

/**
 * The schema's output for `args`, or the first issue worded for the model (keyword `schema`). A
 * `validate` that throws rejects the call, like a throwing `prepareArguments`. One that answers
 * with a promise (an async refinement) is a host error: validation is synchronous, so it throws
 * `ToolSchemaError`, and the run ends with `error` naming the tool.
 */
export function checkStandard(toolName: string, standard: StandardSchemaV1, args: Args): Outcome<Args, Issue> {
  let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
  try {
    result = standard['~standard'].validate(args);
  } catch (error) {
    return failure({ category: 'validation_error', keyword: 'schema', message: `The tool's schema could not check these arguments: ${errorMessage(error)}` });
  }
  if (isPromise(result)) {
    result.then(ignore, ignore); // nobody awaits it: keep its rejection from being unhandled
    throw new ToolSchemaError(
      toolName,
      `parameters: the ${standard['~standard'].vendor} schema validated asynchronously (an async refinement or check); troupe checks arguments synchronously, so make the check synchronous or do it in execute`,
    );
  }
  if (result.issues !== undefined) return failure(describeIssue(result.issues));
  return success(result.value as Args);
}

function describeIssue(issues: readonly StandardSchemaV1.Issue[]): Issue {
  const first = issues[0];
  const segments = (first?.path ?? []).map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment));
  const path = segments.map((segment) => `/${pointerSegment(segment)}`).join('');
  const where = segments.length === 0 ? 'The arguments' : segments.length === 1 ? `Parameter "${segments[0]}"` : `The value at ${path}`;
  const detail = first?.message.trim() || 'is not valid';
  const issue: Issue = { category: 'validation_error', keyword: 'schema', message: `${where}: ${detail}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`, path };
  const property = segments.at(-1);
  if (property !== undefined) issue.property = property;
  return issue;
}

function isPromise(value: unknown): value is Promise<StandardSchemaV1.Result<unknown>> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function ignore(): void {}
