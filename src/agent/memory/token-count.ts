import { createRequire } from 'node:module';
import type { ChatMessage } from '../../llm/types.js';

/** Counts the tokens of a piece of text. Plug your own in with `memory.countTokens`. */
export type TokenCounter = (text: string) => number;

/** The byte-pair encodings troupe ships through `gpt-tokenizer`. */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

/** A model family's counter, and the encoding behind it. */
export type Tokenizer = { encoding: TokenEncoding; count: TokenCounter };

// OpenAI's current families (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, the o-series, gpt-oss) use o200k.
const O200K_MODEL = /^(?:openai\/)?(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d)/i;

/**
 * The encoding for a provider and model: o200k for OpenAI's gpt-4o, 4.1, 4.5, 5 and o-series
 * models, cl100k for older OpenAI models and, as a documented approximation, for everything else
 * (Anthropic, Gemini and local models publish no offline tokenizer; cl100k counts their English
 * and code within about 10–20 %).
 */
export function encodingFor(provider: { name: string; model?: string | undefined }): TokenEncoding {
  return provider.model !== undefined && O200K_MODEL.test(provider.model) ? 'o200k_base' : 'cl100k_base';
}

/** The tokenizer for a provider's family (see `encodingFor`); its tables load at the first count. */
export function tokenizerFor(provider: { name: string; model?: string | undefined }): Tokenizer {
  const encoding = encodingFor(provider);
  return { encoding, count: (text) => countTokens(text, encoding) };
}

/**
 * Counts the tokens of `text` in an encoding (default cl100k). The encoding's tables (about
 * 15 MB of heap and 100 ms) load on the first count, synchronously, so an agent without memory
 * never pays for them.
 *
 * @example
 * countTokens('Player 7 is Ana.', 'o200k_base'); // 6
 */
export function countTokens(text: string, encoding: TokenEncoding = 'cl100k_base'): number {
  return text === '' ? 0 : loaded(encoding)(text);
}

/** Tokens a chat format spends on each message besides its content (role and separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** The tokens of messages as a chat request carries them: content, native calls, overhead. */
export function countMessageTokens(messages: readonly ChatMessage[], count: TokenCounter): number {
  let total = 0;
  for (const message of messages) {
    total += MESSAGE_OVERHEAD_TOKENS + count(message.content);
    if (message.role === 'assistant' && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) total += MESSAGE_OVERHEAD_TOKENS + count(call.name) + count(call.arguments);
    } else if (message.role === 'tool') {
      total += count(message.name);
    }
  }
  return total;
}

type Encoder = (text: string) => number;

// Loaded once per process and encoding, on demand: the tables are immutable, so sharing them
// across agents is safe (and an agent's counter holds no copy).
const encoders = new Map<TokenEncoding, Encoder>();

function loaded(encoding: TokenEncoding): Encoder {
  let encoder = encoders.get(encoding);
  if (encoder === undefined) {
    // The CommonJS build loads synchronously: counting happens inside synchronous turns.
    const module = createRequire(import.meta.url)(`gpt-tokenizer/cjs/encoding/${encoding}`) as { countTokens: (text: string, options: object) => number };
    // Special-token text in a tool result ("<|endoftext|>") is counted as text, never rejected.
    encoder = (text) => module.countTokens(text, { disallowedSpecial: new Set() });
    encoders.set(encoding, encoder);
  }
  return encoder;
}
