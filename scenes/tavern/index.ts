import { defineScene } from '../../src/index.js';
import { buildTavern } from './build-tavern.js';
import { tavernSummary } from './summary.js';

export { buildTavern, type TavernOptions } from './build-tavern.js';

/**
 * `troupe run tavern`: an evening at the Wobbly Flagon. An innkeeper serves, a guard keeps order,
 * a bard sings for tips, and three patrons order, chat, pay and sometimes get loud. One of them,
 * pip, writes `<ACTION>` blocks the way a careless model does and fixes each from the runtime's
 * observation. All brains are scripted, so a seed replays an evening exactly.
 */
export const scene = defineScene({
  description: 'an evening at the Wobbly Flagon: innkeeper, guard, bard and patrons; one patron learns the <ACTION> format the hard way',
  ticks: 30,
  create: (context) => buildTavern(context),
  summarize: tavernSummary,
});
