/** Hides secrets while a value is serialized (the session log's redaction plugs in here). */
export type Redactor = {
  /** True when the value under this key must be replaced by `[redacted]`. */
  key: (key: string, value: unknown) => boolean;
  /** The text with any secret it contains replaced. */
  text: (text: string) => string;
  /**
   * False only when JSON text certainly holds nothing to redact (no secret-looking key, no
   * secret in any string): then the text may be written as it is. When unsure, true.
   */
  mayHide?: (json: string) => boolean;
};

export type SafeJsonOptions = {
  /** Nesting depth kept; deeper values become `"[Depth limit]"` (default 64). */
  maxDepth?: number;
  /** Characters kept; the rest is cut and a marker appended (default: no limit). */
  maxChars?: number;
  redactor?: Redactor;
};

/** `text` is JSON unless `truncated` (then it is a cut prefix plus a marker). */
export type SafeJsonResult = { text: string; truncated: boolean; issues: string[] };

export const DEFAULT_MAX_DEPTH = 64;
export const REDACTED = '[redacted]';
const MAX_ISSUES = 20;

type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };
type State = {
  issues: string[];
  dropped: number;
  truncated: boolean;
  maxDepth: number;
  maxChars: number;
  redactor: Redactor | undefined;
  /** The containers being walked, outermost first (a few levels: a scan beats a Set per call). */
  ancestors: object[];
  /**
   * The keys from the root to the value being walked: a field name, or an index for arrays and
   * entries. The `$.a[0]` path of an issue is built from it only when there is an issue to note.
   */
  keys: (string | number)[];
};

/**
 * JSON for any value, never throwing: cycles become `"[Circular]"`, BigInt `"123n"`, functions
 * and symbols `"[Function name]"`/`"[Symbol(x)]"`, values beyond `maxDepth` `"[Depth limit]"`,
 * lone surrogates U+FFFD, Errors `{ name, message }`, Maps and Sets arrays, a throwing `toJSON`
 * or getter `"[Unserializable: …]"`. Each substitution is listed in `issues`.
 *
 * @example
 * const cyclic: Record<string, unknown> = { n: 10n };
 * cyclic.self = cyclic;
 * safeJson(cyclic).text; // '{"n":"10n","self":"[Circular]"}'
 */
export function safeJson(value: unknown, options: SafeJsonOptions = {}): SafeJsonResult {
  const state: State = {
    issues: [],
    dropped: 0,
    truncated: false,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    maxChars: options.maxChars ?? Number.POSITIVE_INFINITY,
    redactor: options.redactor,
    ancestors: [],
    keys: [],
  };
  let text: string;
  try {
    text = JSON.stringify(toSafe(value, '', 0, state)) ?? 'null';
  } catch (error) {
    // Only a host limit gets here: a string past V8's maximum length, or a stack overflow.
    state.keys.length = 0;
    note(state, `unserializable (${describe(error)})`);
    text = JSON.stringify(`[Unserializable: ${describe(error)}]`);
  }
  if (text.length > state.maxChars) {
    text = `${cut(text, state.maxChars)}…[truncated at ${state.maxChars} characters]`;
    state.truncated = true;
  }
  if (state.dropped > 0) state.issues.push(`… and ${state.dropped} more issues`);
  return { text, truncated: state.truncated, issues: state.issues };
}

function toSafe(value: unknown, key: string, depth: number, state: State): unknown {
  switch (typeof value) {
    case 'string':
      return safeString(value, state);
    case 'bigint':
      note(state, 'BigInt written as a string');
      return `${value}n`;
    case 'function':
      return `[Function ${value.name || 'anonymous'}]`;
    case 'symbol':
      return `[${String(value)}]`;
    case 'object':
      if (value === null) return null;
      if (depth >= state.maxDepth) {
        note(state, `deeper than ${state.maxDepth} levels`);
        return '[Depth limit]';
      }
      if (state.ancestors.includes(value)) {
        note(state, 'circular reference');
        return '[Circular]';
      }
      state.ancestors.push(value);
      const keys = state.keys.length;
      try {
        return objectToSafe(value, key, depth, state);
      } catch (error) {
        state.keys.length = keys;
        note(state, `unserializable (${describe(error)})`);
        return `[Unserializable: ${describe(error)}]`;
      } finally {
        state.ancestors.pop();
      }
    default:
      return value; // number, boolean, undefined: JSON.stringify's own rules apply
  }
}

function objectToSafe(value: object, key: string, depth: number, state: State): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return toSafe(toJSON.call(value, key), key, depth + 1, state);
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: fieldString(value.name, 'name', state), message: fieldString(value.message, 'message', state), ...(typeof code === 'string' ? { code } : {}) };
  }
  if (value instanceof Map) return entriesToSafe([...value.entries()], depth, state);
  if (typeof Headers === 'function' && value instanceof Headers) return fieldsToSafe([...value.entries()], depth, state);
  if (value instanceof Set) return itemsToSafe([...value], depth, state);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.constructor.name} ${value.byteLength} bytes]`;
  if (value instanceof Promise || value instanceof WeakMap || value instanceof WeakSet) return `[${value.constructor.name}]`;
  if (Array.isArray(value)) return itemsToSafe(value, depth, state);
  const out: Record<string, unknown> = {};
  const { keys, redactor } = state;
  for (const name of Object.keys(value)) {
    const item = read(value, name);
    keys.push(name);
    setField(out, safeString(name, state), redactor?.key(name, item) ? REDACTED : toSafe(item, name, depth + 1, state));
    keys.pop();
  }
  return out;
}

/**
 * Sets a field of a plain object; an own `__proto__` key is defined as data, never a prototype.
 * (A plain object rather than a null-prototype one: JSON.stringify takes its fast path.)
 */
function setField(out: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}

function itemsToSafe(items: readonly unknown[], depth: number, state: State): unknown[] {
  const out: unknown[] = [];
  for (let index = 0; index < items.length; index++) {
    state.keys.push(index);
    out.push(toSafe(items[index], String(index), depth + 1, state));
    state.keys.pop();
  }
  return out;
}

function fieldsToSafe(fields: [string, unknown][], depth: number, state: State): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, item] of fields) {
    state.keys.push(name);
    setField(out, safeString(name, state), state.redactor?.key(name, item) ? REDACTED : toSafe(item, name, depth + 1, state));
    state.keys.pop();
  }
  return out;
}

function entriesToSafe(entries: [unknown, unknown][], depth: number, state: State): unknown[] {
  return entries.map(([entryKey, item], index) => {
    state.keys.push(index);
    const hidden = typeof entryKey === 'string' && state.redactor?.key(entryKey, item) === true;
    const pair = [toSafe(entryKey, String(index), depth + 2, state), hidden ? REDACTED : toSafe(item, String(index), depth + 2, state)];
    state.keys.pop();
    return pair;
  });
}

/** A string field of an object walked by hand (an Error's name and message). */
function fieldString(text: string, name: string, state: State): string {
  state.keys.push(name);
  const out = safeString(text, state);
  state.keys.pop();
  return out;
}

function read(value: object, name: string): unknown {
  try {
    return (value as Record<string, unknown>)[name];
  } catch (error) {
    return `[Unserializable: ${describe(error)}]`;
  }
}

function safeString(text: string, state: State): string {
  let out = text;
  if (!(out as unknown as WellFormed).isWellFormed()) {
    note(state, 'lone surrogates replaced with U+FFFD');
    out = (out as unknown as WellFormed).toWellFormed();
  }
  if (state.redactor !== undefined) out = state.redactor.text(out);
  // A string longer than the whole budget is cut now, so a 50 MB value is never copied whole.
  if (out.length > state.maxChars) {
    out = cut(out, state.maxChars);
    state.truncated = true;
  }
  return out;
}

/** The first `max` characters, one fewer when that would split a surrogate pair. */
function cut(text: string, max: number): string {
  const end = Math.max(0, Math.floor(max));
  const code = text.charCodeAt(end - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? end - 1 : end);
}

/** Records an issue at the value being walked, as `$.path[0].to: issue`. */
function note(state: State, issue: string): void {
  if (state.issues.length >= MAX_ISSUES) {
    state.dropped++;
    return;
  }
  let path = '$';
  for (const key of state.keys) path += typeof key === 'number' ? `[${key}]` : `.${key}`;
  state.issues.push(`${path}: ${issue}`);
}

function describe(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'unprintable error';
  }
}
