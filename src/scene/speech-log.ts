import type { Heard, SpeechSnapshot } from './types.js';

/** One utterance as the scene keeps it: what listeners hear, plus its place in the log. */
type Entry = Heard & { seq: number };



/**
 * The scene's recent speech, shared by every listener: an utterance is stored once, and each
 * member keeps only how far it has heard. So speech costs the same in a scene of three agents or
 * of a hundred thousand; a listener that sleeps through more than the log holds hears the latest.
 */
export class SpeechLog {
  private readonly entries: (Entry | undefined)[];
  /** Utterances so far; the next one gets `seq + 1`. */
  seq = 0;

  constructor(capacity: number) {
    this.entries = new Array(Math.max(1, capacity));
  }

  add(heard: Heard): void {
    this.seq++;
    this.entries[this.seq % this.entries.length] = { ...heard, seq: this.seq };
  }

  /** The entries still held, oldest first, and the count so far. */
  snapshot(): SpeechSnapshot {
    const entries: Entry[] = [];
    for (let seq = Math.max(1, this.seq - this.entries.length + 1); seq <= this.seq; seq++) {
      const entry = this.entries[seq % this.entries.length];
      if (entry !== undefined && entry.seq === seq) entries.push({ ...entry });
    }
    return { seq: this.seq, entries };
  }

  /** Takes up a snapshot's count and entries. */
  restore(snapshot: SpeechSnapshot): void {
    this.entries.fill(undefined);
    this.seq = snapshot.seq;
    for (const entry of snapshot.entries) this.entries[entry.seq % this.entries.length] = { ...entry };
  }

  /** What `listener` heard after position `after`: others' speech only, the latest `limit` items, oldest first. */
  since(after: number, listener: string, limit: number): Heard[] {
    const heard: Heard[] = [];
    const oldest = Math.max(after + 1, this.seq - this.entries.length + 1);
    for (let seq = this.seq; seq >= oldest && heard.length < limit; seq--) {
      const entry = this.entries[seq % this.entries.length];
      if (entry === undefined || entry.seq !== seq || entry.from === listener) continue;
      const { from, text, tick } = entry;
      heard.push(entry.to === undefined ? { from, text, tick } : { from, text, to: entry.to, tick });
    }
    return heard.reverse();
  }
}
