import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Ctrl-C and SIGTERM as a user sends them: to the real `troupe` process, in the middle of a busy
 * scene. The crowd below would run for hours; every bound is minutes wide of what it takes.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const SIGNALS = fileURLToPath(new URL('./fixtures/signals/', import.meta.url));
const EXITS = fileURLToPath(new URL('./fixtures/exits/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'troupe-signals-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Exit = { code: number | null; signal: NodeJS.Signals | null; out: string; err: string; afterSignalMs: number };

/**
 * Runs `troupe` as a child process; once stdout or stderr has shown `marker`, sends `signals`
 * one after the other (each after the previous one's `then` marker, when given).
 */
function troupeUntil(args: string[], marker: string, signals: { signal: NodeJS.Signals; then?: string }[], env: Record<string, string> = {}): Promise<Exit> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let sentAt = 0;
  let waitingFor: string | undefined = marker;
  const pending = [...signals];
  // Each chunk is searched with the end of the one before (a marker may straddle them); only
  // that end is kept: a crowd writes hundreds of megabytes, some chunks megabytes long.
  let tail = '';
  const watch = (chunk: string): void => {
    const text = tail + chunk;
    tail = text.slice(-4_096);
    if (waitingFor === undefined || !text.includes(waitingFor)) return;
    const next = pending.shift();
    if (next === undefined) return void (waitingFor = undefined);
    tail = '';
    waitingFor = next.then;
    sentAt = performance.now();
    child.kill(next.signal);
    // A signal that waits for nothing sends the next one straight after it.
    while (waitingFor === undefined && pending.length > 0) {
      const another = pending.shift()!;
      waitingFor = another.then;
      child.kill(another.signal);
    }
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    // Keep the last lines only: enough for the stop and the summary.
    out = (out + chunk).slice(-200_000);
    watch(chunk);
  });
  child.stderr.on('data', (chunk: string) => {
    err += chunk;
    watch(chunk);
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, out, err, afterSignalMs: performance.now() - sentAt }));
  });
}

/** The JSON lines at the end of a `--json` output (the first may be cut). */
function lastEvents(out: string): { type: string; data: Record<string, unknown> }[] {
  return out
    .split('\n')
    .slice(1)
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
}

// 100,000 NPCs make one tick last seconds: the signal lands inside it, not between two.
const CROWD = ['run', 'crowd', '--npcs', '100000', '--ticks', '100000', '--seed', '1'];
const IN_THE_FIRST_TICK = '"type":"scene.tick"';

describe('troupe run under signals', () => {
  it('Ctrl-C in the middle of a long tick stops the scene: scene.stopped, exit 130, within seconds', async () => {
    const run = await troupeUntil([...CROWD, '--json'], IN_THE_FIRST_TICK, [{ signal: 'SIGINT' }]);
    expect(run.err).toContain('troupe: stopping the scene (Ctrl-C again to quit at once)');
    expect(run.code).toBe(130);
    const events = lastEvents(run.out);
    expect(events.at(-1)).toMatchObject({ type: 'scene.stopped', data: { tick: 1, reason: 'stopped', detail: 'interrupted' } });
    // Stopped inside tick 1: not every NPC had its turn.
    const finished = events.filter((event) => event.type === 'agent.finished').length;
    expect(finished).toBeLessThan(100_000);
    expect(run.err).toMatch(/crowd of 100,000 stopped at tick 1 \(stopped\): [\d,]+ turns/);
    expect(run.afterSignalMs).toBeLessThan(20_000);
  }, 120_000);

  it('SIGTERM stops it the same way and exits 143; the --log records scene.stopped', async () => {
    const log = join(work, 'term.jsonl');
    const run = await troupeUntil([...CROWD, '--json', '--log', log], IN_THE_FIRST_TICK, [{ signal: 'SIGTERM' }]);
    expect(run.err).toContain('troupe: SIGTERM: stopping the scene (again to quit at once)');
    expect(run.code).toBe(143);
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: 'scene.stopped', data: { tick: 1, reason: 'stopped', detail: 'terminated' } });
    expect(run.afterSignalMs).toBeLessThan(20_000);
  }, 120_000);

  it('Ctrl-C with --inspect stops the scene and the server: exit 130, no "still serving"', async () => {
    const run = await troupeUntil(['run', 'crowd', '--npcs', '20000', '--ticks', '100000', '--inspect', '--quiet'], 'inspector: http', [{ signal: 'SIGINT' }]);
    expect(run.code).toBe(130);
    expect(run.err).toContain('troupe: stopping the scene');
    expect(run.err).not.toContain('still serving');
    expect(run.out).toMatch(/crowd of 20,000 stopped at tick \d+ \(stopped\)/);
  }, 120_000);

  it('a second Ctrl-C exits at once, while the first is still stopping the scene', async () => {
    const run = await troupeUntil(['run', 'slow-stop', '--json'], '"type":"scene.tick"', [{ signal: 'SIGINT', then: 'stopping the scene' }, { signal: 'SIGINT' }], {
      TROUPE_SCENES_DIR: SIGNALS,
    });
    expect(run.code).toBe(130);
    // Gone before the minute the stop would take: no scene.stopped, no summary.
    expect(run.out).not.toContain('scene.stopped');
    expect(run.err).not.toContain('ended');
    expect(run.afterSignalMs).toBeLessThan(20_000);
  }, 60_000);
});

describe('troupe run when a scene leaves work behind', () => {
  it('exits 1 with a clear message when the scene waits on a promise nothing can settle', async () => {
    const run = await troupeUntil(['run', 'hung', '--seed', '1'], '\0', [], { TROUPE_SCENES_DIR: EXITS });
    expect(run.code).toBe(1);
    expect(run.err).toContain('troupe: the scene stopped making progress: it waits on work that can never finish');
  }, 60_000);

  it('exits once the run is over, even with a timer a tool left running', async () => {
    const run = await troupeUntil(['run', 'leftover', '--seed', '1'], '\0', [], { TROUPE_SCENES_DIR: EXITS });
    expect(run.code).toBe(0);
    expect(run.out).toContain('light_candle() → "lit"');
    expect(run.out).toMatch(/leftover ended \(\w+\): 1 tick/);
  }, 60_000);
});
