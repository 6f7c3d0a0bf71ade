import type { SceneResult } from '../scene/types.js';

/**
 * The line `troupe run` ends with when the scene has no `summarize` of its own: why it stopped,
 * how far it got, the tokens its models spent (when they spent any; `(estimated)` when some were
 * counted by troupe's tokenizer) and what they cost (when priced), and the seed that repeats it.
 *
 * @example
 * defaultSummary('tavern', { reason: 'ticks', tick: 20, turns: 45, failures: 0, usage, wallMs }, 42);
 * // 'tavern ended (ticks): 20 ticks, 45 turns, 0 failures; seed 42'
 */
export function defaultSummary(scene: string, result: SceneResult, seed: number): string {
  const why = result.detail === undefined ? result.reason : `${result.reason}: ${result.detail}`;
  const counts = [count(result.tick, 'tick'), count(result.turns, 'turn'), count(result.failures, 'failure')];
  const { tokens, estimatedTokens, costUsd } = result.usage;
  if (tokens > 0) counts.push(`${count(tokens, 'token')}${estimatedTokens === true ? ' (estimated)' : ''}`);
  if (costUsd !== undefined && costUsd > 0) counts.push(`$${costUsd.toFixed(4)}`);
  return `${scene} ended (${why}): ${counts.join(', ')}; seed ${seed}`;
}

function count(value: number, noun: string): string {
  return `${value.toLocaleString('en-US')} ${noun}${value === 1 ? '' : 's'}`;
}
