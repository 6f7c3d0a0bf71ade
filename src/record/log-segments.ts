import type { Envelope } from '../bus/events.js';

/** Why a scene stops on its own: a run that stopped so has nothing left to resume. */
const NATURAL_ENDS: ReadonlySet<string> = new Set(['ticks', 'quiet', 'budget']);

/** The events a resume replays, with their lines, and whether the run already ended on its own. */
export type Replayable = {
  events: Envelope[];
  lines: number[];
  /** Set when the log's last segment stopped on its own: there is nothing to resume. */
  finished?: { line: number; reason: string };
};

/**
 * What of a log's events a resume replays. A log is made of segments, each opened by a
 * `log.opened` (the run, then each resume). A segment that was stopped from outside (Ctrl-C,
 * SIGTERM, `stop()`) shut down in the middle of its work: from its `scene.stopping` to the next
 * segment, its events are the shutting down, which a resume does not repeat (the work goes on
 * instead; calls that shutdown aborted count as interrupted). A segment cut by a crash has no such
 * events: all of it is replayed.
 */
export function replayable(events: readonly Envelope[], lines: readonly number[]): Replayable {
  const kept: Envelope[] = [];
  const keptLines: number[] = [];
  let skipping = false;
  let finished: Replayable['finished'];
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (event.type === 'log.opened') {
      skipping = false;
      finished = undefined;
    }
    if (event.type === 'scene.stopping') {
      const reason = (event.data as { reason: string }).reason;
      if (!NATURAL_ENDS.has(reason)) skipping = true;
      else finished = { line: lines[index] ?? 0, reason };
    }
    if (skipping) continue;
    kept.push(event);
    keptLines.push(lines[index] ?? 0);
  }
  return finished === undefined ? { events: kept, lines: keptLines } : { events: kept, lines: keptLines, finished };
}
