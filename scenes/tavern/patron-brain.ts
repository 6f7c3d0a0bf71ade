import type { Brain, Heard, Perception } from '../../src/index.js';
import { action, call } from './action-text.js';
import { heardFrom, lastAddressed, lastFailure, pick } from './listen.js';
import { LAST_ORDERS, MENU, PATRONS, patronOf, patronsIn, type PatronProfile, type PatronRecord } from './world.js';

/**
 * A patron: one brain for all of them, played differently through each profile (what they
 * drink, how rowdy they get, what they talk about) and the seeded `perception.random()`.
 */
export const patron: Brain = (perception) => {
  const me = patronOf(perception.world, perception.agent);
  const profile = PATRONS.find((entry) => entry.name === perception.agent);
  if (me === undefined || profile === undefined) return action(call('wait'));
  const said = perception.trigger.reason === 'message' ? lastAddressed(perception) : undefined;
  if (me.status !== 'in') {
    return said?.from === 'guard' ? "Fine, fine, I'm going! Your ale was watered anyway." : action(call('wait'));
  }
  if (said !== undefined) return reply(perception, me, said);
  return recover(perception, me) ?? evening(perception, me, profile);
};

/** Answers whoever spoke to this patron. */
function reply(perception: Perception, me: PatronRecord, said: Heard): string {
  if (said.from === 'guard') return "Alright, alright. I'm sitting down.";
  if (said.from === 'innkeeper' && said.text.includes('is finished')) {
    const other = inStock(perception).find((item) => !said.text.includes(item));
    if (other !== undefined && canAfford(me, other)) return action(call('order', { item: other }), `Then ${other}, please.`);
    return 'Ah well, never mind.';
  }
  return pick(perception, ['Ha! You don\'t say.', 'Is that so?', 'Cheers to that!', 'I heard the same from the miller.']);
}

/**
 * Reads the last observation: a tool that refused last turn says why, and the patron acts on it
 * instead of repeating the call.
 */
function recover(perception: Perception, me: PatronRecord): string | undefined {
  const failed = lastFailure(perception);
  if (failed === undefined) return undefined;
  if (failed.name === 'leave' && me.tab > 0 && me.coin > 0) {
    return action(call('pay', { amount: Math.min(me.tab, me.coin) }), 'Oh, right, the tab.');
  }
  if (failed.name === 'order') {
    const other = inStock(perception).find((item) => item !== failed.args.item && canAfford(me, item));
    if (other !== undefined) return action(call('order', { item: other }), `No ${failed.args.item as string}? Then ${other}.`);
  }
  if (failed.name === 'pay' && me.coin > 0) return action(call('pay', { amount: Math.min(me.tab, me.coin) }), 'This is all I have.');
  return undefined;
}

/** A turn on the patron's own timer: drink, chat, tip, get loud, settle up, go home. */
function evening(perception: Perception, me: PatronRecord, profile: PatronProfile): string {
  const { tick } = perception;
  if (tick >= LAST_ORDERS) {
    if (me.tab > 0 && me.coin > 0) return action(call('pay', { amount: Math.min(me.tab, me.coin) }), 'Let me settle up.');
    if (me.tab > 0) return action(call('wait'), "I'm a bit short tonight...");
    return action(call('leave'), 'Goodnight, all!');
  }
  if (heardFrom(perception, 'bard') && me.coin - me.tab >= 3 && perception.random() < 0.3) {
    return action(call('tip', { amount: 1 }), 'Bravo, bard!');
  }
  if (me.drinks >= 2 && perception.random() < profile.rowdiness) {
    if (!me.warned) return pick(perception, ['Oi! Who spilled my ale? I will fight any of you!', 'One more word and I punch this table in two!']);
    // A warned patron who acts up again starts a brawl: a scene event, not just loud words.
    return action(call('publish_event', { name: 'brawl', payload: { by: perception.agent } }), 'That does it! *shoves the table over*');
  }
  if (me.tab >= 6 && me.coin > 0) return action(call('pay', { amount: Math.min(me.tab, me.coin) }), 'Better pay before I forget.');
  const item = choose(perception, me, profile);
  if (item !== undefined && perception.random() < 0.7) return action(call('order', { item }), `Innkeeper! ${item === 'ale' ? 'An ale' : `Some ${item}`}, please.`);
  if (perception.random() < 0.3) return action(call('say', { text: "Bard! Play us \"The Dragon's Hoard\"!", to: 'bard' }));
  const others = patronsIn(perception.world).filter((name) => name !== perception.agent);
  if (others.length === 0) return action(call('wait'));
  return action(call('say', { text: pick(perception, profile.lines), to: pick(perception, others) }));
}

/** The favourite when there is any left, else whatever is. */
function choose(perception: Perception, me: PatronRecord, profile: PatronProfile): string | undefined {
  const available = inStock(perception).filter((item) => canAfford(me, item));
  if (available.includes(profile.favourite) && perception.random() < 0.7) return profile.favourite;
  return available.length === 0 ? undefined : pick(perception, available);
}

function inStock(perception: Perception): string[] {
  const stock = (perception.world.get('tavern.stock') ?? {}) as Record<string, number>;
  return Object.keys(MENU).filter((item) => (stock[item] ?? 0) > 0);
}

function canAfford(me: PatronRecord, item: string): boolean {
  return me.coin - me.tab >= MENU[item]!;
}
