import type { Scene, SceneResult } from '../../src/index.js';
import { CLUMSY, openingWorld, type PatronRecord } from './world.js';

/** One line on how the evening went, read off the world at closing time. */
export function tavernSummary(scene: Scene, result: SceneResult): string {
  const opening = (openingWorld().tavern as { stock: Record<string, number> }).stock;
  const stock = (scene.read('tavern.stock') ?? {}) as Record<string, number>;
  const served = Object.keys(opening).reduce((total, item) => total + opening[item]! - (stock[item] ?? 0), 0);
  const patrons = (scene.read('patrons') ?? {}) as Record<string, PatronRecord>;
  const ejected = Object.keys(patrons).filter((name) => patrons[name]!.status === 'ejected');
  const unpaid = Object.values(patrons).reduce((total, patron) => total + patron.tab, 0);
  const lessons = (scene.agents.get(CLUMSY)?.private.lessons as number | undefined) ?? 0;
  const parts = [
    `${served} portions served`,
    `${scene.read('tavern.till') as number} coins in the till${unpaid > 0 ? ` (${unpaid} unpaid)` : ''}`,
    `${scene.read('bard.tips') as number} in the bard's hat`,
    ejected.length > 0 ? `thrown out: ${ejected.join(', ')}` : 'nobody thrown out',
    `${CLUMSY} fixed ${lessons} of his 3 mistakes`,
  ];
  return `The Wobbly Flagon closes at tick ${result.tick} (${result.reason}): ${parts.join('; ')}.`;
}
