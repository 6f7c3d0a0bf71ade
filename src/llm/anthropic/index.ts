/**
 * The Anthropic adapter: `import { anthropicProvider } from 'troupe/anthropic'`. Needs the
 * `@anthropic-ai/sdk` package installed beside troupe.
 */
export { anthropicProvider, type AnthropicProviderOptions, type AnthropicThinking } from '../anthropic-provider.js';
