import { ConfigError, missingPackage } from '../errors.js';
import { splitKeys, type AdapterOptions } from './adapter-options.js';
import { cassetteProvider } from './cassette.js';
import type { Provider } from './types.js';

/** The adapters `--model` can load, each built on its provider's client library. */
export type AdapterName = 'openai' | 'anthropic' | 'gemini';

/** Loads one adapter's factory when a spec names it (a test passes one that fails as a missing package would). */
export type AdapterLoader = (adapter: AdapterName) => Promise<(options: AdapterOptions) => Provider>;

/** What `resolveModel` takes besides the spec. */
export type ResolveModelOptions = {
  timeoutMs?: number;
  /** Where keys and base URLs are read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** How an adapter is loaded (default: its own entry module, `troupe/openai`…). */
  loadAdapter?: AdapterLoader | undefined;
};

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

/** The client library each adapter needs (an optional peer dependency) and the major version it speaks. */
const CLIENT_LIBRARIES: Record<AdapterName, { name: string; major: number }> = {
  openai: { name: 'openai', major: 6 },
  anthropic: { name: '@anthropic-ai/sdk', major: 1 },
  gemini: { name: '@google/genai', major: 1 },
};

/**
 * Each adapter is imported only when a spec names it, so a run loads one client library and a
 * host installs only the one it uses.
 */
const loadBundled: AdapterLoader = async (adapter) => {
  switch (adapter) {
    case 'openai':
      return (await import('./openai/index.js')).openaiProvider;
    case 'anthropic':
      return (await import('./anthropic/index.js')).anthropicProvider;
    case 'gemini':
      return (await import('./gemini/index.js')).geminiProvider;
  }
};

/**
 * A provider from a `provider:model` spec, with keys from the usual environment variables:
 * `openai:<model>` (`OPENAI_API_KEY`, `OPENAI_BASE_URL` for any compatible server),
 * `anthropic:<model>` (`ANTHROPIC_API_KEY`), `gemini:<model>` (`GOOGLE_API_KEY` or
 * `GEMINI_API_KEY`, the first set wins, as in the official client), `ollama:<model>` (a local Ollama, `OLLAMA_BASE_URL` or localhost:11434),
 * `cassette:<file>` (a recorded run, offline). The adapter is loaded on demand; its client
 * library (`openai`, `@anthropic-ai/sdk`, `@google/genai`) must be installed.
 *
 * @example
 * const provider = await resolveModel('openai:gpt-4o-mini');
 */
export async function resolveModel(spec: string, options: ResolveModelOptions = {}): Promise<Provider> {
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
  const keys = (...names: string[]) => ({ apiKeys: splitKeys(names.map((name) => env[name]).find((value) => value?.trim()) ?? '') });
  const baseURL = (name: string) => (env[name]?.trim() ? { baseURL: env[name]!.trim() } : {});
  const adapter = (name: AdapterName) => loadAdapter(name, spec, options.loadAdapter ?? loadBundled);
  switch (family) {
    case 'openai':
      return (await adapter('openai'))({ model, ...keys('OPENAI_API_KEY'), ...baseURL('OPENAI_BASE_URL'), ...timeout });
    case 'anthropic':
      return (await adapter('anthropic'))({ model, ...keys('ANTHROPIC_API_KEY'), ...baseURL('ANTHROPIC_BASE_URL'), ...timeout });
    case 'gemini':
      return (await adapter('gemini'))({ model, ...keys('GOOGLE_API_KEY', 'GEMINI_API_KEY'), ...timeout });
    case 'ollama':
      return (await adapter('openai'))({ model, name: 'ollama', baseURL: env['OLLAMA_BASE_URL']?.trim() || OLLAMA_BASE_URL, apiKeys: [], ...timeout });
    case 'cassette':
      return cassetteProvider(model);
  }
}

/** Loads an adapter; a package that cannot be found becomes one line naming what to install. */
async function loadAdapter(name: AdapterName, spec: string, load: AdapterLoader): Promise<(options: AdapterOptions) => Provider> {
  try {
    return await load(name);
  } catch (error) {
    const missing = missingPackage(error);
    if (missing === undefined) throw error;
    const library = CLIENT_LIBRARIES[name];
    // Some other package than the client library itself: an install is broken; say which.
    const detail = missing === library.name ? '' : ` (cannot find package '${missing}')`;
    throw new ConfigError(`${spec} needs the ${library.name} package: npm install ${library.name}@${library.major}${detail}`);
  }
}
