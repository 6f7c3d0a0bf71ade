/**
 * The Google Gemini adapter: `import { geminiProvider } from 'troupe/gemini'`. Needs the
 * `@google/genai` package installed beside troupe.
 */
export { geminiProvider, type GeminiProviderOptions, type GeminiThinking } from '../gemini-provider.js';
