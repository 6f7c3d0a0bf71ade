import type { Clock } from '../bus/ids.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_TIMEOUT_MS, type AdapterContext } from './adapter-kit.js';
import { KeyRing } from './key-ring.js';
import type { ProviderAccepts } from './types.js';

/** What every adapter takes. */
export type AdapterOptions = {
  /** The model name the provider knows (`gpt-4o-mini`, `claude-sonnet-4-5`, `gemini-2.5-flash`). */
  model: string;
  /** One API key. Defaults to the provider's usual environment variable. */
  apiKey?: string;
  /** Several keys, used in turn and rotated on 401/429. */
  apiKeys?: readonly string[];
  /** Another server speaking the same wire format (a proxy, a local server, a test). */
  baseURL?: string;
  /** The longest the model may stay silent, before its first byte or between chunks (default 60 s). */
  timeoutMs?: number;
  /** The provider's name on the bus (`llm.request.provider`); defaults to the adapter's. */
  name?: string;
  /** Extra HTTP headers sent with every request. */
  headers?: Readonly<Record<string, string>>;
  /** The clock the key ring rests keys by (tests pass a fake one). */
  clock?: Clock;
  /**
   * What the model takes besides text, replacing the adapter's default (docs/providers.md): a
   * text-only model behind an OpenAI-compatible server takes `{ imagesInUserMessages: false }`.
   */
  accepts?: ProviderAccepts;
};

/**
 * Resolves the keys and timer every adapter shares. `envKeys` are the environment variables the
 * provider's users already set; `keyOptional` lets servers that take no key (local ones) go without.
 */
export function adapterContext(
  options: AdapterOptions,
  defaults: { provider: string; envKeys: readonly string[]; keyOptional: boolean },
): AdapterContext {
  if (typeof options?.model !== 'string' || options.model.trim() === '') {
    throw new ConfigError(`${defaults.provider}: a model name is required, e.g. { model: '…' }`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new ConfigError(`${defaults.provider}: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  const given = options.apiKeys ?? (options.apiKey !== undefined ? [options.apiKey] : undefined);
  const fromEnv = defaults.envKeys.map((name) => process.env[name]).find((value) => value !== undefined && value.trim() !== '');
  const keys = given ?? (fromEnv !== undefined ? splitKeys(fromEnv) : []);
  const provider = options.name ?? defaults.provider;
  if (keys.length === 0) {
    if (defaults.keyOptional && options.baseURL !== undefined) return { provider, timeoutMs };
    throw new ConfigError(
      `${provider}: no API key: pass apiKey or apiKeys, or set ${defaults.envKeys.join(' or ')}` +
        (defaults.keyOptional ? ' (a local server given by baseURL needs none)' : ''),
    );
  }
  return { provider, timeoutMs, keys: new KeyRing(keys, options.clock) };
}

/** The keys in an environment variable, which may hold several separated by commas. */
export function splitKeys(value: string): string[] {
  return value
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}
