/**
 * The OpenAI adapter, for OpenAI and every server that speaks Chat Completions (Ollama, vLLM…):
 * `import { openaiProvider } from 'troupe/openai'`. Needs the `openai` package installed beside troupe.
 */
export { openaiProvider, type OpenAIProviderOptions } from '../openai-provider.js';
