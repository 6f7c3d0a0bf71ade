/**
 * What model calls cost: a price table in USD per million tokens, and the cost of one call's
 * usage. The defaults are a snapshot of the providers' published list prices (see
 * `PRICES_TAKEN`); prices change, so pass your own (`prices` on `createAgent` and `createScene`).
 */
import { ConfigError } from '../errors.js';
import type { Provider, Usage } from './types.js';

/**
 * A model's list price, USD per million tokens. `longPrompt` is the dearer rate some models charge
 * for every token of a call whose prompt is longer than `above` tokens (Gemini 2.5 Pro).
 */
export type ModelPrice = {
  input: number;
  output: number;
  longPrompt?: { above: number; input: number; output: number };
};

/** Prices by model name, as the provider names it (`provider.model`; for a provider without one, its `name`). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** When the default table was written: the list prices troupe knew then, not read live from the providers. */
export const PRICES_TAKEN = '2026-11-28';

/**
 * List prices of a few widely used models of the providers troupe ships adapters for, as troupe
 * knew them on `PRICES_TAKEN` (standard tier: no batch discount, no cached-input discount). They
 * are defaults to start from, not a feed: check them against your provider's price page. A dated model name
 * (`gpt-4.1-2025-04-14`, `claude-haiku-4-5-20251001`) takes the price of its undated name.
 */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  // OpenAI
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  // Anthropic
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  // Google
  'gemini-2.5-pro': { input: 1.25, output: 10, longPrompt: { above: 200_000, input: 2.5, output: 15 } },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
});

/**
 * The defaults with `own` over them, checked: every price a pair of finite numbers ≥ 0.
 * `owner` names who passed them, for the error.
 */
export function priceTable(own: PriceTable | undefined, owner: string): PriceTable {
  if (own === undefined) return DEFAULT_PRICES;
  if (own === null || typeof own !== 'object' || Array.isArray(own)) {
    throw new ConfigError(`${owner}: prices must be an object like { 'my-model': { input: 1, output: 4 } } (USD per million tokens)`);
  }
  for (const [model, price] of Object.entries(own)) {
    const problem = priceProblem(price);
    if (problem !== undefined) throw new ConfigError(`${owner}: prices["${model}"] ${problem}`);
  }
  return Object.freeze({ ...DEFAULT_PRICES, ...own });
}

function priceProblem(price: unknown): string | undefined {
  if (price === null || typeof price !== 'object') return 'must be { input, output } in USD per million tokens';
  const { input, output, longPrompt } = price as Partial<ModelPrice>;
  if (!isRate(input) || !isRate(output)) return `must have input and output as finite numbers ≥ 0 (USD per million tokens), got ${JSON.stringify(price)}`;
  if (longPrompt !== undefined && (longPrompt === null || !isRate(longPrompt.above) || !isRate(longPrompt.input) || !isRate(longPrompt.output))) {
    return 'longPrompt must be { above, input, output }, all finite numbers ≥ 0';
  }
  return undefined;
}

function isRate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * The price of `model` in `table`: its own entry, else that of its name without a date or
 * `-latest` suffix. `undefined` when the table does not know it.
 *
 * @example
 * priceFor('gpt-4.1-mini-2025-04-14', DEFAULT_PRICES); // { input: 0.4, output: 1.6 }
 */
export function priceFor(model: string | undefined, table: PriceTable): ModelPrice | undefined {
  if (model === undefined) return undefined;
  if (Object.hasOwn(table, model)) return table[model];
  const undated = model.replace(DATED, '');
  return undated !== model && Object.hasOwn(table, undated) ? table[undated] : undefined;
}

/** The price of the provider's model (a provider that names no model: of its name). */
export function providerPrice(provider: Pick<Provider, 'name' | 'model'>, table: PriceTable): ModelPrice | undefined {
  return priceFor(provider.model ?? provider.name, table);
}

// `-2025-04-14`, `-20251001`, `-latest`, `-001` (Gemini's stable versions).
const DATED = /-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest|\d{3})$/;

/**
 * What one call cost in USD: its input and output tokens at the model's price (all input at the
 * input rate, cached or not, so a cap errs on the side of stopping early).
 */
export function costOf(usage: Pick<Usage, 'inputTokens' | 'outputTokens'>, price: ModelPrice): number {
  const rates = price.longPrompt !== undefined && usage.inputTokens > price.longPrompt.above ? price.longPrompt : price;
  return roundUsd((usage.inputTokens * rates.input + usage.outputTokens * rates.output) / 1_000_000);
}

/** The usage with its cost at `price` (no price: the usage as it is). */
export function pricedUsage(usage: Usage, price: ModelPrice | undefined): Usage {
  return price === undefined ? usage : { ...usage, costUsd: costOf(usage, price) };
}

/** Rounds to a billionth of a dollar, so that sums of costs read cleanly. */
export function roundUsd(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}
