import type { Brain, Envelope, Perception } from '../../src/index.js';
import { action, call } from './action-text.js';
import { lastAddressed, pick } from './listen.js';
import { LAST_ORDERS, MENU, openOrders, patronOf } from './world.js';

/**
 * The staff of the Wobbly Flagon. Each brain is a plain function of what its agent perceives,
 * and answers with the text a model would write: speech, an `<ACTION>` block, or both. The
 * innkeeper and the guard think twice a turn (`rounds: 2`): act, then speak about how it went.
 */

/** Serves every open order, then says how it went; opens the evening and calls last orders. */
export const innkeeper: Brain = (perception) => {
  if (perception.round === 2) return afterServing(perception);
  const { world, tick } = perception;
  if (perception.trigger.reason === 'start') {
    return action(call('post_notice', { text: 'Tonight: lamb stew, 3 coins. Troublemakers answer to the guard.' }));
  }
  const orders = openOrders(world);
  // One block can hold many calls: every open order is served in one go.
  if (orders.length > 0) return action(orders.slice(0, 8).map((order) => call('serve', order)));
  if (perception.trigger.reason === 'timer' && tick >= LAST_ORDERS) {
    return action(call('post_notice', { text: 'Last orders! Settle your tabs, friends.' }));
  }
  const asked = lastAddressed(perception);
  if (asked !== undefined) {
    const tab = patronOf(world, asked.from)?.tab ?? 0;
    return tab > 0 ? `That's ${tab} coins on your tab so far, ${asked.from}.` : `What can I get you, ${asked.from}?`;
  }
  return pick(perception, ['*polishes a mug*', 'Quiet night, this.']);
};

/** Round 2: the serve results are in the observation; announce them, apologise for the rest. */
function afterServing(perception: Perception): string {
  const calls = perception.observation?.calls ?? [];
  if (calls[0]?.name === 'post_notice') {
    return perception.tick >= LAST_ORDERS
      ? 'Last orders, everyone! Settle up before you go.'
      : `Evening, all! ${Object.entries(MENU).map(([item, price]) => `${item} ${price}`).join(', ')}. Mind the notice board.`;
  }
  const served: string[] = [];
  const sorry: string[] = [];
  for (const item of calls) {
    if (item.status === 'completed') served.push(`${item.args.item as string} for ${item.args.patron as string}`);
    // The tool's own words say why; a model reads them the same way.
    else if (item.status === 'failed' && item.error.message.includes('is finished')) {
      const patron = item.args.patron as string;
      sorry.push(call('say', { text: `Sorry, ${patron}, the ${item.args.item as string} is finished. Something else?`, to: patron }));
    }
  }
  const text = served.length > 0 ? `Here you are: ${served.join(', ')}.` : undefined;
  if (sorry.length > 0) return action(sorry, text);
  return text ?? 'Hm.';
}

/** Who started trouble, from the event that woke the guard. */
function culpritOf(events: readonly Envelope[]): { name: string; brawl: boolean } | undefined {
  const event = events.at(-1);
  if (event?.type === 'scene.event') {
    const by = (event.data.payload as { by?: unknown } | undefined)?.by;
    return typeof by === 'string' ? { name: by, brawl: true } : undefined;
  }
  if (event?.type === 'agent.said' && event.agent !== undefined) return { name: event.agent, brawl: false };
  return undefined;
}

/** Keeps order: a warning first, the door for a second offence or a brawl. */
export const guard: Brain = (perception) => {
  if (perception.round === 2) return afterWord(perception);
  const culprit = culpritOf(perception.events);
  const record = culprit === undefined ? undefined : patronOf(perception.world, culprit.name);
  if (culprit === undefined || record?.status !== 'in') return action(call('wait'));
  if (culprit.brawl || record.warned) {
    return action(call('eject', { patron: culprit.name, reason: culprit.brawl ? 'started a brawl' : 'would not settle down' }), `Right, ${culprit.name}. That's enough.`);
  }
  return action(call('calm', { patron: culprit.name }));
};

/** Round 2: tell the patron what just happened to them. */
function afterWord(perception: Perception): string {
  const done = perception.observation?.calls[0];
  if (done?.status !== 'completed' || done.name === 'wait') return 'Hmph.';
  const patron = done.args.patron as string;
  const text =
    done.name === 'eject'
      ? `Out you go, ${patron}, and don't come back tonight.`
      : `Easy, ${patron}. That's your one warning. Sit down and drink quietly.`;
  return action(call('say', { text, to: patron }));
}

const SONGS = [
  { title: 'The Wobbly Flagon', words: 'Oh the Flagon wobbles and so do we, so pour another for you and me!' },
  { title: "The Dragon's Hoard", words: 'Gold on gold the dragon slept, while the foolish miller crept...' },
  { title: 'Stew of the Seven Seas', words: "A carrot, a turnip, a sailor's old boot: simmer it slowly and call it a soup!" },
  { title: 'The Guard Who Never Slept', words: 'He watched the door for forty years, and never missed a round of cheers!' },
] as const;
const LAST_SONG = { title: 'Last Orders', words: 'The candles are low and the barrels are dry, so finish your cup and wave the night goodbye.' };

/** Sings on its timer (or on request), thanks for new tips, and remembers what it sang. */
export const bard: Brain = (perception) => {
  const { world, tick } = perception;
  // Private state is how a brain remembers across turns: the last song, and the tips already thanked for.
  const memory = (perception.private.memory ?? {}) as { last?: string; thanked?: number };
  const previous = memory.last;
  const thanked = memory.thanked ?? 0;
  const tips = (world.get('bard.tips') as number | undefined) ?? 0;
  const request = lastAddressed(perception);
  const requested = request === undefined ? undefined : SONGS.find((song) => request.text.includes(song.title));
  const choices = SONGS.filter((song) => song.title !== previous);
  const song = tick >= LAST_ORDERS ? LAST_SONG : (requested ?? pick(perception, choices));
  const thanks = tips > thanked ? `Thank you kindly for the ${tips - thanked} coin${tips - thanked === 1 ? '' : 's'}! ` : '';
  return action(
    [call('say', { text: `♪ ${song.words} ♪` }), call('update_private', { key: 'memory', value: { last: song.title, thanked: tips } })],
    `${thanks}This one is "${song.title}".`,
  );
};
