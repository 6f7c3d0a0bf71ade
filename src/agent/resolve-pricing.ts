import { ConfigError } from '../errors.js';
import { DEFAULT_PRICES, priceTable, providerPrice, type ModelPrice, type PriceTable } from '../llm/prices.js';
import type { Provider } from '../llm/types.js';
import { unpricedMessage, type Budget } from './budget.js';

/**
 * The agent's price table (its own `prices` over the defaults, else its scene's) and the price of
 * its provider's model. A budget that caps cost must be kept: when the table has no price for the
 * model, the agent is refused here, before anything is spent, rather than run uncapped.
 */
export function resolvePricing(
  provider: Provider,
  own: PriceTable | undefined,
  inherited: PriceTable | undefined,
  budgets: readonly Budget[],
  agent: string,
): { prices: PriceTable; price: ModelPrice | undefined } {
  // The owner's name is only made for a table to check (an error names it).
  const prices = own !== undefined ? priceTable(own, `createAgent "${agent}"`) : (inherited ?? DEFAULT_PRICES);
  const price = providerPrice(provider, prices);
  // A provider that spends no tokens (a scripted brain) costs nothing: it needs no price.
  if (price === undefined && provider.spendsTokens !== false) {
    const capping = budgets.find((budget) => budget.limits.costUsd !== undefined);
    if (capping !== undefined) throw new ConfigError(`createAgent "${agent}": ${unpricedMessage(capping.name, provider)}`);
  }
  return { prices, price };
}
