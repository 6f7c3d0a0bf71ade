import { TroupeError } from '../../errors.js';
import type { ChatMessage } from '../../llm/types.js';
import { checkInputImages } from '../../tools/result-parts.js';
import type { AgentConfig } from '../agent-config.js';
import type { RunOptions } from '../agent-options.js';
import { runMessages } from './run-input.js';

/**
 * The messages a run starts from: the system prompt and the input — a string, or a list of
 * messages ending with the user's (see `runMessages`) — the images going with the last message,
 * when the provider takes them. Throws `TroupeError` for what only a host bug gives: input that
 * is not a string nor a good list, bad `rounds`, an image that is not one.
 */
export function openingMessages(config: AgentConfig, input: unknown, options: RunOptions): ChatMessage[] {
  const messages = runMessages(input, config.memory !== undefined);
  const { rounds } = options;
  if (rounds !== undefined && (!Number.isSafeInteger(rounds) || rounds < 1)) {
    throw new TroupeError('invalid_config', `agent.run: rounds must be a positive integer, got ${String(rounds)}`);
  }
  // Checked like a rich result's images, whatever the provider takes.
  const images = options.images === undefined ? undefined : checkInputImages(options.images);
  if (images !== undefined && !images.ok) throw new TroupeError('invalid_config', `agent.run: ${images.problem}`);
  const user = messages[messages.length - 1] as ChatMessage & { role: 'user' };
  if (images !== undefined && images.value.length > 0 && config.provider.accepts?.imagesInUserMessages === true) user.images = images.value;
  const system = config.systemMessage;
  if (system === undefined) return messages;
  // A literal of two for the common case: a spread's array keeps spare room, which a crowd of
  // agents parked at their first model call would each hold.
  if (messages.length === 1) return [system, user];
  return [system, ...messages];
}
