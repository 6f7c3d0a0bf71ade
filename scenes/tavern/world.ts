import type { JsonValue, WorldReader } from '../../src/index.js';

/** What the tavern sells, and for how many coins. */
export const MENU: Readonly<Record<string, number>> = Object.freeze({ ale: 2, bread: 1, stew: 3 });

/** Orders waiting at the bar, oldest first. */
export type Order = { patron: string; item: string };

/** Where a patron is: at a table, gone home, or thrown out. */
export type PatronStatus = 'in' | 'home' | 'ejected';

/** A patron as the world holds them (`patrons.<name>`): what everyone can see. */
export type PatronRecord = { coin: number; tab: number; drinks: number; warned: boolean; status: PatronStatus };

/** A patron's character: the same brain plays all of them differently. */
export type PatronProfile = {
  name: string;
  coin: number;
  favourite: string;
  /** Chance, once a few ales are in, that a turn turns loud. */
  rowdiness: number;
  /** Small talk, addressed to another patron. */
  lines: readonly string[];
};

/** The regulars. `pip` is the clumsy one: his brain is in clumsy-brain.ts. */
export const PATRONS: readonly PatronProfile[] = Object.freeze([
  {
    name: 'ana',
    coin: 14,
    favourite: 'stew',
    rowdiness: 0.05,
    lines: ['Did you hear? The mill burned down last night.', 'This stew is better than my mother-in-law\'s.', 'They say the bard once sang for a king.'],
  },
  {
    name: 'bram',
    coin: 12,
    favourite: 'ale',
    rowdiness: 0.45,
    lines: ['I could lift that barrel with one hand.', 'Another round, and then another!', 'The guard looks sleepy tonight.'],
  },
  {
    name: 'pip',
    coin: 8,
    favourite: 'ale',
    rowdiness: 0.15,
    lines: ['Is it me, or is the floor moving?', 'I have a theory about cheese.', 'Has anyone seen my other boot?'],
  },
]);

/** The name of the patron whose brain makes (and corrects) a model's typical mistakes. */
export const CLUMSY = 'pip';

/** The tick from which the innkeeper calls last orders and patrons settle up and go home. */
export const LAST_ORDERS = 24;

/** What the cellar holds at opening time: the steward brings it up, with the landlord's leave. */
export const CELLAR: Readonly<Record<string, number>> = Object.freeze({ ale: 8, stew: 3 });

/** Stock at or under which the steward asks to bring more up from the cellar. */
export const LOW_STOCK = 2;

/** The tavern at opening time: stock, prices, an empty till and bar, the notice board, the regulars, the cellar. */
export function openingWorld(): Record<string, JsonValue> {
  const patrons: Record<string, JsonValue> = {};
  for (const profile of PATRONS) {
    patrons[profile.name] = { coin: profile.coin, tab: 0, drinks: 0, warned: false, status: 'in' };
  }
  return {
    tavern: {
      name: 'The Wobbly Flagon',
      stock: { ale: 14, bread: 6, stew: 3 },
      prices: { ...MENU },
      till: 0,
      orders: [],
      board: ['Rooms upstairs: ask the innkeeper.'],
      lastOrders: LAST_ORDERS,
    },
    patrons,
    bard: { tips: 0 },
    cellar: { ...CELLAR },
  };
}

/** A patron's record, or undefined for anyone who is not a patron. */
export function patronOf(world: WorldReader, name: string): PatronRecord | undefined {
  return world.get(['patrons', name]) as PatronRecord | undefined;
}

/** The patrons still at their tables. */
export function patronsIn(world: WorldReader): string[] {
  const all = (world.get('patrons') ?? {}) as Record<string, PatronRecord>;
  return Object.keys(all).filter((name) => all[name]!.status === 'in');
}

/** The orders waiting at the bar. */
export function openOrders(world: WorldReader): Order[] {
  return (world.get('tavern.orders') ?? []) as Order[];
}
