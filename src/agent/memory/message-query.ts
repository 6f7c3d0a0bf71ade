import { ConfigError } from '../../errors.js';
import type { ChatMessage } from '../../llm/types.js';

/** A role of the kept messages. */
export type MessageRole = ChatMessage['role'];

/**
 * Which kept messages to read: of one role or several (all by default), then a range of those
 * by position, as `Array.prototype.slice` reads it (`from` inclusive, `to` exclusive, negative
 * counts from the newest), or the `last` n of them. `last` and a range do not go together.
 */
export type MessageQuery = {
  role?: MessageRole | readonly MessageRole[];
  from?: number;
  to?: number;
  last?: number;
};

const ROLES: ReadonlySet<string> = new Set<MessageRole>(['system', 'user', 'assistant', 'tool']);

/** The messages `query` selects, oldest first; throws `ConfigError` for a query that means nothing. */
export function queryMessages(messages: readonly ChatMessage[], query: MessageQuery): ChatMessage[] {
  const roles = roleSet(query.role);
  const chosen = roles === undefined ? [...messages] : messages.filter((message) => roles.has(message.role));
  if (query.last !== undefined) {
    if (query.from !== undefined || query.to !== undefined) throw new ConfigError('memory.messages: give either last or a range (from, to), not both');
    if (!Number.isInteger(query.last) || query.last < 0) throw new ConfigError(`memory.messages: last must be a whole number from 0, got ${String(query.last)}`);
    return query.last === 0 ? [] : chosen.slice(-query.last);
  }
  for (const key of ['from', 'to'] as const) {
    const value = query[key];
    if (value !== undefined && !Number.isInteger(value)) throw new ConfigError(`memory.messages: ${key} must be a whole number (negative counts from the newest), got ${String(value)}`);
  }
  return chosen.slice(query.from, query.to);
}

/** How many messages of the kept turns have `role` (all of them without one). */
export function countMessages(turns: readonly { messages: readonly ChatMessage[] }[], role?: MessageRole | readonly MessageRole[]): number {
  const roles = roleSet(role);
  let count = 0;
  // Turn by turn: counting needs no flattened copy of the history.
  for (const turn of turns) {
    if (roles === undefined) count += turn.messages.length;
    else for (const message of turn.messages) if (roles.has(message.role)) count++;
  }
  return count;
}

function roleSet(role: MessageRole | readonly MessageRole[] | undefined): ReadonlySet<string> | undefined {
  if (role === undefined) return undefined;
  const list: readonly unknown[] = typeof role === 'string' ? [role] : Array.isArray(role) ? role : [role];
  for (const each of list) {
    if (typeof each !== 'string' || !ROLES.has(each)) throw new ConfigError(`memory.messages: unknown role ${JSON.stringify(each)} (roles: system, user, assistant, tool)`);
  }
  return new Set(list as string[]);
}
