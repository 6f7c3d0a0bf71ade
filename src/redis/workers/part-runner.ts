import type { Envelope } from '../../bus/events.js';
import type { PartedScene } from '../../scene/parted-scene.js';
import type { SceneMember } from '../../scene/scene-member.js';
import { isQuiet } from '../../scene/schedule.js';
import type { OpenedRedis } from '../connect.js';
import { untilAnswered } from './retry.js';
import { EventRelay } from './event-relay.js';
import { TURN_GROUP, type PartReport, type RunKeys } from './keys.js';
import { heardPositions, memberText, restoreMember } from './member-state.js';
import { isLifecycle, rewake, wakesAny, wakingEvents } from './rewake.js';
import { partitionOf } from './partition.js';
import type { WorldReplica } from './redis-world.js';
import type { RunRecord } from './run-record.js';
import { COMMIT_PART, runScript } from './scripts.js';
import type { TurnJournal } from './turn-journal.js';
import type { TurnEntry } from './turn-reader.js';

/** An event of the stream and the worker that committed it (none: the coordinator). */
type Committed = { event: Envelope; worker: string | undefined };

/** An events stream entry's JSON and the worker that committed it. */
function entryOf(fields: readonly string[]): { text: string; worker: string | undefined } {
  const at = fields.indexOf('worker');
  return { text: fields[fields.indexOf('event') + 1] ?? '', worker: at === -1 ? undefined : fields[at + 1] };
}

/** Stream entries read at a time: a tick of a large cast appends millions, and each page is a round trip. */
const PAGE = 10_000;

export type RunnerParts = {
  opened: OpenedRedis;
  keys: RunKeys;
  record: RunRecord;
  worker: string;
  scene: PartedScene;
  world: WorldReplica;
  journal: TurnJournal;
  /** The events stream's id this process has applied up to. */
  eventsFrom: string;
};

/**
 * Runs a worker's partitions' ticks on its replica of the scene. Before tick T it applies what
 * the other processes committed up to the coordinator's `scene.tick` T, takes up the members of
 * partitions it did not commit at T-1 from their last commit, runs the due turns of its
 * partitions, and commits each partition's tick in one script.
 */
export class PartRunner {
  committed = 0;
  turns = 0;
  /** The last partition tick this process committed. */
  lastCommit: { tick: number; p: number } | undefined;
  readonly worker: string;
  private readonly parts: RunnerParts;
  private readonly groups: SceneMember[][];
  private readonly partitionOf = new Map<string, number>();
  /** Partition → the last tick this process committed it. */
  private readonly committedAt = new Map<number, number>();
  private readonly relay: EventRelay;
  private caughtUpTo = 0;
  private eventsFrom: string;
  /**
   * The last tick before the one being run: the id of its `scene.tick`, its events as read, each
   * with the worker that committed it (none: the coordinator), and whether spans of ours were
   * skipped in it.
   */
  private lastTick: { from: string; events: Committed[]; skipped: boolean } = { from: '0-0', events: [], skipped: false };
  /** The spans of the events stream this process committed and has not read past, in stream order. */
  private readonly ownSpans: { first: string; last: string }[] = [];

  constructor(parts: RunnerParts) {
    this.parts = parts;
    this.worker = parts.worker;
    this.eventsFrom = parts.eventsFrom;
    const { partitions } = parts.record;
    this.groups = Array.from({ length: partitions }, () => []);
    for (const member of parts.scene.order) {
      const p = partitionOf(member.name, partitions);
      this.partitionOf.set(member.name, p);
      this.groups[p]!.push(member);
    }
    this.relay = new EventRelay(parts.scene.bus, false, wakingEvents(parts.scene.order));
  }

  /** Runs tick `tick` for the partitions of `entries` and commits them. */
  async runTick(tick: number, entries: readonly TurnEntry[]): Promise<void> {
    const { opened, keys, world, journal, scene, record } = this.parts;
    const { client } = opened;
    const done = await untilAnswered(opened, () => client.hmget(keys.committed, ...entries.map((entry) => `${tick}:${entry.p}`)));
    // Committed already (a turn delivered twice): acknowledged, not run again.
    for (const [index, entry] of entries.entries()) if (done[index] !== null) await untilAnswered(opened, () => client.xack(keys.turns(entry.p), TURN_GROUP, entry.id));
    const todo = entries.filter((entry, index) => done[index] === null && entries.findIndex((other) => other.p === entry.p) === index);
    if (todo.length === 0) return;
    if (this.caughtUpTo < tick) await this.catchUpEvents(tick);
    await world.catchUp();
    for (const { p } of todo) if (this.committedAt.get(p) !== tick - 1) await this.restore(p, tick);
    await journal.begin(tick, todo.map((entry) => entry.p));
    const members = todo.flatMap((entry) => this.groups[entry.p]!);
    const before = new Map(members.map((member) => [member, member.turns]));
    const inTick = new Set(todo.map((entry) => entry.p));
    // While the tick runs, its turns stay ours: claiming them resets their idle time, so only a dead worker's are taken over.
    const keepAlive = setInterval(() => {
      for (const entry of todo) void client.xclaim(keys.turns(entry.p), TURN_GROUP, this.worker, 0, entry.id, 'JUSTID').catch(() => undefined);
    }, Math.max(50, record.claimIdleMs / 3));
    this.relay.capture((agent) => {
      const p = this.partitionOf.get(agent);
      return p !== undefined && inTick.has(p) ? p : undefined;
    });
    try {
      await scene.advancePart(tick, members);
    } finally {
      this.relay.release();
      clearInterval(keepAlive);
    }
    await world.flush();
    await journal.flush();
    await Promise.all(todo.map((entry) => this.commit(tick, entry, before)));
  }

  /**
   * Applies the other processes' events up to the coordinator's `scene.tick` of `tick` (never
   * past it: every process takes a tick's events at the same boundary), dating what they say by
   * the tick they said it in, and keeps the events of the last tick before it for `restore`.
   * The spans this process committed are not read back: they happened here.
   */
  private async catchUpEvents(tick: number): Promise<void> {
    const { opened, keys } = this.parts;
    for (;;) {
      const span = this.ownSpans[0];
      const entries = await untilAnswered(opened, () => opened.client.xrange(keys.events, `(${this.eventsFrom}`, span === undefined ? '+' : `(${span.first}`, 'COUNT', PAGE));
      for (const [id, fields] of entries) {
        const { text, worker } = entryOf(fields);
        const event = JSON.parse(text) as Envelope;
        if (worker === undefined && event.type === 'scene.tick') {
          const boundary = (event as Envelope<'scene.tick'>).data.tick;
          if (boundary >= tick) {
            this.caughtUpTo = tick;
            return;
          }
          this.parts.scene.tickCount = boundary;
          this.lastTick = { from: id, events: [], skipped: false };
        } else {
          this.lastTick.events.push({ event, worker });
          // Ours happened here already; the coordinator's own life is every scene's own.
          if (worker !== this.worker && !(worker === undefined && isLifecycle(event))) this.relay.inject(text);
        }
        this.eventsFrom = id;
      }
      if (entries.length === PAGE) continue;
      if (span === undefined) {
        // The coordinator adds a tick's `scene.tick` before its turns: the end comes first only if it is not there.
        this.caughtUpTo = tick;
        return;
      }
      this.ownSpans.shift();
      this.eventsFrom = span.last;
      this.lastTick.skipped = true;
    }
  }

  /** The events of the last tick before the one being run, each with the worker that committed it (none: the coordinator), read again when spans of ours were skipped. */
  private async lastTickEvents(): Promise<Committed[]> {
    const { opened, keys } = this.parts;
    const last = this.lastTick;
    if (!last.skipped) return last.events;
    const events: Committed[] = [];
    for (let from = last.from; ; ) {
      const entries = await untilAnswered(opened, () => opened.client.xrange(keys.events, `(${from}`, `${this.eventsFrom}`, 'COUNT', PAGE));
      for (const [id, fields] of entries) {
        const { text, worker } = entryOf(fields);
        events.push({ event: JSON.parse(text) as Envelope, worker });
        from = id;
      }
      if (entries.length < PAGE) break;
    }
    this.lastTick = { from: last.from, events, skipped: false };
    return events;
  }

  /**
   * Takes up partition `p`'s members as the worker that committed it at `tick - 1` left them,
   * then wakes them on that tick's events that worker had not seen when it committed: those of
   * every other process (its own woke them before its commit).
   */
  private async restore(p: number, tick: number): Promise<void> {
    const { opened, keys, scene } = this.parts;
    const [owner, saved] = await untilAnswered(opened, () => Promise.all([opened.client.hget(keys.committed, `${tick - 1}:${p}`), opened.client.hgetall(keys.members(p))]));
    // Nobody committed it yet (tick 1): every process built the same cast.
    if (owner === null) return;
    const heardUpTo = heardPositions(scene.speech);
    for (const [name, text] of Object.entries(saved)) {
      const member = scene.members.get(name);
      if (member !== undefined) restoreMember(member, text, heardUpTo);
    }
    const unseen = (await this.lastTickEvents()).filter((item) => item.worker !== owner).map((item) => item.event);
    rewake(this.groups[p]!, unseen, scene.members);
  }

  /** The members of every partition but `p`. */
  private others(p: number): SceneMember[] {
    return this.groups.flatMap((members, index) => (index === p ? [] : members));
  }

  private async commit(tick: number, entry: TurnEntry, before: ReadonlyMap<SceneMember, number>): Promise<void> {
    const { opened, keys, scene, worker } = { ...this.parts, worker: this.worker };
    const { p } = entry;
    const members = this.groups[p]!;
    const first = this.committedAt.get(p) !== tick - 1;
    let turns = 0;
    let failures = 0;
    const pairs: string[] = [];
    for (const member of members) {
      const ran = member.turns > (before.get(member) ?? member.turns);
      if (ran) {
        turns += member.turns - before.get(member)!;
        if (member.lastReason === 'error') failures++;
      }
      // What the next owner needs: members whose state changed since the last commit (all of them at a first commit here).
      if (first || ran || member.pending !== undefined) pairs.push(member.name, memberText(member));
    }
    // Quiet as one process judges it, and nothing this partition did wakes an agent of another (who hears it next tick).
    const quiet = isQuiet(scene.schedule, members) && !wakesAny(this.others(p), this.relay.peek(p), scene.members);
    const events = this.relay.take(p);
    const report: PartReport = { tick, p, worker, turns, failures, quiet };
    const args = [`${tick}:${p}`, worker, entry.id, TURN_GROUP, JSON.stringify(report), events.length, ...events, ...pairs];
    const commitKeys = [keys.committed, keys.events, keys.done, keys.turns(p), keys.members(p), keys.journal(p)];
    // The script commits once (`<tick>:<p>` is set with the rest): sending it again after a drop is safe.
    const applied = await untilAnswered(opened, () => runScript(opened.client, COMMIT_PART, commitKeys, args));
    if (applied !== 0) {
      if (Array.isArray(applied)) addSpan(this.ownSpans, { first: String(applied[0]), last: String(applied[1]) });
      this.committedAt.set(p, tick);
      if (this.lastCommit === undefined || tick >= this.lastCommit.tick) this.lastCommit = { tick, p };
      this.committed++;
      this.turns += turns;
    }
  }
}

/** Adds a span in stream order (a tick's partitions commit concurrently, in any order). */
function addSpan(spans: { first: string; last: string }[], span: { first: string; last: string }): void {
  let at = spans.length;
  while (at > 0 && compareIds(spans[at - 1]!.first, span.first) > 0) at--;
  spans.splice(at, 0, span);
}

/** Orders two stream ids (`<ms>-<seq>`). */
function compareIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(Number) as [number, number];
  const [bMs, bSeq] = b.split('-').map(Number) as [number, number];
  return aMs - bMs || aSeq - bSeq;
}
