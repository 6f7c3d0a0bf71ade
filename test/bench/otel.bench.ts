import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { buildCrowd } from '../../scenes/crowd/index.js';
import { createBus } from '../../src/index.js';
import { instrumentBus } from '../../src/otel/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import type { Row } from './measure.js';

/** How the crowd's bus is instrumented in one run. */
type Instrumented = 'off' | 'no-op' | 'sdk';

/** One run: wall seconds and CPU seconds (user + system, this process) over the timed ticks. */
type Timed = { steps: number; seconds: number; cpuSeconds: number; spans: number; points: number };

/** Collects only when asked: the bench reads the metrics once, after the timed ticks. */
class BenchReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * What `instrumentBus` costs the crowd scene (built as `benchCrowd` builds it: N NPCs, each one
 * model call and one tool call per tick on a zero-latency brain): agent-steps/s over the ticks
 * after the first with (a) no instrumentation, (b) `instrumentBus(bus)` and no OpenTelemetry SDK
 * registered (the API's no-op), (c) `instrumentBus` with a real SDK: a BasicTracerProvider with a
 * SimpleSpanProcessor into an InMemorySpanExporter, and a MeterProvider with a reader. In (c) the
 * exporter is emptied after each tick (untimed), and the run checks that every step made its
 * three spans (invoke_agent, chat, execute_tool) and that the duration histogram saw every call.
 * The three run in turn `rounds` times; each row is its fastest run.
 */
export async function benchOtel(npcs: number, ticks: number, rounds = 3): Promise<Row[]> {
  if (ticks < 3) throw new Error('benchOtel needs at least 3 ticks (the first is not timed)');
  // An untimed crowd first, so that the first timed run does not pay for compiling the code.
  await instrumentedCrowd('sdk', npcs, 3);
  // The three in turn, `rounds` times, keeping each one's fastest run: on a shared machine a
  // burst of load then slows one round of all three rather than one of them.
  const best: Partial<Record<Instrumented, Timed>> = {};
  for (let round = 0; round < rounds; round++) {
    for (const how of ['off', 'no-op', 'sdk'] as const) {
      const run = await instrumentedCrowd(how, npcs, ticks);
      if (best[how] === undefined || run.seconds < best[how].seconds) best[how] = run;
    }
  }
  const { off, 'no-op': noop, sdk } = best as Record<Instrumented, Timed>;

  const label = `${npcs.toLocaleString('en-US')} NPCs × ${ticks - 1} ticks`;
  const rate = (run: Timed): number => run.steps / run.seconds;
  // CPU time too: on a machine shared with other work it moves less than wall time does.
  const steps = (run: Timed): string =>
    `${Math.round(rate(run)).toLocaleString('en-US')} agent-steps/s, ${Math.round(run.steps / run.cpuSeconds).toLocaleString('en-US')} per CPU-second`;
  const cpuRate = (run: Timed): number => run.steps / run.cpuSeconds;
  const versus = (run: Timed): string => `${(rate(run) / rate(off)).toFixed(2)}× (a), ${(cpuRate(run) / cpuRate(off)).toFixed(2)}× per CPU-second`;
  const row = (name: string, run: Timed, note: string): Row => ({
    name: `crowd, ${label}: ${name}`,
    iterations: run.steps,
    usPerOp: (run.seconds * 1e6) / run.steps,
    ratio: rate(off) / rate(run),
    note,
  });
  return [
    row('no instrumentation (a)', off, steps(off)),
    row('instrumentBus, no SDK (no-op API)', noop, `${steps(noop)} (${versus(noop)})`),
    row(
      'instrumentBus + SDK, in-memory exporter',
      sdk,
      `${steps(sdk)} (${versus(sdk)}); ${sdk.spans.toLocaleString('en-US')} spans exported, ${sdk.points.toLocaleString('en-US')} model calls in the duration histogram`,
    ),
  ];
}

async function instrumentedCrowd(how: Instrumented, npcs: number, ticks: number): Promise<Timed> {
  (globalThis as { gc?: () => void }).gc?.();
  const bus = createBus({ ids: sequentialIds('crowd') });
  const exporter = new InMemorySpanExporter();
  const reader = new BenchReader();
  const close =
    how === 'off'
      ? undefined
      : how === 'no-op'
        ? instrumentBus(bus)
        : instrumentBus(bus, {
            tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
            meterProvider: new MeterProvider({ readers: [reader] }),
          });
  const scene = buildCrowd({ npcs, seed: 1, bus });
  await scene.start();
  const warm = await scene.step();
  if (warm.turns !== npcs) throw new Error(`tick 1 ran ${warm.turns} turns for ${npcs} NPCs`);
  exporter.reset();
  let spans = 0;
  let seconds = 0;
  let cpuSeconds = 0;
  for (let tick = 2; tick <= ticks; tick++) {
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    const report = await scene.step();
    seconds += Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    cpuSeconds += (used.user + used.system) / 1e6;
    if (report.turns !== npcs || report.outcomes.turn_ended !== npcs) throw new Error(`tick ${report.tick}: ${JSON.stringify(report.outcomes)}`);
    const exported = exporter.getFinishedSpans();
    // Each step's run, model call and tool call, and the tick before this one.
    if (how === 'sdk' && exported.length !== 3 * npcs + 1) throw new Error(`tick ${report.tick} exported ${exported.length} spans, not ${3 * npcs + 1}`);
    spans += exported.length;
    exporter.reset();
  }
  await scene.stop();
  close?.();
  let points = 0;
  if (how === 'sdk') {
    const { resourceMetrics } = await reader.collect();
    const duration = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === 'gen_ai.client.operation.duration');
    points = duration?.dataPoints.reduce((sum, point) => sum + (point.value as { count: number }).count, 0) ?? 0;
    if (points !== npcs * ticks) throw new Error(`the duration histogram counted ${points} model calls, not ${npcs * ticks}`);
  }
  return { steps: npcs * (ticks - 1), seconds, cpuSeconds, spans, points };
}
