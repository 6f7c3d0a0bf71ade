import { describe, expect, it } from 'vitest';
import { buildCrowd, crowdSummary, scene as crowdScene } from '../../scenes/crowd/index.js';
import { ConfigError, type Bus, type Envelope } from '../../src/index.js';
import { ofType, record } from './helpers.js';

describe('the crowd', () => {
  it('N NPCs for 3 ticks: N×3 turns, each exactly one completed tool call, each ending turn_ended', async () => {
    const npcs = 50;
    const crowd = buildCrowd({ seed: 1, npcs });
    const events = record(crowd);
    const result = await crowd.run({ ticks: 3 });
    expect(result).toMatchObject({ reason: 'ticks', tick: 3, turns: npcs * 3, failures: 0 });
    const finished = ofType(events, 'agent.finished');
    expect(finished).toHaveLength(npcs * 3);
    expect(finished.every((event) => event.data.reason === 'turn_ended' && event.data.stats.calls === 1 && event.data.rounds === 1)).toBe(true);
    const completed = ofType(events, 'tool.completed');
    expect(completed).toHaveLength(npcs * 3);
    expect(completed.every((event) => event.data.name === 'wander')).toBe(true);
    expect(ofType(events, 'tool.rejected')).toEqual([]);
    expect(ofType(events, 'action.malformed')).toEqual([]);
    for (const agent of crowd.agents.values()) expect([agent.turns, agent.lastReason]).toEqual([3, 'turn_ended']);
    expect(crowd.census.steps).toBe(npcs * 3);
  });

  it('each NPC walks on from where its last step ended, read from its observation', async () => {
    const crowd = buildCrowd({ seed: 2, npcs: 5 });
    const events = record(crowd);
    await crowd.run({ ticks: 4 });
    for (const agent of crowd.agents.keys()) {
      const steps = ofType(events, 'tool.completed').filter((event: Envelope<'tool.completed'>) => event.agent === agent);
      expect(steps).toHaveLength(4);
      for (let index = 1; index < steps.length; index++) {
        const { x, y } = steps[index - 1]!.data.output as { x: number; y: number };
        expect(steps[index]!.data.args).toMatchObject({ x, y });
      }
    }
  });

  it('is deterministic with a seed', async () => {
    const run = async (seed: number) => {
      const crowd = buildCrowd({ seed, npcs: 10 });
      const events = record(crowd);
      await crowd.run({ ticks: 2 });
      return JSON.stringify(events);
    };
    expect(await run(3)).toBe(await run(3));
    expect(await run(4)).not.toBe(await run(3));
  });

  it('takes N from 1 to 1,000,000 (an integer), and says so otherwise', () => {
    for (const npcs of [0, -3, 2.5, 1_000_001, Number.NaN]) {
      expect(() => buildCrowd({ seed: 1, npcs })).toThrow(ConfigError);
    }
    expect(crowdScene.options?.npcs).toMatchObject({ type: 'number', default: 1_000, min: 1, max: 1_000_000, integer: true });
  });

  it('is a scene definition troupe run can load: N from its options, and a summary with steps/s', async () => {
    let observed: Bus | undefined;
    const built = await crowdScene.create({ seed: 5, observe: (bus) => (observed = bus), options: { npcs: 7 } });
    expect(observed).toBe(built.bus);
    expect(built.agents.size).toBe(7);
    const result = await built.run({ ticks: crowdScene.ticks });
    expect(crowdSummary(built, result)).toMatch(/^crowd of 7 stopped at tick 5 \(ticks\): 35 turns(, [\d,]+ steps\/s)?; 35 steps taken, the farthest walker \d+ paces from the middle\.$/);
  });
});
