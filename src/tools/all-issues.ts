import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Issue } from '../protocol/types.js';
import { createAjv } from './ajv.js';
import { describeAjvErrors } from './describe-ajv-error.js';
import type { JsonSchema } from './types.js';

/**
 * A validator of `parameters` that collects every error (AJV's `allErrors`), made the first time a
 * call of this tool is rejected and kept. The validator that runs on every call stops at the
 * first error, so accepted calls pay nothing for this; `undefined` when the schema cannot be
 * compiled that way (the first issue then stands alone).
 */
export function allErrorsValidator(cache: { allErrors?: ValidateFunction | null }, parameters: JsonSchema): ValidateFunction | undefined {
  if (cache.allErrors === undefined) {
    try {
      cache.allErrors = createAjv({ allErrors: true }).compile(parameters);
    } catch {
      cache.allErrors = null;
    }
  }
  return cache.allErrors ?? undefined;
}

/**
 * The issues of arguments that failed validation: `first` (the issue the rejection's category and
 * keyword come from, exactly as before), then the other distinct problems, up to `max` in all.
 * Errors inside an `anyOf`/`oneOf` branch are left to the applicator's own issue.
 */
export function allIssues(first: Issue, validate: ValidateFunction | undefined, parameters: JsonSchema, args: unknown, max: number): Issue[] {
  if (validate === undefined || max <= 1 || validate(args)) return [first];
  const issues = [first];
  const seen = new Set([first.message]);
  for (const error of (validate.errors ?? []) as ErrorObject[]) {
    if (issues.length >= max) break;
    if (/\/(?:anyOf|oneOf)\/\d+\//.test(error.schemaPath)) continue;
    const issue = describeAjvErrors([error], parameters, args);
    if (seen.has(issue.message)) continue;
    seen.add(issue.message);
    issues.push(issue);
  }
  return issues;
}
