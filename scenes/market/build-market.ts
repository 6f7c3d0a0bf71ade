import { createScene, type Envelope, type Scene, type SceneContext, type SceneResult } from '../../src/index.js';
import { OPENING_STOCK, openingMarket, traderProfiles, type TraderProfile } from './profiles.js';
import { QuoteBook } from './quotes.js';
import { marketTools } from './tools.js';
import { trader } from './trader-brain.js';

/** How to build a market. Leave out `traders` and `stock` for the default four traders and stalls. */
export type MarketOptions = Omit<SceneContext, 'options'> & {
  /** The traders (default: four with seeded values, from `traderProfiles(seed)`). */
  traders?: readonly TraderProfile[];
  /** The shared stock at the opening bell. */
  stock?: Readonly<Record<string, number>>;
};

/**
 * A market on the `trigger` policy: at the opening bell every trader acts at once, so the turns
 * of one tick race for the same stock; `world.update` decides who wins. After that, traders wake
 * when spoken to (offers and counter-offers, said with `say` and `to`) and when the stock moves,
 * and the market falls quiet once the stock is gone and the haggling is done.
 *
 * @example
 * const market = buildMarket({ seed: 3 });
 * const result = await market.run({ ticks: 40 });
 * console.log(result.reason, market.read('market.stock'));
 */
export function buildMarket(options: MarketOptions): Scene {
  const traders = options.traders ?? traderProfiles(options.seed);
  const scene = createScene({
    name: 'market',
    world: openingMarket(traders, options.stock ?? OPENING_STOCK),
    seed: options.seed,
    schedule: 'trigger',
    clock: { mode: 'stepped' },
    // Each sale wakes the others, one step further down the chain: allow a chain per unit of stock.
    maxReplyChain: 24,
    // Whoever runs the scene (troupe run, a test) sees every event through these.
    bus: options.bus,
    observe: options.observe,
    logger: options.logger,
    log: options.log,
    model: options.model,
    tools: options.tools,
  });
  const tools = marketTools(scene.world, new QuoteBook(scene.bus, scene.name));
  const stockMoved = (event: Envelope): boolean => event.type === 'world.changed' && event.data.path.startsWith('market.stock.');
  for (const profile of traders) {
    scene.add({
      name: profile.name,
      instructions: `You trade at the market. Buy what is worth more to you than its price; sell what is worth less. Offers are said aloud: "I'll sell you 1 silk for 11 coins."`,
      brain: trader,
      tools,
      private: { values: profile.values },
      triggers: ['start', 'addressed', { on: 'world.changed', where: stockMoved }],
    });
  }
  return scene;
}

/** The market's summary line: why it closed, what sold, and every trader's purse. */
export function marketSummary(scene: Scene, result: SceneResult): string {
  const stock = (scene.read('market.stock') ?? {}) as Record<string, number>;
  const coin = (scene.read('market.coin') ?? {}) as Record<string, number>;
  const left = Object.entries(stock).filter(([, count]) => count > 0).map(([item, count]) => `${count} ${item}`);
  const purses = Object.entries(coin).map(([name, amount]) => `${name} ${amount}`).join(', ');
  const why = left.length === 0 ? 'sold out' : `left on the stalls: ${left.join(', ')}`;
  return `The market closes at tick ${result.tick} (${result.reason}), ${why}. Purses: ${purses}.`;
}
