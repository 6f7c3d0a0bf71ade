import { cpus } from 'node:os';
import { benchAgentRun } from './agent-run.bench.js';
import { benchCreateAgent } from './create-agent.bench.js';
import { benchCrowd, crowdRowInChild } from './crowd.bench.js';
import { benchImportTime } from './import-time.bench.js';
import type { Row } from './measure.js';
import { benchMemory } from './memory.bench.js';
import { benchOtel } from './otel.bench.js';
import { benchParkedAgents } from './parked-agents.bench.js';
import { benchRound } from './round.bench.js';
import { benchRoundsToLand } from './rounds-to-land.bench.js';
import { benchLoggedCrowd, benchResume } from './session-log.bench.js';
import { benchStalledClient } from './stalled-client.bench.js';
import { benchStatechart } from './statechart.bench.js';
import { benchStreamParse } from './stream-parse.bench.js';

/** One benchmark of the table: its name (for `--only`) and how to run it, quick or full. */
type Bench = {
  name: string;
  /** Run only when `--only` names it exactly (too long or too big for every run). */
  optIn?: boolean;
  run: (quick: boolean) => Promise<Row[]> | Row[];
};

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

// In this order: timing first, on a young heap; the heap measure settles the heap before it starts.
const BENCHES: readonly Bench[] = [
  { name: 'import', run: (quick) => benchImportTime(quick ? 5 : 11) },
  { name: 'agent-run', run: (quick) => benchAgentRun(quick ? 2_000 : 20_000) },
  // A new agent per run, against the AI SDK's generateText doing the same exchange.
  { name: 'create-agent', run: (quick) => benchCreateAgent(quick ? 2_000 : 20_000) },
  { name: 'statechart', run: (quick) => benchStatechart(quick ? 2_000 : 20_000) },
  { name: 'stream', run: (quick) => benchStreamParse(quick ? [1_000, 100_000] : [1_000, 100_000, 1_000_000]) },
  { name: 'parked', run: (quick) => benchParkedAgents(quick ? 1_000 : 10_000) },
  { name: 'crowd', run: (quick) => benchCrowd(quick ? [1_000] : [1_000, 10_000, 100_000], quick ? 3 : 4, quick ? 2_000 : 50_000) },
  // The crowd at a million NPCs: a minute and several GiB, so only when asked for (`--only=crowd-million`).
  // Each in a fresh process: with Node's default young generation, and with the one docs/scripting-npcs.md advises for such casts.
  {
    name: 'crowd-million',
    optIn: true,
    run: async () => [await crowdRowInChild(1_000_000, 3, []), await crowdRowInChild(1_000_000, 3, ['--max-semi-space-size=64'])],
  },
  // Clients that never read are dropped: the crowd's steps/s with and without them.
  { name: 'stalled', run: (quick) => benchStalledClient(quick ? 1_000 : 10_000, quick ? 11 : 7) },
  // What instrumentBus costs the crowd: not attached, attached to the no-op API, attached to an SDK.
  { name: 'otel', run: (quick) => benchOtel(quick ? 1_000 : 10_000, quick ? 11 : 7) },
  // What `--log` costs the crowd, and how long a resume takes to reach live as the log grows.
  { name: 'log', run: (quick) => benchLoggedCrowd(quick ? 1_000 : 10_000, quick ? 4 : 7, quick ? 2 : 3) },
  { name: 'resume', run: (quick) => benchResume(quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000], 250, quick ? 2 : 3) },
  // A crowd's events through a Redis stream (REDIS_URL, else 127.0.0.1:6379) against the in-process bus.
  { name: 'redis', run: (quick) => benchRedisOrSay(quick ? 100 : 1_000, quick ? 10 : 20) },
  // The crowd across worker processes through Redis, against one process.
  { name: 'workers', run: (quick) => benchWorkersOrSay(quick ? [[1_000, 3]] : [[1_000, 4], [10_000, 4], [100_000, 3]], [1, 2]) },
  { name: 'memory', run: () => benchMemory(50) },
  // A round of participants waiting a second each (a model's latency), all in flight at once.
  { name: 'round', run: (quick) => benchRound(quick ? [16_000] : [64_000]) },
  // The same at a million: minutes and several GiB, so only when asked for (`--only=round-million`).
  { name: 'round-million', optIn: true, run: () => benchRound([1_000_000], 1) },
  // How many rounds a correction takes when a rejection names each wrong argument, not only the first.
  { name: 'rounds-to-land', run: () => benchRoundsToLand() },
];

/**
 * `npm run bench`: prints a table comparing troupe with a bare hand-written baseline.
 * `--quick` runs smaller sizes; `--only=<words>` the benchmarks whose name contains one of the
 * comma-separated words (`--only=log,resume`); an opt-in benchmark runs only when named whole
 * (`--only=round-million`).
 */
async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
  const rows: Row[] = [];
  for (const bench of BENCHES) {
    const wanted = only === undefined ? bench.optIn !== true : only.some((word) => (bench.optIn === true ? bench.name === word : bench.name.includes(word)));
    if (wanted) rows.push(...(await bench.run(quick)));
  }
  printRows(rows);
}

/**
 * The Redis rows, or one row that says why there are none (no server answered). Imported only
 * when run: ioredis defines a subclass of `String` (its RESP3 `VerbatimString`), and once a
 * process has loaded one V8 runs string code slower (a batch parse of 1 KB took 9.3 µs instead of
 * 3.2). troupe loads ioredis without it (`src/redis/load-ioredis.ts`); importing the bench late
 * keeps every other row safe from any other way in.
 */
async function benchWorkersOrSay(sizes: readonly (readonly [npcs: number, ticks: number])[], workers: readonly number[]): Promise<Row[]> {
  try {
    const { benchWorkers } = await import('./workers.bench.js');
    return await benchWorkers(REDIS_URL, sizes, workers);
  } catch (error) {
    console.error(`bench: no workers rows: ${error instanceof Error ? error.message : String(error)}`);
    return [{ name: 'crowd on workers (not run)', iterations: 0, usPerOp: Number.NaN, note: `no Redis at ${REDIS_URL}, or a run failed: ${error instanceof Error ? error.message : String(error)}` }];
  }
}

async function benchRedisOrSay(npcs: number, ticks: number): Promise<Row[]> {
  try {
    const { benchRedis } = await import('./redis.bench.js');
    return await benchRedis(REDIS_URL, npcs, ticks);
  } catch (error) {
    console.error(`bench: no Redis rows: ${error instanceof Error ? error.message : String(error)}`);
    return [{ name: 'redis stream (not run)', iterations: 0, usPerOp: Number.NaN, note: `no Redis at ${REDIS_URL}` }];
  }
}

function printRows(rows: readonly Row[]): void {
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  console.log(`troupe bench — node ${process.version}, ${cpus().length} cores (${cpu})\n`);
  console.log('| benchmark | iterations | µs/op | vs bare | note |');
  console.log('| --- | ---: | ---: | ---: | --- |');
  for (const row of rows) {
    const us = Number.isNaN(row.usPerOp) ? '' : row.usPerOp.toFixed(1);
    const ratio = row.ratio === undefined ? '' : `${row.ratio.toFixed(2)}×`;
    console.log(`| ${row.name} | ${row.iterations.toLocaleString('en-US')} | ${us} | ${ratio} | ${row.note ?? ''} |`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
