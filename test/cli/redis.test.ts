import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { subscribeRedis } from '../../src/redis/index.js';
import { failWithoutRedisUnderCi, findRedis, waitFor } from '../redis/redis-server.js';
import { capture, jsonLines, SCENES, troupe } from './helpers.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

const URL_LINE = /inspector: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]{64}))\n/;

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs `troupe` in-process until stderr matches `wanted`; `interrupt()` plays Ctrl-C. */
function startTroupe(argv: string[], wanted: RegExp) {
  let seen!: (match: RegExpExecArray) => void;
  const printed = new Promise<RegExpExecArray>((resolve) => (seen = resolve));
  const err = capture({
    onWrite: () => {
      const match = wanted.exec(err.text());
      if (match !== null) seen(match);
    },
  });
  const listeners = new Set<() => void>();
  const exit = main(argv, capture().stream, err.stream, {
    scenesDir: SCENES,
    env: {},
    interrupts: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    exit: () => undefined,
  });
  return { printed, exit, err: err.text, interrupt: () => [...listeners].forEach((listener) => listener()) };
}

/** Reads the inspector's `/events` until an event of type `last`. */
async function readEvents(base: string, token: string, last: string): Promise<{ id: string; type: string }[]> {
  const controller = new AbortController();
  const response = await fetch(new URL('/events', base), { headers: { 'X-Troupe-Token': token }, signal: controller.signal });
  const events: { id: string; type: string }[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) !== -1) {
      const data = /^data: (.*)$/m.exec(text.slice(0, end))?.[1];
      text = text.slice(end + 2);
      if (data !== undefined && data.startsWith('{"v"')) events.push(JSON.parse(data) as { id: string; type: string });
    }
    if (events.at(-1)?.type === last) break;
  }
  controller.abort();
  return events;
}

describe('--redis flags, without a Redis', () => {
  it('say what is wrong: a refused connection exits 1, a flag without --redis 2', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const refused = await troupe(['run', 'talk', '--seed', '7', '--quiet', '--redis', url], { scenesDir: SCENES });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(`troupe: --redis: cannot reach Redis at ${url}: connection refused (is redis-server running there?)\n`);
    const stream = await troupe(['run', 'talk', '--redis-stream', 'k'], { scenesDir: SCENES });
    expect([stream.code, stream.err]).toEqual([2, "troupe run talk: --redis-stream is the key of the scene's Redis stream: give --redis too\n"]);
    const notUrl = await troupe(['run', 'talk', '--redis', '127.0.0.1:6379'], { scenesDir: SCENES });
    expect([notUrl.code, notUrl.err]).toEqual([2, 'troupe run talk: --redis needs a Redis URL, e.g. --redis redis://127.0.0.1:6379; got "127.0.0.1:6379"\n']);
    const noScene = await troupe(['inspect', '--redis', url]);
    expect([noScene.code, noScene.err]).toEqual([2, 'troupe inspect: --redis needs the scene to follow: --scene NAME (or its stream: --redis-stream KEY)\n']);
    const noRedis = await troupe(['inspect', '--scene', 'talk']);
    expect([noRedis.code, noRedis.err]).toEqual([2, 'troupe inspect: --scene and --redis-stream name a Redis stream: give --redis URL too\n']);
    const both = await troupe(['inspect', 'run.jsonl', '--redis', url, '--scene', 'talk']);
    expect([both.code, both.err]).toEqual([2, 'troupe inspect: a session log or --redis, not both\n']);
    const inspectRefused = await troupe(['inspect', '--redis', url, '--scene', 'talk']);
    expect([inspectRefused.code, inspectRefused.err]).toEqual([1, `troupe inspect: --redis: cannot reach Redis at ${url}: connection refused (is redis-server running there?)\n`]);
  });
});

describe.runIf(redis !== undefined)('troupe run --redis and troupe inspect --redis', () => {
  it('run sends every event to the stream; inspect serves them live from it', async () => {
    const url = redis!.url;
    const stream = `troupe:${redis!.scene('talk')}:events`;
    const run = await troupe(['run', 'talk', '--seed', '7', '--json', '--redis', url, '--redis-stream', stream], { scenesDir: SCENES });
    expect(run.code).toBe(0);
    expect(run.err).toContain(`troupe: events go to Redis stream ${stream}; follow them with troupe inspect --redis URL --scene talk --redis-stream ${stream}\n`);
    const printed = jsonLines(run.out);
    expect(await redis!.admin.xlen(stream)).toBe(printed.length);

    // Another subscriber sees the same events, in the same order.
    const events = await subscribeRedis({ url, scene: 'talk', stream });
    const ids: string[] = [];
    events.on('*', (event) => void ids.push(event.id));
    await waitFor(() => ids.length === printed.length, 'every event');
    expect(ids).toEqual(printed.map((event) => event.id));
    await events.close();

    const inspect = startTroupe(['inspect', '--redis', url, '--scene', 'talk', '--redis-stream', stream], /still serving/);
    const [, base, , token] = URL_LINE.exec((await inspect.printed).input)!;
    const served = await readEvents(base!, token!, 'scene.stopped');
    expect(served.map((event) => event.id)).toEqual(printed.map((event) => event.id));
    const state = (await (await fetch(new URL('/state', base), { headers: { 'X-Troupe-Token': token! } })).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ mode: 'live', canControl: false, stopped: true });
    expect(inspect.err()).toContain(`scene talk from Redis stream ${stream}; still serving`);
    inspect.interrupt();
    expect(await inspect.exit).toBe(0);
  }, 30_000);

  it('run --workers --inspect serves every worker\'s events from the run\'s stream, read-only, and keeps the page up after the run', async () => {
    const name = redis!.scene('talk-workers');
    const run = startTroupe(['run', 'talk', '--seed', '7', '--quiet', '--redis', redis!.url, '--workers', '2', '--redis-name', name, '--inspect'], /still serving/);
    const [, base, , token] = URL_LINE.exec((await run.printed).input)!;
    const served = await readEvents(base!, token!, 'scene.stopped');
    const stream = await redis!.admin.xrange(`troupe:${name}:events`, '-', '+');
    expect(served.map((event) => event.id)).toEqual(stream.map(([, fields]) => (JSON.parse(fields[fields.indexOf('event') + 1]!) as { id: string }).id));
    // The guests' orders and the innkeeper's pours ran in the workers.
    expect(served.filter((event) => event.type === 'agent.said').length).toBeGreaterThan(0);
    expect(served.filter((event) => event.type === 'tool.completed').length).toBeGreaterThan(0);
    const state = (await (await fetch(new URL('/state', base), { headers: { 'X-Troupe-Token': token! } })).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ canControl: false });
    expect(run.err()).toContain('the run has ended; still serving');
    run.interrupt();
    expect(await run.exit).toBe(0);
  }, 60_000);

  it('run --workers answers approvals as --approve says, in the workers: denied by default, approved with all', async () => {
    const run = (approve: string[]) => troupe(['run', 'tavern', '--seed', '7', '--redis', redis!.url, '--workers', '2', '--redis-name', redis!.scene(`tavern-${approve.join('')}`), ...approve], { scenesDir: undefined });
    const denied = await run([]);
    expect(denied.code, denied.err).toBe(0);
    expect(denied.out.trimEnd().split('\n').at(-1)).toMatch(/^The Wobbly Flagon closes at tick 30 \(ticks\): .*the cellar stayed shut; /);
    const approved = await run(['--approve', 'all']);
    expect(approved.code, approved.err).toBe(0);
    expect(approved.out).toContain('; 3 portions brought up from the cellar; ');
  }, 90_000);

  it('a second run of the scene appends after the first; another scene on the stream is refused', async () => {
    const url = redis!.url;
    const stream = `troupe:${redis!.scene('again')}:events`;
    const first = await troupe(['run', 'talk', '--seed', '7', '--quiet', '--redis', url, '--redis-stream', stream], { scenesDir: SCENES });
    expect(first.code).toBe(0);
    const length = await redis!.admin.xlen(stream);
    const second = await troupe(['run', 'talk', '--seed', '8', '--quiet', '--redis', url, '--redis-stream', stream], { scenesDir: SCENES });
    expect(second.code).toBe(0);
    expect(await redis!.admin.xlen(stream)).toBeGreaterThan(length);
    const header = JSON.parse((await redis!.admin.get(`${stream}:header`))!) as { scene: string };
    await redis!.admin.set(`${stream}:header`, JSON.stringify({ ...header, scene: 'market' }));
    const refused = await troupe(['run', 'talk', '--quiet', '--redis', url, '--redis-stream', stream], { scenesDir: SCENES });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(`troupe: --redis: Redis stream ${stream} cannot be used: it belongs to scene "market", not "talk": give each scene its own stream\n`);
  }, 30_000);
});
