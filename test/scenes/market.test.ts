import { describe, expect, it } from 'vitest';
import { buildMarket, scene as marketScene, traderProfiles, type TraderProfile } from '../../scenes/market/index.js';
import { QuoteBook } from '../../scenes/market/quotes.js';
import { marketTools } from '../../scenes/market/tools.js';
import { createBus, createScene, ToolError, type Tool, type ToolContext } from '../../src/index.js';
import { ofType, record, replayWorld } from './helpers.js';

/** Two traders who both want the one saffron badly, and nothing else. */
const rivals: TraderProfile[] = ['amara', 'bodo'].map((name) => ({ name, coin: 30, goods: {}, values: { saffron: 20, silk: 1, spice: 1, tea: 1 } }));

function context(agent: string): ToolContext {
  return { agent, callId: `${agent}/1`, attempt: 1, signal: new AbortController().signal };
}

describe('the market', () => {
  it('two traders reach for the last saffron in the same tick: exactly one gets it, the other is told why', async () => {
    const market = buildMarket({ seed: 1, traders: rivals, stock: { saffron: 1 } });
    const events = record(market);
    await market.step();
    // Both brains saw one saffron in stock and asked for it.
    const asked = ofType(events, 'tool.started').filter((event) => event.data.name === 'buy');
    expect(asked.map((event) => [event.agent, event.data.args.item])).toEqual([['amara', 'saffron'], ['bodo', 'saffron']]);
    const bought = ofType(events, 'tool.completed').filter((event) => event.data.name === 'buy');
    const refused = ofType(events, 'tool.failed').filter((event) => event.data.name === 'buy');
    expect(bought).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.data.error).toMatchObject({ kind: 'not_found', message: 'the saffron is sold out' });
    const loser = refused[0]!.agent!;
    const observation = ofType(events, 'agent.observation').find((event) => event.agent === loser)!;
    expect(observation.data.ok).toBe(false);
    expect(observation.data.text).toContain('the saffron is sold out');
    expect(market.read('market.stock.saffron')).toBe(0);
    expect(market.read(['market', 'goods', bought[0]!.agent!, 'saffron'])).toBe(1);
    expect(market.read(['market', 'goods', loser, 'saffron'])).toBeUndefined();
    // Next tick the loser reads its failed call and says so.
    await market.step();
    const said = ofType(events, 'agent.said').find((event) => event.agent === loser);
    expect(said?.data.text).toMatch(/^Blast, the saffron is gone!/);
    await market.stop();
  });

  it('buy holds its paths exclusively: of many concurrent buys, only as many succeed as there is stock', async () => {
    const scene = createScene({ name: 'market', seed: 1, world: { market: { stock: { tea: 2 }, price: { tea: 4 }, coin: { a: 9, b: 9, c: 9, d: 9 }, goods: {} } } });
    const [buy] = marketTools(scene.world, new QuoteBook(scene.bus, scene.name)) as [Tool, Tool];
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((agent) => buy.execute({ item: 'tea' }, context(agent))));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
    const errors = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as ToolError] : []));
    expect(errors.map((error) => [error instanceof ToolError, error.message])).toEqual([[true, 'the tea is sold out'], [true, 'the tea is sold out']]);
    expect(scene.read('market.stock.tea')).toBe(0);
    expect(Object.values(scene.read('market.coin') as Record<string, number>).sort()).toEqual([5, 5, 9, 9]);
  });

  it.each([1, 2, 3])('seed %i: stock never goes negative, and replaying world.changed gives the final world', async (seed) => {
    const market = buildMarket({ seed });
    const events = record(market);
    const opening = market.world.snapshot();
    const result = await market.run({ ticks: 40 });
    expect(result.failures).toBe(0);
    for (const event of ofType(events, 'world.changed')) {
      expect(event.data.value as number, event.data.path).toBeGreaterThanOrEqual(0);
    }
    expect(replayWorld(opening, events)).toEqual(market.world.snapshot());
    // Coin and goods move between traders but never appear from nowhere.
    const coin = (state: unknown) => Object.values((state as { market: { coin: Record<string, number> } }).market.coin).reduce((sum, value) => sum + value, 0);
    const spent = ofType(events, 'tool.completed').filter((event) => event.data.name === 'buy').reduce((sum, event) => sum + (event.data.output as { price: number }).price, 0);
    expect(coin(market.world.snapshot())).toBe(coin(opening) - spent);
  });

  it('a deal said aloud is accepted with trade; an offer nobody made is refused with what was offered', async () => {
    const traders: TraderProfile[] = [
      // Silk is worth more than its list price to amara: she makes no offer of her own.
      { name: 'amara', coin: 10, goods: { silk: 1 }, values: { saffron: 13, silk: 10, spice: 1, tea: 1 } },
      { name: 'bodo', coin: 10, goods: {}, values: { saffron: 13, silk: 9, spice: 1, tea: 1 } },
    ];
    const market = buildMarket({ seed: 1, traders, stock: {} });
    const events = record(market);
    await market.start();
    market.say('amara', "I'll sell you 1 silk for 7 coins.", 'bodo');
    const result = await market.run({ ticks: 10 });
    expect(ofType(events, 'tool.completed').map((event) => `${event.agent} ${event.data.name} ${JSON.stringify(event.data.args)}`)).toContain(
      'bodo trade {"with":"amara","item":"silk","price":7}',
    );
    expect(market.read('market.coin')).toEqual({ amara: 17, bodo: 3 });
    expect(market.read('market.goods')).toEqual({ amara: { silk: 0 }, bodo: { silk: 1 } });
    expect(result.reason).toBe('quiet');

    const [, trade] = marketTools(market.world, new QuoteBook(createBus(), 'market')) as [Tool, Tool];
    await expect(trade.execute({ with: 'amara', item: 'silk', price: 1 }, context('bodo'))).rejects.toThrow('amara has made you no offer');
  });

  it('an offer replaced while it is being accepted: the old price fails, naming the new one, and the buyer takes that', async () => {
    const traders: TraderProfile[] = [
      // Silk is worth less than its list price to amara: at the opening bell she offers it at her own price.
      { name: 'amara', coin: 10, goods: { silk: 1 }, values: { saffron: 13, silk: 3, spice: 1, tea: 1 } },
      { name: 'bodo', coin: 10, goods: {}, values: { saffron: 13, silk: 9, spice: 1, tea: 1 } },
    ];
    const market = buildMarket({ seed: 1, traders, stock: {} });
    const events = record(market);
    await market.start();
    market.say('amara', "I'll sell you 1 silk for 7 coins.", 'bodo');
    await market.run({ ticks: 10 });
    const trades = ofType(events, 'tool.started').filter((event) => event.data.name === 'trade');
    expect(trades.map((event) => event.data.args.price)).toEqual([7, 9]);
    const failed = ofType(events, 'tool.failed')[0]!;
    expect(failed.data.error.message).toBe('amara offered to sell 1 silk for 9 coins, not 1 silk for 7');
    expect(market.read('market.coin')).toEqual({ amara: 19, bodo: 1 });
  });

  it('refuses a counterfeit price, naming the offer that was made', async () => {
    const scene = createScene({ name: 'market', seed: 1, world: { market: { stock: {}, price: { silk: 9 }, coin: { amara: 5, bodo: 5 }, goods: { amara: { silk: 1 } } } } });
    const [, trade] = marketTools(scene.world, new QuoteBook(scene.bus, scene.name)) as [Tool, Tool];
    scene.say('amara', "I'll sell you 1 silk for 5 coins.", 'bodo');
    await expect(trade.execute({ with: 'amara', item: 'silk', price: 1 }, context('bodo'))).rejects.toThrow('amara offered to sell 1 silk for 5 coins, not 1 silk for 1');
    await expect(trade.execute({ with: 'amara', item: 'silk', price: 5 }, context('bodo'))).resolves.toEqual({ seller: 'amara', buyer: 'bodo', item: 'silk', price: 5 });
    // The offer is closed once taken.
    await expect(trade.execute({ with: 'amara', item: 'silk', price: 5 }, context('bodo'))).rejects.toThrow('no offer');
  });

  it('closes quiet once the stalls are bare and nobody haggles', async () => {
    const eager: TraderProfile[] = ['amara', 'bodo', 'cyra'].map((name) => ({ name, coin: 100, goods: {}, values: { saffron: 30, silk: 20, spice: 15, tea: 10 } }));
    const market = buildMarket({ seed: 5, traders: eager });
    const result = await market.run({ ticks: 40 });
    expect(result.reason).toBe('quiet');
    expect(Object.values(market.read('market.stock') as Record<string, number>)).toEqual([0, 0, 0, 0]);
    expect(marketScene.summarize!(market, result)).toMatch(/^The market closes at tick \d+ \(quiet\), sold out\. Purses: amara \d+, bodo \d+, cyra \d+\.$/);
  });

  it('is deterministic with a seed', async () => {
    const run = async (seed: number) => {
      const market = buildMarket({ seed });
      const events = record(market);
      await market.run({ ticks: 40 });
      return JSON.stringify(events);
    };
    expect(await run(7)).toBe(await run(7));
    expect(traderProfiles(7)).toEqual(traderProfiles(7));
    expect(traderProfiles(7)).not.toEqual(traderProfiles(8));
  });
});
