import { defineScene } from '../../src/index.js';
import { buildMarket, marketSummary } from './build-market.js';

export { buildMarket, marketSummary, type MarketOptions } from './build-market.js';
export { traderProfiles, type TraderProfile } from './profiles.js';

/**
 * `troupe run market`: four traders and one shared stock. At the opening bell they all reach for
 * the one saffron at once and exactly one gets it; then they buy, offer, counter and trade until
 * the stalls are bare and the haggling stops (or the ticks run out).
 */
export const scene = defineScene({
  description: 'four traders race for one shared stock and haggle over what they hold; exclusive world writes decide every race',
  ticks: 40,
  create: (context) => buildMarket(context),
  summarize: marketSummary,
});
