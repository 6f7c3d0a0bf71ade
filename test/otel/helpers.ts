import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DataPointType, MeterProvider, MetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import type { Attributes } from '@opentelemetry/api';

/** A metric reader that collects only when asked: the test's in-memory reader. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** One histogram point as a test reads it. */
export type Point = { attributes: Attributes; count: number; sum: number; boundaries: number[] };

/** A real OpenTelemetry SDK in memory: spans kept by an in-memory exporter, metrics by a reader. */
export function memorySdk() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  return {
    exporter,
    tracerProvider,
    meterProvider,
    spans,
    /** The finished spans named `name`. */
    named: (name: string): ReadableSpan[] => spans().filter((span) => span.name === name),
    /** The one finished span named `name` (fails when there are none or several). */
    one(name: string): ReadableSpan {
      const found = spans().filter((span) => span.name === name);
      if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length}: ${spans().map((span) => span.name).join(', ')}`);
      return found[0]!;
    },
    /** The finished span `span` is a child of, or undefined for a root. */
    parentOf(span: ReadableSpan): ReadableSpan | undefined {
      const id = span.parentSpanContext?.spanId;
      return id === undefined ? undefined : spans().find((candidate) => candidate.spanContext().spanId === id);
    },
    /** The histogram points of metric `name`, collected now. */
    async points(name: string): Promise<Point[]> {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new Error(`metric collection failed: ${String(errors[0])}`);
      const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((candidate) => candidate.descriptor.name === name);
      if (metric === undefined) return [];
      if (metric.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${name} is not a histogram`);
      return (metric as HistogramMetricData).dataPoints.map((point) => ({
        attributes: point.attributes,
        count: point.value.count,
        sum: point.value.sum ?? Number.NaN,
        boundaries: point.value.buckets.boundaries,
      }));
    },
    /** The unit a metric was created with. */
    async unitOf(name: string): Promise<string | undefined> {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((candidate) => candidate.descriptor.name === name)?.descriptor.unit;
    },
  };
}

/** Epoch milliseconds of an OpenTelemetry `[seconds, nanoseconds]` time. */
export function msOf(time: readonly [number, number]): number {
  return time[0] * 1_000 + time[1] / 1_000_000;
}
