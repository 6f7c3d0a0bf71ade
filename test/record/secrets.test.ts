import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { createRedactor } from '../../src/record/redact.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { tempDir } from './helpers.js';

const ENV_KEY = 'sk-test-0123456789abcdefghij-envkey';
const HEADER_TOKEN = 'hdr-token-9f8e7d6c5b4a';
const LISTED = 'listed-secret-xyz';

// An API key from the environment and an Authorization header never reach the log.
describe('session log: secrets', () => {
  let cleanup = (): void => {};
  afterEach(() => {
    cleanup();
    delete process.env.TROUPE_TEST_API_KEY;
  });

  it('never writes env keys, Authorization headers or listed secrets, in lines or side files', async () => {
    process.env.TROUPE_TEST_API_KEY = ENV_KEY;
    const temp = tempDir();
    cleanup = temp.cleanup;
    const log = createSessionLog(join(temp.dir, 'session.jsonl'), { redact: [LISTED, /pin-\d{4}/], maxLineBytes: 2_048 });
    const bus = createBus();
    log.attach(bus);
    bus.publish('tool.started', {
      callId: 'c1',
      name: 'http_get',
      args: { url: 'https://api.example.com', headers: { Authorization: `Bearer ${HEADER_TOKEN}`, 'x-api-key': ENV_KEY } },
      attempt: 1,
    });
    bus.publish('agent.said', { text: `my key is ${ENV_KEY}, the pin-1234 and ${LISTED}` });
    bus.publish('llm.response', {
      round: 1,
      text: `transcript: "Authorization: Bearer ${HEADER_TOKEN}"`,
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 3 } as never,
      latencyMs: 5,
    });
    bus.publish('tool.completed', {
      callId: 'c1',
      name: 'http_get',
      args: {},
      output: { echoed: new Headers({ authorization: `Bearer ${HEADER_TOKEN}` }), padding: 'p'.repeat(5_000), key: ENV_KEY },
      durationMs: 1,
      attempt: 1,
    });
    await log.close();

    const sideDir = `${log.path}.side`;
    const written = [readFileSync(log.path, 'utf8'), ...readdirSync(sideDir).map((name) => readFileSync(join(sideDir, name), 'utf8'))].join('\n');
    expect(readdirSync(sideDir)).toHaveLength(1);
    for (const secret of [ENV_KEY, HEADER_TOKEN, LISTED, 'pin-1234']) expect(written).not.toContain(secret);
    expect(written).toContain('[redacted]');
    expect(written).toContain('"inputTokens":12'); // token counts are not secrets
    expect(written).toContain('https://api.example.com');
  });

  it('redacts by key, literal, pattern and shape', () => {
    const redactor = createRedactor({ secrets: ['hunter2'], env: { OPENAI_API_KEY: 'abcdefgh12345678', SHORT_API_KEY: 'abc', PATH: '/usr/bin' } });
    expect(['apiKey', 'api_key', 'Authorization', 'client_secret', 'password', 'access_token', 'Cookie'].map((key) => redactor.key(key, 'x'))).toEqual(Array(7).fill(true));
    expect(['maxTokens', 'inputTokens', 'name', 'path'].map((key) => redactor.key(key, 'x'))).toEqual(Array(4).fill(false));
    expect(redactor.key('token', 42)).toBe(false);
    expect(redactor.text('pw hunter2 and key abcdefgh12345678 in /usr/bin with abc')).toBe('pw [redacted] and key [redacted] in /usr/bin with abc');
    expect(redactor.text('Authorization: Bearer abc.def-ghi_jkl')).toBe('Authorization: Bearer [redacted]');
    expect(redactor.text('use sk-ant-api03-AAAAAAAAAAAAAAAAAAAA now')).toBe('use [redacted] now');
  });
});
