import { describe, expect, it } from 'vitest';
import { scriptedProvider } from '../../src/index.js';
import { act, ofType, recordedScene } from './helpers.js';

describe('the built-in scene tools', () => {
  it('read_world reads a path, falls back to a default, and reports a missing path as not_found', async () => {
    const { scene, events } = recordedScene({ world: { tavern: { ale: 4 } } });
    const outputs: unknown[] = [];
    scene.add({
      name: 'reader',
      rounds: 3,
      brain: (p) => {
        outputs.push(p.observation?.calls[0]);
        if (p.round === 1) return act('read_world', { path: 'tavern.ale' });
        if (p.round === 2) return '<ACTION><read_world><path>tavern.wine</path><default>0</default></read_world></ACTION>';
        return act('read_world', { path: 'cellar' });
      },
    });
    await scene.run({ ticks: 1 });
    // `default` has no type: XML text stays text.
    expect(ofType(events, 'tool.completed').map((event) => event.data.output)).toEqual([4, '0']);
    expect(ofType(events, 'tool.failed')[0]!.data.error).toMatchObject({ kind: 'not_found', message: 'nothing in the world at "cellar"' });
    expect(outputs[1]).toMatchObject({ status: 'completed', output: 4 });
  });

  it('update_private changes only the agent\'s own state, which it perceives on its next turn', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const seen: unknown[] = [];
    scene.add({
      name: 'diarist',
      private: { mood: 'calm' },
      brain: (p) => {
        seen.push(p.private);
        if (p.tick === 1) return act('update_private', { key: 'mood', value: 'cheerful' });
        if (p.tick === 2) return '<ACTION><update_private><key>coins</key><value>3</value></update_private></ACTION>';
        return act('update_private', { key: 'mood', value: 'null' });
      },
    });
    scene.add({ name: 'other', brain: () => 'hm' });
    await scene.run({ ticks: 4 });
    expect(seen).toEqual([{ mood: 'calm' }, { mood: 'cheerful' }, { mood: 'cheerful', coins: 3 }, { coins: 3 }]);
    expect(scene.agents.get('other')!.private).toEqual({});
  });

  it('publish_event wakes the agents subscribed to it, with the event in their perception', async () => {
    const { scene, events } = recordedScene();
    const seen: unknown[] = [];
    scene.add({ name: 'lookout', brain: () => '<ACTION><publish_event><name>fire</name><payload>{"where":"stables"}</payload></publish_event></ACTION>', triggers: ['start'] });
    scene.add({ name: 'firefighter', brain: (p) => (seen.push(p.events.map((event) => event.data)), 'On my way!'), triggers: [{ on: 'scene.event' }] });
    await scene.run({ ticks: 3 });
    expect(seen).toEqual([[{ name: 'fire', payload: { where: 'stables' } }]]);
    expect(ofType(events, 'scene.event')[0]!.agent).toBe('lookout');
  });

  it('a model-driven agent gets its perception as text: trigger, speech, last observation and private state', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const model = scriptedProvider([act('read_world', { path: 'nowhere' }), 'I see.']);
    scene.add({ name: 'seer', provider: model, private: { role: 'oracle' }, triggers: [] });
    scene.say('pilgrim', 'What lies ahead?', 'seer');
    await scene.run({ ticks: 2 });
    const [first, second] = model.requests.map((request) => request.messages.at(-1)!.content);
    expect(first).toContain('Tick 1. Time passes.');
    expect(first).toContain('pilgrim to seer: "What lies ahead?"');
    expect(first).toContain('Your private state: {"role":"oracle"}');
    expect(second).toContain('<OBSERVATION>');
    expect(second).toContain('nothing in the world at');
    model.assertConsumed();
  });

  it('leaves out built-in tools the scene does not want', async () => {
    const { scene, events } = recordedScene({ withoutTools: ['publish_event', 'say'] });
    scene.add({ name: 'mute', brain: () => act('say', { text: 'hi' }) });
    await scene.run({ ticks: 1 });
    expect(ofType(events, 'agent.spawned')[0]!.data.tools).toEqual(['read_world', 'update_private']);
    expect(ofType(events, 'tool.rejected')[0]!.data).toMatchObject({ code: 'unknown_tool', name: 'say' });
  });
});
