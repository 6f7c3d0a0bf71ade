import { ConfigError } from '../errors.js';
import type { Pattern } from './events.js';

/**
 * A test of event types against the patterns `bus.on` takes: an exact type, `'prefix.*'` (every
 * type under the dotted prefix, nested ones too) or `'*'`. For code that filters envelopes it
 * already has (a buffered queue, the inspector), where the bus's channels are not involved.
 *
 * @example
 * const isTool = patternMatcher(['tool.*', 'agent.said']);
 * isTool('tool.approval.requested'); // true
 */
export function patternMatcher(patterns: readonly Pattern[]): (type: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const pattern of patterns) {
    if (typeof pattern !== 'string' || (pattern as string) === '') throw new ConfigError(`event pattern must be a non-empty string, got ${String(pattern)}`);
    if (pattern === '*') return () => true;
    // `tool.*` keeps its dot, so `tool.*` never matches `toolbox.opened`.
    if (pattern.endsWith('.*')) prefixes.push(pattern.slice(0, -1));
    else exact.add(pattern);
  }
  if (prefixes.length === 0) return (type) => exact.has(type);
  return (type) => exact.has(type) || prefixes.some((prefix) => type.startsWith(prefix));
}
