import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Provider } from '../../src/index.js';
import { cassetteProvider, recordProvider } from '../../src/llm/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from '../agent/fixtures.js';
import { normalizeEvents } from './normalize.js';

const tape = (): string => join(mkdtempSync(join(tmpdir(), 'troupe-cassette-')), 'tape.jsonl');

async function runWith(provider: Provider, question = 'Who is 7?', stream = true) {
  const { tools, executed } = rosterTools();
  const { agent, events } = testAgent({ tools, provider, stream, modelRetry: { attempts: 3, backoffMs: 0 } });
  const result = await agent.run(question);
  return { result, executed, events: normalizeEvents(events.all) };
}

const turns = [`Checking. ${action(call('lookup_player', { player_id: '7' }))}`, 'Player 7 is Ana.'];

describe('cassettes', () => {
  it('replays a streamed run offline with the same events, deltas included', async () => {
    const file = tape();
    const recorded = await runWith(recordProvider(scriptedProvider(turns, { stream: { chunkSize: 5 }, name: 'live', model: 'm-1' }), file));
    const replay = cassetteProvider(file);
    const replayed = await runWith(replay);

    expect(replayed.events).toEqual(recorded.events);
    expect(replayed.executed).toEqual(['lookup_player:7']);
    expect(replay).toMatchObject({ name: 'live', model: 'm-1', remaining: 0 });
    replay.assertConsumed();
  });

  it('replays failures too, so retries happen as they did', async () => {
    const file = tape();
    const flaky = scriptedProvider([{ error: { kind: 'server', message: '503 overloaded' } }, ...turns]);
    const recorded = await runWith(recordProvider(flaky, file), 'Who is 7?', false);
    const replayed = await runWith(cassetteProvider(file), 'Who is 7?', false);
    expect(replayed.events).toEqual(recorded.events);
    expect(replayed.events.filter((event) => event.type === 'llm.error')).toHaveLength(1);
  });

  it('fails clearly on a request that was not recorded, and never reaches a model', async () => {
    const file = tape();
    await runWith(recordProvider(scriptedProvider(turns), file), 'Who is 7?', false);
    const replay = cassetteProvider(file);
    const { result, events } = await runWith(replay, 'Who is 9?', false);

    expect(result.reason).toBe('error');
    const error = events.find((event) => event.type === 'llm.error')!.data as { kind: string; message: string; retryable: boolean };
    expect(error).toMatchObject({ kind: 'script', retryable: false });
    expect(error.message).toContain(`no recording for agent "tester" round 1`);
    expect(error.message).toContain('re-record');
    expect(() => replay.assertConsumed()).toThrow('2 recorded call(s) of 2 were never replayed');
  });

  it('masks keys and key-like strings in what it writes', async () => {
    const file = tape();
    const leaky = scriptedProvider(['Your key is sk-proj-abcdef0123456789 and the old one sk-****************wxyz.']);
    await runWith(recordProvider(leaky, file, { redact: (text) => text.replaceAll('Ana', '[name]') }), 'my key is sk-live-999999999999, who is Ana?', false);
    const written = readFileSync(file, 'utf8');
    expect(written).not.toContain('sk-proj-abcdef0123456789');
    expect(written).not.toContain('sk-live-999999999999');
    expect(written).not.toContain('wxyz');
    expect(written).not.toContain('Ana');
    expect(written).toContain('[redacted]');
  });

  it('records what a stream stopped after </ACTION> produced', async () => {
    const file = tape();
    await runWith(recordProvider(scriptedProvider(turns, { stream: true }), file));
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ cassette: 1, provider: 'scripted' });
    const first = lines[1] as { stream: { type: string; text?: string }[]; round: number };
    expect(first.round).toBe(1);
    expect(first.stream.map((event) => event.text ?? '').join('')).toContain('</ACTION>');
  });

  it('refuses a file that is not a cassette, naming it', () => {
    const file = tape();
    writeFileSync(file, '{"hello":1}\n');
    expect(() => cassetteProvider(file)).toThrow(`cassette ${file}: not a troupe cassette of version 1`);
    expect(() => cassetteProvider(join(file, 'missing'))).toThrow('cannot be read');
  });
});
