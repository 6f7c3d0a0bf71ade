import type { JsonValue } from '../../src/index.js';

/** The market's list prices: what `buy` charges for one unit from the shared stock. */
export const PRICES: Readonly<Record<string, number>> = Object.freeze({ saffron: 12, silk: 9, spice: 6, tea: 4 });

/** The shared stock at the opening bell. One saffron: everyone wants it, and only one gets it. */
export const OPENING_STOCK: Readonly<Record<string, number>> = Object.freeze({ saffron: 1, silk: 2, spice: 3, tea: 4 });

/** The traders of the default market. */
export const TRADERS: readonly string[] = Object.freeze(['amara', 'bodo', 'cyra', 'dov']);

/** One trader: purse, goods in hand, and what each item is worth to them (their private state). */
export type TraderProfile = { name: string; coin: number; goods: Record<string, number>; values: Record<string, number> };

/** A small seeded generator (mulberry32): the market's setup is as reproducible as its brains. */
function seeded(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Seeded profiles: each trader values each item between 60 % and 160 % of its list price (saffron
 * always above it), starts with 30 coins and one or two items to sell.
 */
export function traderProfiles(seed: number, names: readonly string[] = TRADERS): TraderProfile[] {
  const random = seeded(seed);
  const items = Object.keys(PRICES);
  return names.map((name) => {
    const values: Record<string, number> = {};
    for (const item of items) {
      const price = PRICES[item]!;
      values[item] = item === 'saffron' ? price + 1 + Math.floor(random() * 6) : Math.max(1, Math.round(price * (0.6 + random())));
    }
    const goods: Record<string, number> = {};
    const held = 1 + Math.floor(random() * 2);
    for (let count = 0; count < held; count++) {
      const item = items[1 + Math.floor(random() * (items.length - 1))]!;
      goods[item] = (goods[item] ?? 0) + 1;
    }
    return { name, coin: 30, goods, values };
  });
}

/** The world at the opening bell: `market.stock`, `market.price`, `market.coin.<trader>`, `market.goods.<trader>`. */
export function openingMarket(profiles: readonly TraderProfile[], stock: Readonly<Record<string, number>> = OPENING_STOCK): Record<string, JsonValue> {
  const coin: Record<string, JsonValue> = {};
  const goods: Record<string, JsonValue> = {};
  for (const profile of profiles) {
    coin[profile.name] = profile.coin;
    goods[profile.name] = { ...profile.goods };
  }
  return { market: { stock: { ...stock }, price: { ...PRICES }, coin, goods } };
}
