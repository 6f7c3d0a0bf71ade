import { randomUUID } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { attachRecorder, type Bus, type Unsubscribe } from '../bus/bus.js';
import type { SceneRecipe } from '../bus/event-data.js';
import type { Envelope } from '../bus/events.js';
import type { IdSource } from '../bus/ids.js';
import type { Provider } from '../llm/types.js';
import type { DispatchOptions } from '../tools/dispatch-options.js';
import { DEFAULT_MAX_DEPTH, safeJson } from '../bus/safe-json.js';
import { createLineWriter } from './plain-json.js';
import { serializeEnvelope } from '../bus/serialize-event.js';
import { LogError, errorMessage } from '../errors.js';
import { DEFAULT_MAX_INLINE_BINARY_BYTES, loggedData } from './binary-parts.js';
import { acquireLock } from './lock-file.js';
import { assertRegularFile, prepareLogFile, type OpenedLog } from './log-file.js';
import { latestCheckpointNumber as lastCheckpointNumber, writeCheckpoint } from './checkpoints.js';
import { ensureDir, logFs, writeAll, type LogFs } from './log-fs.js';
import { LogWriter, type FsyncPolicy } from './log-writer.js';
import { createRedactor } from './redact.js';

export type { FsyncPolicy } from './log-writer.js';

export type SessionLogOptions = {
  /**
   * Default `tool.started`: the write-ahead record of a call is durable before the call runs. The
   * calls that start together share one fsync (group commit).
   */
  fsync?: FsyncPolicy;
  /**
   * `new` (default): the file must not hold a run already (an empty file is fine); `append`: go on
   * writing after what is there (how a resume continues a log).
   */
  mode?: 'new' | 'append';
  /** Lines longer than this (UTF-8 bytes) put their `data` in a side file (default 1 MiB). */
  maxLineBytes?: number;
  /** Extra secrets to replace by `[redacted]`, besides secret keys and `*_API_KEY` env values. */
  redact?: (string | RegExp)[];
  /** Called once when a write fails and the log stops recording. */
  onError?: (error: LogError) => void;
  /** Depth kept in event data (default 64). */
  maxDepth?: number;
  /**
   * Images of rich tool results up to this many bytes stay in the line as base64; larger ones go
   * to a side file named by their SHA-256 (default 4 KiB).
   */
  maxInlineBinaryBytes?: number;
  /**
   * Decides which events of an attached bus are written (default: all). False means "on record
   * already": a resume leaves out what the log holds, and its calls' starts count as on disk.
   */
  accept?: (event: Envelope) => boolean;
  /**
   * When to write a checkpoint of the scene beside the log (`<log>.checkpoints/`), checked after
   * each tick: once `everyEvents` events were written since the last one, or every `everyTicks`
   * ticks; `false` for none. A resume starts from the newest checkpoint. The default, 10,000
   * events, also waits after each checkpoint nineteen times as long as it took (checkpoints cost
   * at most about 5% of the run, the first one excepted); a policy given here is kept exactly.
   */
  checkpoints?: { everyEvents?: number; everyTicks?: number } | false;
  /** Lines the file holds already, header included, when appending (so checkpoints know where they are). */
  lines?: number;
  /**
   * How to build the scene again, for `troupe resume` and `resumeScene`: written into the log's
   * first event line (`log.opened`), with the run's id. Only for a new log.
   */
  recipe?: SceneRecipe;
  /** File operations to use instead of `node:fs` (fault injection in tests). */
  fs?: Partial<LogFs>;
};

/**
 * What a log being resumed lends the scene (or agent) built on it: its bus's ids and tap, which
 * follow the log, its providers, which answer from the log, and its journal of calls.
 */
export type ReplayHooks = {
  readonly ids: IdSource;
  readonly tap: (event: Envelope) => void;
  provider(provider: Provider): Provider;
  journal: DispatchOptions['journal'];
};

/** A JSONL session log attached to a bus (docs/session-log.md). */
export type SessionLog = {
  readonly path: string;
  /**
   * The id of the run this log was opened for: a new log says it in its first event line
   * (`log.opened`); a resume names its own in the line that starts what it adds.
   */
  readonly run: string;
  /** The write failure that stopped the log, if any. */
  readonly failure: LogError | undefined;
  /** Records every event of `bus` from now on. */
  attach: (bus: Bus) => Unsubscribe;
  /**
   * Writes one event (with the next lines, at the end of the current burst of events); false
   * when the log is closed, failed, or does not `accept` it. Never throws.
   */
  record: (event: Envelope) => boolean;
  /**
   * Throws a `LogError` unless `event` is on record (for `tool.started`: this very event); returns
   * a promise when its line is not yet on disk, which resolves once it is (write-ahead: a tool
   * runs only after that).
   */
  assertRecorded: (event: Envelope) => void | Promise<void>;
  /** Writes what is waiting now, and forces it to disk unless the policy is `never`; returns the file's size. */
  flush: () => number;
  /**
   * After a tick: writes a checkpoint of the scene when one is due (see `checkpoints`), then a
   * `log.checkpoint` line. `snapshot` is called only then.
   */
  checkpoint?: (tick: number, snapshot: () => unknown) => void;
  /** Set on a log being resumed (see `resumeScene`): what it lends the scene built on it. */
  replay?: ReplayHooks;
  close: () => Promise<void>;
  closeSync: () => void;
};

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

/**
 * Opens (or creates) a session log for appending. One process, one writer: a second open of the
 * same path refuses with a `LogError`. An existing log's header is checked first; a torn last
 * line left by a crash is closed with a newline and a `log.error` note, so new lines start fresh.
 * Throws a `LogError` at once when the file cannot be created or written.
 *
 * @example
 * const log = createSessionLog('.troupe/session.jsonl');
 * log.attach(agent.bus);
 * // dispatch passes `assertRecorded: log.assertRecorded`: no tool runs unless its start is on disk
 * await log.close();
 */
export function createSessionLog(path: string, options: SessionLogOptions = {}): SessionLog {
  const fs = logFs(options.fs);
  const absolute = resolve(path);
  const fsync = options.fsync ?? 'tool.started';
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const maxInlineBinaryBytes = options.maxInlineBinaryBytes ?? DEFAULT_MAX_INLINE_BINARY_BYTES;
  const redactor = createRedactor({ secrets: options.redact ?? [] });
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const serialize = { redactor, maxDepth };
  const plainLine = createLineWriter(redactor, maxDepth);
  const accept = options.accept;

  assertRegularFile(absolute, 'session log');
  try {
    ensureDir(fs, dirname(absolute));
  } catch (error) {
    throw new LogError('log_write_failed', `cannot create the directory of session log ${absolute}: ${errorMessage(error)}`, { cause: error });
  }
  const lock = acquireLock(absolute, fs);
  let fd: number;
  try {
    fd = fs.openSync(absolute, 'a+', 0o600);
  } catch (error) {
    lock.release();
    throw new LogError('log_write_failed', `cannot open session log ${absolute}: ${errorMessage(error)}`, { cause: error });
  }
  let opened: OpenedLog;
  try {
    if (options.mode !== 'append') assertNoRun(fs, fd, absolute);
    opened = prepareLogFile(fs, fd, absolute);
  } catch (error) {
    fs.closeSync(fd);
    lock.release();
    throw error instanceof LogError ? error : new LogError('log_write_failed', `cannot write session log ${absolute}: ${errorMessage(error)}`, { cause: error });
  }

  let closed = false;
  let lines = (options.mode === 'append' ? (options.lines ?? Number.NaN) : 0) + opened.added;
  const policy = options.checkpoints === false ? undefined : { everyEvents: 10_000, ...options.checkpoints };
  // The default policy also keeps checkpoints to about 5% of the run's time: a big scene's
  // snapshot costs more than 10,000 events of a small one. A policy the host set is kept exactly.
  const capped = options.checkpoints === undefined;
  let notBefore = 0;
  let warm = false;
  let checkpoints = policy === undefined ? 0 : lastCheckpointNumber(absolute);
  let sinceCheckpoint = { events: 0, ticks: 0 };
  const attachments = new Set<Unsubscribe>();
  const sideDir = `${absolute}.side`;
  const writer = new LogWriter(fs, fd, absolute, fsync, { size: opened.size, chain: opened.chain, checksums: opened.version >= 2 }, (failure) => {
    try {
      options.onError?.(failure);
    } catch {
      // the host's callback must not break the bus
    }
  });
  /** The position in the queue of each tool.started written, for the write-ahead check. */
  const started = new Map<string, number>();
  let forgetAt = FORGET_STARTS_AT;

  /**
   * Writes a file beside the log (created, never overwritten) and returns its reference. With
   * `existing: 'same'`, a file already there is taken as these very contents (it is named by their hash).
   */
  const writeSideFile = (name: string, contents: string | Uint8Array, existing: 'refuse' | 'same'): string => {
    ensureDir(fs, sideDir);
    const reference = `${basename(absolute)}.side/${name}`;
    let sideFd: number;
    try {
      sideFd = fs.openSync(join(sideDir, name), 'wx', 0o600);
    } catch (error) {
      if (existing === 'same' && (error as NodeJS.ErrnoException).code === 'EEXIST') return reference;
      throw error;
    }
    try {
      writeAll(fs, sideFd, contents);
      if (fsync !== 'never') fs.fsyncSync(sideFd);
    } finally {
      fs.closeSync(sideFd);
    }
    return reference;
  };
  const writeSide = (event: Envelope, text: string): string =>
    writeSideFile(`${event.id.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomUUID().slice(0, 8)}.json`, text, 'refuse');
  const writeBinary = (bytes: Uint8Array, name: string): string => writeSideFile(name, bytes, 'same');

  const record = (event: Envelope): boolean => {
    if (closed || writer.failure !== undefined) return false;
    if (accept !== undefined && !accept(event)) {
      // On record already (a resume's replay): the call's start is on disk.
      if (event.type === 'tool.started') started.set(event.id, 0);
      return false;
    }
    try {
      // A rich result's images: small ones inline as base64, the rest in side files first, so
      // that a line never names a file that is not yet written.
      let json = plainLine(event);
      // A UTF-16 unit is at most 3 bytes of UTF-8: most lines are short enough not to measure.
      if (json === undefined || (json.length * 3 > maxLineBytes && Buffer.byteLength(json) > maxLineBytes)) {
        const data = safeJson(loggedData(event, maxInlineBinaryBytes, writeBinary), serialize);
        json = serializeEnvelope(event, { ...serialize, dataText: data.text }).text;
        if (json.length * 3 > maxLineBytes && Buffer.byteLength(json) > maxLineBytes) {
          const placeholder = JSON.stringify({ $side: writeSide(event, data.text), bytes: Buffer.byteLength(data.text) });
          json = serializeEnvelope(event, { ...serialize, dataText: placeholder }).text;
        }
      }
      const isStart = event.type === 'tool.started';
      const position = writer.append(json, fsync === 'always' || (isStart && fsync === 'tool.started'));
      lines++;
      sinceCheckpoint.events++;
      if (isStart) {
        // Starts long on disk are forgotten in bulk, so that a long run holds no id per call; the
        // next sweep waits until the map has doubled, so a burst of starts not yet on disk (a
        // long synchronous stretch between flushes) costs no sweep per start.
        if (started.size >= forgetAt) {
          for (const [id, at] of started) if (at <= writer.onDisk) started.delete(id);
          forgetAt = Math.max(FORGET_STARTS_AT, started.size * 2);
        }
        started.set(event.id, position);
      }
      return true;
    } catch (error) {
      writer.fail(error, `at event ${event.id} (${event.type})`);
      return false;
    }
  };

  const checkpoint = (tick: number, snapshot: () => unknown): void => {
    if (policy === undefined || closed || writer.failure !== undefined) return;
    sinceCheckpoint.ticks++;
    const due = sinceCheckpoint.events >= (policy.everyEvents ?? Number.POSITIVE_INFINITY) || sinceCheckpoint.ticks >= (policy.everyTicks ?? Number.POSITIVE_INFINITY);
    if (!due || (capped && performance.now() < notBefore)) return;
    // The checkpoint names a place in the log: what comes before it must be on disk first.
    writer.requireSync();
    writer.flush();
    if (writer.failure !== undefined) return;
    try {
      const startedAt = performance.now();
      const number = ++checkpoints;
      const written = writeCheckpoint(absolute, number, tick, { offset: writer.size, line: lines + 1, chain: writer.chain }, snapshot());
      record({ id: `log-${randomUUID().slice(0, 8)}`, type: 'log.checkpoint', at: Date.now(), data: { number, tick, file: written.file, sha256: written.sha256 } });
      sinceCheckpoint = { events: 0, ticks: 0 };
      const tookMs = performance.now() - startedAt;
      // The first one pays for warming up (its folder made, the snapshot's code compiled), often
      // many times what the next costs: waiting 19 times that long left tails of hundreds of
      // thousands of events to replay. The cap counts from the second on.
      if (warm) notBefore = performance.now() + 19 * tookMs;
      warm = true;
    } catch (error) {
      // A checkpoint that cannot be written costs only resume time: the log goes on, and says so.
      record({ id: `log-${randomUUID().slice(0, 8)}`, type: 'log.error', at: Date.now(), data: { message: `checkpoint not written: ${errorMessage(error)}`, path: absolute } });
    }
  };

  const closeSync = (): void => {
    if (closed) return;
    closed = true;
    for (const stop of attachments) stop();
    attachments.clear();
    try {
      writer.close();
    } finally {
      lock.release();
    }
  };

  const run = `r${randomUUID().slice(0, 8)}`;
  if (options.mode !== 'append') {
    const data = options.recipe === undefined ? { run, kind: 'run' } : { run, kind: 'run', recipe: options.recipe };
    record({ id: `log-${run}`, type: 'log.opened', at: Date.now(), data } as Envelope<'log.opened'>);
  }

  return {
    path: absolute,
    run,
    get failure() {
      return writer.failure;
    },
    attach: (bus) => attachRecorder(bus, record, attachments),
    record,
    assertRecorded(event) {
      const what = `event ${event.id} (${event.type})`;
      const failure = writer.failure;
      if (failure !== undefined) throw new LogError('log_write_failed', `${what} was not recorded: ${failure.message}`, { cause: failure });
      if (closed) throw new LogError('log_write_failed', `${what} was not recorded: session log ${absolute} is closed`);
      if (event.type !== 'tool.started') return undefined;
      const position = started.get(event.id);
      if (position === undefined) {
        throw new LogError('log_write_failed', `${what} was not recorded in ${absolute}: is the log attached to the bus that published it?`);
      }
      return writer.whenOnDisk(position, what);
    },
    flush: () => (closed ? writer.size : writer.flush()),
    checkpoint,
    closeSync,
    close: async () => closeSync(),
  };
}

/** Starts remembered for the write-ahead check before those already on disk are dropped. */
const FORGET_STARTS_AT = 4_096;

/** A log that holds events already belongs to a run: it is continued, never started again. */
function assertNoRun(fs: LogFs, fd: number, path: string): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const head = Buffer.alloc(Math.min(size, 64 * 1024 + 1));
  const read = fs.readSync(fd, head, 0, head.length, 0);
  const text = head.subarray(0, read).toString('utf8');
  const end = text.indexOf('\n');
  if (end === -1 || end === text.length - 1 && read === size) return; // a header alone: no run yet
  throw new LogError(
    'log_write_failed',
    `session log ${path} already holds a run: continue it with \`troupe resume ${path}\` (resumeScene in code), or log to a new file`,
  );
}
