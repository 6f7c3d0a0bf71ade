import { BUILT_IN_TOOLS, createScene, defineTool, type Brain } from '../../src/index.js';

/**
 * One process, one cast: `participants` agents whose brains each wait `latencyMs` (a model's
 * answer, standing in) and then make one call, all due every tick and all in flight at once. Run
 * with `fork(this file, [participants, rounds, latencyMs])`; it sends its parent a `RoundReport`.
 */
export type RoundReport = { participants: number; buildSeconds: number; rounds: number[]; peakRssBytes: number; heapBytes: number; turns: number };

const act = defineTool({
  name: 'act',
  description: 'Act once.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const,
  execute: ({ n }) => n + 1,
});

async function round(participants: number, rounds: number, latencyMs: number): Promise<RoundReport> {
  const answer = '<ACTION><act><n>1</n></act></ACTION>';
  const brain: Brain = () => new Promise((resolve) => setTimeout(resolve, latencyMs, answer));
  const scene = createScene({
    name: 'round',
    seed: 1,
    schedule: 'every-tick',
    clock: { mode: 'stepped' },
    withoutTools: BUILT_IN_TOOLS,
    concurrency: { turns: participants, tools: participants },
  });
  let peak = 0;
  const sample = (): void => void (peak = Math.max(peak, process.memoryUsage.rss()));
  const sampler = setInterval(sample, 20);
  const built = performance.now();
  for (let index = 0; index < participants; index++) scene.add({ name: `p${index}`, brain, tools: [act], rounds: 1 });
  const buildSeconds = (performance.now() - built) / 1000;
  await scene.start();
  const times: number[] = [];
  let turns = 0;
  for (let index = 0; index < rounds; index++) {
    const started = performance.now();
    const report = await scene.step();
    times.push((performance.now() - started) / 1000);
    turns += report.outcomes.turn_ended ?? 0;
  }
  sample();
  clearInterval(sampler);
  const heapBytes = process.memoryUsage().heapUsed;
  await scene.stop();
  return { participants, buildSeconds, rounds: times, peakRssBytes: peak, heapBytes, turns };
}

if (process.send !== undefined && process.argv.length >= 5) {
  const [participants, rounds, latencyMs] = process.argv.slice(2, 5).map(Number) as [number, number, number];
  void round(participants, rounds, latencyMs).then((report) => process.send!(report, () => process.exit(0)));
}
