import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderProgress } from '../../src/cli/progress-bar.js';
import { startWireServer, type WireServer } from '../llm/wire-server.js';
import { jsonLines, troupe } from './helpers.js';

const KEY = 'sk-test-0123456789abcdef';
const INVALID_KEY = { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };

describe('troupe run --model on a scene that cannot use it', () => {
  it('is a usage error naming why, for the quickstart (its member has its own provider) and the crowd (no instructions)', async () => {
    for (const [scene, extra] of [['quickstart', []], ['crowd', ['--npcs', '3']]] as const) {
      const { code, err, out } = await troupe(['run', scene, ...extra, '--quiet', '--model', 'openai:gpt-4o-mini'], { scenesDir: undefined, env: { OPENAI_API_KEY: KEY } });
      expect(code, scene).toBe(2);
      expect(err).toBe(
        `troupe: --model openai:gpt-4o-mini: no member of scene "${scene}" can think with a model, so nothing would use it ` +
          '(only members with a scripted brain and instructions take --model, in a scene that passes context.model to createScene)\n',
      );
      expect(out).toBe('');
    }
  });
});

describe('failed turns in the summary', () => {
  let server: WireServer;
  beforeEach(async () => {
    server = await startWireServer();
    // Every model call is refused: 401 is not retried.
    server.reply(...Array.from({ length: 40 }, () => ({ kind: 'json' as const, status: 401, body: INVALID_KEY })));
  });
  afterEach(async () => {
    await server.close();
  });
  const env = (): Record<string, string> => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.url}/v1` });

  it('--quiet: every turn failed is said under the summary, with the last error, and exits 1', async () => {
    const { code, out } = await troupe(['run', 'tavern', '--seed', '7', '--ticks', '3', '--quiet', '--model', 'openai:gpt-4o-mini'], { scenesDir: undefined, env: env() });
    expect(code).toBe(1);
    const [summary, failed] = out.trimEnd().split('\n');
    expect(summary).toMatch(/^The Wobbly Flagon closes at tick 3/);
    // The first 401 set the only key aside; later calls are refused before a request.
    expect(failed).toMatch(/^troupe: every turn failed \((\d+) of \1\); the last, \w+'s: model call failed: openai: every API key was refused/);
    expect(out).not.toContain(KEY);
  });

  it('--json: the same line on stderr, after the summary; stdout keeps only events', async () => {
    const { code, out, err } = await troupe(['run', 'tavern', '--seed', '7', '--ticks', '3', '--json', '--model', 'openai:gpt-4o-mini'], { scenesDir: undefined, env: env() });
    expect(code).toBe(1);
    expect(err).toMatch(/\ntroupe: every turn failed \(\d+ of \d+\); the last, /);
    expect(jsonLines(out).every((event) => typeof event.type === 'string')).toBe(true);
  });

  it('default: some turns failed (the innkeeper on the model), the rest did not: said, and exit 0', async () => {
    const { code, out } = await troupe(['run', 'talk', '--seed', '3', '--model', 'openai:gpt-4o-mini'], { env: env() });
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines.at(-2)).toMatch(/^talk ended \(\w+\): \d+ ticks?, 3 turns, 1 failure; seed 3$/);
    expect(lines.at(-1)).toMatch(/^troupe: 1 of 3 turns failed; the last, innkeeper's: model call failed: openai: HTTP 401/);
  });
});

describe('flag suggestions', () => {
  it.each([
    ['--tick', '--ticks'],
    ['--seeds', '--seed'],
    ['--jsno', '--json'],
    ['--npc', '--npcs'],
  ])('%s: did you mean %s?', async (flag, meant) => {
    const { code, err } = await troupe(['run', 'crowd', flag, '3'], { scenesDir: undefined });
    expect(code).toBe(2);
    expect(err).toContain(`troupe run crowd: unknown flag ${flag} (did you mean ${meant}?); valid flags: `);
  });

  it('suggests nothing for a flag like none of them', async () => {
    const { err } = await troupe(['run', 'crowd', '--frobnicate'], { scenesDir: undefined });
    expect(err).toMatch(/^troupe run crowd: unknown flag --frobnicate; valid flags: /);
  });
});

describe('the progress bar', () => {
  it('counts finished ticks: the first draw, inside tick 1, reads 0 of the total', async () => {
    let now = 0;
    const { code, err } = await troupe(['run', 'clock', '--seed', '1', '--ticks', '120'], { errTty: true, now: () => (now += 40) });
    expect(code).toBe(0);
    const draws = err.split('\r\x1b[2K').filter((part) => part !== '');
    expect(draws[0]).toMatch(/\] +0\/120 ticks · /);
    const ticks = draws.map((draw) => Number(/(\d+)\/120 ticks/.exec(draw)![1]));
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
    expect(Math.max(...ticks)).toBeLessThanOrEqual(120);
  });

  it('renders what it is given', () => {
    expect(renderProgress({ tick: 0, total: 4, turns: 0 }, 0, 80)).toBe('[                    ] 0/4 ticks · 0 turns · – turns/s · 0.0 s');
  });
});
