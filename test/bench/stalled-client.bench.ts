import { fork } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import { buildCrowd } from '../../scenes/crowd/index.js';
import { createBus } from '../../src/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import { createEventHistory, startInspector, type Inspector, type InspectorNotice } from '../../src/inspect/index.js';
import type { Row } from './measure.js';
import type { ReaderProgress } from './sse-reader.js';
import { fileURLToPath } from 'node:url';

/**
 * How the crowd is watched in one run: (a) no inspector, (a′) an inspector nobody reads, (b) one
 * client reading `/events`, (c) clients that never read.
 */
type Watch = 'none' | 'idle' | 'reader' | 'stalled';

/** A point of the run: the tick (0 before the first) and the events the bus had published by then. */
type Moment = { tick: number; events: number };

/** One stalled client: when the server dropped it, and what its socket held once read after the run. */
type Stall = { droppedAt?: Moment; bytes: number; closedByServer: boolean };

/** The reading client: frames received, the first and last event number, and whether ids ran on without a hole. */
type Reader = { frames: number; first: number; last: number; contiguous: boolean; dropped: boolean; close(): void };

type Watched = {
  steps: number;
  seconds: number;
  /** Seconds per timed tick, by tick number (index 0 and 1 unused: tick 1 is not timed). */
  tickSeconds: number[];
  published: number;
  delivered: number;
  queue: number;
  reader?: Reader;
  stalls: Stall[];
  notices: InspectorNotice[];
};

export type StalledClientOptions = {
  /** Clients that never read in run (c) (default 5). */
  stalled?: number;
  /**
   * The inspector's per-client queue (default: 32 events per NPC, about two ticks of the crowd).
   * A stepped crowd publishes a whole tick (~14 events per NPC) before the server can write, so
   * a queue under one tick drops even a client that reads.
   */
  queue?: number;
};

/** Milliseconds the bench waits, at most, for the reader to catch up or a stalled socket to close. */
const SETTLE_MS = 10_000;

/**
 * An SSE client that never reads gets a bounded buffer and is then dropped, and
 * the agents' throughput does not change. Runs the crowd scene (built as `benchCrowd` builds it)
 * in this process, same size each time: (a) no inspector; (a′) an inspector with its history and
 * no client; (b) an inspector with one client in another process reading `GET /events` over HTTP,
 * with the token, to the last event; (c) an inspector with `stalled` clients that connect over TCP to 127.0.0.1, send
 * the request with the token and never read a byte while the scene runs. Reports agent-steps/s
 * for each over the ticks after the first (as `benchCrowd`), the ratio to (a), and for (c) the
 * ratio to (a′), when the server dropped each stalled client (its `client_dropped` notice) and,
 * reading the socket after the run, that the server had closed it. Every run checks that the bus
 * delivered every event; (b) checks that the reader got every event after the first it saw, in
 * order, to the last.
 *
 * The timed loop gives the event loop one turn after each tick, in every run: a stepped scene
 * with a zero-latency brain otherwise never lets the server write while it runs. In (b) the loop
 * also waits, timed, until the reader has caught up. The reader is a process of its own, as a
 * page's browser is: the server's cost (serializing every event once, writing its frames in
 * batches) is in (b)'s time, and the reading is on the machine's other core.
 */
export async function benchStalledClient(npcs: number, ticks: number, options: StalledClientOptions = {}): Promise<Row[]> {
  if (ticks < 3) throw new Error('benchStalledClient needs at least 3 ticks (the first is not timed)');
  const stalled = options.stalled ?? 5;
  if (!Number.isSafeInteger(stalled) || stalled < 1) throw new Error('benchStalledClient needs at least 1 stalled client');
  const queue = options.queue ?? 32 * npcs;
  // A short untimed crowd first, so that the first timed run does not pay for compiling the code.
  await watchCrowd('none', npcs, 3, { stalled: 0, queue });
  const bare = await watchCrowd('none', npcs, ticks, { stalled: 0, queue });
  const idle = await watchCrowd('idle', npcs, ticks, { stalled: 0, queue });
  const stalling = await watchCrowd('stalled', npcs, ticks, { stalled, queue });
  // The reader last: the garbage it leaves (a string per event and chunk) slows whatever runs next.
  const reading = await watchCrowd('reader', npcs, ticks, { stalled: 0, queue });

  const label = `${npcs.toLocaleString('en-US')} NPCs × ${ticks - 1} ticks`;
  const rate = (run: Watched): number => run.steps / run.seconds;
  const steps = (run: Watched): string => `${Math.round(rate(run)).toLocaleString('en-US')} agent-steps/s`;
  const versus = (run: Watched, base: Watched, what: string): string => `${(rate(run) / rate(base)).toFixed(2)}× ${what}`;
  const all = (run: Watched): string => `bus delivered all ${run.delivered.toLocaleString('en-US')} events`;
  const row = (name: string, run: Watched, note: string): Row => ({
    name: `crowd, ${label}: ${name}`,
    iterations: run.steps,
    usPerOp: (run.seconds * 1e6) / run.steps,
    note,
  });

  const reader = reading.reader!;
  const got = reader.contiguous && !reader.dropped && reader.last === reading.published;
  const readerNote = got
    ? `reader got all ${reader.frames.toLocaleString('en-US')} events from #${reader.first} to the last, in order (the loop waits for it after each tick)`
    : `READER ${reader.dropped ? 'DROPPED' : 'INCOMPLETE'}: ${reader.frames.toLocaleString('en-US')} frames, #${reader.first}–#${reader.last} of ${reading.published.toLocaleString('en-US')}${reader.contiguous ? '' : ', with holes'}`;
  const stalls = stalling.stalls;
  const dropped = stalls.filter((stall) => stall.droppedAt !== undefined);
  const closed = stalls.filter((stall) => stall.closedByServer);
  const moments = [...new Set(dropped.map(({ droppedAt }) => `tick ${droppedAt!.tick}, event ${droppedAt!.events.toLocaleString('en-US')}`))];
  const kb = stalls.map((stall) => Math.round(stall.bytes / 1024));
  // Throughput once every stalled client is gone, against the other runs over the same ticks.
  const lastDrop = dropped.length === stalled ? Math.max(...dropped.map(({ droppedAt }) => droppedAt!.tick)) : ticks;
  const span = (run: Watched, from: number, to: number): number => (npcs * (to - from + 1)) / run.tickSeconds.slice(from, to + 1).reduce((sum, s) => sum + s, 0);
  const split =
    lastDrop >= 2 && lastDrop < ticks
      ? `ticks 2–${lastDrop} (until the drops) ${Math.round(span(stalling, 2, lastDrop)).toLocaleString('en-US')}/s = ${(span(stalling, 2, lastDrop) / span(idle, 2, lastDrop)).toFixed(2)}× no client; ` +
        `ticks ${lastDrop + 1}–${ticks} (after) ${Math.round(span(stalling, lastDrop + 1, ticks)).toLocaleString('en-US')}/s = ${(span(stalling, lastDrop + 1, ticks) / span(idle, lastDrop + 1, ticks)).toFixed(2)}× no client, ${(span(stalling, lastDrop + 1, ticks) / span(bare, lastDrop + 1, ticks)).toFixed(2)}× (a); `
      : '';
  const stallNote =
    `${dropped.length} of ${stalled} stalled clients dropped (${moments.join('; ') || 'none'}), queue ${stalling.queue.toLocaleString('en-US')}; ${split}` +
    `${closed.length} of ${stalled} sockets found closed by the server after the run, holding ${Math.min(...kb)}–${Math.max(...kb)} KB`;

  return [
    row('no inspector (a)', bare, `${steps(bare)}; ${all(bare)}`),
    row('inspector, no client', idle, `${steps(idle)} (${versus(idle, bare, '(a)')}): the history alone; ${all(idle)}`),
    row('1 reading client', reading, `${steps(reading)} (${versus(reading, bare, '(a)')}); ${readerNote}; ${all(reading)}`),
    row(
      `${stalled} stalled clients`,
      stalling,
      `${steps(stalling)} (${versus(stalling, bare, '(a)')}, ${versus(stalling, idle, 'no client')}); ${stallNote}; ${all(stalling)}`,
    ),
  ];
}

async function watchCrowd(watch: Watch, npcs: number, ticks: number, options: { stalled: number; queue: number }): Promise<Watched> {
  (globalThis as { gc?: () => void }).gc?.();
  const bus = createBus({ ids: sequentialIds('crowd') });
  // The history subscribes first, before the scene exists: as `troupe run --inspect` records it.
  const history = watch === 'none' ? undefined : createEventHistory(bus);
  let delivered = 0;
  bus.on('*', () => void delivered++);
  const scene = buildCrowd({ npcs, seed: 1, bus });
  let tick = 0;
  const now = (): Moment => ({ tick, events: history?.total ?? delivered });
  const notices: InspectorNotice[] = [];
  const stalls: Stall[] = [];
  const sockets: Socket[] = [];
  let inspector: Inspector | undefined;
  let reader: Reader | undefined;
  try {
    if (history !== undefined) {
      inspector = await startInspector({
        scene,
        history,
        port: 0,
        host: '127.0.0.1',
        queue: options.queue,
        onNotice: (notice) => {
          notices.push(notice);
          if (notice.kind !== 'client_dropped') return;
          // Notices do not name the client; in (c) only the stalled clients are there to drop.
          const next = stalls.find((stall) => stall.droppedAt === undefined);
          if (next !== undefined) next.droppedAt = now();
        },
      });
      if (watch === 'reader') reader = await openReader(inspector);
      for (let index = 0; index < (watch === 'stalled' ? options.stalled : 0); index++) {
        stalls.push({ bytes: 0, closedByServer: false });
        sockets.push(await openStalled(inspector));
      }
      // Let the server read the stalled clients' requests and open their streams before the scene starts.
      await sleep(100);
    }
    await scene.start();
    tick = 1;
    const warm = await scene.step();
    if (warm.turns !== npcs) throw new Error(`tick 1 ran ${warm.turns} turns for ${npcs} NPCs`);
    await catchUp(reader, history);
    const tickSeconds: number[] = [0, 0];
    const start = process.hrtime.bigint();
    let last = start;
    for (tick = 2; tick <= ticks; tick++) {
      const report = await scene.step();
      if (report.turns !== npcs || report.outcomes.turn_ended !== npcs) throw new Error(`tick ${report.tick}: ${JSON.stringify(report.outcomes)}`);
      await turn();
      await catchUp(reader, history);
      const end = process.hrtime.bigint();
      tickSeconds.push(Number(end - last) / 1e9);
      last = end;
    }
    const seconds = Number(last - start) / 1e9;
    tick = ticks;
    await scene.stop();
    // Ids are counted: the last id's number is how many events were published.
    const published = Number(bus.ids().split('-')[1]) - 1;
    if (delivered !== published) throw new Error(`the bus delivered ${delivered} of ${published} events`);
    await catchUp(reader, history);
    // Untimed: read what each stalled socket holds, to see that the server closed it (bounded in time).
    await Promise.all(sockets.map((socket, index) => drainStalled(socket, stalls[index]!)));
    return { steps: npcs * (ticks - 1), seconds, tickSeconds, published, delivered, queue: options.queue, ...(reader === undefined ? {} : { reader: { ...reader } }), stalls, notices };
  } finally {
    for (const socket of sockets) socket.destroy();
    reader?.close();
    await inspector?.close();
    history?.detach();
  }
}

/** Gives the event loop turns until the reader has every event the history has seen (if there is a reader). */
async function catchUp(reader: Reader | undefined, history: { total: number } | undefined): Promise<void> {
  if (reader === undefined || history === undefined) return;
  const deadline = Date.now() + SETTLE_MS;
  while (reader.last < history.total && !reader.dropped && Date.now() < deadline) await turn();
}

/**
 * Opens `GET /events` with the token from a reader in its own process (a page's browser is one),
 * which reports how far it got after each chunk it reads.
 */
function openReader(inspector: Inspector): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./sse-reader.js', import.meta.url)), [String(inspector.port), inspector.token], { stdio: 'ignore' });
    const state: Reader = { frames: 0, first: 0, last: 0, contiguous: true, dropped: false, close: () => void child.kill() };
    child.on('message', (progress: ReaderProgress) => {
      Object.assign(state, progress);
      resolve(state);
    });
    child.once('error', reject);
    child.once('exit', () => void (state.dropped = true));
  });
}

/** A raw TCP client: sends `GET /events` with the token, then never reads (the socket is paused). */
function openStalled(inspector: Inspector): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(inspector.port, '127.0.0.1');
    socket.pause();
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined); // the server resets it when it drops it: expected
      socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${inspector.port}\r\nX-Troupe-Token: ${inspector.token}\r\n\r\n`);
      resolve(socket);
    });
  });
}

/**
 * After the run: reads what the stalled socket holds, to see whether the server closed it (the
 * socket ends or is reset once the held bytes are read). A socket the server kept open is left
 * after `SETTLE_MS`.
 */
function drainStalled(socket: Socket, stall: Stall): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, SETTLE_MS);
    socket.on('data', (chunk: Buffer) => void (stall.bytes += chunk.length));
    socket.once('close', () => {
      stall.closedByServer = true;
      clearTimeout(timer);
      resolve();
    });
    socket.resume();
  });
}
