/**
 * One row of the benchmark table. `cpuUsPerOp`: the process's CPU time per operation over the
 * same loop (garbage collector threads included), which other work on a shared machine inflates
 * far less than the wall clock.
 */
export type Row = { name: string; iterations: number; usPerOp: number; cpuUsPerOp?: number; ratio?: number; note?: string };

/** Runs `operation` after a warm-up and returns the mean µs per operation. */
export async function measure(name: string, iterations: number, operation: () => Promise<void> | void): Promise<Row> {
  const warmup = Math.max(50, Math.floor(iterations / 10));
  for (let index = 0; index < warmup; index++) await operation();
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let index = 0; index < iterations; index++) await operation();
  const elapsed = Number(process.hrtime.bigint() - start) / 1_000;
  const used = process.cpuUsage(cpu);
  return { name, iterations, usPerOp: elapsed / iterations, cpuUsPerOp: (used.user + used.system) / iterations };
}

/** Heap in use after a full collection (needs `--expose-gc`). */
export function settledHeap(): number {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run the benchmark with node --expose-gc (npm run bench does)');
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}
