import { describe, expect, it } from 'vitest';
import { buildTavern, scene as tavernScene } from '../../scenes/tavern/index.js';
import { tavernSummary } from '../../scenes/tavern/summary.js';
import { createBus, type Bus, type Envelope } from '../../src/index.js';
import { ofType, record, replayWorld, story } from './helpers.js';

async function evening(seed: number, cellar: 'approve' | 'deny' = 'approve') {
  const tavern = buildTavern({ seed, cellar });
  const events = record(tavern);
  const opening = tavern.world.snapshot();
  const result = await tavern.run({ ticks: 30 });
  return { tavern, events, opening, result };
}

/** Pip's mistakes and fixes, in order: what the runtime made of each of his blocks. */
function pipsOutcomes(events: readonly Envelope[]): string[] {
  const outcomes: string[] = [];
  for (const event of events) {
    if (event.agent !== 'pip') continue;
    if (event.type === 'tool.rejected') outcomes.push(`rejected ${event.data.code}/${event.data.category}`);
    else if (event.type === 'action.malformed') outcomes.push(`malformed ${event.data.code}`);
    else if (event.type === 'tool.completed' && event.data.name === 'order') outcomes.push(`ordered ${event.data.args.item as string}`);
  }
  return outcomes;
}

describe('the tavern', () => {
  it('runs an evening to closing time offline, with no failed turns', async () => {
    const { tavern, events, result } = await evening(4);
    expect(result).toMatchObject({ reason: 'ticks', tick: 30, failures: 0 });
    expect(ofType(events, 'agent.finished').filter((event) => event.data.reason === 'error')).toEqual([]);
    // Everyone took part: each agent spoke or acted.
    const actors = new Set(ofType(events, 'tool.completed').map((event) => event.agent));
    expect([...actors].sort()).toEqual(['ana', 'bard', 'bram', 'guard', 'innkeeper', 'pip', 'steward']);
    expect(tavernScene.summarize!(tavern, result)).toMatch(/^The Wobbly Flagon closes at tick 30 \(ticks\): \d+ portions served; 3 portions brought up from the cellar; .*pip fixed 3 of his 3 mistakes\.$/);
  });

  it("turns each of pip's typical mistakes into a correction, and he fixes it in the same turn", async () => {
    const { events } = await evening(4);
    expect(pipsOutcomes(events).slice(0, 6)).toEqual([
      'rejected invalid_arguments/validation_error',
      'ordered ale',
      'malformed unclosed_action',
      'ordered bread',
      'rejected unknown_tool/unknown_tool',
      'ordered ale',
    ]);
    const rejected = ofType(events, 'tool.rejected').filter((event) => event.agent === 'pip');
    expect(rejected[0]!.data.message).toContain('Unknown parameter "drink"');
    expect(rejected[1]!.data.message).toContain('Unknown tool "buy_drink"');
    // Each fix is written in round 2 of the turn whose round 1 went wrong, after reading the observation.
    const observations = ofType(events, 'agent.observation').filter((event) => event.agent === 'pip').slice(0, 6);
    expect(observations.map((event) => [event.data.round, event.data.ok])).toEqual([
      [1, false], [2, true], [1, false], [2, true], [1, false], [2, true],
    ]);
    const fixes = ofType(events, 'llm.response').filter((event) => event.agent === 'pip' && event.data.round === 2).slice(0, 3);
    expect(fixes.map((event) => event.data.text.split('\n')[1])).toEqual([
      '<ACTION><order><item>ale</item></order><update_private><key>lessons</key><value>1</value></update_private></ACTION>',
      '<ACTION><order><item>bread</item></order><update_private><key>lessons</key><value>2</value></update_private></ACTION>',
      '<ACTION><order><item>ale</item></order><update_private><key>lessons</key><value>3</value></update_private></ACTION>',
    ]);
  });

  it('changes the world only through tools: every change is a world.changed event, and replaying them gives the final world', async () => {
    const { tavern, events, opening } = await evening(4);
    const changes = ofType(events, 'world.changed');
    const paths = new Set(changes.map((event) => event.data.path));
    for (const path of ['tavern.orders', 'tavern.stock.ale', 'tavern.till', 'patrons.pip', 'bard.tips']) expect(paths).toContain(path);
    // Every change names the agent whose tool made it, and the tool call that did.
    for (const event of changes) {
      expect(event.agent).toBeDefined();
      expect(events.find((other) => other.id === event.cause)?.type).toBe('tool.started');
    }
    expect(replayWorld(opening, events)).toEqual(tavern.world.snapshot());
    const stock = tavern.read('tavern.stock') as Record<string, number>;
    for (const count of Object.values(stock)) expect(count).toBeGreaterThanOrEqual(0);
  });

  it('replays exactly with the same seed, and plays differently with another', async () => {
    const first = await evening(11);
    const again = await evening(11);
    expect(JSON.stringify(again.events)).toBe(JSON.stringify(first.events));
    const other = await evening(12);
    expect(story(other.events)).not.toEqual(story(first.events));
  });

  it('the guard warns a patron for loud words and throws him out for a brawl', async () => {
    const tavern = buildTavern({ seed: 1, cellar: 'approve' });
    const events = record(tavern);
    await tavern.step();
    tavern.say('bram', 'Fight me, the lot of you!');
    await tavern.step();
    const calls = () => ofType(events, 'tool.completed').filter((event) => event.agent === 'guard').map((event) => `${event.data.name} ${JSON.stringify(event.data.args)}`);
    expect(calls()).toEqual(['calm {"patron":"bram"}', 'say {"text":"Easy, bram. That\'s your one warning. Sit down and drink quietly.","to":"bram"}']);
    tavern.emit('brawl', { by: 'bram' });
    await tavern.step();
    expect(calls().slice(2)).toEqual([
      'eject {"patron":"bram","reason":"started a brawl"}',
      'say {"text":"Out you go, bram, and don\'t come back tonight.","to":"bram"}',
    ]);
    expect(tavern.read('patrons.bram.status')).toBe('ejected');
    expect(tavern.agents.get('bram')!.retired).toBe(true);
    expect((tavern.read('tavern.board') as string[]).at(-1)).toMatch(/^bram is barred tonight: started a brawl/);
    await tavern.stop();
  });

  it('is a scene definition troupe run can load: it hands its bus to observe, or builds on the bus it is given', async () => {
    let observed: Bus | undefined;
    const built = await tavernScene.create({ seed: 3, observe: (bus) => (observed = bus), options: {} });
    expect(observed).toBe(built.bus);
    expect([...built.agents.keys()]).toEqual(['innkeeper', 'guard', 'bard', 'steward', 'ana', 'bram', 'pip']);
    expect(tavernScene.ticks).toBe(30);
    await built.stop();
    const bus = createBus();
    const onGiven = await tavernScene.create({ bus, seed: 3, options: {} });
    expect(onGiven.bus).toBe(bus);
    await onGiven.stop();
  });

  it('patrons thrown out or gone home take no more turns', async () => {
    const { events } = await evening(4);
    const ejected = ofType(events, 'tool.completed').find((event) => event.data.name === 'eject')!;
    const victim = ejected.data.args.patron as string;
    const after = events.slice(events.indexOf(ejected));
    // The guard's parting words are addressed to him, and he hears them, but he takes no turn.
    expect(ofType(after, 'agent.said').some((event) => event.data.to === victim)).toBe(true);
    expect(ofType(after, 'agent.triggered').filter((event) => event.agent === victim)).toEqual([]);
    for (const left of ofType(events, 'tool.completed').filter((event) => event.data.name === 'leave')) {
      const later = ofType(events.slice(events.indexOf(left)), 'agent.triggered').filter((event) => event.agent === left.agent);
      expect(later, `${left.agent} after leaving`).toEqual([]);
    }
  });

  it('the steward asks to open the cellar when the stew runs low; nothing moves until someone answers', async () => {
    const tavern = buildTavern({ seed: 11 });
    const events = record(tavern);
    const requested = new Promise<Envelope<'tool.approval.requested'>>((resolve) => tavern.bus.on('tool.approval.requested', resolve));
    const running = tavern.run({ ticks: 30 });
    const request = await requested;
    expect(request).toMatchObject({ agent: 'steward', data: { name: 'open_cellar', args: { item: 'stew', count: 3 } } });
    // A turn of the event loop later the tick still waits: the steward is parked on the request.
    await new Promise((resolve) => setImmediate(resolve));
    expect(tavern.agents.get('steward')!.agent.state).toBe('awaitingApproval');
    const tick = tavern.tick;
    expect(ofType(events, 'scene.tick').at(-1)!.data.tick).toBe(tick);
    expect(tavern.agents.get('steward')!.agent.approve(request.data.callId, { argsHash: request.data.argsHash })).toBe(true);
    const result = await running;
    expect(result).toMatchObject({ reason: 'ticks', tick: 30, failures: 0 });
    expect(ofType(events, 'tool.completed').find((event) => event.data.name === 'open_cellar')!.data.output).toMatchObject({ brought: 3, item: 'stew' });
    expect(tavern.read('cellar.stew')).toBe(0);
  });

  it('a refused steward remembers it and asks for that item no more', async () => {
    const { events, tavern } = await evening(4, 'deny');
    const asked = ofType(events, 'tool.approval.requested');
    expect(asked.map((event) => event.data.args.item)).toEqual(['stew']);
    expect(ofType(events, 'tool.approval.resolved')[0]!.data).toMatchObject({ approved: false, reason: 'the landlord keeps the cellar shut tonight' });
    expect(tavern.agents.get('steward')!.private.refused).toEqual(['stew']);
    expect(tavernSummary(tavern, { reason: 'ticks', tick: 30, turns: 0, failures: 0, usage: { modelCalls: 0, tokens: 0, toolCalls: 0, wallMs: 0 }, wallMs: 0 })).toContain('; the cellar stayed shut; ');
  });

  it('says one portion, one coin, and counts the rest in plurals', async () => {
    const tavern = buildTavern({ seed: 1 });
    const result = { reason: 'ticks' as const, tick: 2, turns: 0, failures: 0, usage: { modelCalls: 0, tokens: 0, toolCalls: 0, wallMs: 0 }, wallMs: 0 };
    tavern.world.set('tavern.stock.ale', 13);
    tavern.world.set('tavern.till', 1);
    tavern.world.set('bard.tips', 1);
    expect(tavernSummary(tavern, result)).toBe(
      "The Wobbly Flagon closes at tick 2 (ticks): 1 portion served; the cellar stayed shut; 1 coin in the till; 1 coin in the bard's hat; nobody thrown out; pip fixed 0 of his 3 mistakes.",
    );
    tavern.world.set('tavern.stock.ale', 12);
    tavern.world.set('cellar.stew', 2);
    tavern.world.set('tavern.till', 2);
    expect(tavernSummary(tavern, result)).toMatch(/^.*: 3 portions served; 1 portion brought up from the cellar; 2 coins in the till; 1 coin in/);
    await tavern.stop();
  });
});
