import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseRunFlags } from '../../src/cli/run-flags.js';
import { textStream } from '../llm/transcripts/openai.js';
import { startWireServer, type WireServer } from '../llm/wire-server.js';
import { jsonLines, troupe } from './helpers.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

/** What the innkeeper's model answers: a pour (the closer stripped as the stop sequence), then a word. */
function innkeeperTurns(): void {
  server.reply(
    { kind: 'sse', events: textStream(['Coming', ' right up.\n<ACTION><pour><for>guest-1', '</for></pour>']) },
    { kind: 'sse', events: textStream(['Enjoy', ' your ale.']) },
  );
}

describe('troupe run --model', () => {
  it('checks --model, --protocol and --record before running anything', () => {
    expect(parseRunFlags(['talk', '--model', 'gpt-4o'])).toMatchObject({ ok: false, problem: expect.stringContaining('--model needs <provider>:<model>') });
    expect(parseRunFlags(['talk', '--model', 'openai:m', '--protocol', 'json'])).toEqual({ ok: false, problem: '--protocol must be xml or native, got "json"' });
    expect(parseRunFlags(['talk', '--protocol', 'native'])).toEqual({ ok: false, problem: '--protocol applies to a model: give --model too' });
    expect(parseRunFlags(['talk', '--record', 'x.jsonl'])).toMatchObject({ ok: false, problem: expect.stringContaining('give --model too') });
    expect(parseRunFlags(['talk', '--model', 'openai:m', '--protocol', 'native'])).toMatchObject({ ok: true, value: { model: 'openai:m', protocol: 'native' } });
  });

  it('says clearly which variable is missing', async () => {
    const openai = await troupe(['run', 'talk', '--model', 'openai:gpt-4o-mini'], { env: {} });
    expect(openai.code).toBe(2);
    expect(openai.err).toContain('--model openai:gpt-4o-mini: openai: no API key');
    expect(openai.err).toContain('OPENAI_API_KEY');
    const gemini = await troupe(['run', 'talk', '--model', 'gemini:gemini-2.5-flash'], { env: {} });
    expect(gemini.err).toMatch(/GOOGLE_API_KEY|GEMINI_API_KEY/);
    const unknown = await troupe(['run', 'talk', '--model', 'mistral:large'], { env: {} });
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('must be <provider>:<model>, one of: openai:gpt-4o-mini');
  });

  it('names the package to install, in one line, when the provider\'s client library is missing', async () => {
    // The adapter's import fails the way it does on a host without the client library.
    const loadAdapter = async (adapter: string) => (await import(`troupe-test-not-installed-${adapter}`)).provider;
    const { code, err } = await troupe(['run', 'talk', '--model', 'openai:gpt-4o'], { env: { OPENAI_API_KEY: 'sk-test-0123456789abcdef' }, loadAdapter });
    expect(code).toBe(2);
    expect(err).toMatch(/^troupe: --model openai:gpt-4o needs the openai package: npm install openai@6 \(cannot find package 'troupe-test-not-installed-openai'\)\n$/);
    const claude = await troupe(['run', 'talk', '--model', 'claude:claude-sonnet-4-5'], { env: {}, loadAdapter });
    expect(claude.err).toContain('--model claude:claude-sonnet-4-5 needs the @anthropic-ai/sdk package: npm install @anthropic-ai/sdk@1');
  });

  it('runs the members with instructions on the model, over real HTTP, streaming', async () => {
    innkeeperTurns();
    const env = { OPENAI_API_KEY: 'sk-test-0123456789abcdef', OPENAI_BASE_URL: `${server.url}/v1` };
    const { code, out, err } = await troupe(['run', 'talk', '--guests', '1', '--seed', '3', '--json', '--model', 'openai:gpt-4o-mini'], { env });

    expect(err).not.toContain('sk-test-0123456789abcdef');
    expect(code).toBe(0);
    expect(server.unexpected).toEqual([]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test-0123456789abcdef');
    expect(server.requests[0]!.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, stop: ['</ACTION>'] });
    const events = jsonLines(out);
    const innkeeper = events.filter((event) => (event as { agent?: string }).agent === 'innkeeper');
    expect(innkeeper.find((event) => event.type === 'llm.request')!.data).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(innkeeper.filter((event) => event.type === 'llm.delta').map((event) => event.data['text']).join('')).toContain('Coming right up.');
    expect(innkeeper.find((event) => event.type === 'tool.completed')!.data).toMatchObject({ name: 'pour', args: { for: 'guest-1' } });
    // The guests have no instructions: they stayed scripted.
    expect(events.filter((event) => event.type === 'llm.request' && (event as { agent?: string }).agent !== 'innkeeper').every((event) => event.data['provider'] === 'brain')).toBe(true);
  });

  it('records the model to a cassette that replays the run offline', async () => {
    innkeeperTurns();
    const tape = join(mkdtempSync(join(tmpdir(), 'troupe-cli-')), 'talk.jsonl');
    const env = { OPENAI_API_KEY: 'sk-test-0123456789abcdef', OPENAI_BASE_URL: `${server.url}/v1` };
    const args = ['run', 'talk', '--guests', '1', '--seed', '3', '--json'];
    const live = await troupe([...args, '--model', 'openai:gpt-4o-mini', '--record', tape], { env });
    expect(live.code).toBe(0);
    await server.close();

    const replay = await troupe([...args, '--model', `cassette:${tape}`], { env: {} });
    expect(replay.code).toBe(0);
    const strip = (text: string) => jsonLines(text).map((event) => [event.type, (event as { agent?: string }).agent, event.type === 'llm.response' ? event.data['text'] : undefined]);
    expect(strip(replay.out)).toEqual(strip(live.out));
  });
});
