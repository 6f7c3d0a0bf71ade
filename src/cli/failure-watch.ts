import type { Bus, Unsubscribe } from '../bus/bus.js';
import type { SceneResult } from '../scene/types.js';

/** What went wrong in a run, for the line under its summary. */
export type FailureWatch = {
  /**
   * The line that tells of failed turns (`15 of 15 turns failed; the last: …`), or undefined
   * when none failed. Shown in every output mode, because a scene's own summary may not say.
   */
  line(result: SceneResult): string | undefined;
  /** Whether the run failed as a whole: it took turns, and every one of them failed. */
  allFailed(result: SceneResult): boolean;
  stop: Unsubscribe;
};

/** Longest error quoted in the failure line; the transcript and the log have all of it. */
const MAX_ERROR_CHARS = 300;

/** Watches `bus` for turns that end in an error, keeping the last one's reason. */
export function watchFailures(bus: Bus): FailureWatch {
  let last: { agent: string | undefined; error: string | undefined } | undefined;
  const stop = bus.on('agent.finished', (event) => {
    if (event.data.reason === 'error') last = { agent: event.agent, error: event.data.error };
  });
  return {
    line(result) {
      if (result.failures === 0) return undefined;
      const counts = result.failures === result.turns ? `every turn failed (${result.failures} of ${result.turns})` : `${result.failures} of ${result.turns} turns failed`;
      if (last === undefined) return `troupe: ${counts}`;
      const error = (last.error ?? 'no reason given').replace(/\s+/g, ' ');
      const shown = error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS - 1)}…` : error;
      return `troupe: ${counts}; the last, ${last.agent ?? 'an agent'}'s: ${shown}`;
    },
    allFailed: (result) => result.turns > 0 && result.failures === result.turns,
    stop,
  };
}
