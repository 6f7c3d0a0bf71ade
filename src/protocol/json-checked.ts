/**
 * A checking JSON parser for model-written JSON (docs/protocol.md rule 15). `JSON.parse` keeps the
 * last of duplicate keys, accepts `__proto__` as a key and nests as deep as the stack allows; this
 * parser reports each of those instead, in one iterative forward pass.
 */
import { failure, success, type Outcome } from '../outcome.js';
import { isForbiddenName } from './forbidden-names.js';
import { findForbiddenCharacter } from './xml-chars.js';

/** What can be wrong with a JSON text, most specific first. */
export type CheckedJsonCategory = 'duplicate_param' | 'forbidden_name' | 'limit_exceeded' | 'invalid_json' | 'invalid_character';

/** One problem with a JSON text; `path` is a JSON pointer (`''` for the whole value). */
export type CheckedJsonProblem = { category: CheckedJsonCategory; message: string; path: string };

/** Depth accounting: a value inside k containers of the literal sits at `baseDepth + k`. */
export type CheckedJsonOptions = { maxDepth: number; baseDepth: number };

type Frame = { container: Record<string, unknown> | unknown[]; key: string };

/**
 * Parses one JSON value strictly (RFC 8259), with the checks of docs/protocol.md rule 15: duplicate
 * keys → `duplicate_param`, `Object.prototype` member names or `prototype` as keys →
 * `forbidden_name`, a member deeper than `maxDepth` → `limit_exceeded`, lone surrogates and
 * forbidden control characters in keys or strings → `invalid_character`, anything else →
 * `invalid_json`. Objects are plain objects whose keys are defined, never assigned. An integer
 * literal past 2^53 − 1 in magnitude is kept as its text, never rounded.
 *
 * @example
 * parseCheckedJson('{"a":1,"a":2}', { maxDepth: 16, baseDepth: 1 })
 * // → { ok: false, problem: { category: 'duplicate_param', path: '/a', … } }
 */
export function parseCheckedJson(text: string, options: CheckedJsonOptions): Outcome<unknown, CheckedJsonProblem> {
  const frames: Frame[] = [];
  const length = text.length;
  let index = 0;
  // States: 0 = expect a value, 1 = after a value, 2 = expect an object key.
  let state = 0;

  // The path of the value being read; in an object awaiting a key, the object's own path.
  const pathOf = (extra?: string): string => {
    const segments: string[] = [];
    for (let level = 0; level < frames.length; level++) {
      const frame = frames[level] as Frame;
      const innermost = level === frames.length - 1;
      if (innermost && (extra !== undefined || state === 2)) break;
      segments.push(Array.isArray(frame.container) ? String(frame.container.length) : frame.key);
    }
    if (extra !== undefined) segments.push(extra);
    return segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
  };
  const problem = (category: CheckedJsonCategory, message: string, path = pathOf()): Outcome<unknown, CheckedJsonProblem> =>
    failure({ category, message, path });
  const skipSpace = (): void => {
    while (index < length) {
      const code = text.charCodeAt(index);
      if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) break;
      index++;
    }
  };
  const unexpected = (): Outcome<unknown, CheckedJsonProblem> =>
    index >= length
      ? problem('invalid_json', 'the JSON text ends too early')
      : problem('invalid_json', `unexpected ${JSON.stringify(text[index])} at position ${index}`);

  let value: unknown;
  skipSpace();
  for (;;) {
    if (state === 0) {
      skipSpace();
      const code = text.charCodeAt(index);
      if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
        if (options.baseDepth + frames.length + 1 > options.maxDepth) {
          return problem('limit_exceeded', `the JSON value nests deeper than the depth limit of ${options.maxDepth}`);
        }
        index++;
        skipSpace();
        if (code === 0x7b) {
          frames.push({ container: {}, key: '' });
          if (text.charCodeAt(index) === 0x7d /* } */) {
            index++;
            value = (frames.pop() as Frame).container;
            state = 1;
          } else {
            state = 2;
          }
        } else {
          frames.push({ container: [], key: '' });
          if (text.charCodeAt(index) === 0x5d /* ] */) {
            index++;
            value = (frames.pop() as Frame).container;
            state = 1;
          }
        }
        continue;
      }
      if (code === 0x22 /* " */) {
        const parsed = readString();
        if (typeof parsed !== 'string') return problem(parsed.category, parsed.message);
        value = parsed;
      } else if (code === 0x2d /* - */ || (code >= 0x30 && code <= 0x39)) {
        const end = numberEnd(text, index);
        if (end < 0) return unexpected();
        value = readNumber(text.slice(index, end));
        index = end;
      } else if (text.startsWith('true', index)) {
        value = true;
        index += 4;
      } else if (text.startsWith('false', index)) {
        value = false;
        index += 5;
      } else if (text.startsWith('null', index)) {
        value = null;
        index += 4;
      } else {
        return unexpected();
      }
      state = 1;
      continue;
    }

    if (state === 2) {
      skipSpace();
      if (text.charCodeAt(index) !== 0x22) return unexpected();
      const key = readString();
      if (typeof key !== 'string') return problem(key.category, `in an object key: ${key.message}`);
      const frame = frames[frames.length - 1] as Frame;
      if (isForbiddenName(key)) {
        return problem('forbidden_name', `the key ${JSON.stringify(key)} is not allowed (it names a property of Object.prototype)`, pathOf(key));
      }
      if (Object.prototype.hasOwnProperty.call(frame.container, key)) {
        return problem('duplicate_param', `the key ${JSON.stringify(key)} appears more than once`, pathOf(key));
      }
      skipSpace();
      if (text.charCodeAt(index) !== 0x3a /* : */) return unexpected();
      index++;
      frame.key = key;
      state = 0;
      continue;
    }

    // state 1: a complete value; store it in its container or finish.
    const frame = frames[frames.length - 1];
    if (frame === undefined) {
      skipSpace();
      if (index < length) return problem('invalid_json', `unexpected text after the JSON value at position ${index}`);
      return success(value);
    }
    if (Array.isArray(frame.container)) frame.container.push(value);
    else Object.defineProperty(frame.container, frame.key, { value, writable: true, enumerable: true, configurable: true });
    skipSpace();
    const code = text.charCodeAt(index);
    const closer = Array.isArray(frame.container) ? 0x5d : 0x7d;
    if (code === 0x2c /* , */) {
      index++;
      state = Array.isArray(frame.container) ? 0 : 2;
    } else if (code === closer) {
      index++;
      value = (frames.pop() as Frame).container;
    } else {
      return unexpected();
    }
  }

  /** Reads the string starting at `index` (a `"`), or says what is wrong with it. */
  function readString(): string | { category: CheckedJsonCategory; message: string } {
    const parts: string[] = [];
    let segmentStart = ++index;
    while (index < length) {
      const code = text.charCodeAt(index);
      if (code === 0x22) {
        parts.push(text.slice(segmentStart, index));
        index++;
        const result = parts.join('');
        if (findForbiddenCharacter(result) >= 0) {
          return { category: 'invalid_character', message: 'a string contains a lone surrogate or a forbidden control character' };
        }
        return result;
      }
      if (code < 0x20) {
        return code === 0x09 || code === 0x0a || code === 0x0d
          ? { category: 'invalid_json', message: 'a raw tab or newline inside a string must be escaped (\\t, \\n, \\r)' }
          : { category: 'invalid_character', message: 'a string contains a forbidden control character' };
      }
      if (code !== 0x5c /* \ */) {
        index++;
        continue;
      }
      parts.push(text.slice(segmentStart, index));
      const escape = text.charCodeAt(index + 1);
      const simple = SIMPLE_ESCAPES.get(escape);
      if (simple !== undefined) {
        parts.push(simple);
        index += 2;
      } else if (escape === 0x75 /* u */) {
        const hex = text.slice(index + 2, index + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { category: 'invalid_json', message: `a bad \\u escape at position ${index}` };
        parts.push(String.fromCharCode(Number.parseInt(hex, 16)));
        index += 6;
      } else {
        return { category: 'invalid_json', message: `a bad escape at position ${index}` };
      }
      segmentStart = index;
    }
    return { category: 'invalid_json', message: 'an unterminated string' };
  }
}

const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x22, '"'],
  [0x5c, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
]);

/**
 * A JSON number's value. An integer literal past 2^53 − 1 in magnitude would be rounded by
 * `Number` (a different id, amount or count than the model wrote): it stays the text it was, so
 * the tool's schema rejects it as the wrong type (as it does for the same digits in XML) rather
 * than a nearby number running.
 */
function readNumber(literal: string): number | string {
  const value = Number(literal);
  return Number.isSafeInteger(value) || !Number.isInteger(value) || /[.eE]/.test(literal) ? value : literal;
}

/** The end of the JSON number at `start` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), or -1. */
function numberEnd(text: string, start: number): number {
  let index = start;
  const digit = (at: number): boolean => {
    const code = text.charCodeAt(at);
    return code >= 0x30 && code <= 0x39;
  };
  if (text.charCodeAt(index) === 0x2d) index++;
  if (text.charCodeAt(index) === 0x30) index++;
  else if (digit(index)) while (digit(index)) index++;
  else return -1;
  if (text.charCodeAt(index) === 0x2e /* . */) {
    index++;
    if (!digit(index)) return -1;
    while (digit(index)) index++;
  }
  const exponent = text.charCodeAt(index);
  if (exponent === 0x65 || exponent === 0x45) {
    index++;
    const sign = text.charCodeAt(index);
    if (sign === 0x2b || sign === 0x2d) index++;
    if (!digit(index)) return -1;
    while (digit(index)) index++;
  }
  return index;
}
