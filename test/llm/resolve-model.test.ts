import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import type { AdapterOptions } from '../../src/llm/adapter-options.js';
import { OLLAMA_BASE_URL, resolveModel, type AdapterLoader } from '../../src/llm/resolve-model.js';
import { scriptedProvider } from '../../src/testing/index.js';

/** A loader that records which adapters were loaded and what each was asked to make. */
function recordingLoader() {
  const loaded: string[] = [];
  const made: AdapterOptions[] = [];
  const loadAdapter: AdapterLoader = async (adapter) => {
    loaded.push(adapter);
    return (options) => {
      made.push(options);
      return scriptedProvider([], { name: options.name ?? adapter });
    };
  };
  return { loaded, made, loadAdapter };
}

describe('resolveModel', () => {
  it('loads only the adapter the spec names, with keys and servers from the environment given', async () => {
    const { loaded, made, loadAdapter } = recordingLoader();
    await resolveModel('claude:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: ' a, b ', OPENAI_API_KEY: 'c' }, loadAdapter });
    await resolveModel('ollama:qwen2.5', { env: {}, timeoutMs: 5_000, loadAdapter });
    expect(loaded).toEqual(['anthropic', 'openai']);
    expect(made).toEqual([
      { model: 'claude-sonnet-4-5', apiKeys: ['a', 'b'] },
      { model: 'qwen2.5', name: 'ollama', baseURL: OLLAMA_BASE_URL, apiKeys: [], timeoutMs: 5_000 },
    ]);
  });

  it('loads nothing for a spec it does not know', async () => {
    const { loaded, loadAdapter } = recordingLoader();
    await expect(resolveModel('mistral:large', { env: {}, loadAdapter })).rejects.toThrow(ConfigError);
    expect(loaded).toEqual([]);
  });

  it('passes on a failure to load that is not a missing package', async () => {
    const broken = new SyntaxError('Unexpected token');
    await expect(resolveModel('openai:gpt-4o', { env: {}, loadAdapter: () => Promise.reject(broken) })).rejects.toBe(broken);
  });
});
