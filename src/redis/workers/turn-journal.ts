import { decodePlain, encodePlain } from '../../agent/run/plain-value.js';
import type { Bus } from '../../bus/bus.js';
import type { Envelope } from '../../bus/events.js';
import type { ModelRequest, ModelResponse, Provider } from '../../llm/types.js';
import type { SceneHooks } from '../../scene/scene-hooks.js';
import type { RecordedAttempt, RecordedEnd } from '../../tools/dispatch-options.js';
import type { OpenedRedis } from '../connect.js';
import { untilAnswered } from './retry.js';
import type { RunKeys } from './keys.js';
import { partitionOf } from './partition.js';

type Journaled = { models: Map<string, ModelResponse>; calls: Map<string, RecordedEnd | 'started'> };

/**
 * A partition's journal for the tick in flight, in Redis (`troupe:<scene>:journal:<p>`, dropped
 * by the partition's commit): each model reply (of a model, not a scripted brain), each call's
 * start — written before the tool runs — and each call's end. A worker that takes over a
 * partition whose owner died mid-tick reruns the tick from the last commit with it, as
 * `troupe resume` reruns a log: recorded replies are reused, a call whose end is journaled is
 * not run again (its recorded result stands), and a call journaled as started without an end
 * runs again only when its tool is read-only or idempotent; otherwise the model hears that its
 * outcome is unknown.
 *
 * Calls are known by their agent and their place among that agent's starts in the tick: the same
 * state and the same replies ask for the same calls in the same order.
 */
export class TurnJournal {
  private readonly opened: OpenedRedis;
  private readonly keys: RunKeys;
  private readonly partitions: number;
  private tick = 0;
  private recorded = new Map<number, Journaled>();
  private readonly models = new Map<string, number>();
  private readonly starts = new Map<string, number>();
  /** `<callId>#<attempt>` → its journal key (`<agent>#<n>`). */
  private readonly callKeys = new Map<string, string>();
  private writes: Promise<unknown>[] = [];
  /** Entries waiting for the end of this turn of the event loop, and the promise of their pipeline. */
  private batch: string[][] | undefined;
  private sent: Promise<void> | undefined;

  constructor(opened: OpenedRedis, keys: RunKeys, partitions: number) {
    this.opened = opened;
    this.keys = keys;
    this.partitions = partitions;
  }

  /** What the scene is built with: the provider wrapper, the write-ahead check and the journal of calls. */
  get hooks(): Pick<SceneHooks, 'provider' | 'writeAhead' | 'journal'> {
    return {
      provider: (provider) => this.provider(provider),
      writeAhead: (event) => this.started(event),
      journal: (call, attempt) => this.attempt(call.callId, attempt),
    };
  }

  /** Journals how each call ends. */
  attach(bus: Bus): void {
    bus.on('tool.completed', (event) => this.ended(event, { kind: 'completed', output: event.data.output }));
    bus.on('tool.failed', (event) => this.ended(event, { kind: 'failed', error: event.data.error }));
  }

  /** Starts tick `tick` for `partitions`: loads what a worker that died in it journaled. */
  async begin(tick: number, partitions: readonly number[]): Promise<void> {
    if (tick !== this.tick) {
      this.tick = tick;
      this.recorded = new Map();
      this.models.clear();
      this.starts.clear();
      this.callKeys.clear();
    }
    // Every partition's journal in one round trip.
    const read = await untilAnswered(this.opened, async () => {
      const pipeline = this.opened.client.pipeline();
      for (const p of partitions) pipeline.xrange(this.keys.journal(p), '-', '+');
      return ((await pipeline.exec()) ?? []).map(([error, entries]) => {
        if (error) throw error;
        return entries as [string, string[]][];
      });
    });
    for (const [index, p] of partitions.entries()) {
      const entries = read[index] ?? [];
      const journaled: Journaled = { models: new Map(), calls: new Map() };
      for (const [, fields] of entries) {
        const field = (name: string): string => fields[fields.indexOf(name) + 1] ?? '';
        if (Number(field('tick')) !== tick) continue;
        const data = decodePlain(JSON.parse(field('data')));
        if (field('kind') === 'model') {
          journaled.models.set(`${field('agent')}#${field('key')}`, data as ModelResponse);
        } else if (field('kind') === 'started') {
          if (!journaled.calls.has(field('key'))) journaled.calls.set(field('key'), 'started');
        } else {
          journaled.calls.set(field('key'), data as RecordedEnd);
        }
      }
      if (entries.length > 0) this.recorded.set(p, journaled);
    }
  }

  /** Resolves once every journal write of the tick is in Redis. */
  async flush(): Promise<void> {
    const writes = this.writes;
    this.writes = [];
    await Promise.all(writes);
  }

  /**
   * Appends one entry, waiting out a dropped connection: an entry written twice reads the same.
   * Entries asked for in one turn of the event loop go out as one pipeline: a tick's calls start
   * together, and a round trip each would cost more than the turns themselves.
   */
  private write(agent: string, kind: 'model' | 'started' | 'ended', key: string, data: unknown): Promise<void> {
    const p = partitionOf(agent, this.partitions);
    const args = ['tick', String(this.tick), 'agent', agent, 'kind', kind, 'key', key, 'data', JSON.stringify(encodePlain(data) ?? null)];
    if (this.batch === undefined) {
      const batch: string[][] = (this.batch = []);
      const sent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.batch = undefined;
        return untilAnswered(this.opened, async () => {
          const pipeline = this.opened.client.pipeline();
          for (const [journal, ...entry] of batch) pipeline.xadd(journal!, '*', ...entry);
          for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
        });
      });
      this.sent = sent;
      this.writes.push(sent.catch(() => undefined));
    }
    this.batch.push([this.keys.journal(p), ...args]);
    return this.sent!;
  }

  private provider(live: Provider): Provider {
    // A scripted brain is asked again: it is a function of what its agent holds, and costs nothing.
    if (live.pure === true) return live;
    const ask = (request: ModelRequest): ModelResponse | Promise<ModelResponse> => (live.completeNow !== undefined ? live.completeNow(request) : live.complete(request));
    const completeNow = (request: ModelRequest): ModelResponse | Promise<ModelResponse> => {
      const agent = request.agent ?? '';
      const n = this.models.get(agent) ?? 0;
      this.models.set(agent, n + 1);
      const again = this.recorded.get(partitionOf(agent, this.partitions))?.models.get(`${agent}#${n}`);
      if (again !== undefined) return again;
      return Promise.resolve(ask(request)).then((response) => {
        this.write(agent, 'model', String(n), response);
        return response;
      });
    };
    // Streaming is left out: a reply is journaled whole.
    return { name: live.name, ...(live.model !== undefined && { model: live.model }), ...(live.accepts !== undefined && { accepts: live.accepts }), completeNow, complete: async (request) => completeNow(request) };
  }

  private started(event: Envelope<'tool.started'>): Promise<void> {
    const agent = event.agent ?? '';
    const n = this.starts.get(agent) ?? 0;
    this.starts.set(agent, n + 1);
    const key = `${agent}#${n}`;
    this.callKeys.set(`${event.data.callId}#${event.data.attempt}`, key);
    return this.write(agent, 'started', key, { name: event.data.name });
  }

  private attempt(callId: string, attempt: number): RecordedAttempt | undefined {
    const key = this.callKeys.get(`${callId}#${attempt}`);
    if (key === undefined) return undefined;
    const agent = key.slice(0, key.lastIndexOf('#'));
    const recorded = this.recorded.get(partitionOf(agent, this.partitions))?.calls.get(key);
    if (recorded === undefined) return undefined;
    return recorded === 'started' ? { kind: 'interrupted' } : recorded;
  }

  private ended(event: Envelope<'tool.completed' | 'tool.failed'>, end: RecordedEnd): void {
    const key = this.callKeys.get(`${event.data.callId}#${event.data.attempt}`);
    if (key !== undefined && event.agent !== undefined) void this.write(event.agent, 'ended', key, end);
  }
}
