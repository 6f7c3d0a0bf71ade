import { createHash } from 'node:crypto';
import { safeJson } from '../bus/safe-json.js';

/**
 * A canonical JSON form of plain data (object keys sorted), so two argument objects that mean the
 * same thing give the same key whatever their key order.
 */
export function stableKey(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) {
      Object.defineProperty(sorted, key, { value: (item as Record<string, unknown>)[key], enumerable: true });
    }
    return sorted;
  });
}

/**
 * The hex SHA-256 of a value's `stableKey`: the digest an approval binds to (`argsHash`,
 * `outputHash`), small enough to survive a `$truncated` event. A value JSON cannot write (a
 * cycle, a BigInt) is hashed by its `safeJson` text instead, so hashing never throws.
 */
export function stableHash(value: unknown): string {
  let key: string | undefined;
  try {
    key = stableKey(value);
  } catch {
    key = safeJson(value).text;
  }
  return hashKey(key ?? 'undefined');
}

/** The hex SHA-256 of a key `stableKey` already made. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
