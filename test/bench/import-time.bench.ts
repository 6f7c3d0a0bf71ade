import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Row } from './measure.js';

/**
 * How long `import('troupe')` takes in a fresh process: the median of `runs` processes, each timing
 * its own dynamic import of the root entry (the build under .bench/, the same code as dist/). A
 * bare `import('node:events')` is the baseline: what any import costs.
 */
export function benchImportTime(runs: number): Row[] {
  const root = fileURLToPath(new URL('../../src/index.js', import.meta.url));
  const time = (specifier: string): number => {
    const script = `const start = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - start);`;
    return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  };
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const troupe: number[] = [];
  const bare: number[] = [];
  for (let run = 0; run < runs; run++) {
    troupe.push(time(root));
    bare.push(time('node:events'));
  }
  const ms = median(troupe);
  return [
    { name: "import('troupe'), a fresh process", iterations: runs, usPerOp: ms * 1_000, ratio: ms / median(bare), note: `median ${ms.toFixed(1)} ms; no model client loaded; target ≤ 100 ms` },
    { name: "bare import('node:events')", iterations: runs, usPerOp: median(bare) * 1_000 },
  ];
}
