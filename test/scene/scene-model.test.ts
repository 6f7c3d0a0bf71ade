import { describe, expect, it } from 'vitest';
import { scriptedProvider, type Provider, type StreamEvent } from '../../src/index.js';
import { act, noteTool, ofType, recordedScene } from './helpers.js';

describe('a scene with a model for its cast', () => {
  it('runs members with instructions on the model, and keeps members without instructions scripted', async () => {
    const { tool, calls } = noteTool();
    const model = scriptedProvider(() => `Hello. ${act('note', { text: 'from the model' })}`, { stream: true, name: 'model' });
    const { scene, events } = recordedScene({ schedule: 'every-tick', model: { provider: model } });
    scene.add({ name: 'bard', instructions: 'You sing.', tools: [tool], brain: () => act('note', { text: 'scripted bard' }) });
    scene.add({ name: 'cat', tools: [tool], brain: () => act('note', { text: 'scripted cat' }) });
    await scene.run({ ticks: 2 });

    expect(calls.filter((call) => call.startsWith('bard'))).toEqual(['bard:from the model', 'bard:from the model']);
    expect(calls.filter((call) => call.startsWith('cat'))).toEqual(['cat:scripted cat', 'cat:scripted cat']);
    // The model was asked with the bard's persona, and streamed its speech onto the scene's bus.
    expect(model.requests.every((request) => request.agent === 'bard')).toBe(true);
    expect(model.requests[0]!.messages[0]!.content).toContain('You sing.');
    expect(ofType(events, 'llm.delta').every((event) => event.agent === 'bard')).toBe(true);
    expect(ofType(events, 'llm.request').find((event) => event.agent === 'bard')!.data.provider).toBe('model');
  });

  it('holds a model slot for the whole of a stream', async () => {
    let open = 0;
    let most = 0;
    const slow: Provider = {
      name: 'slow',
      complete: () => Promise.reject(new Error('not used')),
      async *stream(): AsyncGenerator<StreamEvent> {
        open++;
        most = Math.max(most, open);
        try {
          for (const piece of ['one ', 'two ', 'three']) {
            await new Promise((resolve) => setTimeout(resolve, 2));
            yield { type: 'text', text: piece };
          }
          yield { type: 'finish', response: { text: 'one two three', finishReason: 'stop' } };
        } finally {
          open--;
        }
      },
    };
    const { scene, events } = recordedScene({ schedule: 'every-tick', concurrency: { modelCalls: 1 } });
    for (const name of ['a', 'b', 'c']) scene.add({ name, provider: slow });
    await scene.run({ ticks: 1 });
    expect(ofType(events, 'agent.said')).toHaveLength(3);
    expect(most).toBe(1);
  });
});
