import type { Attributes, Histogram, MeterProvider } from '@opentelemetry/api';
import type { Usage } from '../bus/event-data.js';
import { GEN_AI, METRICS } from './semconv.js';

/** The GenAI client metrics, recorded once per model call. */
export type GenAiMetrics = {
  /**
   * Records one model call: its duration, and its token usage when the provider reported it.
   * `attributes` are the call's own (operation, provider, request model); `errorType` marks a
   * failed call.
   */
  recordCall(attributes: Attributes, seconds: number, errorType: string | undefined, usage: Usage | undefined): void;
};

/** Makes the two histograms on a meter of `meterProvider`, with the conventions' units and buckets. */
export function genAiMetrics(meterProvider: MeterProvider, scope: string): GenAiMetrics {
  const meter = meterProvider.getMeter(scope);
  const tokens: Histogram = meter.createHistogram(METRICS.tokenUsage.name, {
    unit: METRICS.tokenUsage.unit,
    description: METRICS.tokenUsage.description,
    advice: { explicitBucketBoundaries: [...METRICS.tokenUsage.buckets] },
  });
  const duration: Histogram = meter.createHistogram(METRICS.duration.name, {
    unit: METRICS.duration.unit,
    description: METRICS.duration.description,
    advice: { explicitBucketBoundaries: [...METRICS.duration.buckets] },
  });
  return {
    recordCall(attributes, seconds, errorType, usage) {
      duration.record(seconds, errorType === undefined ? attributes : { ...attributes, [GEN_AI.errorType]: errorType });
      if (usage === undefined) return;
      tokens.record(usage.inputTokens, { ...attributes, [GEN_AI.tokenType]: 'input' });
      tokens.record(usage.outputTokens, { ...attributes, [GEN_AI.tokenType]: 'output' });
    },
  };
}
