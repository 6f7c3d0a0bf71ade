/**
 * Names that must never become keys of plain objects built from model output (docs/protocol.md rule
 * 9): every own property of `Object.prototype`, plus `prototype`. Computed from the running engine,
 * so a member a newer engine adds is covered without a code change.
 */

const names = new Set<string>([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** The forbidden tool, argument and JSON key names: `Object.prototype` members and `prototype`. */
export const FORBIDDEN_NAMES: ReadonlySet<string> = names;

/** True when `name` is a forbidden name; compared exactly, with no case folding. */
export function isForbiddenName(name: string): boolean {
  return names.has(name);
}
