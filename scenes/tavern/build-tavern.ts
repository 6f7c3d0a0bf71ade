import { createScene, type Envelope, type Scene, type SceneContext } from '../../src/index.js';
import { clumsy } from './clumsy-brain.js';
import { ROWDY } from './listen.js';
import { patron } from './patron-brain.js';
import { bard, guard, innkeeper } from './staff-brains.js';
import { steward } from './steward-brain.js';
import { tavernTools } from './tools.js';
import { CLUMSY, LAST_ORDERS, LOW_STOCK, PATRONS, openingWorld } from './world.js';

/** How to build the tavern: a seed for the patrons' moods, and where events go (as `troupe run` gives them). */
export type TavernOptions = Omit<SceneContext, 'options'> & {
  /** Speech replies in a row before a chain stops waking anyone (default 4). */
  maxReplyChain?: number;
  /**
   * Who answers the steward's `open_cellar` requests (they need approval): absent, whoever runs
   * the scene — `troupe run` as its `--approve` says, the inspector's page, or your own
   * `agent.approve` / `agent.deny` on `tool.approval.requested` (until someone does, the tick
   * waits); `'approve'` or `'deny'`, the scene itself, at once.
   */
  cellar?: 'approve' | 'deny';
};

/**
 * An evening at the Wobbly Flagon, on a stepped clock under the `trigger` policy: the innkeeper
 * wakes for new orders, the guard for loud words and brawls, the bard on a timer, the steward when
 * the bar runs low (his `open_cellar` needs approval), the patrons on their own timers and when
 * spoken to, until they go home or are thrown out. Nobody is on a model: every brain is a function.
 *
 * @example
 * const tavern = buildTavern({ seed: 7 });
 * tavern.bus.on('agent.said', (event) => console.log(`${event.agent}: ${event.data.text}`));
 * await tavern.run({ ticks: 30 });
 */
export function buildTavern(options: TavernOptions): Scene {
  const scene = createScene({
    name: 'tavern',
    world: openingWorld(),
    seed: options.seed,
    schedule: 'trigger',
    clock: { mode: 'stepped' },
    maxReplyChain: options.maxReplyChain ?? 4,
    // Whoever runs the scene (troupe run, a test) sees every event through these.
    bus: options.bus,
    observe: options.observe,
    logger: options.logger,
    log: options.log,
    model: options.model,
    tools: options.tools,
  });
  const tools = tavernTools(scene.world, (name) => void scene.retire(name));
  const isPatronIn = (name: string | undefined): boolean => name !== undefined && scene.world.get(['patrons', name, 'status']) === 'in';
  const isLow = (event: Envelope<'world.changed'>): boolean => event.data.path.startsWith('tavern.stock.') && typeof event.data.value === 'number' && event.data.value <= LOW_STOCK;

  scene.add({
    name: 'innkeeper',
    instructions: 'You run the Wobbly Flagon. Serve every open order, and keep the board up to date.',
    brain: innkeeper,
    tools: tools.innkeeper,
    rounds: 2,
    triggers: [
      'start',
      'addressed',
      { on: 'world.changed', where: (event) => (event as Envelope<'world.changed'>).data.path === 'tavern.orders' },
      // Fires once, at last orders.
      { every: 1_000, offset: LAST_ORDERS },
    ],
  });
  scene.add({
    name: 'guard',
    instructions: 'You keep order. Warn a patron who gets loud; throw out one who does it again, or starts a brawl.',
    brain: guard,
    tools: tools.guard,
    rounds: 2,
    triggers: [
      { on: 'agent.said', where: (event) => isPatronIn(event.agent) && ROWDY.test((event as Envelope<'agent.said'>).data.text) },
      { on: 'scene.event', where: (event) => (event as Envelope<'scene.event'>).data.name === 'brawl' },
    ],
  });
  scene.add({
    name: 'bard',
    instructions: 'You sing for tips. Take requests.',
    brain: bard,
    triggers: [{ every: 5, offset: 2 }, 'addressed'],
  });
  scene.add({
    name: 'steward',
    instructions: 'You keep the cellar. When something at the bar runs low, bring more up; the landlord must approve each trip.',
    brain: steward,
    tools: tools.steward,
    rounds: 2,
    triggers: [{ on: 'world.changed', where: (event) => isLow(event as Envelope<'world.changed'>) }],
  });
  if (options.cellar !== undefined) answerCellar(scene, options.cellar);
  PATRONS.forEach((profile, index) => {
    scene.add({
      name: profile.name,
      instructions: `You are ${profile.name}, a regular. Order, chat, pay your tab.`,
      brain: profile.name === CLUMSY ? clumsy : patron,
      tools: tools.patron,
      // Two deliberations a turn let the clumsy patron fix a mistake in the same turn.
      rounds: profile.name === CLUMSY ? 2 : 1,
      triggers: [{ every: 3, offset: index + 1 }, 'addressed'],
    });
  });
  return scene;
}

/** The landlord's standing answer to the steward, given as each request is published. */
function answerCellar(scene: Scene, answer: 'approve' | 'deny'): void {
  scene.bus.on('tool.approval.requested', (event) => {
    const agent = event.agent === undefined ? undefined : scene.agents.get(event.agent)?.agent;
    if (agent === undefined || event.data.name !== 'open_cellar') return;
    if (answer === 'approve') agent.approve(event.data.callId, { argsHash: event.data.argsHash });
    else agent.deny(event.data.callId, 'the landlord keeps the cellar shut tonight');
  });
}
