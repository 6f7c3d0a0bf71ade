import { describe, expect, it } from 'vitest';
import { ConfigError, createBus, type Bus } from '../../src/index.js';
import { instrumentBus, type InstrumentBusOptions } from '../../src/otel/index.js';

describe('instrumentBus options', () => {
  it.each([
    [{ tracerProvider: {} }, 'tracerProvider must be an OpenTelemetry TracerProvider'],
    [{ meterProvider: { getTracer: () => undefined } }, 'meterProvider must be an OpenTelemetry MeterProvider'],
    [{ captureContent: 'yes' }, 'captureContent must be true or false, got yes'],
    [{ maxContentChars: 10 }, 'maxContentChars must be an integer of at least 64, got 10'],
    [{ maxContentChars: 1.5e3 + 0.5 }, 'maxContentChars must be an integer of at least 64, got 1500.5'],
    [{ redact: 'hunter2' }, 'redact must be a list of strings and regular expressions'],
    [{ timestamps: 'monotonic' }, `timestamps must be 'event' (the envelopes' at) or 'wall' (this process's clock), got "monotonic"`],
  ])('refuses %j with a ConfigError naming the option', (options, message) => {
    const bus = createBus();
    const attempt = () => instrumentBus(bus, options as unknown as InstrumentBusOptions);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(message);
    expect(bus.hasSubscribers).toBe(false);
  });

  it('refuses something that is not a bus', () => {
    expect(() => instrumentBus({} as Bus)).toThrow('instrumentBus(bus) needs a troupe bus: agent.bus, scene.bus or createBus()');
    expect(() => instrumentBus(createBus(), 'all' as unknown as InstrumentBusOptions)).toThrow('options must be an object when given');
  });

  it('subscribes once, and closing twice is harmless', () => {
    const bus = createBus();
    const close = instrumentBus(bus);
    expect(bus.hasSubscribers).toBe(true);
    close();
    close();
    expect(bus.hasSubscribers).toBe(false);
  });
});
