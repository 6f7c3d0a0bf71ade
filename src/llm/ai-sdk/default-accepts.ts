import type { ProviderAccepts } from '../types.js';

const TEXT_ONLY: Required<ProviderAccepts> = Object.freeze({ imagesInUserMessages: false, imagesInToolResults: false });
const BOTH: Required<ProviderAccepts> = Object.freeze({ imagesInUserMessages: true, imagesInToolResults: true });

/**
 * What a model takes besides text, by its `provider` id, for the provider packages whose code was
 * read to see what they do with images (AI SDK 6 packages):
 *
 * - `openai.chat` sends user images as `image_url` parts, but a tool result's content as JSON text
 *   (the base64 would reach the model as text), so tool images go in a user message after them;
 * - `openai.responses`, `anthropic.messages` and `google.generative-ai` take images in both.
 *
 * Every other provider (including `@ai-sdk/openai-compatible`, whose id is the name you give it)
 * is treated as text only: its model reads placeholders unless `accepts` says otherwise.
 */
const KNOWN: ReadonlyMap<string, Required<ProviderAccepts>> = new Map([
  ['openai.chat', Object.freeze({ imagesInUserMessages: true, imagesInToolResults: false })],
  ['openai.responses', BOTH],
  ['anthropic.messages', BOTH],
  ['google.generative-ai', BOTH],
]);

/** The images a model of this provider id takes by default (see `KNOWN`). */
export function defaultAccepts(provider: string): Required<ProviderAccepts> {
  return KNOWN.get(provider) ?? TEXT_ONLY;
}
