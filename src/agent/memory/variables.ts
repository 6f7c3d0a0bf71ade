import { safeJson } from '../../bus/serialize-event.js';

/** Bounds on an agent's result variables; past either, the oldest variables are evicted. */
export type VariableLimits = {
  /** Variables kept (default 200). */
  maxCount?: number;
  /** Characters kept over all variables (default 2,000,000). A longer value is cut to this. */
  maxChars?: number;
};

/** One stored result, as `agent.memory.variables()` lists it. */
export type VariableInfo = {
  /** The reference the model uses: `$r1`, `$r2`, … never reused for another value. */
  ref: string;
  /** The tool whose result it is, and its call id. */
  tool: string;
  callId: string;
  /** Characters of the stored text. */
  chars: number;
  /** The value was longer than `maxChars` and was cut. */
  cut: boolean;
};

/** A page of a variable, or why there is none. */
export type VariableRead =
  | { ok: true; ref: string; tool: string; offset: number; text: string; total: number; cut: boolean }
  | { ok: false; code: 'unknown' | 'evicted' | 'out_of_range'; message: string };

type Entry = VariableInfo & { text: string };

/** A variable store as plain data, for an agent's snapshot. */
export type VariablesSnapshot = { next: number; entries: Entry[] };

export const DEFAULT_VARIABLE_LIMITS: Readonly<Required<VariableLimits>> = Object.freeze({ maxCount: 200, maxChars: 2_000_000 });

/**
 * An agent's result variables (a cache of full tool outputs): each completed call of a compact-history
 * agent stores its full output as text under a fresh `$r<n>`, which the compact history names and
 * `read_var` pages through. Bounded by count and characters; the oldest are evicted first, and a
 * reference that was evicted says so when read.
 */
export class VariableStore {
  private readonly entries = new Map<string, Entry>();
  private next = 1;
  private chars = 0;
  private readonly limits: Required<VariableLimits>;

  constructor(limits: Required<VariableLimits>) {
    this.limits = limits;
  }

  /** Stores a result and returns its reference. */
  store(tool: string, callId: string, output: unknown): string {
    const ref = `$r${this.next++}`;
    const full = textOf(output);
    const cut = full.length > this.limits.maxChars;
    const text = cut ? full.slice(0, this.limits.maxChars) : full;
    this.entries.set(ref, { ref, tool, callId, chars: text.length, cut, text });
    this.chars += text.length;
    // Oldest first (a Map keeps insertion order); the value just stored always stays.
    for (const [oldRef, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxCount && this.chars <= this.limits.maxChars) break;
      if (oldRef === ref) break;
      this.entries.delete(oldRef);
      this.chars -= entry.chars;
    }
    return ref;
  }

  /** `length` characters of a variable from `offset`. */
  read(reference: string, offset: number, length: number): VariableRead {
    const ref = normalizeRef(reference);
    const entry = ref === undefined ? undefined : this.entries.get(ref);
    if (entry === undefined) {
      const number = ref === undefined ? Number.NaN : Number(ref.slice(2));
      if (number >= 1 && number < this.next) {
        return {
          ok: false,
          code: 'evicted',
          message: `${ref} was evicted: only the latest ${this.limits.maxCount} results (${this.limits.maxChars.toLocaleString('en-US')} characters) are kept; call the tool again`,
        };
      }
      return { ok: false, code: 'unknown', message: `there is no variable ${JSON.stringify(reference)}; ${this.known()}` };
    }
    if (offset > entry.text.length) {
      return {
        ok: false,
        code: 'out_of_range',
        message: `offset ${offset} is past the end of ${entry.ref} (${entry.text.length.toLocaleString('en-US')} characters)`,
      };
    }
    const { tool, cut } = entry;
    return { ok: true, ref: entry.ref, tool, offset, text: entry.text.slice(offset, offset + length), total: entry.text.length, cut };
  }

  /** The stored variables, oldest first. */
  list(): VariableInfo[] {
    return [...this.entries.values()].map(({ ref, tool, callId, chars, cut }) => ({ ref, tool, callId, chars, cut }));
  }

  /** The store as plain data. */
  snapshot(): VariablesSnapshot {
    return { next: this.next, entries: [...this.entries.values()].map((entry) => ({ ...entry })) };
  }

  /** Replaces the store's content by a snapshot's. */
  restore(snapshot: VariablesSnapshot): void {
    this.clear();
    this.next = snapshot.next;
    for (const entry of snapshot.entries) {
      this.entries.set(entry.ref, { ...entry });
      this.chars += entry.chars;
    }
  }

  /** Removes every variable; references are never reused. */
  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }

  private known(): string {
    const refs = [...this.entries.keys()];
    if (refs.length === 0) return 'no variables are stored';
    return `stored: ${refs.length > 8 ? `${refs.slice(0, 3).join(', ')}, …, ${refs.slice(-3).join(', ')}` : refs.join(', ')}`;
  }
}

/** `$r3`, `r3` and `$VAR_REF{{r3}}` all name `$r3`. */
function normalizeRef(reference: string): string | undefined {
  const match = /^\s*(?:\$VAR_REF\{\{)?\$?r(\d{1,9})(?:\}\})?\s*$/i.exec(reference);
  return match === null ? undefined : `$r${Number(match[1])}`;
}

/** A result as text: strings as they are, anything else as JSON (cycles and BigInt survive). */
export function textOf(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  try {
    const text = JSON.stringify(output);
    if (text !== undefined) return text;
  } catch {
    // Cycles, BigInt, a throwing toJSON: safeJson describes what it cannot write.
  }
  return safeJson(output).text;
}
