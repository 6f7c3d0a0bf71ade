import type { Brain, Perception } from '../../src/index.js';
import { action, call } from './action-text.js';
import { LOW_STOCK } from './world.js';

/**
 * The steward keeps the cellar. Woken when something at the bar runs low, he asks to bring more
 * up: `open_cellar` needs the landlord's approval, so his turn waits for it — on the inspector's
 * page, or as `troupe run --approve` says. Round 2 reads the answer in the observation. He asks
 * once per item: a refusal is remembered in his private state.
 */
export const steward: Brain = (perception) => {
  if (perception.round === 2) return afterAsking(perception);
  const item = wanted(perception);
  // Nothing he may fetch (not in the cellar, or refused already): the turn passes in silence.
  if (item === undefined) return null;
  const count = Math.min(6, (perception.world.get(['cellar', item]) as number | undefined) ?? 0);
  return action(call('open_cellar', { item, count }), `The ${item} is running low. I'll fetch ${count} more from the cellar, if the landlord allows.`);
};

/** The item at the bar that is lowest and still in the cellar, unless he was refused it already. */
function wanted(perception: Perception): string | undefined {
  const stock = (perception.world.get('tavern.stock') ?? {}) as Record<string, number>;
  const cellar = (perception.world.get('cellar') ?? {}) as Record<string, number>;
  const refused = (perception.private.refused ?? []) as string[];
  const low = Object.keys(cellar)
    .filter((item) => (cellar[item] ?? 0) > 0 && (stock[item] ?? 0) <= LOW_STOCK && !refused.includes(item))
    .sort((a, b) => (stock[a] ?? 0) - (stock[b] ?? 0));
  return low[0];
}

/** Round 2: the landlord's answer is in the observation: brought up, or refused (then remembered). */
function afterAsking(perception: Perception): string {
  const done = perception.observation?.calls[0];
  if (done === undefined || done.name !== 'open_cellar') return 'All in order.';
  if (done.status === 'completed') {
    const { brought, item } = done.output as { brought: number; item: string };
    return `${brought} more ${item} up from the cellar!`;
  }
  // A refusal says no more than its reason: the item is the one he asked for, still the lowest.
  const item = wanted(perception);
  if (done.status === 'denied' && item !== undefined) {
    const refused = [...((perception.private.refused ?? []) as string[]), item];
    return action(call('update_private', { key: 'refused', value: refused }), `No ${item} from the cellar tonight, then.`);
  }
  return 'The cellar door is stuck.';
}
