import { crowdRow } from './crowd.bench.js';

/**
 * One crowd row in a process of its own (see `crowdRowInChild`): run with `fork(this file, [npcs,
 * minTicks])` and the heap flags to measure; it sends its parent the row.
 */
if (process.send !== undefined && process.argv.length >= 4) {
  const [npcs, minTicks] = process.argv.slice(2, 4).map(Number) as [number, number];
  void crowdRow(npcs, minTicks, 0, undefined).then((row) => process.send!(row, () => process.exit(0)));
}
