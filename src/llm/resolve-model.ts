import { ConfigError } from '../errors.js';
import { anthropicProvider } from './anthropic-provider.js';
import { cassetteProvider } from './cassette.js';
import { geminiProvider } from './gemini-provider.js';
import { openaiProvider } from './openai-provider.js';
import type { Provider } from './types.js';

/** The providers `--model` knows, and the aliases that lead to them. */
const FAMILIES = {
  openai: 'openai',
  anthropic: 'anthropic',
  claude: 'anthropic',
  gemini: 'gemini',
  google: 'gemini',
  ollama: 'ollama',
  cassette: 'cassette',
} as const;

type Family = (typeof FAMILIES)[keyof typeof FAMILIES];

/** Where Ollama listens by default, with its OpenAI-compatible API. */
export const OLLAMA_BASE_URL = 'http://localhost:11434/v1';

const EXAMPLES = 'openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, gemini:gemini-2.5-flash, ollama:qwen2.5, cassette:run.jsonl';

/**
 * A provider from a `provider:model` spec, with keys from the usual environment variables:
 * `openai:<model>` (`OPENAI_API_KEY`, `OPENAI_BASE_URL` for any compatible server),
 * `anthropic:<model>` (`ANTHROPIC_API_KEY`), `gemini:<model>` (`GOOGLE_API_KEY` or
 * `GEMINI_API_KEY`, the first set wins, as in the official client), `ollama:<model>` (a local Ollama, `OLLAMA_BASE_URL` or localhost:11434),
 * `cassette:<file>` (a recorded run, offline).
 *
 * @example
 * const provider = resolveModel('openai:gpt-4o-mini');
 */
export function resolveModel(spec: string, options: { timeoutMs?: number; env?: Readonly<Record<string, string | undefined>> } = {}): Provider {
  const env = options.env ?? process.env;
  const colon = typeof spec === 'string' ? spec.indexOf(':') : -1;
  const prefix = colon > 0 ? spec.slice(0, colon).toLowerCase() : '';
  const model = colon > 0 ? spec.slice(colon + 1).trim() : '';
  if (!Object.hasOwn(FAMILIES, prefix) || model === '') {
    throw new ConfigError(`model ${JSON.stringify(spec)} must be <provider>:<model>, one of: ${EXAMPLES}`);
  }
  const family: Family = FAMILIES[prefix as keyof typeof FAMILIES];
  const timeout = options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {};
  // Keys and base URLs from the environment given, so that a host (or a test) decides what is read.
  const keys = (...names: string[]) => ({ apiKeys: splitKeys(names.map((name) => env[name]).find((value) => value?.trim())) });
  const baseURL = (name: string) => (env[name]?.trim() ? { baseURL: env[name]!.trim() } : {});
  switch (family) {
    case 'openai':
      return openaiProvider({ model, ...keys('OPENAI_API_KEY'), ...baseURL('OPENAI_BASE_URL'), ...timeout });
    case 'anthropic':
      return anthropicProvider({ model, ...keys('ANTHROPIC_API_KEY'), ...baseURL('ANTHROPIC_BASE_URL'), ...timeout });
    case 'gemini':
      return geminiProvider({ model, ...keys('GOOGLE_API_KEY', 'GEMINI_API_KEY'), ...timeout });
    case 'ollama':
      return openaiProvider({ model, name: 'ollama', baseURL: env['OLLAMA_BASE_URL']?.trim() || OLLAMA_BASE_URL, apiKeys: [], ...timeout });
    case 'cassette':
      return cassetteProvider(model);
  }
}

function splitKeys(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}
