import type { Bus } from '../../src/index.js';

/** An offer, as said aloud: to sell one unit of an item, or to buy one, at a price. */
export type Quote = { side: 'sell' | 'buy'; item: string; price: number };

// The trade phrase every trader uses, and a model would be told to use.
const PHRASE = /\b(sell|buy)(?: you)? 1 ([a-z]+)(?: from you)? for (\d{1,6}) coins\b/;

/** The quote in a line of speech, if it holds one. */
export function parseQuote(text: string): Quote | undefined {
  const match = PHRASE.exec(text);
  if (match === null) return undefined;
  return { side: match[1] as Quote['side'], item: match[2]!, price: Number(match[3]) };
}

/** The line that makes a quote: `I'll sell you 1 silk for 11 coins.` */
export function quoteText(quote: Quote): string {
  return quote.side === 'sell' ? `I'll sell you 1 ${quote.item} for ${quote.price} coins.` : `I'll buy 1 ${quote.item} from you for ${quote.price} coins.`;
}

/**
 * The market clerk's book: the latest offer each trader has made to each other trader, taken
 * from speech addressed to them. A deal holds only if it was said aloud; `trade` checks here.
 */
export class QuoteBook {
  private readonly open = new Map<string, Quote>();

  /** Starts listening to the scene's speech. */
  constructor(bus: Bus, scene: string) {
    const stop = bus.on('agent.said', (event) => {
      const { text, to } = event.data;
      if (to === undefined || event.agent === undefined || event.scene !== scene) return;
      const quote = parseQuote(text);
      // A newer offer replaces the older one between the same two traders.
      if (quote !== undefined) this.open.set(key(event.agent, to), quote);
    });
    // The bus may outlive the scene (a host's, or the CLI's): stop listening when the market closes.
    bus.on('scene.stopped', stop, { scene });
  }

  /** The open offer `from` made to `to`. */
  get(from: string, to: string): Quote | undefined {
    return this.open.get(key(from, to));
  }

  /** Closes an offer once a deal is struck on it. */
  close(from: string, to: string): void {
    this.open.delete(key(from, to));
  }

  /** The open offers made to `to`, for error messages. */
  offersTo(to: string): string[] {
    const lines: string[] = [];
    for (const [pair, quote] of this.open) {
      const [from, target] = pair.split('\u0000') as [string, string];
      if (target === to) lines.push(`${from}: ${quote.side} 1 ${quote.item} for ${quote.price}`);
    }
    return lines;
  }
}

function key(from: string, to: string): string {
  return `${from}\u0000${to}`;
}
