import type { Scene, SceneResult } from '../../src/index.js';
import { CELLAR, CLUMSY, openingWorld, type PatronRecord } from './world.js';

/** `1 portion`, `2 portions`. */
function count(value: number, noun: string, plural = `${noun}s`): string {
  return `${value} ${value === 1 ? noun : plural}`;
}

/** One line on how the evening went, read off the world at closing time. */
export function tavernSummary(scene: Scene, result: SceneResult): string {
  const opening = (openingWorld().tavern as { stock: Record<string, number> }).stock;
  const stock = (scene.read('tavern.stock') ?? {}) as Record<string, number>;
  const cellar = (scene.read('cellar') ?? {}) as Record<string, number>;
  const fromCellar = Object.keys(CELLAR).reduce((total, item) => total + CELLAR[item]! - (cellar[item] ?? 0), 0);
  // What left the bar: what it had, plus what came up from the cellar, less what is left.
  const served = Object.keys(opening).reduce((total, item) => total + opening[item]! - (stock[item] ?? 0), 0) + fromCellar;
  const patrons = (scene.read('patrons') ?? {}) as Record<string, PatronRecord>;
  const ejected = Object.keys(patrons).filter((name) => patrons[name]!.status === 'ejected');
  const unpaid = Object.values(patrons).reduce((total, patron) => total + patron.tab, 0);
  const lessons = (scene.agents.get(CLUMSY)?.private.lessons as number | undefined) ?? 0;
  const parts = [
    `${count(served, 'portion')} served`,
    fromCellar > 0 ? `${count(fromCellar, 'portion')} brought up from the cellar` : 'the cellar stayed shut',
    `${count(scene.read('tavern.till') as number, 'coin')} in the till${unpaid > 0 ? ` (${unpaid} unpaid)` : ''}`,
    `${count(scene.read('bard.tips') as number, 'coin')} in the bard's hat`,
    ejected.length > 0 ? `thrown out: ${ejected.join(', ')}` : 'nobody thrown out',
    `${CLUMSY} fixed ${lessons} of his 3 mistakes`,
  ];
  return `The Wobbly Flagon closes at tick ${result.tick} (${result.reason}): ${parts.join('; ')}.`;
}
