import { cpus } from 'node:os';
import { benchAgentRun } from './agent-run.bench.js';
import { benchCrowd } from './crowd.bench.js';
import { benchImportTime } from './import-time.bench.js';
import type { Row } from './measure.js';
import { benchMemory } from './memory.bench.js';
import { benchOtel } from './otel.bench.js';
import { benchParkedAgents } from './parked-agents.bench.js';
import { benchLoggedCrowd, benchResume } from './session-log.bench.js';
import { benchStalledClient } from './stalled-client.bench.js';
import { benchStatechart } from './statechart.bench.js';
import { benchStreamParse } from './stream-parse.bench.js';

/** `npm run bench`: prints a table comparing troupe with a bare hand-written baseline. */
async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  // `--only=<words>`: the benchmarks whose name contains one of the comma-separated words (`--only=log`).
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
  const wanted = (name: string): boolean => only === undefined || only.some((word) => name.includes(word));
  const rows: Row[] = [];
  if (only !== undefined) {
    if (wanted('log')) rows.push(...(await benchLoggedCrowd(quick ? 1_000 : 10_000, quick ? 4 : 7, quick ? 2 : 3)));
    if (wanted('resume')) rows.push(...(await benchResume(quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000], 250, quick ? 2 : 3)));
    printRows(rows);
    return;
  }
  // Timing first, on a young heap; the heap measure settles the heap before it starts.
  rows.push(...benchImportTime(quick ? 5 : 11));
  rows.push(...(await benchAgentRun(quick ? 2_000 : 20_000)));
  rows.push(...(await benchStatechart(quick ? 2_000 : 20_000)));
  rows.push(...(await benchStreamParse(quick ? [1_000, 100_000] : [1_000, 100_000, 1_000_000])));
  rows.push(...(await benchParkedAgents(quick ? 1_000 : 10_000)));
  rows.push(...(await benchCrowd(quick ? [1_000] : [1_000, 10_000, 100_000], quick ? 3 : 4, quick ? 2_000 : 50_000)));
  // RELIABILITY §5b: clients that never read are dropped; the crowd's steps/s with and without them.
  rows.push(...(await benchStalledClient(quick ? 1_000 : 10_000, quick ? 11 : 7)));
  // What instrumentBus costs the crowd: not attached, attached to the no-op API, attached to an SDK.
  rows.push(...(await benchOtel(quick ? 1_000 : 10_000, quick ? 11 : 7)));
  // What `--log` costs the crowd, and how long a resume takes to reach live as the log grows.
  rows.push(...(await benchLoggedCrowd(quick ? 1_000 : 10_000, quick ? 4 : 7, quick ? 2 : 3)));
  rows.push(...(await benchResume(quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000], 250, quick ? 2 : 3)));
  rows.push(...(await benchMemory(50)));
  printRows(rows);
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
