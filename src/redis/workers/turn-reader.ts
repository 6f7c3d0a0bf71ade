import type { OpenedRedis } from '../connect.js';
import { TURN_GROUP, type Assignment, type RunKeys } from './keys.js';
import { ownerOf } from './partition.js';
import type { RunRecord } from './run-record.js';

/** One turn entry read from a partition's stream: the tick it gives that partition, and the worker it was given to. */
export type TurnEntry = { p: number; id: string; tick: number; owner: string };

type Read = [string, [string, string[] | null][]][] | null;

/**
 * Reads a worker's turns through the partitions' consumer groups. The coordinator assigns every
 * partition of a tick to one live worker (rendezvous hashing) and names it in the turn entry; a
 * worker reads the partitions assigned to it and runs all of them in one batch, so its agents'
 * turns of a tick all begin before any of them acts, as in one process. An entry it reads for
 * another live worker (it read with last tick's assignment) is handed over with `XCLAIM`. The
 * partitions of a worker that stopped beating are taken by their new rendezvous owner: entries
 * never delivered are read directly, entries the dead worker held are claimed once idle for the
 * run's claim time (`XAUTOCLAIM`); those run as a batch of their own.
 */
export class TurnReader {
  claimed = 0;
  /** The last tick whose assignment this worker read. */
  seenTick = 0;
  private readonly opened: OpenedRedis;
  private readonly keys: RunKeys;
  private readonly record: RunRecord;
  private readonly worker: string;
  private readonly liveWorkers: () => Promise<string[]>;
  private readonly waiting = new Map<number, Map<number, TurnEntry>>();
  private live: string[] = [];
  private lastClaim = 0;
  /** The last tick whose own batch this worker ran: later entries of it (takeovers) need not wait. */
  private ranTick = 0;

  constructor(opened: OpenedRedis, keys: RunKeys, record: RunRecord, worker: string, liveWorkers: () => Promise<string[]>) {
    this.opened = opened;
    this.keys = keys;
    this.record = record;
    this.worker = worker;
    this.liveWorkers = liveWorkers;
  }

  /** The next batch to run (a tick's entries), or undefined when none is complete yet. */
  async next(): Promise<{ tick: number; entries: TurnEntry[] } | undefined> {
    // Every command is dropped with the connection (see whileConnected): the loop waits, and what was read stays pending for us.
    const { client } = this.opened;
    const text = await this.opened.whileConnected(client.get(this.keys.assignment));
    if (text === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return undefined;
    }
    const assignment = JSON.parse(text) as Assignment;
    this.seenTick = Math.max(this.seenTick, assignment.tick);
    // Fresh each time: a worker taken for dead on an old view would have its turns run twice.
    this.live = await this.opened.whileConnected(this.liveWorkers());
    const mine: number[] = [];
    const orphans: number[] = [];
    assignment.owners.forEach((owner, p) => {
      if (owner === this.worker) mine.push(p);
      else if (!this.live.includes(owner) && ownerOf(p, this.live) === this.worker) orphans.push(p);
    });
    // Handed over to us, or read and not yet run.
    if (mine.length > 0) await this.take(await this.read(mine, '0', undefined));
    if (orphans.length > 0) {
      await this.take(await this.read(orphans, '>', undefined), true);
      if (Date.now() - this.lastClaim > this.record.claimIdleMs / 2) {
        this.lastClaim = Date.now();
        await this.claim(orphans, this.record.claimIdleMs, true);
      }
    }
    const batch = await this.batch(assignment, mine);
    if (batch !== undefined) return batch;
    if (mine.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return undefined;
    }
    await this.take(await this.read(mine, '>', 200));
    return this.batch(assignment, mine);
  }

  /**
   * Claims the entries of `partitions` idle for `idleMs` in any consumer's pending list: a dead
   * worker's (a takeover), or ours that another worker read and could not hand over. Entries a
   * live worker is running are claimed again by it every third of the claim time, so never idle that long.
   */
  private async claim(partitions: readonly number[], idleMs: number, takeover: boolean): Promise<void> {
    for (const p of partitions) {
      const [, items] = (await this.opened.whileConnected(this.opened.client.xautoclaim(this.keys.turns(p), TURN_GROUP, this.worker, String(Math.round(idleMs)), '0-0', 'COUNT', 16))) as [string, [string, string[] | null][]];
      await this.take([[this.keys.turns(p), items]], takeover);
    }
  }

  private async read(partitions: readonly number[], from: '0' | '>', blockMs: number | undefined): Promise<Read> {
    const streams = partitions.map((p) => this.keys.turns(p));
    const block = blockMs === undefined ? [] : ['BLOCK', blockMs];
    return (await this.opened.whileConnected(this.opened.client.xreadgroup('GROUP', TURN_GROUP, this.worker, 'COUNT', 64, ...(block as ['BLOCK', number]), 'STREAMS', ...streams, ...streams.map(() => from)))) as Read;
  }

  /** Keeps the entries read; hands those of another live worker over to it. */
  private async take(read: Read, takeover = false): Promise<void> {
    for (const [stream, items] of read ?? []) {
      const p = Number(stream.slice(stream.lastIndexOf(':') + 1));
      for (const [id, fields] of items) {
        // An entry trimmed or acknowledged meanwhile comes back without its fields.
        if (fields === null) continue;
        const field = (name: string): string => fields[fields.indexOf(name) + 1] ?? '';
        const entry: TurnEntry = { p, id, tick: Number(field('tick')), owner: field('owner') };
        if (entry.owner !== this.worker && this.live.includes(entry.owner) && !takeover) {
          await this.opened.whileConnected(this.opened.client.xclaim(stream, TURN_GROUP, entry.owner, 0, id, 'JUSTID'));
          continue;
        }
        let tick = this.waiting.get(entry.tick);
        if (tick === undefined) this.waiting.set(entry.tick, (tick = new Map()));
        if (!tick.has(p) && entry.owner !== this.worker) this.claimed++;
        tick.set(p, entry);
      }
    }
  }

  /**
   * The oldest tick ready to run: every partition assigned to us in it is here (one batch, as one
   * process runs a tick), or it is one we ran our part of already, or an older one.
   */
  private async batch(assignment: Assignment, mine: readonly number[]): Promise<{ tick: number; entries: TurnEntry[] } | undefined> {
    const ticks = [...this.waiting.keys()].sort((a, b) => a - b);
    const tick = ticks[0];
    if (tick === undefined) return undefined;
    const entries = this.waiting.get(tick)!;
    let complete = tick < assignment.tick || tick <= this.ranTick;
    if (!complete) {
      const missing = mine.filter((p) => !entries.has(p));
      // A partition of ours another worker ran meanwhile (it took us for dead) is not waited for.
      const done = missing.length === 0 ? [] : await this.opened.whileConnected(this.opened.client.hmget(this.keys.committed, ...missing.map((p) => `${tick}:${p}`)));
      complete = done.every((worker) => worker !== null);
      // Ours, still with a worker that read it on an old assignment and lost it on the way back (a dropped connection).
      if (!complete) await this.claim(missing.filter((_, index) => done[index] === null), this.record.claimIdleMs / 2, false);
      complete = mine.every((p) => entries.has(p)) || complete;
    }
    if (!complete) return undefined;
    this.waiting.delete(tick);
    if (tick === assignment.tick) this.ranTick = tick;
    return { tick, entries: [...entries.values()] };
  }
}
