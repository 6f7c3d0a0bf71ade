import { TroupeError } from '../../errors.js';
import type { ChatMessage } from '../../llm/types.js';
import { checkInputImages } from '../../tools/result-parts.js';
import type { AgentConfig } from '../agent-config.js';
import type { RunOptions } from '../agent-options.js';

/**
 * The messages a run starts from: the system prompt and the input (with its images, when the
 * provider takes them). Throws `TroupeError` for what only a host bug gives: input that is not a
 * string, bad `rounds`, an image that is not one.
 */
export function openingMessages(config: AgentConfig, input: unknown, options: RunOptions): ChatMessage[] {
  if (typeof input !== 'string') throw new TroupeError('invalid_config', 'agent.run(input) takes a string');
  const { rounds } = options;
  if (rounds !== undefined && (!Number.isSafeInteger(rounds) || rounds < 1)) {
    throw new TroupeError('invalid_config', `agent.run: rounds must be a positive integer, got ${String(rounds)}`);
  }
  // Checked like a rich result's images, whatever the provider takes.
  const images = options.images === undefined ? undefined : checkInputImages(options.images);
  if (images !== undefined && !images.ok) throw new TroupeError('invalid_config', `agent.run: ${images.problem}`);
  const user: ChatMessage = { role: 'user', content: input };
  if (images !== undefined && images.value.length > 0 && config.provider.accepts?.imagesInUserMessages === true) user.images = images.value;
  const system = config.systemMessage;
  return system === undefined ? [user] : [system, user];
}
