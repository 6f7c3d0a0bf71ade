import { metrics, trace, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { ConfigError } from '../errors.js';

/** How `instrumentBus` makes its spans and metrics. Every field is optional. */
export type InstrumentBusOptions = {
  /** Where spans go (default: the global one of `@opentelemetry/api`, a no-op until an SDK registers). */
  tracerProvider?: TracerProvider;
  /** Where metrics go (default: the global one of `@opentelemetry/api`, a no-op until an SDK registers). */
  meterProvider?: MeterProvider;
  /**
   * Record what was said: model replies, tool arguments and results, speech and observations
   * (default false, as the GenAI conventions ask: content is often sensitive and large). Each text
   * is cut at `maxContentChars` and passed through the session log's secret redaction.
   */
  captureContent?: boolean;
  /** Characters kept of each captured text or JSON value (default 4096, at least 64). */
  maxContentChars?: number;
  /** Extra secrets to hide from captured content: literal strings or patterns. */
  redact?: readonly (string | RegExp)[];
  /**
   * Where span times come from: `'event'` (default) uses each envelope's `at`, the bus clock's
   * time, so a stepped scene's spans carry simulated time; `'wall'` uses this process's
   * high-resolution clock when the event arrives.
   */
  timestamps?: 'event' | 'wall';
};

/** The options with their defaults filled in. */
export type ResolvedInstrumentOptions = {
  tracerProvider: TracerProvider;
  meterProvider: MeterProvider;
  captureContent: boolean;
  maxContentChars: number;
  redact: readonly (string | RegExp)[];
  timestamps: 'event' | 'wall';
};

/** Characters kept of each captured text or JSON value when `maxContentChars` is not given. */
export const DEFAULT_MAX_CONTENT_CHARS = 4_096;
const MIN_CONTENT_CHARS = 64;

/** Checks `instrumentBus`'s options eagerly: each problem is a ConfigError naming the option. */
export function resolveInstrumentOptions(options: InstrumentBusOptions | undefined): ResolvedInstrumentOptions {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new ConfigError('instrumentBus(bus, options): options must be an object when given');
  }
  const given = options ?? {};
  const tracerProvider = given.tracerProvider ?? trace.getTracerProvider();
  if (typeof tracerProvider?.getTracer !== 'function') {
    throw new ConfigError('instrumentBus: tracerProvider must be an OpenTelemetry TracerProvider (with getTracer), e.g. a BasicTracerProvider');
  }
  const meterProvider = given.meterProvider ?? metrics.getMeterProvider();
  if (typeof meterProvider?.getMeter !== 'function') {
    throw new ConfigError('instrumentBus: meterProvider must be an OpenTelemetry MeterProvider (with getMeter), e.g. a MeterProvider from @opentelemetry/sdk-metrics');
  }
  const captureContent = given.captureContent ?? false;
  if (typeof captureContent !== 'boolean') throw new ConfigError(`instrumentBus: captureContent must be true or false, got ${String(captureContent)}`);
  const maxContentChars = given.maxContentChars ?? DEFAULT_MAX_CONTENT_CHARS;
  if (!Number.isSafeInteger(maxContentChars) || maxContentChars < MIN_CONTENT_CHARS) {
    throw new ConfigError(`instrumentBus: maxContentChars must be an integer of at least ${MIN_CONTENT_CHARS}, got ${String(maxContentChars)}`);
  }
  const redact = given.redact ?? [];
  if (!Array.isArray(redact) || !redact.every((secret) => typeof secret === 'string' || secret instanceof RegExp)) {
    throw new ConfigError('instrumentBus: redact must be a list of strings and regular expressions');
  }
  const timestamps = given.timestamps ?? 'event';
  if (timestamps !== 'event' && timestamps !== 'wall') {
    throw new ConfigError(`instrumentBus: timestamps must be 'event' (the envelopes' at) or 'wall' (this process's clock), got ${JSON.stringify(timestamps)}`);
  }
  return { tracerProvider, meterProvider, captureContent, maxContentChars, redact, timestamps };
}
