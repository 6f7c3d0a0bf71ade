import type { Brain, Heard, Perception } from '../../src/index.js';
import { parseQuote, quoteText, type Quote } from './quotes.js';

/**
 * A trader: buys from the shared stock what is worth more to it than the list price, offers what
 * is worth less, haggles, and accepts a fair offer with `trade`. What an item is worth to it is
 * in its private state (`values`); so is how often it has haggled with whom. One brain serves
 * every trader.
 */
export const trader: Brain = (perception) => {
  const offer = offerToMe(perception);
  if (offer !== undefined) return answer(perception, offer.from, offer.quote);
  // Last turn's call failed (someone beat us to the last one): say so, then carry on.
  const failed = perception.observation?.calls.find((item) => item.status === 'failed');
  const grumble = failed?.status === 'failed' && failed.name === 'buy' ? `Blast, the ${failed.args.item as string} is gone!` : undefined;
  return shop(perception, grumble);
};

/** The latest offer addressed to this trader since its last turn. */
function offerToMe(perception: Perception): { from: string; quote: Quote } | undefined {
  let found: Heard | undefined;
  for (const item of perception.heard) if (item.to === perception.agent && parseQuote(item.text) !== undefined) found = item;
  return found === undefined ? undefined : { from: found.from, quote: parseQuote(found.text)! };
}

/** What the world says about this trader: purse, goods, and the stock it can buy from. */
function ledger(perception: Perception) {
  const { world, agent } = perception;
  return {
    coin: (world.get(['market', 'coin', agent]) as number | undefined) ?? 0,
    goods: (world.get(['market', 'goods', agent]) ?? {}) as Record<string, number>,
    stock: (world.get('market.stock') ?? {}) as Record<string, number>,
    price: (world.get('market.price') ?? {}) as Record<string, number>,
    values: (perception.private.values ?? {}) as Record<string, number>,
  };
}

/** Accepts, counters (twice at most with each trader), or walks away. */
function answer(perception: Perception, from: string, quote: Quote): string {
  const { coin, goods, values } = ledger(perception);
  const worth = values[quote.item] ?? 0;
  const haggles = (perception.private.haggles ?? {}) as Record<string, number>;
  const rounds = haggles[from] ?? 0;
  const accept = `<ACTION><trade><with>${from}</with><item>${quote.item}</item><price>${quote.price}</price></trade></ACTION>`;
  if (quote.side === 'sell') {
    if (quote.price <= worth && quote.price <= coin) return `Deal, ${from}!\n${accept}`;
    if (rounds >= 2 || worth < 1) return `Too rich for me, ${from}.`;
    // First counter halfway to a low bid, the second at what it is really worth to us.
    const bid = rounds === 0 ? Math.floor((quote.price + worth * 0.6) / 2) : worth;
    return counter(perception, from, { side: 'buy', item: quote.item, price: Math.max(1, Math.min(coin, worth, bid)) }, haggles);
  }
  if ((goods[quote.item] ?? 0) < 1) return `I have no ${quote.item}, ${from}.`;
  if (quote.price >= worth) return `Sold, ${from}!\n${accept}`;
  if (rounds >= 2) return `Not for that price, ${from}.`;
  const ask = rounds === 0 ? Math.ceil((quote.price + worth * 1.4) / 2) : worth;
  return counter(perception, from, { side: 'sell', item: quote.item, price: Math.max(worth, ask) }, haggles);
}

/** A counter-offer said to the other trader, and the haggle counted in private state. */
function counter(perception: Perception, to: string, quote: Quote, haggles: Record<string, number>): string {
  const count = { ...haggles, [to]: (haggles[to] ?? 0) + 1 };
  return (
    `<ACTION><say><to>${to}</to><text>${pick(perception, ['Hmm.', 'Come now.', 'Let us be reasonable.'])} ${quoteText(quote)}</text></say>` +
    `<update_private><key>haggles</key><value>${JSON.stringify(count)}</value></update_private></ACTION>`
  );
}

/** No offer to answer: buy a bargain, offer a surplus item, speculate, or stand by. */
function shop(perception: Perception, grumble: string | undefined): string {
  const { coin, goods, stock, price, values } = ledger(perception);
  const lead = grumble === undefined ? '' : `${grumble}\n`;
  const affordable = Object.keys(stock).filter((item) => (stock[item] ?? 0) > 0 && (price[item] ?? Infinity) <= coin);
  // The best bargain: the item worth most above its list price.
  const bargain = affordable
    .filter((item) => (values[item] ?? 0) > price[item]!)
    .sort((a, b) => values[b]! - price[b]! - (values[a]! - price[a]!) || a.localeCompare(b))[0];
  if (bargain !== undefined) return `${lead}<ACTION><buy><item>${bargain}</item></buy></ACTION>`;
  const offers = (perception.private.offers as number | undefined) ?? 0;
  const surplus = Object.keys(goods).find((item) => (goods[item] ?? 0) > 0 && (values[item] ?? 0) <= (price[item] ?? 0));
  const others = Object.keys((perception.world.get('market.coin') ?? {}) as object).filter((name) => name !== perception.agent);
  if (surplus !== undefined && offers < 2 && others.length > 0) {
    const quote: Quote = { side: 'sell', item: surplus, price: Math.max(price[surplus] ?? 1, Math.ceil((values[surplus] ?? 1) * 1.3)) };
    return (
      `${lead}<ACTION><say><to>${pick(perception, others)}</to><text>${quoteText(quote)}</text></say>` +
      `<update_private><key>offers</key><value>${offers + 1}</value></update_private></ACTION>`
    );
  }
  // Nothing worth more than its price: now and then, buy the cheapest to sell on later.
  const cheapest = affordable.sort((a, b) => price[a]! - price[b]! || a.localeCompare(b))[0];
  if (cheapest !== undefined && perception.random() < 0.4) return `${lead}<ACTION><buy><item>${cheapest}</item></buy></ACTION>`;
  return `${lead}${Object.values(stock).some((count) => count > 0) ? 'Nothing for me at these prices.' : 'The stalls are bare.'}`.trim();
}

function pick<T>(perception: Perception, options: readonly T[]): T {
  return options[Math.floor(perception.random() * options.length)]!;
}
