import { describe, expect, it } from 'vitest';
import { createScene, defineTool, scriptedProvider, type ChatMessage } from '../../src/index.js';
import { recordEvents } from '../../src/testing/index.js';

/** A cast member takes the agent hooks: `repair` and `onBeforeModel` work on scene turns too. */
describe('scene members with hooks', () => {
  it('repairs a model-driven member\'s rejected call and rewrites what its model is sent', async () => {
    const poured: string[] = [];
    const pour = defineTool({
      name: 'pour',
      description: 'Pour a drink.',
      parameters: { type: 'object', properties: { drink: { type: 'string' } }, required: ['drink'], additionalProperties: false },
      execute: ({ drink }) => {
        poured.push(String(drink));
        return 'poured';
      },
    });
    const model = scriptedProvider(['<ACTION><pour><beverage>ale</beverage></pour></ACTION>']);
    const sent: ChatMessage[][] = [];
    const scene = createScene({ name: 'inn', seed: 1 });
    const events = recordEvents(scene.bus);
    scene.add({
      name: 'barkeep',
      instructions: 'You pour drinks.',
      provider: model,
      tools: [pour],
      triggers: ['start'],
      onBeforeModel: (messages) => {
        sent.push(messages);
        return [...messages, { role: 'user', content: 'Be quick.' }];
      },
      repair: (_rejection, { call }) => (typeof call.args.beverage === 'string' ? { args: { drink: call.args.beverage } } : undefined),
    });

    await scene.run({ ticks: 1 });

    expect(poured).toEqual(['ale']);
    expect(events.find('tool.repaired')).toMatchObject({ agent: 'barkeep', data: { name: 'pour', after: { name: 'pour', args: { drink: 'ale' } }, by: 'function' } });
    expect(sent).toHaveLength(1);
    expect(model.requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'Be quick.' });
    model.assertConsumed();
  });

  it('refuses a hook that is not a function when the member is added', () => {
    const scene = createScene({ name: 'inn', seed: 1 });
    expect(() => scene.add({ name: 'barkeep', brain: () => null, repair: 'fix it' as never })).toThrow(/repair/);
  });
});
