import { createHash } from 'node:crypto';
import { ConfigError } from '../errors.js';

/** The longest troupe tool name (`^[A-Za-z][A-Za-z0-9_-]{0,63}$`). */
const MAX_NAME = 64;

/** The longest server prefix, so that a tool's own name keeps most of the rest. */
export const MAX_PREFIX = 32;

const PREFIX_RULE = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

/**
 * Checks a server name the host chose (`name` of `mcpTools`): it prefixes every tool name, so it
 * follows the tool-name rule, in at most 32 characters.
 */
export function checkServerName(name: unknown): string {
  if (typeof name !== 'string' || !PREFIX_RULE.test(name)) {
    throw new ConfigError(
      `mcpTools: name ${JSON.stringify(name)} must be a letter, then up to 31 letters, digits, "_" or "-" (it prefixes every tool name: name__tool)`,
    );
  }
  return name;
}

/**
 * The prefix for a server that was not given a name: the last `/`-separated part of the name it
 * reports (`mcp-servers/everything` → `everything`), with characters outside the rule replaced by
 * `_`, a leading non-letter preceded by `mcp`, cut to 32 characters; `mcp` when nothing is left.
 */
export function defaultServerName(reported: string | undefined): string {
  const last = (reported ?? '').split('/').filter((part) => part.trim() !== '').pop() ?? '';
  let name = last.trim().replace(/[^A-Za-z0-9_-]/g, '_');
  if (name === '') return 'mcp';
  if (!/^[A-Za-z]/.test(name)) name = `mcp${name}`;
  return name.slice(0, MAX_PREFIX);
}

/**
 * Maps a server's tool names to troupe tool names, in the server's order: `server__tool`, every
 * character outside `[A-Za-z0-9_-]` in the tool's name replaced by `_`. A name over 64 characters
 * is cut to 55 and ends in `_` and 8 hex digits of the SHA-256 of the original name, so two long
 * names that share a beginning stay apart. A name already taken (by an earlier tool of the list,
 * or one of `reserved`) gets `_2`, `_3`, … (cut again to fit).
 *
 * @example
 * mapToolNames('github', ['create_issue', 'search.code', 'search code']);
 * // Map { 'create_issue' => 'github__create_issue', 'search.code' => 'github__search_code', 'search code' => 'github__search_code_2' }
 */
export function mapToolNames(prefix: string, names: readonly string[], reserved: Iterable<string> = []): Map<string, string> {
  const taken = new Set(reserved);
  const mapped = new Map<string, string>();
  for (const name of names) {
    if (mapped.has(name)) continue; // a server listing one name twice: the first one wins
    const base = fit(`${prefix}__${name.replace(/[^A-Za-z0-9_-]/g, '_')}`, name);
    let candidate = base;
    for (let copy = 2; taken.has(candidate); copy++) {
      const suffix = `_${copy}`;
      candidate = `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`;
    }
    taken.add(candidate);
    mapped.set(name, candidate);
  }
  return mapped;
}

function fit(name: string, original: string): string {
  if (name.length <= MAX_NAME) return name;
  const digest = createHash('sha256').update(original).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - 9)}_${digest}`;
}
