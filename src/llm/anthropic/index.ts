/**
 * The Anthropic adapter: `import { anthropicProvider } from 'troupe/anthropic'`. Needs the
 * `@anthropic-ai/sdk` package installed beside troupe.
 */
export { anthropicProvider, type AnthropicProviderOptions } from '../anthropic-provider.js';
export type { AnthropicThinking } from './map-request.js';
