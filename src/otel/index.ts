/**
 * OpenTelemetry spans and metrics made from a bus's events (GenAI semantic conventions):
 * `import { instrumentBus } from 'troupe/otel'`. Needs the `@opentelemetry/api` package installed
 * beside troupe, and an OpenTelemetry SDK registered (or passed) for anything to be recorded.
 */
export { instrumentBus } from './instrument-bus.js';
export type { CloseInstrumentation } from './instrument-bus.js';
export type { InstrumentBusOptions } from './instrument-options.js';
