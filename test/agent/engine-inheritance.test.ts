import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, createAgent, createScene, defineSkill, defineTool, type AgentEngine, type Perception } from '../../src/index.js';
import { serializeEnvelope } from '../../src/bus/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

// Which agents were given an XState actor: the names the XState stepper was made for.
const made = vi.hoisted(() => [] as string[]);
vi.mock('../../src/agent/xstate-engine.js', async (original) => {
  const module = await original<typeof import('../../src/agent/xstate-engine.js')>();
  return {
    ...module,
    xstateStepper: (options: Parameters<typeof module.xstateStepper>[0]) => {
      made.push(options.id);
      return module.xstateStepper(options);
    },
  };
});

beforeEach(() => void made.splice(0));

/** A small market of random brains, as in the scene determinism test; its bus as serialized lines. */
async function market(engine: AgentEngine | undefined, own: AgentEngine | undefined = undefined): Promise<string[]> {
  const scene = createScene({ name: 'dice', seed: 42, schedule: 'every-tick', world: { pot: 0 }, ...(engine !== undefined && { engine }) });
  const lines: string[] = [];
  scene.bus.on('*', (event) => void lines.push(serializeEnvelope(event).text));
  const bet = defineTool({
    name: 'bet',
    description: 'Put coins in the pot.',
    parameters: { type: 'object', properties: { coins: { type: 'integer', minimum: 1 } }, required: ['coins'] },
    execute: ({ coins }, { agent }) => scene.world.update('pot', (pot) => (pot as number) + (coins as number), { agent }),
  });
  const gambler = (p: Perception): string => {
    const roll = p.random();
    if (roll < 0.3) return 'Pass.';
    if (roll < 0.6) return `<ACTION><say><text>I roll ${Math.floor(roll * 100)}</text></say></ACTION>`;
    return `<ACTION><bet><coins>${1 + Math.floor(p.random() * 5)}</coins></bet></ACTION>`;
  };
  for (const name of ['ann', 'bo', 'cy']) scene.add({ name, tools: [bet], brain: gambler, triggers: ['speech'] });
  scene.add({ name: 'di', tools: [bet], brain: gambler, triggers: ['speech'], ...(own !== undefined && { engine: own }) });
  await scene.run({ ticks: 12 });
  return lines;
}

describe('the engine of scene members and child agents', () => {
  it("a scene's members take its engine, a member may name its own, and both engines give the same scene", async () => {
    const compiled = await market(undefined);
    expect(made).toEqual([]);
    const xstate = await market('xstate', 'compiled');
    expect(made).toEqual(['ann', 'bo', 'cy']);
    expect(compiled.length).toBeGreaterThan(100);
    expect(xstate).toEqual(compiled);
  });

  it("a skill's child agent takes its parent's engine unless its own options name one", async () => {
    const skill = (engine?: AgentEngine) =>
      defineSkill({
        name: 'research',
        description: 'Researches a question with the roster.',
        parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
        agent: { tools: rosterTools().tools, provider: scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Ana.']), ...(engine !== undefined && { engine }) },
      });
    const parent = (engine: AgentEngine, own?: AgentEngine) =>
      testAgent({ engine, tools: [skill(own)], provider: scriptedProvider([action(call('research', { question: '7?' })), 'Ana.']) }).agent.run('Who is 7?');

    await expect(parent('xstate')).resolves.toMatchObject({ reason: 'final_answer' });
    expect(made).toEqual(['tester', 'tester/1.1.1/research']);
    made.splice(0);
    await parent('xstate', 'compiled');
    expect(made).toEqual(['tester']);
    made.splice(0);
    await parent('compiled', 'xstate');
    expect(made).toEqual(['tester/1.1.1/research']);
  });

  it('refuses an engine it does not know, and inspect without the xstate engine', () => {
    const provider = scriptedProvider([]);
    expect(() => createAgent({ name: 'a', provider, engine: 'fast' as never })).toThrow(ConfigError);
    expect(() => createAgent({ name: 'a', provider, inspect: () => {} })).toThrow(/inspect needs engine: 'xstate'/);
    expect(() => createAgent({ name: 'a', provider, engine: 'xstate', inspect: 7 as never })).toThrow(/inspect must be/);
    expect(() => createScene({ name: 's', engine: 'fast' as never })).toThrow(/engine must be 'compiled' or 'xstate'/);
  });
});
