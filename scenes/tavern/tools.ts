import { defineTool, ToolError, type JsonValue, type Tool, type ToolContext, type WorldState } from '../../src/index.js';
import { CELLAR, MENU, type Order, type PatronRecord } from './world.js';

/** The tavern's tools, one list per role: every agent of a role shares its list (one registry). */
export type TavernTools = { patron: readonly Tool[]; innkeeper: readonly Tool[]; guard: readonly Tool[]; steward: readonly Tool[] };

const shortText = (description: string) => ({ type: 'string', maxLength: 32, description }) as const;
const coins = { type: 'integer', minimum: 1, maximum: 100, description: 'Coins.' } as const;

/**
 * Builds the tavern's tools over one world. Every change goes through `world.update`, which holds
 * its path exclusively while it reads and writes; nested updates always lock in the same order
 * (orders → stock → patron → till, board or bard; cellar → stock) so two tools can never wait on
 * each other. `retire` takes a patron out of the scene once they go home or are thrown out: they
 * take no more turns.
 */
export function tavernTools(world: WorldState, retire: (agent: string) => void): TavernTools {
  // Who changed the world, and which tool call did it: `world.changed` points back at `tool.started`.
  const writer = (context: ToolContext) => ({ agent: context.agent, cause: context.dispatcher?.startedId });

  /** Read-modify-write of one patron's record (`patrons.<name>`); refuses names that are not patrons. */
  const updatePatron = (patron: string, context: ToolContext, change: (record: PatronRecord) => PatronRecord | Promise<PatronRecord>) =>
    world.update(['patrons', patron], async (current) => {
      if (current === undefined) throw new ToolError(`"${patron}" is not a patron here`, { kind: 'not_found' });
      return (await change(current as PatronRecord)) as JsonValue;
    }, writer(context)) as Promise<PatronRecord>;

  const order = defineTool({
    name: 'order',
    description: 'Order something from the bar; the innkeeper serves it and puts it on your tab.',
    parameters: { type: 'object', properties: { item: shortText('What you want: ale, bread or stew.') }, required: ['item'], additionalProperties: false },
    execute: async (args, context) => {
      const { item } = args as { item: string };
      const me = world.get(['patrons', context.agent]) as PatronRecord | undefined;
      if (me?.status !== 'in') throw new ToolError('only patrons at their table can order', { kind: 'permission' });
      if (!Object.hasOwn(MENU, item)) throw new ToolError(`"${item}" is not on the menu`, { kind: 'not_found', hint: `the menu: ${Object.keys(MENU).join(', ')}` });
      if (((world.get(['tavern', 'stock', item]) as number | undefined) ?? 0) <= 0) {
        throw new ToolError(`the ${item} is finished for tonight`, { kind: 'not_found', hint: 'order something else' });
      }
      await world.update('tavern.orders', (orders) => [...((orders ?? []) as Order[]), { patron: context.agent, item }], writer(context));
      return `ordered ${item}; the innkeeper will bring it`;
    },
  });

  const pay = defineTool({
    name: 'pay',
    description: 'Pay coins off your tab.',
    parameters: { type: 'object', properties: { amount: coins }, required: ['amount'], additionalProperties: false },
    execute: async (args, context) => {
      const { amount } = args as { amount: number };
      const after = await updatePatron(context.agent, context, async (me) => {
        if (amount > me.tab) throw new ToolError(`you owe only ${me.tab} coins`, { kind: 'execution', hint: `pay ${me.tab} or less` });
        if (amount > me.coin) throw new ToolError(`you have only ${me.coin} coins`, { kind: 'execution', hint: `pay ${me.coin} now and the rest later` });
        await world.update('tavern.till', (till) => (till as number) + amount, writer(context));
        return { ...me, coin: me.coin - amount, tab: me.tab - amount };
      });
      return { paid: amount, tab: after.tab, coin: after.coin };
    },
  });

  const tip = defineTool({
    name: 'tip',
    description: 'Toss the bard a few coins.',
    parameters: { type: 'object', properties: { amount: coins }, required: ['amount'], additionalProperties: false },
    execute: async (args, context) => {
      const { amount } = args as { amount: number };
      await updatePatron(context.agent, context, async (me) => {
        if (amount > me.coin) throw new ToolError(`you have only ${me.coin} coins`);
        await world.update('bard.tips', (tips) => (tips as number) + amount, writer(context));
        return { ...me, coin: me.coin - amount };
      });
      return `the bard catches ${amount} coin${amount === 1 ? '' : 's'}`;
    },
  });

  const leave = defineTool({
    name: 'leave',
    description: 'Go home for the night (settle your tab first).',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: async (_args, context) => {
      await updatePatron(context.agent, context, (me) => {
        if (me.tab > 0) throw new ToolError(`settle your tab of ${me.tab} coins first`, { kind: 'permission', hint: `pay ${Math.min(me.tab, me.coin)}` });
        return { ...me, status: 'home' };
      });
      // Gone home: no more turns tonight (this one finishes).
      retire(context.agent);
      return 'you step out into the night';
    },
  });

  // Brains have no way to let a turn pass in silence (plain text is speech), so idlers wait.
  const wait = defineTool({
    name: 'wait',
    description: 'Do nothing this turn.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    readOnly: true,
    execute: () => 'time passes',
  });

  return {
    patron: [order, pay, tip, leave, wait],
    innkeeper: [serveTool(world, writer), noticeTool(world, writer)],
    guard: [...guardTools(world, writer, updatePatron, retire), wait],
    steward: [cellarTool(world, writer), wait],
  };
}

/**
 * `open_cellar`: brings stock up from the cellar. It needs the landlord's approval: under
 * `troupe run tavern --inspect` the page asks you; without a page, `--approve` decides.
 */
function cellarTool(world: WorldState, writer: Writer): Tool {
  return defineTool({
    name: 'open_cellar',
    description: 'Bring stock up from the cellar to the bar. Needs the landlord\'s approval.',
    parameters: {
      type: 'object',
      properties: { item: { type: 'string', enum: Object.keys(CELLAR), description: 'What to bring up.' }, count: { type: 'integer', minimum: 1, maximum: 6, description: 'How many.' } },
      required: ['item', 'count'],
      additionalProperties: false,
    },
    needsApproval: true,
    execute: async (args, context) => {
      const { item, count } = args as { item: string; count: number };
      let brought = 0;
      await world.update(['cellar', item], async (left) => {
        brought = Math.min(count, (left as number | undefined) ?? 0);
        if (brought === 0) throw new ToolError(`the cellar has no ${item} left`, { kind: 'not_found' });
        await world.update(['tavern', 'stock', item], (stock) => ((stock as number | undefined) ?? 0) + brought, writer(context));
        return (left as number) - brought;
      }, writer(context));
      return { brought, item, atTheBar: world.get(['tavern', 'stock', item]) as number };
    },
  });
}

type Writer = (context: ToolContext) => { agent: string; cause: string | undefined };

/** `serve`: takes an order off the bar, a portion out of stock, and puts the price on the tab. */
function serveTool(world: WorldState, writer: Writer): Tool {
  return defineTool({
    name: 'serve',
    description: 'Serve an open order: takes it from stock and puts the price on the patron\'s tab.',
    parameters: { type: 'object', properties: { patron: shortText('Who ordered.'), item: shortText('What they ordered.') }, required: ['patron', 'item'], additionalProperties: false },
    execute: async (args, context) => {
      const { patron, item } = args as { patron: string; item: string };
      let problem: string | undefined;
      let tab = 0;
      await world.update('tavern.orders', async (current) => {
        const orders = (current ?? []) as Order[];
        const index = orders.findIndex((entry) => entry.patron === patron && entry.item === item);
        if (index < 0) {
          const open = orders.map((entry) => `${entry.item} for ${entry.patron}`).join(', ') || 'none';
          throw new ToolError(`${patron} has no open order for ${item}`, { kind: 'not_found', hint: `open orders: ${open}` });
        }
        const rest = orders.filter((_, at) => at !== index);
        // A struck-off order still leaves the bar: the failure is reported after the lock is let go.
        if ((world.get(['patrons', patron, 'status']) as string | undefined) !== 'in') {
          problem = `${patron} is no longer here`;
          return rest;
        }
        const left = await world.update(['tavern', 'stock', item], (stock) => ((stock as number) > 0 ? (stock as number) - 1 : undefined), writer(context));
        if (left === undefined) {
          problem = `the ${item} is finished`;
          return rest;
        }
        const record = await world.update(['patrons', patron], (me) => {
          const before = me as PatronRecord;
          return { ...before, tab: before.tab + MENU[item]!, drinks: before.drinks + (item === 'ale' ? 1 : 0) };
        }, writer(context));
        tab = record.tab;
        return rest;
      }, writer(context));
      if (problem !== undefined) throw new ToolError(`cannot serve ${item} to ${patron}: ${problem} (order struck off)`, { kind: 'not_found' });
      return { served: item, to: patron, tab };
    },
  });
}

/** `post_notice`: pins a line on the notice board (the board keeps the last five). */
function noticeTool(world: WorldState, writer: Writer): Tool {
  return defineTool({
    name: 'post_notice',
    description: 'Pin a notice on the tavern board.',
    parameters: { type: 'object', properties: { text: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['text'], additionalProperties: false },
    execute: async (args, context) => {
      const { text } = args as { text: string };
      await world.update('tavern.board', (board) => [...((board ?? []) as string[]), text].slice(-5), writer(context));
      return 'pinned';
    },
  });
}

/** The guard's `calm` (a warning) and `eject` (out for the night, and on the board). */
function guardTools(
  world: WorldState,
  writer: Writer,
  updatePatron: (patron: string, context: ToolContext, change: (record: PatronRecord) => PatronRecord | Promise<PatronRecord>) => Promise<PatronRecord>,
  retire: (agent: string) => void,
): Tool[] {
  const present = (patron: string, me: PatronRecord): void => {
    if (me.status !== 'in') throw new ToolError(`${patron} is not in the tavern (${me.status})`, { kind: 'not_found' });
  };
  const calm = defineTool({
    name: 'calm',
    description: 'Warn a patron to behave. A warned patron who acts up again should be ejected.',
    parameters: { type: 'object', properties: { patron: shortText('The patron to warn.') }, required: ['patron'], additionalProperties: false },
    execute: async (args, context) => {
      const { patron } = args as { patron: string };
      await updatePatron(patron, context, (me) => (present(patron, me), { ...me, warned: true }));
      return `${patron} is warned`;
    },
  });
  const eject = defineTool({
    name: 'eject',
    description: 'Throw a patron out for the night; it goes on the notice board.',
    parameters: {
      type: 'object',
      properties: { patron: shortText('The patron to throw out.'), reason: { type: 'string', minLength: 1, maxLength: 120 } },
      required: ['patron', 'reason'],
      additionalProperties: false,
    },
    execute: async (args, context) => {
      const { patron, reason } = args as { patron: string; reason: string };
      const after = await updatePatron(patron, context, async (me) => {
        present(patron, me);
        const owes = me.tab > 0 ? `, owes ${me.tab} coins` : '';
        await world.update('tavern.board', (board) => [...((board ?? []) as string[]), `${patron} is barred tonight: ${reason}${owes}`].slice(-5), writer(context));
        return { ...me, warned: true, status: 'ejected' };
      });
      // Out for the night: no more turns (the guard's words still reach them as they go).
      retire(patron);
      return { ejected: patron, unpaid: after.tab };
    },
  });
  return [calm, eject];
}
