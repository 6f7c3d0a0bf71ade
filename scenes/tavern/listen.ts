import type { Heard, ObservedCall, Perception } from '../../src/index.js';

/** Talk that gets the guard up: the same words a model-driven guard would be told to watch for. */
export const ROWDY = /\b(fight|punch|brawl)\b/i;

/** The latest thing said to this agent since its last turn, if anything was. */
export function lastAddressed(perception: Perception): Heard | undefined {
  for (let index = perception.heard.length - 1; index >= 0; index--) {
    const item = perception.heard[index]!;
    if (item.to === perception.agent) return item;
  }
  return undefined;
}

/** Whether someone was heard since the last turn (the bard's song, say). */
export function heardFrom(perception: Perception, speaker: string): boolean {
  return perception.heard.some((item) => item.from === speaker);
}

/**
 * The first call of the last round that ran and failed, with its arguments: what a brain reads to
 * recover from a tool's refusal (the stew is finished; settle your tab first).
 */
export function lastFailure(perception: Perception): Extract<ObservedCall, { status: 'failed' }> | undefined {
  const observation = perception.observation;
  if (observation === undefined || observation.ok) return undefined;
  for (const item of observation.calls) if (item.status === 'failed') return item;
  return undefined;
}

/** Picks one of `options` with the agent's seeded generator. */
export function pick<T>(perception: Perception, options: readonly T[]): T {
  return options[Math.floor(perception.random() * options.length)]!;
}
