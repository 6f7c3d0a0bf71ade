import { metrics, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, createBus, defineTool } from '../../src/index.js';
import { instrumentBus } from '../../src/otel/index.js';
import { recordEvents, scriptedProvider, sequentialIds } from '../../src/testing/index.js';
import { act, recordedScene } from '../scene/helpers.js';
import { memorySdk } from './helpers.js';

const lookup = defineTool({
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  execute: () => ({ name: 'Ana' }),
});

function run(bus = createBus({ ids: sequentialIds() })) {
  const provider = scriptedProvider(['<ACTION><lookup_player><id>7</id></lookup_player></ACTION>', { error: { kind: 'auth', retryable: false } }]);
  return createAgent({ name: 'referee', tools: [lookup], provider, bus }).run('Who is player 7?');
}

afterEach(() => {
  trace.disable();
  metrics.disable();
});

describe('instrumentBus with no OpenTelemetry SDK registered', () => {
  it('lets agents and scenes run as before and reports no subscriber error', async () => {
    const bus = createBus({ ids: sequentialIds() });
    const errors = recordEvents(bus, 'bus.error');
    const close = instrumentBus(bus, { captureContent: true });
    const result = await run(bus);
    expect(result.reason).toBe('error');

    const { scene, events } = recordedScene({ name: 'square' });
    const closeScene = instrumentBus(scene.bus);
    scene.add({ name: 'crier', triggers: ['start'], brain: () => act('say', { text: 'Hear ye!' }) });
    expect((await scene.run({ ticks: 3 })).failures).toBe(0);
    close();
    closeScene();
    expect(errors.all).toEqual([]);
    expect(events.filter((event) => event.type === 'bus.error')).toEqual([]);
  });

  it('records nothing made before an SDK registers, and spans from then on', async () => {
    const bus = createBus({ ids: sequentialIds() });
    const close = instrumentBus(bus);
    await run(bus);

    const sdk = memorySdk();
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    metrics.setGlobalMeterProvider(sdk.meterProvider);
    expect(sdk.spans()).toEqual([]);
    expect(await sdk.points('gen_ai.client.operation.duration')).toEqual([]);

    // The global tracer is a proxy: the same instrumentation now reaches the SDK. Its meter was
    // the no-op one, and stays so: register the SDK before instrumenting to get metrics.
    await run(bus);
    close();
    expect(sdk.named('invoke_agent referee')).toHaveLength(1);
    expect(await sdk.points('gen_ai.client.operation.duration')).toEqual([]);
  });
});
