import { getRandomValues } from 'node:crypto';

/** Produces envelope and call ids. Inject `sequentialIds()` for deterministic runs. */
export type IdSource = () => string;

/** Produces the current time in epoch milliseconds. */
export type Clock = () => number;

/** Ids `prefix-1`, `prefix-2`, … : deterministic for scripted runs and tests. */
export function sequentialIds(prefix = 'e'): IdSource {
  let next = 0;
  // Joined once: a template per id made the `prefix-` part again for every event.
  const head = `${prefix}-`;
  return () => head + ++next;
}

/** The default id source: a random 8-character run prefix plus a counter, unique and cheap. */
export function randomIds(): IdSource {
  return sequentialIds(randomPrefix());
}

// Random prefixes made 256 at a time, as one hex string cut in eights: a UUID per bus (a crowd
// makes a bus per agent) made three strings and read the random pool to keep eight characters.
const BATCH = 256;
let batch = '';
let drawn = BATCH;

/** Eight random hex characters, as the start of a random UUID would give. */
function randomPrefix(): string {
  if (drawn === BATCH) {
    batch = Buffer.from(getRandomValues(new Uint8Array(BATCH * 4))).toString('hex');
    drawn = 0;
  }
  const at = 8 * drawn++;
  return batch.slice(at, at + 8);
}

/** A clock that starts at `start` and advances by `step` ms per reading: deterministic timestamps. */
export function steppedClock(start = 0, step = 1): Clock {
  let now = start - step;
  return () => (now += step);
}
