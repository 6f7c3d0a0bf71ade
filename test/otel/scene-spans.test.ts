import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { instrumentBus } from '../../src/otel/index.js';
import { act, noteTool, recordedScene } from '../scene/helpers.js';
import { memorySdk, msOf } from './helpers.js';

/** A stepped two-member scene: the patron speaks to the innkeeper at the start, the innkeeper notes each order. */
function tavern() {
  const recorded = recordedScene({ name: 'tavern' });
  const { scene } = recorded;
  const { tool } = noteTool();
  scene.add({ name: 'innkeeper', tools: [tool], triggers: ['addressed'], brain: (p) => (p.heard.length > 0 ? act('note', { text: 'one ale' }) : '') });
  scene.add({ name: 'patron', triggers: ['start'], brain: () => act('say', { text: 'An ale, please!', to: 'innkeeper' }) });
  return recorded;
}

describe('instrumentBus on a scene', () => {
  it('makes an invoke_workflow span per scene and a tick span per tick, with each turn’s run under its tick', async () => {
    const sdk = memorySdk();
    const { scene, events } = tavern();
    const close = instrumentBus(scene.bus, { tracerProvider: sdk.tracerProvider });
    const result = await scene.run({ ticks: 5 });
    close();
    // Nobody is due after the innkeeper's answer: the scene stops quiet after tick 2.
    expect([result.reason, result.tick]).toEqual(['quiet', 2]);

    const workflow = sdk.one('invoke_workflow tavern');
    expect(workflow.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': 'tavern',
      'troupe.scene.name': 'tavern',
      'troupe.scene.seed': 1,
      'troupe.scene.agents': 2,
      'troupe.scene.stop_reason': 'quiet',
      'troupe.scene.tick': 2,
    });
    expect(workflow.status.code).toBe(SpanStatusCode.UNSET);
    expect(sdk.parentOf(workflow)).toBeUndefined();

    const ticks = sdk.named('tick tavern');
    expect(ticks.map((tick) => [tick.attributes['troupe.scene.tick'], sdk.parentOf(tick)])).toEqual([
      [1, workflow],
      [2, workflow],
    ]);

    // The patron speaks at tick 1, the innkeeper answers at tick 2.
    const patron = sdk.one('invoke_agent patron');
    const innkeeper = sdk.one('invoke_agent innkeeper');
    expect(sdk.parentOf(patron)).toBe(ticks[0]);
    expect(sdk.parentOf(innkeeper)).toBe(ticks[1]);
    expect(patron.attributes).toMatchObject({ 'gen_ai.agent.name': 'patron', 'troupe.scene.name': 'tavern', 'troupe.trigger.reason': 'start', 'troupe.run.reason': 'turn_ended' });
    expect(innkeeper.attributes).toMatchObject({ 'troupe.trigger.reason': 'message', 'gen_ai.provider.name': 'brain' });
    expect(sdk.parentOf(sdk.one('execute_tool say'))).toBe(patron);
    expect(sdk.parentOf(sdk.one('execute_tool note'))).toBe(innkeeper);
    expect(sdk.named('chat scripted-brain').map((chat) => sdk.parentOf(chat))).toEqual([patron, innkeeper]);
    expect(new Set(sdk.spans().map((span) => span.spanContext().traceId))).toEqual(new Set([workflow.spanContext().traceId]));

    // A stepped scene runs on simulated time (tick × 1 s): spans carry it, from the envelopes' `at`.
    const tickAt = events.filter((event) => event.type === 'scene.tick').map((event) => event.at);
    const stoppedAt = events.find((event) => event.type === 'scene.stopped')!.at;
    expect(tickAt).toEqual([1_000, 2_000]);
    expect(ticks.map((tick) => [msOf(tick.startTime), msOf(tick.endTime)])).toEqual([
      [1_000, 2_000],
      [2_000, stoppedAt],
    ]);
    expect([msOf(workflow.startTime), msOf(workflow.endTime)]).toEqual([0, stoppedAt]);
    expect([msOf(innkeeper.startTime), msOf(innkeeper.endTime)]).toEqual([2_000, 2_000]);
  });

  it('can stamp spans with this process’s clock instead (timestamps: wall)', async () => {
    const sdk = memorySdk();
    const { scene } = tavern();
    const before = performance.timeOrigin + performance.now();
    instrumentBus(scene.bus, { tracerProvider: sdk.tracerProvider, timestamps: 'wall' });
    await scene.run({ ticks: 2 });
    const after = performance.timeOrigin + performance.now();

    for (const span of sdk.spans()) {
      expect(msOf(span.startTime)).toBeGreaterThanOrEqual(before);
      expect(msOf(span.endTime)).toBeLessThanOrEqual(after);
      expect(msOf(span.endTime)).toBeGreaterThanOrEqual(msOf(span.startTime));
    }
  });

  it('ends the scene and its current tick as interrupted when closed mid-scene', async () => {
    const sdk = memorySdk();
    const { scene } = tavern();
    const close = instrumentBus(scene.bus, { tracerProvider: sdk.tracerProvider });
    await scene.start();
    await scene.step();
    close();

    const interrupted = (name: string) => sdk.named(name).filter((span) => span.attributes['error.type'] === 'interrupted');
    expect(interrupted('invoke_workflow tavern')).toHaveLength(1);
    expect(interrupted('tick tavern')).toHaveLength(1);
    // The patron's turn at tick 1 had ended before: it is not interrupted.
    expect(sdk.one('invoke_agent patron').status.code).toBe(SpanStatusCode.UNSET);
    await scene.stop();
    expect(sdk.named('invoke_workflow tavern')).toHaveLength(1);
  });
});
