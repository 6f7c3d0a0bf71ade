import { randomUUID } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import type { Bus, Unsubscribe } from '../bus/bus.js';
import { CATALOGUE_VERSION, type Envelope } from '../bus/events.js';
import { safeJson } from '../bus/safe-json.js';
import { serializeEnvelope } from '../bus/serialize-event.js';
import { LogError, errorMessage } from '../errors.js';
import { DEFAULT_MAX_INLINE_BINARY_BYTES, loggedData } from './binary-parts.js';
import { acquireLock } from './lock-file.js';
import { headerLine, parseHeader } from './log-format.js';
import { ensureDir, logFs, writeAll, type LogFs } from './log-fs.js';
import { createRedactor } from './redact.js';

/** When the log forces its writes to disk. */
export type FsyncPolicy = 'tool.started' | 'always' | 'never';

export type SessionLogOptions = {
  /** Default `tool.started`: the write-ahead record of a call is durable before the call runs. */
  fsync?: FsyncPolicy;
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
  /** File operations to use instead of `node:fs` (fault injection in tests). */
  fs?: Partial<LogFs>;
};

/** A JSONL session log attached to a bus (docs/session-log.md). */
export type SessionLog = {
  readonly path: string;
  /** The write failure that stopped the log, if any. */
  readonly failure: LogError | undefined;
  /** Records every event of `bus` from now on. */
  attach: (bus: Bus) => Unsubscribe;
  /** Writes one event; false when the log is closed or failed. Never throws. */
  record: (event: Envelope) => boolean;
  /** Throws a `LogError` unless `event` is on record (for `tool.started`: this very event). */
  assertRecorded: (event: Envelope) => void;
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
  const serialize = { redactor, maxDepth: options.maxDepth };

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
  try {
    prepare(fs, fd, absolute);
  } catch (error) {
    fs.closeSync(fd);
    lock.release();
    throw error instanceof LogError ? error : new LogError('log_write_failed', `cannot write session log ${absolute}: ${errorMessage(error)}`, { cause: error });
  }

  let failure: LogError | undefined;
  let closed = false;
  const started = new Set<string>();
  const attachments = new Set<Unsubscribe>();
  const sideDir = `${absolute}.side`;

  const fail = (error: unknown, event: Envelope): void => {
    failure = new LogError('log_write_failed', `session log ${absolute} stopped recording at event ${event.id} (${event.type}): ${errorMessage(error)}`, { cause: error });
    try {
      options.onError?.(failure);
    } catch {
      // the host's callback must not break the bus
    }
  };

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
    if (closed || failure !== undefined) return false;
    try {
      // A rich result's images: small ones inline as base64, the rest in side files first, so
      // that a line never names a file that is not yet written.
      const data = safeJson(loggedData(event, maxInlineBinaryBytes, writeBinary), serialize);
      let line = `${serializeEnvelope(event, { ...serialize, dataText: data.text }).text}\n`;
      if (Buffer.byteLength(line) > maxLineBytes) {
        const placeholder = JSON.stringify({ $side: writeSide(event, data.text), bytes: Buffer.byteLength(data.text) });
        line = `${serializeEnvelope(event, { ...serialize, dataText: placeholder }).text}\n`;
      }
      // One write per line on an O_APPEND fd: a line is never interleaved, and what was written
      // before a crash stays written.
      writeAll(fs, fd, line);
      if (fsync === 'always' || (fsync === 'tool.started' && event.type === 'tool.started')) fs.fsyncSync(fd);
      if (event.type === 'tool.started') started.add(event.id);
      return true;
    } catch (error) {
      fail(error, event);
      return false;
    }
  };

  const closeSync = (): void => {
    if (closed) return;
    closed = true;
    for (const stop of attachments) stop();
    attachments.clear();
    let error: unknown;
    try {
      if (failure === undefined && fsync !== 'never') fs.fsyncSync(fd);
    } catch (caught) {
      error = caught;
    }
    try {
      fs.closeSync(fd);
    } catch (caught) {
      error ??= caught;
    }
    lock.release();
    if (error !== undefined) throw new LogError('log_write_failed', `closing session log ${absolute} failed: ${errorMessage(error)}`, { cause: error });
  };

  return {
    path: absolute,
    get failure() {
      return failure;
    },
    attach(bus) {
      // Only envelopes, defensively: a bus on mitt's own `'*'` key would also hand its wildcard
      // listeners the channel name (mitt calls them with `(type, event)`).
      const stop = bus.on('*', (event) => {
        if (typeof event === 'object' && event !== null) record(event);
      });
      attachments.add(stop);
      return () => {
        stop();
        attachments.delete(stop);
      };
    },
    record,
    assertRecorded(event) {
      const what = `event ${event.id} (${event.type})`;
      if (failure !== undefined) throw new LogError('log_write_failed', `${what} was not recorded: ${failure.message}`, { cause: failure });
      if (closed) throw new LogError('log_write_failed', `${what} was not recorded: session log ${absolute} is closed`);
      if (event.type === 'tool.started' && !started.has(event.id)) {
        throw new LogError('log_write_failed', `${what} was not recorded in ${absolute}: is the log attached to the bus that published it?`);
      }
    },
    closeSync,
    close: async () => closeSync(),
  };
}

// A new file gets the header; an existing one must have a valid header, and a torn tail (no
// final newline after a SIGKILL) is ended so that our first line starts on a fresh line.
function prepare(fs: LogFs, fd: number, path: string): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) {
    writeAll(fs, fd, headerLine());
    fs.fsyncSync(fd);
    return;
  }
  const head = Buffer.alloc(Math.min(size, 64 * 1024));
  const read = fs.readSync(fd, head, 0, head.length, 0);
  const text = head.subarray(0, read).toString('utf8');
  const end = text.indexOf('\n');
  parseHeader(end === -1 ? text : text.slice(0, end), end !== -1, path);
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 0x0a) {
    const note = {
      v: CATALOGUE_VERSION,
      id: `log-${randomUUID().slice(0, 8)}`,
      type: 'log.error',
      at: Date.now(),
      data: { message: 'the previous writer stopped mid-line; the fragment above is quarantined by readers', path },
    };
    writeAll(fs, fd, `\n${JSON.stringify(note)}\n`);
    fs.fsyncSync(fd);
  }
}
