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
