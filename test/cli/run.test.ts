import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { readLog } from '../../src/record/read-log.js';
import { capture, jsonLines, SCENES, troupe } from './helpers.js';

const dirs: string[] = [];
function tempLog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
  dirs.push(dir);
  return join(dir, 'run.jsonl');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('troupe run', () => {
  it('prints a readable transcript: ticks, speech, corrections, tool calls, world changes, summary', async () => {
    const { code, out, err } = await troupe(['run', 'talk', '--seed', '7']);
    expect(err).toBe('');
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('▶ scene talk started · seed 7 · 3 agents: innkeeper, guest-1, guest-2');
    expect(lines).toContain('── tick 1 ──');
    expect(lines).toContain('guest-1 → innkeeper: "Ale, please! I rolled a 6."');
    expect(out).toMatch(/^ {2}⚠ correction innkeeper pour: .*Unknown parameter "guest"/m);
    expect(lines).toContain('  ⚙ innkeeper pour(for: "guest-2") → {"poured":"guest-2","left":8}');
    expect(lines).toContain('  ◆ world ale = 9');
    expect(lines.at(-2)).toBe('■ scene talk stopped at tick 2: quiet');
    expect(lines.at(-1)).toBe('talk ended (quiet): 2 ticks, 3 turns, 0 failures; seed 7');
    expect(out).not.toContain('\x1b[');
  });

  it('runs the package’s quickstart scene: a correction, then the fixed call', async () => {
    const { code, out, err } = await troupe(['run', 'quickstart', '--seed', '1'], { scenesDir: undefined });
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/⚠ correction quartermaster check_stock: .*"name"/);
    expect(out).toContain('  ⚙ quartermaster give_item(item: "rope", to: "Mara", count: 1) → {"given":1,"to":"Mara","left":2}');
    // A scripted provider counts about four characters a token, marked estimated.
    expect(out).toMatch(/quickstart ended \(quiet\): 1 tick, 1 turn, 0 failures, [\d,]+ tokens \(estimated\); seed 1\n$/);
  });

  it('--json prints every bus event as one JSON line and nothing else; the summary goes to stderr', async () => {
    const { code, out, err } = await troupe(['run', 'talk', '--seed', '7', '--json']);
    expect(code).toBe(0);
    const events = jsonLines(out);
    for (const event of events) expect(event).toMatchObject({ v: 1, id: expect.any(String), type: expect.any(String), at: expect.any(Number) });
    // Agents spawn while the scene is built, before it starts: the CLI's bus sees them too.
    expect(events[0]!.type).toBe('agent.spawned');
    expect(events.find((event) => event.type.startsWith('scene.'))!.type).toBe('scene.started');
    expect(events.at(-1)!.type).toBe('scene.stopped');
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    expect(err).toBe('talk ended (quiet): 2 ticks, 3 turns, 0 failures; seed 7\n');
  });

  it('--quiet prints only the summary line', async () => {
    const { code, out } = await troupe(['run', 'talk', '--quiet', '--seed', '1']);
    expect(code).toBe(0);
    expect(out).toBe('talk ended (quiet): 2 ticks, 3 turns, 0 failures; seed 1\n');
  });

  it('--ticks bounds the run, and a random seed is printed so the run can be repeated', async () => {
    const { code, out } = await troupe(['run', 'talk', '--ticks', '1', '--quiet']);
    expect(code).toBe(0);
    const seed = /; seed (-?\d+)$/.exec(out.trim())?.[1];
    expect(out).toMatch(/^talk ended \(ticks\): 1 tick, 2 turns, 0 failures; seed -?\d+\n$/);
    const again = await troupe(['run', 'talk', '--ticks', '1', '--quiet', '--seed', seed!]);
    expect(again.out).toBe(out);
  });

  it('the same --seed gives the same JSON output; another seed changes what the agents roll', async () => {
    const first = await troupe(['run', 'talk', '--seed', '7', '--json']);
    const second = await troupe(['run', 'talk', '--seed', '7', '--json']);
    expect(second.out).toBe(first.out);
    const other = await troupe(['run', 'talk', '--seed', '8', '--json']);
    expect(other.out).not.toBe(first.out);
    expect(other.out).toContain('I rolled a 3.');
  });

  it('passes scene options, parsed and with defaults, to the scene', async () => {
    const { code, out } = await troupe(['run', 'talk', '--seed', '7', '--guests', '3', '--mood', 'rowdy', '--shout']);
    expect(code).toBe(0);
    expect(out).toContain('guest-3 → innkeeper: "ALE, PLEASE!');
    expect(out).toContain('innkeeper: "Coming right up (rowdy)."');
  });

  it('--log writes a session log that readLog reads back, event for event', async () => {
    const path = tempLog();
    const { code, out, err } = await troupe(['run', 'talk', '--seed', '7', '--json', '--log', path]);
    expect(code).toBe(0);
    expect(err).not.toContain('troupe:');
    const { events, quarantined } = readLog(path);
    expect(quarantined).toEqual([]);
    // The log's own first line (the run's id and recipe) is the log's, not the bus's.
    expect(events[0]).toMatchObject({ type: 'log.opened', data: { kind: 'run' } });
    expect(events.slice(1)).toEqual(jsonLines(out).map(({ v: _version, ...event }) => event));
  });

  it('--log records every event even when the scene leaves context.log unused', async () => {
    const path = tempLog();
    const { code, out } = await troupe(['run', 'clock', '--ticks', '3', '--log', path]);
    expect(code).toBe(0);
    expect(out).toContain(`log: ${path}\n`);
    const types = readLog(path).events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(['log.opened', 'agent.spawned']);
    expect(types.filter((type) => type === 'scene.tick')).toHaveLength(3);
    expect(types.at(-1)).toBe('scene.stopped');
  });

  it('prints the scene’s own summary, with the seed when it was random', async () => {
    expect((await troupe(['run', 'clock', '--ticks', '2', '--quiet', '--seed', '3'])).out).toBe('the clock stopped at 2 (1 agent)\n');
    expect((await troupe(['run', 'clock', '--ticks', '2', '--quiet'])).out).toMatch(/^the clock stopped at 2 \(1 agent\) \(seed -?\d+\)\n$/);
  });

  it('shows a scene that does not forward observe, with a warning through the logger', async () => {
    const { code, out, err } = await troupe(['run', 'loner', '--seed', '1']);
    expect(code).toBe(0);
    expect(out).toContain('hermit: "Leave me be."');
    expect(JSON.parse(err.trim())).toMatchObject({ level: 40, msg: expect.stringContaining('did not pass context.observe') });
  });

  it('logs through pino at TROUPE_LOG_LEVEL, as JSON lines on stderr when it is not a terminal', async () => {
    const quiet = await troupe(['run', 'talk', '--quiet', '--seed', '1']);
    expect(quiet.err).toBe('');
    const chatty = await troupe(['run', 'talk', '--quiet', '--seed', '1'], { env: { TROUPE_LOG_LEVEL: 'info' } });
    expect(JSON.parse(chatty.err.split('\n')[0]!)).toMatchObject({ level: 30, name: 'troupe', msg: 'talk built', guests: 2 });
  });

  it('logs pretty lines on a terminal', async () => {
    const { err } = await troupe(['run', 'talk', '--quiet', '--seed', '1'], { env: { TROUPE_LOG_LEVEL: 'info', NO_COLOR: '1' }, errTty: true });
    expect(err).toMatch(/INFO.*talk built/);
    expect(err).not.toContain('{"level"');
  });

  it('colours the transcript on a terminal, unless NO_COLOR is set', async () => {
    const coloured = await troupe(['run', 'talk', '--seed', '1'], { outTty: true });
    expect(coloured.out).toContain('\x1b[');
    const plain = await troupe(['run', 'talk', '--seed', '1'], { outTty: true, env: { NO_COLOR: '1' } });
    expect(plain.out).not.toContain('\x1b[');
  });

  it('draws a progress bar on a terminal stderr for a long run, and erases it at the end', async () => {
    let now = 0;
    const { code, err } = await troupe(['run', 'clock', '--seed', '1', '--ticks', '120'], { errTty: true, now: () => (now += 40) });
    expect(code).toBe(0);
    expect(err).toMatch(/\] +\d+\/120 ticks · \d+ turns · [\d.]+ turns\/s · [\d.]+ s/);
    expect(err.endsWith('\r\x1b[2K')).toBe(true);
    // Neither with --quiet nor with --json.
    expect((await troupe(['run', 'clock', '--seed', '1', '--ticks', '120', '--quiet'], { errTty: true })).err).toBe('');
  });

  it('stops the scene on the first Ctrl-C (exit 130) and exits at once on the second', async () => {
    let interrupt: () => void = () => undefined;
    const exits: number[] = [];
    const out = capture({
      onWrite: (chunk) => {
        if (chunk.startsWith('── tick 3 ──')) {
          interrupt();
          interrupt();
        }
      },
    });
    const err = capture();
    const code = await main(['run', 'clock', '--seed', '1'], out.stream, err.stream, {
      scenesDir: SCENES,
      env: {},
      interrupts: (listener) => {
        interrupt = listener;
        return () => (interrupt = () => undefined);
      },
      exit: (exitCode) => void exits.push(exitCode),
    });
    expect(code).toBe(130);
    expect(exits).toEqual([130]);
    expect(err.text()).toContain('stopping the scene');
    expect(out.text()).toMatch(/■ scene clock stopped at tick 3: stopped \(interrupted\)\n/);
  });
});
