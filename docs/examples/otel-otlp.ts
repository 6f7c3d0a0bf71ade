// An agent run's spans sent to an OpenTelemetry collector over OTLP/HTTP (JSON).
// Run it with a collector listening (Jaeger, Grafana Tempo, the OpenTelemetry Collector…):
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 npx tsx docs/examples/otel-otlp.ts
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createAgent, defineTool, scriptedProvider } from 'troupe';
import { instrumentBus } from 'troupe/otel';

// The exporter posts to $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces (default http://localhost:4318).
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
trace.setGlobalTracerProvider(tracerProvider);

const lookupPlayer = defineTool({
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string', maxLength: 16 } }, required: ['id'] },
  readOnly: true,
  execute: async ({ id }) => ({ id, name: 'Ana' }),
});

const agent = createAgent({
  name: 'referee',
  tools: [lookupPlayer],
  provider: scriptedProvider(['<ACTION><lookup_player><id>7</id></lookup_player></ACTION>', 'Player 7 is Ana.']),
});

const close = instrumentBus(agent.bus); // the global tracer provider registered above
const result = await agent.run('Who is player 7?');
close();
await tracerProvider.shutdown(); // flushes the batch: the spans reach the collector before the process ends
console.log(result.text);
