import type { TroupeEvents } from '../../bus/events.js';
import { TroupeError } from '../../errors.js';
import type { ChatMessage } from '../../llm/types.js';

/** A message of a conversation given to `agent.run` or `agent.stream`: text from a role. */
export type RunMessage = { role: 'system' | 'user' | 'assistant'; content: string };

/**
 * What a run starts from: the user's message as a string, or a conversation ending with a user
 * message (a chat's history). The agent's own system prompt always comes first.
 */
export type RunInput = string | readonly RunMessage[];

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant']);

/**
 * Checks a run's input and returns its messages, the last one the user's. Throws `TroupeError`
 * (`invalid_config`) with the first problem: not a string nor a list, an empty list, a message
 * that is not `{ role, content }` with a known role and string content, a last message that is
 * not the user's, or (with `memory`) earlier messages, which the kept history stands for.
 */
export function runMessages(input: unknown, hasMemory: boolean): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) {
    throw new TroupeError('invalid_config', `agent.run(input) takes a string or a list of messages, got ${describe(input)}`);
  }
  if (input.length === 0) throw new TroupeError('invalid_config', 'agent.run(input): the list of messages is empty; it must end with a user message');
  const messages = input.map((message: unknown, index) => checkMessage(message, index));
  const last = messages[messages.length - 1]!;
  if (last.role !== 'user') {
    throw new TroupeError('invalid_config', `agent.run(input): the last message must be the user's, got role "${last.role}" at index ${messages.length - 1}`);
  }
  if (hasMemory && messages.length > 1) {
    throw new TroupeError(
      'invalid_config',
      'agent.run(input): this agent has `memory`, which keeps the conversation itself; give it the new user message alone (a string or a list of one)',
    );
  }
  return messages;
}

/**
 * What `run.started` says of a run's input: the user's text (the string, or the list's last
 * message) and, for a list, the messages before it, so that a log can run it again.
 */
export function startedData(input: RunInput, number: number): TroupeEvents['run.started'] {
  if (typeof input === 'string') return { input, number };
  const data: TroupeEvents['run.started'] = { input: input[input.length - 1]!.content, number };
  if (input.length > 1) data.messages = input.slice(0, -1).map((message) => ({ role: message.role, content: message.content }));
  return data;
}

function checkMessage(message: unknown, index: number): ChatMessage {
  const at = `agent.run(input): message ${index}`;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new TroupeError('invalid_config', `${at} must be an object { role, content }, got ${describe(message)}`);
  }
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw new TroupeError('invalid_config', `${at} has role ${describe(role)}; a message's role is "system", "user" or "assistant"`);
  }
  if (typeof content !== 'string') throw new TroupeError('invalid_config', `${at} (${role}) must have string content, got ${describe(content)}`);
  // A copy: what the caller does with its list later changes nothing in the run.
  return { role: role as RunMessage['role'], content };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value;
}
