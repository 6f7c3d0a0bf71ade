import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrowd, scene as crowdDefinition } from '../../scenes/crowd/index.js';
import type { SceneRecipe } from '../../src/bus/event-data.js';
import { createBus, type Bus } from '../../src/index.js';
import { latestCheckpoint, latestCheckpointNumber } from '../../src/record/checkpoints.js';
import { readLogStart, readLogTail } from '../../src/record/log-reader.js';
import { openResume } from '../../src/record/resume-scene.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { sequentialIds } from '../../src/testing/index.js';
import type { Row } from './measure.js';

/** One timed crowd run: agent-steps over the ticks after the first, wall and CPU seconds, and the log's size. */
type Timed = { steps: number; seconds: number; cpuSeconds: number; bytes: number };

/**
 * What `--log` costs the crowd (built as `benchCrowd` builds it, and logged as `troupe run --log`
 * logs it: every event, `tool.started` forced to disk before each call, default checkpoints):
 * agent-steps/s over the ticks after the first, without a log, with one, and with one that never
 * forces its writes to disk (what the log costs the processor alone), in turn `rounds` times in
 * this one process. Each row is its fastest run; the note gives the range, and the ratio
 * of the logged run's steps/s to the unlogged's.
 */
export async function benchLoggedCrowd(npcs: number, ticks: number, rounds = 3): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-log-'));
  try {
    // Untimed first, so that neither timed run pays for compiling the code.
    await loggedCrowd(npcs, 3, join(dir, 'warm.jsonl'), 'on');
    const runs: Record<How, Timed[]> = { off: [], on: [], never: [], bare: [] };
    for (let round = 0; round < rounds; round++) {
      // Alternating the order, so that a burst of load on a shared machine hits them all.
      const order: How[] = round % 2 === 0 ? ['off', 'on', 'never', 'bare'] : ['bare', 'never', 'on', 'off'];
      for (const how of order) runs[how].push(await loggedCrowd(npcs, ticks, how === 'off' ? undefined : join(dir, `run-${round}-${how}.jsonl`), how));
    }
    const rate = (run: Timed): number => run.steps / run.seconds;
    const best = (list: Timed[]): Timed => list.reduce((a, b) => (rate(b) > rate(a) ? b : a));
    const range = (list: Timed[]): string => {
      const rates = list.map(rate);
      return `${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))}`;
    };
    const off = best(runs.off);
    const on = best(runs.on);
    const never = best(runs.never);
    const bare = best(runs.bare);
    const ratios = (list: Timed[]): string => {
      const each = list.map((run, index) => rate(run) / rate(runs.off[index]!));
      return `${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)}×`;
    };
    const perCpu = (run: Timed): string => (run.steps / run.cpuSeconds / (off.steps / off.cpuSeconds)).toFixed(2);
    const label = `${npcs.toLocaleString('en-US')} NPCs × ${ticks - 1} ticks`;
    return [
      {
        name: `crowd, ${label}: no log`,
        iterations: off.steps,
        usPerOp: (off.seconds * 1e6) / off.steps,
        note: `${fmt(rate(off))} agent-steps/s (range ${range(runs.off)} over ${rounds} runs)`,
      },
      {
        name: `crowd, ${label}: --log (fsync tool.started, default checkpoints)`,
        iterations: on.steps,
        usPerOp: (on.seconds * 1e6) / on.steps,
        ratio: rate(off) / rate(on),
        note:
          `${fmt(rate(on))} agent-steps/s (range ${range(runs.on)}); ${(rate(on) / rate(off)).toFixed(2)}× the steps/s without a log ` +
          `(per round ${ratios(runs.on)}; per CPU-second ${perCpu(on)}×); ` +
          `log ${(on.bytes / 1024 / 1024).toFixed(1)} MB, ${Math.round(on.bytes / (npcs * ticks))} bytes/step`,
      },
      {
        // What the log costs the processor, without waiting for the disk.
        name: `crowd, ${label}: --log, fsync never`,
        iterations: never.steps,
        usPerOp: (never.seconds * 1e6) / never.steps,
        ratio: rate(off) / rate(never),
        note: `${fmt(rate(never))} agent-steps/s (range ${range(runs.never)}); ${(rate(never) / rate(off)).toFixed(2)}× without a log (per round ${ratios(runs.never)}; per CPU-second ${perCpu(never)}×)`,
      },
      {
        // The bare baseline: the least any JSON Lines log of every event could cost.
        name: `crowd, ${label}: bare JSONL (JSON.stringify, a write per 64 KiB)`,
        iterations: bare.steps,
        usPerOp: (bare.seconds * 1e6) / bare.steps,
        ratio: rate(off) / rate(bare),
        note: `${fmt(rate(bare))} agent-steps/s (range ${range(runs.bare)}); ${(rate(bare) / rate(off)).toFixed(2)}× without a log (per round ${ratios(runs.bare)}; per CPU-second ${perCpu(bare)}×); no checksum, redaction, write-ahead or fsync`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (value: number): string => Math.round(value).toLocaleString('en-US');

/**
 * No log, a log as `troupe run --log` writes it, one that never waits for the disk, and a bare
 * JSON Lines writer (`bareWriter`).
 */
type How = 'off' | 'on' | 'never' | 'bare';

async function loggedCrowd(npcs: number, ticks: number, logPath: string | undefined, how: How): Promise<Timed> {
  (globalThis as { gc?: () => void }).gc?.();
  const log = logPath === undefined || how === 'bare' ? undefined : createSessionLog(logPath, { recipe: crowdRecipe(npcs, ticks), ...(how === 'never' && { fsync: 'never' as const }) });
  const bus = createBus({ ids: sequentialIds('crowd') });
  const bare = how === 'bare' && logPath !== undefined ? bareWriter(bus, logPath) : undefined;
  const scene = buildCrowd({ npcs, seed: 1, bus, ...(log !== undefined && { log }) });
  await scene.start();
  const warm = await scene.step();
  if (warm.turns !== npcs) throw new Error(`tick 1 ran ${warm.turns} turns for ${npcs} NPCs`);
  let seconds = 0;
  let cpuSeconds = 0;
  for (let tick = 2; tick <= ticks; tick++) {
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    const report = await scene.step();
    bare?.flush();
    seconds += Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    cpuSeconds += (used.user + used.system) / 1e6;
    if (report.turns !== npcs || report.outcomes.turn_ended !== npcs) throw new Error(`tick ${report.tick}: ${JSON.stringify(report.outcomes)}`);
  }
  await scene.stop();
  await log?.close();
  bare?.close();
  if (log?.failure !== undefined) throw log.failure;
  const bytes = logPath === undefined ? 0 : statSync(logPath).size;
  return { steps: npcs * (ticks - 1), seconds, cpuSeconds, bytes };
}

/**
 * The bare baseline's writer, as a plain fast logger writes: each event `JSON.stringify`'d into a
 * pending string, written whenever it passes 64 KiB and after each tick.
 */
function bareWriter(bus: Bus, path: string): { flush(): void; close(): void } {
  const fd = openSync(path, 'a');
  let pending = '';
  const flush = (): void => {
    if (pending.length > 0) writeSync(fd, pending);
    pending = '';
  };
  bus.on('*', (event) => {
    pending += `${JSON.stringify(event)}\n`;
    if (pending.length > 65_536) flush();
  });
  return { flush, close: () => (flush(), closeSync(fd)) };
}

function crowdRecipe(npcs: number, ticks: number): SceneRecipe {
  return { scene: 'crowd', source: { kind: 'shipped' }, options: { npcs }, seed: 1, ticks, definitionHash: 'bench' };
}

/**
 * How long a resume takes to reach live from logs of `sizes` events: a crowd of `npcs` runs with
 * a log checkpointed every 10,000 events until the log holds that many
 * events; then the log is cut halfway between its last two checkpoints, and the newest removed,
 * as a SIGKILL before that checkpoint leaves them. Every log thus ends in a tail of about 5,000 events after its
 * newest checkpoint, whatever its length. `openResume` rebuilds the scene from the checkpoint and
 * replays the tail, timed until `onLive`; reading the log's start, checkpoint and tail is also
 * timed apart. Logs are made once in a temporary folder and removed after.
 */
export async function benchResume(sizes: readonly number[], npcs: number, rounds = 3): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-resume-'));
  const rows: Row[] = [];
  try {
    const logs = [];
    for (const events of sizes) logs.push(await crashedLog(join(dir, `crowd-${events}.jsonl`), npcs, events));
    // Untimed first, to compile the code.
    await resumeOnce(logs[0]!.path);
    const times = logs.map(() => ({ live: [] as number[], read: [] as number[], tail: 0 }));
    for (let round = 0; round < rounds; round++) {
      for (const [index, log] of logs.entries()) {
        const timed = await resumeOnce(log.path);
        times[index]!.live.push(timed.liveMs);
        times[index]!.read.push(timed.readMs);
        times[index]!.tail = timed.tail;
      }
    }
    for (const [index, log] of logs.entries()) {
      const { live, read, tail } = times[index]!;
      rows.push({
        name: `resume to live, log of ${log.events.toLocaleString('en-US')} events (crowd of ${npcs.toLocaleString('en-US')})`,
        iterations: rounds,
        usPerOp: Math.min(...live) * 1_000,
        note:
          `${Math.min(...live).toFixed(0)}–${Math.max(...live).toFixed(0)} ms to live; reading start + checkpoint + tail ${Math.min(...read).toFixed(1)}–${Math.max(...read).toFixed(1)} ms; ` +
          `${tail.toLocaleString('en-US')} events replayed; log ${(log.bytes / 1024 / 1024).toFixed(1)} MB`,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * Runs a logged crowd until its log holds at least `events` events, then leaves the log as a
 * SIGKILL halfway between its last two checkpoints would: cut at a line halfway, without the newest
 * checkpoint.
 */
async function crashedLog(path: string, npcs: number, events: number): Promise<{ path: string; events: number; bytes: number }> {
  const log = createSessionLog(path, { recipe: crowdRecipe(npcs, 1_000_000), fsync: 'never', checkpoints: { everyEvents: 10_000 } });
  let written = 0;
  const scene = buildCrowd({ npcs, seed: 1, log });
  scene.bus.on('*', () => void written++);
  await scene.start();
  while (written < events || latestCheckpointNumber(path) < 2) await scene.step();
  log.closeSync();
  const newest = latestCheckpoint(path).checkpoint;
  if (newest === undefined) throw new Error(`the crowd log ${path} has no checkpoint before its last tick`);
  rmSync(newest.file);
  const before = latestCheckpoint(path).checkpoint!;
  const text = readFileSync(path);
  const middle = before.position.offset + Math.floor((newest.position.offset - before.position.offset) / 2);
  const cut = text.indexOf(0x0a, middle) + 1;
  truncateSync(path, cut);
  let lines = 0;
  for (let index = text.indexOf(0x0a); index !== -1 && index < cut; index = text.indexOf(0x0a, index + 1)) lines++;
  // The scene is dropped, not stopped: its log ends mid-run.
  return { path, events: lines - 1, bytes: cut };
}

/** One resume of the log at `path`, timed; the log is cut back to what it was after, so every round resumes the same log. */
async function resumeOnce(path: string): Promise<{ liveMs: number; readMs: number; tail: number }> {
  const size = statSync(path).size;
  try {
    return await timedResume(path);
  } finally {
    truncateSync(path, size);
  }
}

async function timedResume(path: string): Promise<{ liveMs: number; readMs: number; tail: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const readStart = performance.now();
  const { header, start } = readLogStart(path);
  const { checkpoint } = latestCheckpoint(path);
  readLogTail(path, header, checkpoint?.position ?? start);
  const readMs = performance.now() - readStart;
  const started = performance.now();
  let liveMs = Number.NaN;
  const opened = await openResume(path, {
    definition: crowdDefinition,
    log: { fsync: 'never', checkpoints: false },
    onLive: (scene) => {
      liveMs = performance.now() - started;
      void scene.stop();
    },
  });
  await opened.run();
  if (Number.isNaN(liveMs)) throw new Error(`the resume of ${path} never went live`);
  return { liveMs, readMs, tail: opened.replayed };
}
