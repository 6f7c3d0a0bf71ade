/** Hides secrets while a value is serialized (the session log's redaction plugs in here). */
export type Redactor = {
  /** True when the value under this key must be replaced by `[redacted]`. */
  key: (key: string, value: unknown) => boolean;
  /** The text with any secret it contains replaced. */
  text: (text: string) => string;
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
type State = { issues: string[]; dropped: number; truncated: boolean; maxDepth: number; maxChars: number; redactor: Redactor | undefined; ancestors: Set<object> };

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
    ancestors: new Set(),
  };
  let text: string;
  try {
    text = JSON.stringify(toSafe(value, '', '$', 0, state)) ?? 'null';
  } catch (error) {
    // Only a host limit gets here: a string past V8's maximum length, or a stack overflow.
    note(state, `$: unserializable (${describe(error)})`);
    text = JSON.stringify(`[Unserializable: ${describe(error)}]`);
  }
  if (text.length > state.maxChars) {
    text = `${cut(text, state.maxChars)}…[truncated at ${state.maxChars} characters]`;
    state.truncated = true;
  }
  if (state.dropped > 0) state.issues.push(`… and ${state.dropped} more issues`);
  return { text, truncated: state.truncated, issues: state.issues };
}

function toSafe(value: unknown, key: string, path: string, depth: number, state: State): unknown {
  switch (typeof value) {
    case 'string':
      return safeString(value, path, state);
    case 'bigint':
      note(state, `${path}: BigInt written as a string`);
      return `${value}n`;
    case 'function':
      return `[Function ${value.name || 'anonymous'}]`;
    case 'symbol':
      return `[${String(value)}]`;
    case 'object':
      if (value === null) return null;
      if (depth >= state.maxDepth) {
        note(state, `${path}: deeper than ${state.maxDepth} levels`);
        return '[Depth limit]';
      }
      if (state.ancestors.has(value)) {
        note(state, `${path}: circular reference`);
        return '[Circular]';
      }
      state.ancestors.add(value);
      try {
        return objectToSafe(value, key, path, depth, state);
      } catch (error) {
        note(state, `${path}: unserializable (${describe(error)})`);
        return `[Unserializable: ${describe(error)}]`;
      } finally {
        state.ancestors.delete(value);
      }
    default:
      return value; // number, boolean, undefined: JSON.stringify's own rules apply
  }
}

function objectToSafe(value: object, key: string, path: string, depth: number, state: State): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return toSafe(toJSON.call(value, key), key, path, depth + 1, state);
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: safeString(value.name, `${path}.name`, state), message: safeString(value.message, `${path}.message`, state), ...(typeof code === 'string' ? { code } : {}) };
  }
  if (value instanceof Map) return entriesToSafe([...value.entries()], path, depth, state);
  if (typeof Headers === 'function' && value instanceof Headers) return fieldsToSafe([...value.entries()], path, depth, state);
  if (value instanceof Set) return [...value].map((item, index) => toSafe(item, String(index), `${path}[${index}]`, depth + 1, state));
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.constructor.name} ${value.byteLength} bytes]`;
  if (value instanceof Promise || value instanceof WeakMap || value instanceof WeakSet) return `[${value.constructor.name}]`;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      out.push(toSafe(value[index], String(index), `${path}[${index}]`, depth + 1, state));
    }
    return out;
  }
  return fieldsToSafe(
    Object.keys(value).map((name) => [name, read(value, name)]),
    path,
    depth,
    state,
  );
}

// Keys are copied onto a null-prototype object so that an own `__proto__` key stays data.
function fieldsToSafe(fields: [string, unknown][], path: string, depth: number, state: State): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, item] of fields) {
    const childPath = `${path}.${name}`;
    out[safeString(name, childPath, state)] = state.redactor?.key(name, item) ? REDACTED : toSafe(item, name, childPath, depth + 1, state);
  }
  return out;
}

function entriesToSafe(entries: [unknown, unknown][], path: string, depth: number, state: State): unknown[] {
  return entries.map(([entryKey, item], index) => {
    const childPath = `${path}[${index}]`;
    const hidden = typeof entryKey === 'string' && state.redactor?.key(entryKey, item) === true;
    return [toSafe(entryKey, String(index), childPath, depth + 2, state), hidden ? REDACTED : toSafe(item, String(index), childPath, depth + 2, state)];
  });
}

function read(value: object, name: string): unknown {
  try {
    return (value as Record<string, unknown>)[name];
  } catch (error) {
    return `[Unserializable: ${describe(error)}]`;
  }
}

function safeString(text: string, path: string, state: State): string {
  let out = text;
  if (!(out as unknown as WellFormed).isWellFormed()) {
    note(state, `${path}: lone surrogates replaced with U+FFFD`);
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

function note(state: State, issue: string): void {
  if (state.issues.length < MAX_ISSUES) state.issues.push(issue);
  else state.dropped++;
}

function describe(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'unprintable error';
  }
}
