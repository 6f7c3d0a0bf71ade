import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readLog } from '../../src/record/index.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { troupe } from './helpers.js';

/**
 * `troupe resume` and `troupe replay` as a user meets them: a ledger scene (its tools write their
 * effects to a file) killed with SIGKILL part way, then continued, checked, refused.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const LEDGER = fileURLToPath(new URL('../durable/fixtures/scenes/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'troupe-cli-resume-'));
// Copies of the ledger sit beside the original (a scenes folder each), so its imports of src/ resolve alike.
const copies: string[] = [];
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A scenes folder of its own holding a copy of the ledger, so a test may change its code. */
function ownScenes(): string {
  const dir = mkdtempSync(join(LEDGER, '..', '.scratch-'));
  copies.push(dir);
  cpSync(join(LEDGER, 'ledger'), join(dir, 'ledger'), { recursive: true });
  return dir;
}

type Ran = { code: number | null; signal: NodeJS.Signals | null; out: string; err: string };

/** The real `troupe` as a child process; `onLine` sees each line of stdout and may signal the child. */
function child(args: string[], env: Record<string, string>, onLine?: (line: number, kill: (signal: NodeJS.Signals) => void) => void): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: root, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let lines = 0;
    proc.stdout.setEncoding('utf8');
    proc.stderr.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      out = (out + chunk).slice(-100_000);
      for (const char of chunk) if (char === '\n') onLine?.(++lines, (signal) => proc.kill(signal));
    });
    proc.stderr.on('data', (chunk: string) => void (err += chunk));
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

/** A ledger run with a log, killed by itself with SIGKILL once `killAfter` events were published. */
async function crashed(scenes: string, name: string, killAfter: number, extra: string[] = []): Promise<string> {
  const log = join(work, `${name}.jsonl`);
  const ran = await child(['run', 'ledger', '--seed', '3', '--log', log, '--effects', join(work, `${name}.txt`), '--checkpoints', '3', '--quiet', ...extra], {
    TROUPE_SCENES_DIR: scenes,
    LEDGER_KILL_AFTER: String(killAfter),
  });
  expect(ran.signal).toBe('SIGKILL');
  return log;
}

const inProcess = (args: string[], scenes: string) => troupe(args, { scenesDir: pathToFileURL(`${scenes}/`) });

describe('troupe resume', () => {
  it('continues a killed run to its end, appending to its log, from its newest checkpoint', async () => {
    const scenes = ownScenes();
    const log = await crashed(scenes, 'killed', 900);
    const { code, err, out } = await inProcess(['resume', log], scenes);
    expect(code).toBe(0);
    expect(err).toMatch(/^troupe: resuming .*killed\.jsonl from tick \d+ \(checkpoint \d+\): \d+ logged events to replay$/m);
    expect(out).toMatch(/ledger ended \(ticks\): 24 ticks, 96 turns, 0 failures; seed 3/);
    const events = readLog(log).events;
    expect(events.filter((event) => event.type === 'log.opened').map((event) => (event.data as { kind: string }).kind)).toEqual(['run', 'resume']);
    expect(events.at(-1)).toMatchObject({ type: 'scene.stopped', data: { tick: 24, reason: 'ticks' } });
    expect(await inProcess(['replay', log], scenes)).toMatchObject({ code: 0, out: expect.stringMatching(/^replayed \d+ events of .*killed\.jsonl: identical\n$/) });
  }, 60_000);

  it('ends the calls a crash cut as interrupted at once when a change one of them made is the last logged event', async () => {
    const scenes = ownScenes();
    const full = join(work, 'whole.jsonl');
    expect((await inProcess(['run', 'ledger', '--seed', '3', '--log', full, '--effects', join(work, 'whole.txt'), '--quiet'], scenes)).code).toBe(0);
    // Cut after the first change a post made: the posts the other clerks started are in flight.
    const lines = readFileSync(full, 'utf8').split('\n');
    const at = lines.findIndex((line) => line.includes('"type":"world.changed"'));
    const log = join(work, 'cut-at-change.jsonl');
    writeFileSync(log, `${lines.slice(0, at + 1).join('\n')}\n`);
    const inFlight = readLog(log)
      .events.filter((event) => event.type === 'tool.started')
      .map((event) => (event.data as { callId: string }).callId);
    expect(inFlight.length).toBeGreaterThan(1);

    expect((await inProcess(['resume', log], scenes)).code).toBe(0);
    const events = readLog(log).events;
    // Not left waiting for an end the log never holds until the tool's timeout fails them.
    expect(events.filter((event) => event.type === 'tool.failed' && (event.data as { error: { kind: string } }).error.kind === 'timeout')).toEqual([]);
    const interrupted = events.filter((event) => event.type === 'tool.interrupted').map((event) => (event.data as { callId: string }).callId);
    expect(interrupted.sort()).toEqual(inFlight.sort());
    expect(await inProcess(['replay', log], scenes)).toMatchObject({ code: 0, out: expect.stringMatching(/: identical\n$/) });
  }, 60_000);

  it('refuses --log onto a log that holds a run, naming troupe resume; and a finished run has nothing to resume', async () => {
    const scenes = ownScenes();
    const log = join(work, 'finished.jsonl');
    expect((await inProcess(['run', 'ledger', '--seed', '3', '--log', log, '--effects', join(work, 'finished.txt'), '--quiet'], scenes)).code).toBe(0);
    const before = readFileSync(log, 'utf8');
    expect(await inProcess(['run', 'ledger', '--log', log, '--quiet'], scenes)).toMatchObject({
      code: 1,
      err: expect.stringContaining(`already holds a run: continue it with \`troupe resume ${log}\``),
    });
    expect(await inProcess(['resume', log], scenes)).toMatchObject({ code: 1, err: expect.stringMatching(/cannot resume .*finished\.jsonl: the run finished \(reason ticks, line \d+\): there is nothing to resume/) });
    expect(readFileSync(log, 'utf8')).toBe(before);
  }, 60_000);

  it('refuses a log whose scene code changed, and one edited by hand, and writes nothing', async () => {
    const scenes = ownScenes();
    const log = await crashed(scenes, 'changed', 700);
    appendFileSync(join(scenes, 'ledger/index.ts'), '\n// changed after the run\n');
    const before = readFileSync(log, 'utf8');
    expect(await inProcess(['resume', log], scenes)).toMatchObject({ code: 1, err: expect.stringMatching(/cannot resume .*changed\.jsonl: the code of scene "ledger" changed since the log was written \(definition hash [0-9a-f]{12}…, now [0-9a-f]{12}…\)/) });
    // A replay is how to find out whether changed code still makes the same events: it says so, and goes on.
    const replayed = await inProcess(['replay', log], scenes);
    expect(replayed.err).toContain('troupe: note: the code of scene "ledger" changed since');
    expect(replayed.code).toBe(0);

    const other = ownScenes();
    const edited = await crashed(other, 'edited', 700);
    const lines = readFileSync(edited, 'utf8').split('\n');
    // After the newest checkpoint: the lines a resume reads (and checks) are those it replays.
    const at = lines.findLastIndex((line) => line.includes('"type":"tool.completed"'));
    // Every completion holds a duration (the last may be a stamp's or a peek's, with no amount posted).
    const untouched = lines[at]!;
    lines[at] = untouched.replace('"durationMs":', '"durationMs":1');
    expect(lines[at]).not.toBe(untouched);
    writeFileSync(edited, lines.join('\n'));
    expect(await inProcess(['resume', edited], other)).toMatchObject({ code: 1, err: expect.stringContaining(`line ${at + 1} does not match its checksum: the log was changed by hand`) });
    expect(readFileSync(log, 'utf8')).toBe(before);
  }, 60_000);

  it('falls back to the checkpoint before when the newest was cut off mid-write', async () => {
    const scenes = ownScenes();
    const log = await crashed(scenes, 'cut', 1200);
    const dir = `${log}.checkpoints`;
    const newest = readdirSync(dir).filter((file) => file.endsWith('.json')).sort().at(-1)!;
    truncateSync(join(dir, newest), 100);
    const { code, err } = await inProcess(['resume', log], scenes);
    expect(code).toBe(0);
    expect(err).toMatch(new RegExp(`troupe: checkpoint .*${newest.replace('.', '\\.')} skipped: `));
  }, 60_000);

  it('refuses a second resume while the log is being written (its lock), and leaves the log as it was', async () => {
    const scenes = ownScenes();
    const log = await crashed(scenes, 'locked', 700);
    const holder = createSessionLog(log, { mode: 'append' });
    try {
      expect(await inProcess(['resume', log], scenes)).toMatchObject({ code: 1, err: expect.stringMatching(/session log .*locked\.jsonl is already open by this process \(pid \d+\)/) });
    } finally {
      await holder.close();
    }
    expect((await inProcess(['resume', log], scenes)).code).toBe(0);
  }, 60_000);

  it('stops on SIGTERM like Ctrl-C: scene.stopped in the log, the lock released; the next resume goes on', async () => {
    const scenes = ownScenes();
    const log = await crashed(scenes, 'term', 900, ['--ticks', '400']);
    const ran = await child(['resume', log, '--json'], { TROUPE_SCENES_DIR: scenes }, (line, kill) => {
      if (line === 2_500) kill('SIGTERM');
    });
    expect(ran.code).toBe(143);
    const events = readLog(log).events;
    expect(events.at(-1)).toMatchObject({ type: 'scene.stopped', data: { reason: 'stopped', detail: 'terminated' } });
    expect(existsSync(`${log}.lock`)).toBe(false);
    const again = await child(['resume', log, '--quiet'], { TROUPE_SCENES_DIR: scenes });
    expect(again, again.err).toMatchObject({ code: 0 });
    expect(readLog(log).events.at(-1)).toMatchObject({ type: 'scene.stopped', data: { tick: 400, reason: 'ticks' } });
  }, 120_000);
});

describe('troupe replay', () => {
  it('exits 1 at the first event a changed tool makes differently, and says where', async () => {
    const scenes = ownScenes();
    const log = join(work, 'pinned.jsonl');
    expect((await inProcess(['run', 'ledger', '--seed', '3', '--log', log, '--effects', join(work, 'pinned.txt'), '--quiet'], scenes)).code).toBe(0);
    const index = join(scenes, 'ledger/index.ts');
    writeFileSync(index, readFileSync(index, 'utf8').replace("return 'stamped';", "return 'STAMPED';"));
    // A new process, as a user runs it: this one holds the scene's module as it was first imported.
    const { code, err } = await child(['replay', log], { TROUPE_SCENES_DIR: scenes });
    expect(code).toBe(1);
    expect(err).toMatch(/troupe: .*pinned\.jsonl: the run left its log at event \d+ \(line \d+\): the log has tool\.completed of clerk-\d, the run made tool\.completed of clerk-\d \(they differ at data\.output\)/);
  }, 60_000);

  it('refuses what is not a regular file at once', async () => {
    expect(await troupe(['replay', '/dev/zero'])).toMatchObject({ code: 1, err: expect.stringContaining('is a device; a session log is a regular file') });
    expect(await troupe(['resume', '/dev/zero'])).toMatchObject({ code: 1, err: expect.stringContaining('is a device; a session log is a regular file') });
    expect(await troupe(['inspect', '/dev/zero'])).toMatchObject({ code: 1, err: expect.stringContaining('is a device; a session log is a regular file') });
  });
});
