import { createAgent, createScene, defineScene, defineTool, sceneOptionsFrom, scriptedProvider, type Bus } from '../../src/index.js';

/**
 * The quickstart: one quartermaster agent on a scripted brain. Its brain makes a typical model
 * mistake (a wrong parameter name), reads the runtime's correction, fixes the call, hands out an
 * item and answers — the whole cycle, offline.
 */

/** The quartermaster's tools over a fresh store, for one run. */
function stores() {
  const stock = new Map([
    ['rope', 3],
    ['lantern', 1],
    ['bread', 12],
  ]);

  const checkStock = defineTool({
    name: 'check_stock',
    description: 'How many of an item the stores hold.',
    parameters: {
      type: 'object',
      properties: { item: { type: 'string', description: 'Item name, e.g. "rope".', maxLength: 64 } },
      required: ['item'],
      additionalProperties: false,
    },
    readOnly: true,
    execute: ({ item }) => ({ item, count: stock.get(item as string) ?? 0 }),
  });

  const giveItem = defineTool({
    name: 'give_item',
    description: 'Hand items from the stores to a crew member.',
    parameters: {
      type: 'object',
      properties: {
        item: { type: 'string', maxLength: 64 },
        to: { type: 'string', maxLength: 64 },
        count: { type: 'integer', minimum: 1, default: 1 },
      },
      required: ['item', 'to'],
      additionalProperties: false,
    },
    execute: ({ item, to, count }) => {
      const left = (stock.get(item as string) ?? 0) - (count as number);
      if (left < 0) throw new Error(`only ${stock.get(item as string) ?? 0} ${String(item)} left`);
      stock.set(item as string, left);
      return { given: count, to, left };
    },
  });

  return { tools: [checkStock, giveItem], stock };
}

/** What the quartermaster's scripted brain writes, one model turn per entry. */
function script() {
  return scriptedProvider([
    // A wrong parameter name, as models often write: the runtime answers with "did you mean".
    'Let me check the stores.\n<ACTION><check_stock><name>rope</name></check_stock></ACTION>',
    'Let me check the stores.\n<ACTION><check_stock><item>rope</item></check_stock></ACTION>',
    'Three coils. Handing one to Mara.\n<ACTION><give_item><item>rope</item><to>Mara</to><count>1</count></give_item></ACTION>',
    'Mara has her rope; two coils are left in the stores.',
  ]);
}

const INSTRUCTIONS = 'You keep the ship stores. Check stock before handing anything out.';

/** Builds a fresh quartermaster agent on `bus`, stores and script included, for one run. */
export function quartermaster(bus: Bus) {
  const { tools, stock } = stores();
  const brain = script();
  const agent = createAgent({ name: 'quartermaster', instructions: INSTRUCTIONS, tools, provider: brain, bus });
  return { agent, brain, stock };
}

/** `troupe run quickstart`: the quartermaster as the one agent of a scene, its whole turn at tick 1. */
export const scene = defineScene({
  description: 'one quartermaster agent corrects a call, checks stock and hands out rope',
  ticks: 5,
  create: (context) => {
    const quickstart = createScene({ name: 'quickstart', ...sceneOptionsFrom(context) });
    const { tools } = stores();
    // Four deliberations in one turn: the correction, the stock check, the hand-out, the answer.
    // Then nobody is due any more and the scene ends quiet.
    quickstart.add({ name: 'quartermaster', instructions: INSTRUCTIONS, tools, provider: script(), rounds: 4, triggers: ['start'] });
    return quickstart;
  },
});
