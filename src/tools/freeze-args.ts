import type { Args } from '../protocol/types.js';

/**
 * A deep, deeply frozen copy of validated arguments: what a tool's `execute` receives and what
 * `tool.started` records, as the same object. A tool that writes to it throws in strict mode
 * (every ES module is strict) and can never change what the log says it was given.
 */
export function freezeArgs(args: Args): Args {
  // structuredClone keeps own `__proto__` keys as data and handles Date, Map and friends; args
  // are plain JSON after validation, so it only fails on a host bug (a function in the args).
  return deepFreeze(structuredClone(args));
}

/** Freezes a value and everything reachable from it; returns it. */
export function deepFreeze<TValue>(value: TValue): TValue {
  const pending: unknown[] = [value];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const next = pending.pop();
    if ((typeof next !== 'object' && typeof next !== 'function') || next === null || seen.has(next)) continue;
    seen.add(next);
    // Typed arrays with elements cannot be frozen (TypeError); their contents are data anyway.
    if (ArrayBuffer.isView(next)) continue;
    Object.freeze(next);
    for (const key of Reflect.ownKeys(next)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(next, key);
      if (descriptor !== undefined && 'value' in descriptor) pending.push(descriptor.value);
    }
  }
  return value;
}
