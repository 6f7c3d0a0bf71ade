/**
 * The validate stage: raw calls in, schema-valid calls out (docs/protocol.md rules 9 and 11–17).
 * Calls are checked in document order; the first problem rejects the whole block, so no call of
 * a block with one bad call runs.
 */
import { failure, success, type Outcome } from '../outcome.js';
import { isForbiddenName } from '../protocol/forbidden-names.js';
import { DEFAULT_LIMITS, type CallRejection, type Issue, type MalformedProblem, type ProtocolLimits, type RawCall, type ToolCall } from '../protocol/types.js';
import { allErrorsValidator, allIssues } from './all-issues.js';
import { restoreParameterNames } from './parameter-aliases.js';
import { checkStandard } from './check-standard.js';
import { describeAjvErrors } from './describe-ajv-error.js';
import { checkLooseArguments, looseArguments, rawCallWith } from './loose-arguments.js';
import { normalizeNativeArguments, normalizeXmlArguments } from './normalize-arguments.js';
import type { Registry } from './registry.js';
import type { Tool } from './types.js';
import { suggestName } from './suggest-name.js';
import { errorMessage } from '../errors.js';

/** Why a block cannot run: malformed as a whole (`action.malformed`) or one call rejected (`tool.rejected`). */
export type ValidationProblem = { kind: 'malformed'; problem: MalformedProblem } | { kind: 'rejected'; rejection: CallRejection };

/** What validation needs to know about the agent. */
export type ValidateContext = {
  registry: Registry;
  /** The tools this agent may call; all registered tools when left out. */
  allowed?: ReadonlySet<string>;
  limits: ProtocolLimits;
};

/** Tool lists in messages stop after this many names. */
const MAX_LISTED = 20;

/**
 * Checks names, permissions and arguments of every call, in order, and returns the calls with
 * normalized arguments (AJV defaults filled in), or the first problem.
 *
 * @example
 * const outcome = validateCalls(parseOutput(text).calls, { registry, limits: DEFAULT_LIMITS });
 * if (!outcome.ok && outcome.problem.kind === 'rejected') console.log(outcome.problem.rejection.message);
 */
export function validateCalls(calls: readonly RawCall[], context: ValidateContext): Outcome<ToolCall[], ValidationProblem> {
  const { registry, allowed, limits } = context;
  // The parser enforces these too; checked again so this stage is safe on its own input.
  if (calls.length > limits.maxCallsPerAction) {
    return malformed({ category: 'limit_exceeded', message: `${calls.length} calls in one dispatch; the limit is ${limits.maxCallsPerAction}. Make fewer calls per dispatch.` });
  }
  if (calls.length > 1) {
    const ids = new Set<string>();
    for (const call of calls) {
      if (ids.has(call.callId)) return malformed({ category: 'duplicate_call_id', message: `Two calls share the id "${call.callId}"; every call needs its own id.` });
      ids.add(call.callId);
    }
  }

  const validated: ToolCall[] = [];
  for (let index = 0; index < calls.length; index++) {
    const checked = validateCall(calls[index]!, registry, allowed, limits);
    if (!checked.ok) return checked;
    validated.push(checked.value);
  }
  return success(validated);
}

function validateCall(
  call: RawCall,
  registry: Registry,
  allowed: ReadonlySet<string> | undefined,
  limits: ProtocolLimits,
): Outcome<ToolCall, ValidationProblem> {
  const { callId, name } = call;
  if (isForbiddenName(name)) {
    const message = `"${name}" cannot be a tool name (it names a property of Object.prototype). Available tools: ${listed(visibleNames(registry, allowed))}.`;
    return rejected({ callId, name, code: 'unknown_tool', category: 'forbidden_name', message, issues: [{ category: 'forbidden_name', message, property: name }] });
  }
  const tool = registry.get(name);
  if (tool === undefined) {
    const available = visibleNames(registry, allowed);
    const near = suggestName(name, available);
    const message = `Unknown tool "${name}".${near === undefined ? '' : ` Did you mean "${near}"?`} Available tools: ${listed(available)}.`;
    const issue: Issue = { category: 'unknown_tool', message, property: name, allowed: available, ...(near !== undefined && { suggestion: near }) };
    return rejected({ callId, name, code: 'unknown_tool', category: 'unknown_tool', message, issues: [issue], ...(near !== undefined && { suggestion: near }) });
  }
  if (allowed !== undefined && !allowed.has(name)) {
    const permitted = registry.names().filter((known) => allowed.has(known));
    const message = `Tool "${name}" is not permitted for this agent. Permitted tools: ${listed(permitted)}.`;
    return rejected({ callId, name, code: 'not_permitted', category: 'not_permitted', message, issues: [{ category: 'not_permitted', message, property: name, allowed: permitted }] });
  }

  if (tool.prepareArguments !== undefined) {
    const prepared = prepareCall(call, tool.prepareArguments, limits);
    if (!prepared.ok) return prepared;
    call = prepared.value;
  }
  const compiled = registry.validatorOf(tool);
  const normalized =
    call.format === 'xml'
      ? normalizeXmlArguments(call.args, { parameters: tool.parameters, verbatimParams: tool.verbatimParams, compiled }, limits)
      : normalizeNativeArguments(call.argumentsText, limits);
  if (!normalized.ok) {
    const problem = normalized.problem;
    if (problem.kind === 'malformed') return malformed(problem.problem);
    return invalidArguments(callId, name, problem.issue);
  }
  const args = normalized.value;
  if (!compiled.validate(args)) {
    const first = describeAjvErrors(compiled.validate.errors ?? [], tool.parameters, args);
    // Only on this failure path: a second validator lists the other problems, for one correction.
    const max = limits.maxIssues ?? DEFAULT_LIMITS.maxIssues;
    return invalidArguments(callId, name, first, allIssues(first, max > 1 ? allErrorsValidator(compiled, tool.parameters) : undefined, tool.parameters, args, max));
  }
  // From here on the arguments carry the tool's own names (`action`, not the model's `action_`).
  const own = compiled.aliases === undefined ? args : restoreParameterNames(args, compiled.aliases);
  if (compiled.standard === undefined) return success({ callId, name, args: own });
  // AJV first, for its worded issues; then what only the Standard Schema knows (refinements).
  const refined = checkStandard(name, compiled.standard, own);
  if (!refined.ok) return invalidArguments(callId, name, refined.problem);
  return success({ callId, name, args: refined.value });
}

/**
 * Runs the tool's `prepareArguments` on the loose arguments and gives back a raw call of the same
 * format, which the rest of validation reads as if the model had written it.
 */
function prepareCall(call: RawCall, prepare: NonNullable<Tool['prepareArguments']>, limits: ProtocolLimits): Outcome<RawCall, ValidationProblem> {
  const { callId, name } = call;
  const loose = looseArguments(call, limits);
  if (!loose.ok) {
    const problem = loose.problem;
    return problem.kind === 'malformed' ? malformed(problem.problem) : invalidArguments(callId, name, problem.issue);
  }
  let returned: unknown;
  try {
    returned = prepare(loose.value, { callId, name, format: call.format });
  } catch (error) {
    const message = `the tool could not read these arguments: ${errorMessage(error)}`;
    return invalidArguments(callId, name, { category: 'validation_error', message, keyword: 'prepareArguments' });
  }
  if (returned === undefined) return success(call);
  const checked = checkLooseArguments(returned, limits, 'prepareArguments');
  if (!checked.ok) return invalidArguments(callId, name, { category: 'validation_error', message: checked.problem, keyword: 'prepareArguments' });
  return success(rawCallWith(call, checked.value));
}

function invalidArguments(callId: string, name: string, issue: Issue, issues: Issue[] = [issue]): Outcome<never, ValidationProblem> {
  const message = `Invalid arguments for "${name}": ${issue.message}`;
  return rejected({ callId, name, code: 'invalid_arguments', category: issue.category, message, issues, ...(issue.suggestion !== undefined && { suggestion: issue.suggestion }) });
}

function visibleNames(registry: Registry, allowed: ReadonlySet<string> | undefined): string[] {
  const names = registry.names();
  return allowed === undefined ? names : names.filter((name) => allowed.has(name));
}

function listed(names: readonly string[]): string {
  if (names.length === 0) return '(none)';
  return names.length > MAX_LISTED ? `${names.slice(0, MAX_LISTED).join(', ')}, … (${names.length} in all)` : names.join(', ');
}

function rejected(rejection: CallRejection): Outcome<never, ValidationProblem> {
  return failure({ kind: 'rejected', rejection });
}

function malformed(problem: MalformedProblem): Outcome<never, ValidationProblem> {
  return failure({ kind: 'malformed', problem });
}
