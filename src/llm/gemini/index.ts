/**
 * The Google Gemini adapter: `import { geminiProvider } from 'troupe/gemini'`. Needs the
 * `@google/genai` package installed beside troupe.
 */
export { geminiProvider, type GeminiProviderOptions } from '../gemini-provider.js';
export type { GeminiThinking } from './map-request.js';
