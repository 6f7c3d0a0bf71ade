/**
 * Any AI SDK language model as a troupe provider: `import { aiSdkProvider } from 'troupe/ai-sdk'`.
 * Give it a model from an `@ai-sdk/*` provider package of AI SDK 5 or 6 (install
 * `@ai-sdk/provider@3` beside troupe for the types).
 */
export { aiSdkProvider, type AiSdkProviderOptions } from './ai-sdk-provider.js';
export type { AiSdkLanguageModel } from './language-model.js';
