import { defineTool, ToolError, type Tool, type ToolContext, type WorldState } from '../../src/index.js';
import type { QuoteBook } from './quotes.js';
import { transact } from './transact.js';

const itemName = { type: 'string', maxLength: 32, pattern: '^[a-z]{1,32}$', description: 'The item, e.g. "silk".' } as const;

/** Who changed the world, and which call did it. */
const writer = (context: ToolContext) => ({ agent: context.agent, cause: context.dispatcher?.startedId });

/**
 * The market's tools. `buy` takes one unit from the shared stock at its list price; `trade`
 * accepts an offer another trader said aloud. Both change the world only through `transact`,
 * so two traders reaching for the last saffron cannot both get it, and nothing goes negative.
 */
export function marketTools(world: WorldState, book: QuoteBook): Tool[] {
  const buy = defineTool({
    name: 'buy',
    description: 'Buy one unit of an item from the market stock at its list price (market.price.<item>).',
    parameters: { type: 'object', properties: { item: itemName }, required: ['item'], additionalProperties: false },
    execute: async (args, context) => {
      const { item } = args as { item: string };
      const me = context.agent;
      const price = world.get(['market', 'price', item]) as number | undefined;
      if (price === undefined) {
        throw new ToolError(`the market does not sell "${item}"`, { kind: 'not_found', hint: `it sells: ${Object.keys((world.get('market.price') ?? {}) as object).join(', ')}` });
      }
      const paths = [['market', 'stock', item], ['market', 'coin', me], ['market', 'goods', me, item]];
      const [left, coin] = await transact(world, paths, ([stock, purse, held]) => {
        // Checked under the locks: whoever got here first may have taken the last one.
        if (((stock as number | undefined) ?? 0) < 1) throw new ToolError(`the ${item} is sold out`, { kind: 'not_found', hint: 'read market.stock, or buy from another trader' });
        if (((purse as number | undefined) ?? 0) < price) throw new ToolError(`${item} costs ${price} coins; you have ${(purse as number | undefined) ?? 0}`);
        return [(stock as number) - 1, (purse as number) - price, ((held as number | undefined) ?? 0) + 1];
      }, writer(context));
      return { bought: item, price, coin, stockLeft: left };
    },
  });

  const trade = defineTool({
    name: 'trade',
    description: 'Accept the offer another trader made you aloud: one unit of an item at the price they named.',
    parameters: {
      type: 'object',
      properties: { with: { type: 'string', maxLength: 64, description: 'The trader whose offer you accept.' }, item: itemName, price: { type: 'integer', minimum: 1, maximum: 100_000 } },
      required: ['with', 'item', 'price'],
      additionalProperties: false,
    },
    execute: async (args, context) => {
      const { with: other, item, price } = args as { with: string; item: string; price: number };
      const me = context.agent;
      if (other === me) throw new ToolError('you cannot trade with yourself', { kind: 'permission' });
      const quote = book.get(other, me);
      if (quote === undefined) {
        const open = book.offersTo(me);
        throw new ToolError(`${other} has made you no offer`, { kind: 'not_found', hint: open.length > 0 ? `offers to you: ${open.join('; ')}` : 'nobody has made you an offer' });
      }
      if (quote.item !== item || quote.price !== price) {
        throw new ToolError(`${other} offered to ${quote.side} 1 ${quote.item} for ${quote.price} coins, not 1 ${item} for ${price}`, { kind: 'execution', hint: 'accept the offer as it was made, or make a counter-offer with say' });
      }
      const [seller, buyer] = quote.side === 'sell' ? [other, me] : [me, other];
      const paths = [['market', 'coin', buyer], ['market', 'coin', seller], ['market', 'goods', seller, item], ['market', 'goods', buyer, item]];
      await transact(world, paths, ([buyerCoin, sellerCoin, sellerHeld, buyerHeld]) => {
        if (((sellerHeld as number | undefined) ?? 0) < 1) throw new ToolError(`${seller} has no ${item} left to sell`, { kind: 'not_found' });
        if (((buyerCoin as number | undefined) ?? 0) < price) throw new ToolError(`${buyer} has only ${(buyerCoin as number | undefined) ?? 0} coins`);
        return [(buyerCoin as number) - price, ((sellerCoin as number | undefined) ?? 0) + price, (sellerHeld as number) - 1, ((buyerHeld as number | undefined) ?? 0) + 1];
      }, writer(context));
      book.close(other, me);
      return { seller, buyer, item, price };
    },
  });

  return [buy, trade];
}
