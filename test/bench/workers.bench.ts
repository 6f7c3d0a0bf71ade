import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from '../../src/redis/load-ioredis.js';
import type { Row } from './measure.js';

/** The CLI from the sources (a `dist/` left from an older build must not be what is timed). */
const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

/**
 * The crowd across worker processes through Redis against the same crowd in one process, each
 * run as `troupe run crowd` (workers spawned with `--workers N`). Each configuration runs twice,
 * for `ticks` and for 1 tick; the difference of the two wall times is the time of the extra ticks,
 * so that starting processes and building the cast are left out. Round trips per tick (what the
 * coordinator and the workers say they waited on) and Redis commands per tick (from `INFO
 * commandstats`, those the scripts run included), each the extra ticks' share, show what grows
 * with workers and what with agents; events per second are the stream's entries of those ticks.
 */
export async function benchWorkers(url: string, sizes: readonly (readonly [npcs: number, ticks: number])[], workers: readonly number[]): Promise<Row[]> {
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  const rows: Row[] = [];
  try {
    for (const [npcs, ticks] of sizes) {
      const inProcess = extraTicks(await timed(url, admin, npcs, 0, 1), await timed(url, admin, npcs, 0, ticks), npcs, ticks);
      rows.push({ name: `crowd of ${npcs.toLocaleString('en-US')}, one process (no Redis)`, iterations: npcs * (ticks - 1), usPerOp: 1e6 / inProcess.rate, note: `${fmt(inProcess.rate)} agent-steps/s over ${ticks - 1} ticks` });
      for (const count of workers) {
        const run = extraTicks(await timed(url, admin, npcs, count, 1), await timed(url, admin, npcs, count, ticks), npcs, ticks);
        rows.push({
          name: `crowd of ${npcs.toLocaleString('en-US')} on ${count} worker${count === 1 ? '' : 's'} through Redis`,
          iterations: npcs * (ticks - 1),
          usPerOp: 1e6 / run.rate,
          ratio: inProcess.rate / run.rate,
          note:
            `${fmt(run.rate)} agent-steps/s (${(run.rate / inProcess.rate).toFixed(3)}× one process), ${fmt(run.eventsPerSecond)} events/s into the stream; ` +
            `per tick ${fmt(run.roundTripsPerTick)} round trips (${fmt(run.scriptsPerTick)} of them scripts) and ` +
            `${fmt(run.commandsPerTick)} Redis commands, those the scripts run counted (${(run.commandsPerTick / npcs).toFixed(2)} per agent)` +
            (run.takenOver > 0 ? `; ${run.takenOver} partition ticks taken over from a worker thought dead` : ''),
        });
      }
    }
  } finally {
    admin.disconnect();
  }
  return rows;
}

type Timed = { seconds: number; commands: number; scripts: number; roundTrips: number; events: number; takenOver: number };

type Extra = { rate: number; eventsPerSecond: number; commandsPerTick: number; scriptsPerTick: number; roundTripsPerTick: number; takenOver: number };

function extraTicks(one: Timed, many: Timed, npcs: number, ticks: number): Extra {
  const seconds = Math.max(1e-3, many.seconds - one.seconds);
  const perTick = (key: 'commands' | 'scripts' | 'roundTrips'): number => Math.max(0, many[key] - one[key]) / (ticks - 1);
  return {
    rate: (npcs * (ticks - 1)) / seconds,
    eventsPerSecond: Math.max(0, many.events - one.events) / seconds,
    commandsPerTick: perTick('commands'),
    scriptsPerTick: perTick('scripts'),
    roundTripsPerTick: perTick('roundTrips'),
    takenOver: one.takenOver + many.takenOver,
  };
}

let runs = 0;

/** One `troupe run crowd`, timed from outside, with the Redis commands it caused. */
async function timed(url: string, admin: Redis, npcs: number, workers: number, ticks: number): Promise<Timed> {
  const name = `bench-workers-${process.pid}-${++runs}`;
  const args = ['--import', 'tsx', MAIN, 'run', 'crowd', '--npcs', String(npcs), '--ticks', String(ticks), '--seed', '1', '--quiet'];
  if (workers > 0) args.push('--redis', url, '--redis-name', name, '--workers', String(workers));
  const before = await commands(admin);
  const started = process.hrtime.bigint();
  const ran = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (ran.status !== 0) throw new Error(`troupe run crowd (${npcs} NPCs, ${workers} workers) failed: ${ran.stderr.slice(-500)}`);
  const after = await commands(admin);
  const events = workers > 0 ? await admin.xlen(`troupe:${name}:events`) : 0;
  if (workers > 0) await removeKeys(admin, `troupe:${name}:*`);
  // The coordinator and each worker say how many round trips they waited on when they end.
  const roundTrips = [...ran.stderr.matchAll(/(\d+) round trips to Redis/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  // Partition ticks a worker took over from another it thought dead: work done twice, which a row must show.
  const takenOver = [...ran.stderr.matchAll(/, (\d+) taken over/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  return { seconds, commands: after.all - before.all, scripts: after.scripts - before.scripts, roundTrips, events, takenOver };
}

/** Commands Redis has run (a script's own commands included), and script calls among them. */
async function commands(admin: Redis): Promise<{ all: number; scripts: number }> {
  const info = await admin.info('commandstats');
  let all = 0;
  let scripts = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const calls = Number(match[2]);
    all += calls;
    if (match[1] === 'evalsha' || match[1] === 'eval') scripts += calls;
  }
  return { all, scripts };
}

async function removeKeys(admin: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await admin.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const fmt = (value: number): string => Math.round(value).toLocaleString('en-US');
