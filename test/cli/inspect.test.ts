import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { capture, SCENES, troupe } from './helpers.js';

const URL_LINE = /inspector: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]{64}))\n/;

/**
 * Runs `troupe` in-process until it prints `wanted` on stderr; `interrupt()` then plays Ctrl-C.
 * Resolves with the URL it printed and the run still going.
 */
function startTroupe(argv: string[], wanted: RegExp, scenesDir: URL = SCENES) {
  const out = capture();
  let seen!: (match: RegExpExecArray) => void;
  const printed = new Promise<RegExpExecArray>((resolve) => (seen = resolve));
  const err = capture({
    onWrite: () => {
      const match = wanted.exec(err.text());
      if (match !== null) seen(match);
    },
  });
  const listeners = new Set<() => void>();
  const exit = main(argv, out.stream, err.stream, {
    scenesDir,
    env: {},
    clock: () => 0,
    interrupts: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    exit: () => undefined,
  });
  return {
    printed,
    exit,
    err: err.text,
    out: out.text,
    interrupt: () => {
      for (const listener of [...listeners]) listener();
    },
  };
}

/** Reads `/events` until `last` arrives; returns the envelopes. */
async function readEvents(base: string, token: string, last: string): Promise<{ id: string; type: string }[]> {
  const controller = new AbortController();
  const response = await fetch(new URL('/events', base), { headers: { 'X-Troupe-Token': token }, signal: controller.signal });
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
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

async function getState(base: string, token: string): Promise<Record<string, unknown>> {
  const response = await fetch(new URL('/state', base), { headers: { 'X-Troupe-Token': token } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe('troupe run --inspect', () => {
  it('serves the scene while it runs and after it ends, until Ctrl-C', async () => {
    const run = startTroupe(['run', 'talk', '--seed', '7', '--inspect', '--quiet'], /still serving/);
    const [, base, , token] = URL_LINE.exec((await run.printed).input)!;
    expect(await getState(base!, token!)).toMatchObject({
      mode: 'live',
      scene: 'talk',
      clock: 'stepped',
      paused: false,
      canControl: true,
      agents: [{ name: 'innkeeper' }, { name: 'guest-1' }, { name: 'guest-2' }],
      world: { ale: 8 },
    });
    const events = await readEvents(base!, token!, 'scene.stopped');
    // Recorded from the first agent spawned, before the server even started.
    expect(events[0]!.type).toBe('agent.spawned');
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    const pause = await fetch(new URL('/control', base), { method: 'POST', headers: { 'X-Troupe-Token': token!, Origin: new URL(base!).origin, 'Content-Type': 'application/json' }, body: '{"type":"pause"}' });
    expect([pause.status, await pause.json()]).toEqual([409, { error: expect.stringMatching(/^the scene has stopped at tick/) }]);
    run.interrupt();
    expect(await run.exit).toBe(0);
    expect(run.err()).toMatch(/inspector: the scene has ended; still serving http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64} \(Ctrl-C to quit\)/);
    expect(run.out()).toMatch(/^talk ended/);
    await expect(fetch(new URL('/state', base))).rejects.toThrow(); // the server is gone
  }, 20_000);

  it('prints the URL on stderr under --json too; stdout stays JSON lines', async () => {
    const run = startTroupe(['run', 'talk', '--json', '--inspect', '--port', '0'], /still serving/);
    await run.printed;
    run.interrupt();
    expect(await run.exit).toBe(0);
    expect(run.err()).toMatch(URL_LINE);
    for (const line of run.out().trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('binds another address with --host, and warns before the URL that the page is reachable beyond this machine', async () => {
    const run = startTroupe(['run', 'talk', '--seed', '7', '--inspect', '--host', '0.0.0.0', '--quiet'], /still serving/);
    const [, base, port, token] = URL_LINE.exec((await run.printed).input)!;
    const warning = `troupe inspector: listening on 0.0.0.0:${port}, beyond this machine: anyone who can reach it and has the token can watch the scene and approve tool calls. Bind 127.0.0.1 (the default) unless you mean it.\n`;
    expect(run.err().startsWith(warning)).toBe(true);
    // The URL printed is still the loopback one, token included.
    expect(await getState(base!, token!)).toMatchObject({ mode: 'live', scene: 'talk' });
    run.interrupt();
    expect(await run.exit).toBe(0);
    const local = startTroupe(['run', 'talk', '--inspect', '--host', '127.0.0.1', '--quiet'], /still serving/);
    await local.printed;
    local.interrupt();
    expect(await local.exit).toBe(0);
    expect(local.err()).not.toContain('beyond this machine');
  }, 20_000);

  it('refuses a bad --host, a --host without --inspect, and an address that is not ours', async () => {
    expect(await troupe(['run', 'talk', '--host', '0.0.0.0'])).toMatchObject({ code: 2, err: "troupe run talk: --host is the inspector's address: give --inspect too\n" });
    expect(await troupe(['run', 'talk', '--inspect', '--host', 'http://evil/'])).toMatchObject({ code: 2, err: expect.stringContaining('--host needs an address of this machine') });
    expect(await troupe(['inspect', 'a.jsonl', '--host', ' '])).toMatchObject({ code: 2, err: expect.stringMatching(/^troupe inspect: --host needs an address of this machine/) });
    const foreign = await troupe(['run', 'talk', '--inspect', '--host', '192.0.2.1', '--quiet']);
    expect(foreign.code).toBe(1);
    expect(foreign.err).toContain('troupe: inspector cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this machine');
  });

  it('--paused holds the scene before its first tick until the page steps or resumes it', async () => {
    const run = startTroupe(['run', 'talk', '--seed', '7', '--inspect', '--paused', '--quiet'], /paused before its first tick/);
    const [, base, , token] = URL_LINE.exec((await run.printed).input)!;
    expect(run.err()).toContain('inspector: the scene is paused before its first tick: Resume or Step on the page\n');
    const command = (type: string) =>
      fetch(new URL('/control', base), { method: 'POST', headers: { 'X-Troupe-Token': token!, Origin: new URL(base!).origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ type }) });
    expect(await getState(base!, token!)).toMatchObject({ paused: true, started: true, stopped: false, tick: 0 });
    expect((await command('step')).status).toBe(200);
    await expect.poll(async () => (await getState(base!, token!)).tick, { timeout: 10_000 }).toBe(1);
    expect(await getState(base!, token!)).toMatchObject({ paused: true, stopped: false });
    expect((await command('resume')).status).toBe(200);
    await expect.poll(() => run.err(), { timeout: 10_000 }).toContain('the scene has ended; still serving');
    run.interrupt();
    expect(await run.exit).toBe(0);
    expect(run.out()).toMatch(/^talk ended/);
  }, 20_000);

  it('keeps a reading page through a crowd: the server writes between ticks, and the queue fits the cast', async () => {
    const run = startTroupe(
      ['run', 'crowd', '--npcs', '1000', '--ticks', '3', '--seed', '1', '--inspect', '--paused', '--quiet'],
      /paused before its first tick/,
      new URL('../../scenes/', import.meta.url),
    );
    const [, base, , token] = URL_LINE.exec((await run.printed).input)!;
    const reading = readEvents(base!, token!, 'scene.stopped');
    // The page is connected and reading before the flood starts.
    await expect.poll(async () => (await getState(base!, token!)).paused, { timeout: 10_000 }).toBe(true);
    const resume = await fetch(new URL('/control', base), {
      method: 'POST',
      headers: { 'X-Troupe-Token': token!, Origin: new URL(base!).origin, 'Content-Type': 'application/json' },
      body: '{"type":"resume"}',
    });
    expect(resume.status).toBe(200);
    const events = await reading;
    // About 14 events per NPC per tick, each tick published before the server can write: more than
    // the default queue of 10,000 would hold, and still nothing is dropped.
    expect(events.length).toBeGreaterThan(3 * 10_000);
    expect(events.at(-1)!.type).toBe('scene.stopped');
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    expect(run.err()).not.toContain('dropped an event stream');
    run.interrupt();
    expect(await run.exit).toBe(0);
  }, 60_000);

  it('refuses --paused without --inspect', async () => {
    expect(await troupe(['run', 'talk', '--paused'])).toMatchObject({ code: 2, err: "troupe run talk: --paused holds the scene for the inspector's page: give --inspect too\n" });
  });

  it('refuses a bad --port, a --port without --inspect, and a port in use', async () => {
    expect(await troupe(['run', 'talk', '--inspect', '--port', '70000'])).toMatchObject({ code: 2, err: 'troupe run talk: --port must be an integer from 0 to 65535 (0: any free port); got "70000"\n' });
    expect(await troupe(['run', 'talk', '--port', '4000'])).toMatchObject({ code: 2, err: "troupe run talk: --port is the inspector's port: give --inspect too\n" });
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const port = (taken.address() as { port: number }).port;
    const result = await troupe(['run', 'talk', '--inspect', '--port', String(port), '--quiet']);
    taken.close();
    expect(result.code).toBe(1);
    expect(result.err).toContain(`troupe: inspector cannot listen on 127.0.0.1:${port}: port ${port} is in use; choose another, or 0 for any free port`);
  });
});

describe('troupe inspect <log>', () => {
  it('serves a session log read-only until Ctrl-C', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'troupe-cli-inspect-')), 'talk.jsonl');
    expect((await troupe(['run', 'talk', '--seed', '7', '--quiet', '--log', log])).code).toBe(0);
    const served = startTroupe(['inspect', log], /still serving/);
    const [, base, , token] = URL_LINE.exec((await served.printed).input)!;
    expect(await getState(base!, token!)).toMatchObject({ mode: 'log', scene: 'talk', canControl: false, world: { ale: 8 } });
    const events = await readEvents(base!, token!, 'scene.stopped');
    expect(events.slice(0, 2).map((event) => event.type)).toEqual(['log.opened', 'agent.spawned']);
    served.interrupt();
    expect(await served.exit).toBe(0);
    expect(served.err()).toMatch(/inspector: \d+ events of .*talk\.jsonl; still serving/);
  });

  it('says a log its writer left open (killed mid-run) is interrupted, on stderr and in /state', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'troupe-cli-inspect-')), 'talk.jsonl');
    expect((await troupe(['run', 'talk', '--seed', '7', '--quiet', '--log', log])).code).toBe(0);
    // What a SIGKILL during tick 1 leaves: the lines before, and half of the next (tick 2's).
    const lines = readFileSync(log, 'utf8').split('\n');
    const cut = lines.findIndex((line) => line.includes('"type":"scene.tick"') && line.includes('"tick":2'));
    writeFileSync(log, `${lines.slice(0, cut).join('\n')}\n${lines[cut]!.slice(0, 40)}`);
    const served = startTroupe(['inspect', log], /still serving/);
    const [, base, , token] = URL_LINE.exec((await served.printed).input)!;
    expect(await getState(base!, token!)).toMatchObject({ mode: 'log', scene: 'talk', started: true, stopped: false, ended: 'interrupted', tick: 1, events: cut - 1 });
    served.interrupt();
    expect(await served.exit).toBe(0);
    expect(served.err()).toContain(`line ${cut + 1} skipped: not JSON`);
    expect(served.err()).toContain(`troupe inspect: ${log} ends at tick 1 without its run closing it: its writer stopped (killed or crashed, or it is still writing); troupe resume ${log} continues it\n`);
  });

  it('says clearly what is wrong with its arguments or the file', async () => {
    expect(await troupe(['inspect'])).toMatchObject({ code: 2, err: 'troupe inspect: needs a session log, e.g. troupe inspect run.jsonl\n' });
    expect(await troupe(['inspect', 'a.jsonl', '--port', 'x'])).toMatchObject({ code: 2, err: 'troupe inspect: --port must be an integer from 0 to 65535 (0: any free port); got "x"\n' });
    const missing = await troupe(['inspect', '/nonexistent/run.jsonl']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^troupe inspect: cannot read session log \/nonexistent\/run\.jsonl: .*ENOENT/);
    expect((await troupe(['inspect', '--help'])).out).toContain('Usage: troupe inspect <session.jsonl> [--port N] [--host ADDR]');
  });
});

describe('the troupe process with --inspect', () => {
  it('prints the URL, answers /state and /events, and quits on SIGINT', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'run', 'talk', '--seed', '3', '--inspect', '--quiet'], {
      cwd: root,
      env: { ...process.env, TROUPE_SCENES_DIR: fileURLToPath(SCENES), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const serving = new Promise<string>((resolve) => {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        err += chunk;
        if (err.includes('still serving')) resolve(err);
      });
    });
    try {
      const [, base, , token] = URL_LINE.exec(await serving)!;
      expect(await getState(base!, token!)).toMatchObject({ mode: 'live', scene: 'talk' });
      const events = await readEvents(base!, token!, 'scene.stopped');
      expect(events.map((event) => event.type)).toContain('world.changed');
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000); // a fresh process compiles the sources with tsx first
});
