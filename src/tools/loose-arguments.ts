/**
 * Arguments as hooks see them before checking (`prepareArguments`, `repair`): a plain object of
 * what the model wrote, and the way back to a raw call that validation checks as usual. Nothing a
 * hook returns skips normalization or the schema.
 */
import { failure, success, type Outcome } from '../outcome.js';
import { isForbiddenName } from '../protocol/forbidden-names.js';
import type { ProtocolLimits, RawArgument, RawCall } from '../protocol/types.js';
import { normalizeNativeArguments, type ArgumentProblem } from './normalize-arguments.js';
import type { LooseArgs } from './types.js';
import { errorMessage } from '../errors.js';

/**
 * The call's arguments as a plain object: a native call's JSON object (`{}` for empty text), an
 * XML call's argument texts by name (an array of texts for a repeated name). Fails as
 * normalization would on text that is not one JSON object.
 */
export function looseArguments(call: RawCall, limits: ProtocolLimits): Outcome<LooseArgs, ArgumentProblem> {
  if (call.format === 'native') return normalizeNativeArguments(call.argumentsText, limits);
  const texts = new Map<string, string | string[]>();
  for (const { name, raw } of call.args) {
    const previous = texts.get(name);
    texts.set(name, previous === undefined ? raw : Array.isArray(previous) ? [...previous, raw] : [previous, raw]);
  }
  // fromEntries defines own data properties: an argument named `__proto__` is refused later, never assigned.
  return success(Object.fromEntries(texts));
}

/**
 * Checks what a hook returned: a plain JSON object, within the limits, with no key that names a
 * property of `Object.prototype` at any depth. Returns it as fresh JSON data.
 */
export function checkLooseArguments(value: unknown, limits: ProtocolLimits, hook: string): Outcome<LooseArgs, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return failure(`${hook} must return an object of arguments, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`);
  }
  if (typeof (value as { then?: unknown }).then === 'function') return failure(`${hook} must return its arguments synchronously, not a promise`);
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return failure(`${hook} returned arguments that are not JSON data: ${errorMessage(error)}`);
  }
  if (text.length > limits.maxActionChars) return failure(`${hook} returned ${text.length} characters of arguments; the limit is ${limits.maxActionChars}`);
  const copy = JSON.parse(text) as LooseArgs;
  const forbidden = forbiddenKey(copy, '');
  if (forbidden !== undefined) return failure(`${hook} returned the key "${forbidden.key}" at ${forbidden.path || '/'}, which names a property of Object.prototype`);
  return success(copy);
}

function forbiddenKey(value: unknown, path: string): { key: string; path: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    if (!Array.isArray(value) && isForbiddenName(key)) return { key, path };
    const found = forbiddenKey(child, `${path}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A raw call of the same format with new arguments (and maybe a new name), for validation to read
 * as if the model had written it: JSON text for a native call; for an XML call one argument
 * element per key, strings as argument text, arrays of strings as repeated elements, anything else
 * as JSON text.
 */
export function rawCallWith(call: RawCall, args: LooseArgs, name = call.name): RawCall {
  if (call.format === 'native') return { format: 'native', callId: call.callId, name, argumentsText: JSON.stringify(args) };
  const written = new Map(call.args.map((arg) => [arg.name, arg]));
  const elements: RawArgument[] = [];
  const element = (key: string, value: unknown): RawArgument => {
    const raw = typeof value === 'string' ? value : JSON.stringify(value) ?? 'null';
    const before = written.get(key);
    return { name: key, raw, selfClosing: false, offset: before?.offset ?? call.offset, innerOffset: before?.innerOffset ?? call.offset };
  };
  for (const [key, value] of Object.entries(args)) {
    if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')) {
      for (const item of value) elements.push(element(key, item));
    } else {
      elements.push(element(key, value));
    }
  }
  return { format: 'xml', callId: call.callId, name, args: elements, offset: call.offset };
}
