import { LogError, errorMessage } from '../errors.js';
import { crc32Bytes } from './log-line.js';
import { nextTurn, writeAll, type LogFs } from './log-fs.js';

/** When the log forces its writes to disk. */
export type FsyncPolicy = 'tool.started' | 'always' | 'never';

/** Where the writer starts: the file's size and the checksum chain's last link. */
export type WriterStart = { size: number; chain: number; checksums: boolean };

/**
 * The session log's group commit. Lines are encoded once, straight into one buffer as UTF-8, each
 * with its chained checksum computed on those bytes; they wait there until the event loop's next
 * turn, then go out in one write, and one fsync covers every durable line among them. A turn, not
 * a microtask: the calls waiting for their starts to be on disk then let the event loop in
 * (signals, sockets, a pipe draining), and everything a burst of turns started shares the fsync.
 * The fsync is `fdatasync`: an append needs its bytes and the file's new size on disk, not its
 * modification time, and leaving that out halves what each group commit costs on Linux.
 *
 * Lines are counted as queued; `whenOnDisk(position)` waits until the line at that position is
 * forced to disk. Any write or fsync failure stops the writer for good (`failure`).
 */
export class LogWriter {
  private buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  private used = 0;
  private chainValue: number;
  private sizeValue: number;
  private readonly checksums: boolean;
  private flushQueued = false;
  private needSync = false;
  /** Lines queued, written, and forced to disk (positions count from 1). */
  private queued = 0;
  private written = 0;
  private onDiskValue = 0;
  private waiters: { position: number; what: string; resolve: () => void; reject: (error: LogError) => void }[] = [];
  private failureValue: LogError | undefined;
  private closed = false;

  constructor(
    private readonly fs: LogFs,
    private readonly fd: number,
    private readonly path: string,
    private readonly fsync: FsyncPolicy,
    start: WriterStart,
    private readonly onFail: (failure: LogError) => void,
  ) {
    this.sizeValue = start.size;
    this.chainValue = start.chain;
    this.checksums = start.checksums;
  }

  /** Bytes in the file (what is still waiting in the buffer not counted). */
  get size(): number {
    return this.sizeValue;
  }

  /** The checksum of the last line queued: the next one chains from it. */
  get chain(): number {
    return this.chainValue;
  }

  /** The position of the last line forced to disk. */
  get onDisk(): number {
    return this.onDiskValue;
  }

  get failure(): LogError | undefined {
    return this.failureValue;
  }

  /**
   * Queues one line of JSON (an object, without its newline), its checksum appended; `durable`
   * asks for an fsync at the next flush (under the `never` policy, none). Returns its position.
   */
  append(json: string, durable: boolean): number {
    // A UTF-16 unit is at most 3 bytes of UTF-8; the checksum field and the newline follow.
    this.reserve(json.length * 3 + CHECKSUM_BYTES + 1);
    const buffer = this.buffer;
    const start = this.used;
    let end = start + utf8Write(buffer, json, start);
    if (this.checksums) {
      const crc = crc32Bytes(buffer, start, end, this.chainValue);
      this.chainValue = crc;
      end = putChecksum(buffer, end - 1, crc);
    }
    buffer[end++] = NEWLINE;
    this.used = end;
    this.queued++;
    if (durable && this.fsync !== 'never') this.needSync = true;
    if (!this.flushQueued) {
      this.flushQueued = true;
      nextTurn(this.flushLater);
    }
    return this.queued;
  }

  /** Asks the next flush to force the file to disk (unless the policy is `never`). */
  requireSync(): void {
    if (this.fsync !== 'never') this.needSync = true;
  }

  /** Writes what is waiting now, and forces it to disk when a durable line asked for it; returns the file's size. */
  flush(): number {
    if (this.failureValue !== undefined || this.closed || !this.writePending()) return this.sizeValue;
    if (this.onDiskValue < this.written || this.needSync) {
      try {
        if (this.needSync) this.fs.fdatasyncSync(this.fd);
      } catch (error) {
        this.fail(error, 'at an fsync');
        return this.sizeValue;
      }
      this.needSync = false;
      this.onDiskValue = this.written;
    }
    if (this.waiters.length > 0) {
      const onDisk = this.onDiskValue;
      const ready = this.waiters.filter((waiter) => waiter.position <= onDisk);
      this.waiters = this.waiters.filter((waiter) => waiter.position > onDisk);
      for (const waiter of ready) waiter.resolve();
    }
    return this.sizeValue;
  }

  /** Resolves once the line at `position` is on disk (`undefined` when it is already). */
  whenOnDisk(position: number, what: string): Promise<void> | undefined {
    if (position <= this.onDiskValue) return undefined;
    return new Promise<void>((resolve, reject) => this.waiters.push({ position, what, resolve, reject }));
  }

  /** Stops the writer for good, failing every line still waiting. */
  fail(error: unknown, what: string): void {
    if (this.failureValue !== undefined) return;
    const failure = new LogError('log_write_failed', `session log ${this.path} stopped recording ${what}: ${errorMessage(error)}`, { cause: error });
    this.failureValue = failure;
    this.used = 0;
    this.rejectWaiters(failure);
    this.onFail(failure);
  }

  /** Flushes, forces the file to disk (unless `never`) and closes it; throws when that fails. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    let error: unknown;
    try {
      if (this.failureValue === undefined && this.fsync !== 'never') this.fs.fdatasyncSync(this.fd);
    } catch (caught) {
      error = caught;
    }
    try {
      this.fs.closeSync(this.fd);
    } catch (caught) {
      error ??= caught;
    }
    this.rejectWaiters(this.failureValue ?? new LogError('log_write_failed', `session log ${this.path} was closed`));
    this.buffer = Buffer.alloc(0);
    if (error !== undefined) throw new LogError('log_write_failed', `closing session log ${this.path} failed: ${errorMessage(error)}`, { cause: error });
  }

  private readonly flushLater = (): void => {
    this.flushQueued = false;
    this.flush();
  };

  private rejectWaiters(why: LogError): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.reject(new LogError('log_write_failed', `${waiter.what} was not recorded: ${why.message}`, { cause: why }));
  }

  /** Room for `bytes` more: a long burst is written as it grows (not yet forced to disk), a long line grows the buffer. */
  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    if (this.used > 0 && this.used + bytes > WRITE_AT_BYTES) this.writePending();
    if (this.used + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.used + bytes));
    this.buffer.copy(grown, 0, 0, this.used);
    this.buffer = grown;
  }

  /** Writes the lines waiting, without forcing them to disk; false when the write failed. */
  private writePending(): boolean {
    if (this.used === 0) return true;
    const bytes = this.used;
    this.used = 0;
    try {
      this.sizeValue += writeAll(this.fs, this.fd, this.buffer.subarray(0, bytes));
      this.written = this.queued;
    } catch (error) {
      this.fail(error, `at a write of ${bytes} bytes`);
      return false;
    }
    // A giant line grew the buffer: give it back rather than hold it for the rest of the run.
    if (this.buffer.length > 2 * WRITE_AT_BYTES) this.buffer = Buffer.allocUnsafe(INITIAL_BYTES);
    return true;
  }
}

const INITIAL_BYTES = 64 * 1024;

/** Bytes waiting past which a burst is written at once rather than at its end. */
const WRITE_AT_BYTES = 4 * 1024 * 1024;

const NEWLINE = 0x0a;

type Utf8Writer = (this: Buffer, text: string, offset: number) => number;
/** `Buffer#utf8Write` when there (every Node this runs on): `write` without its argument checks, a cost per line. */
const nativeUtf8Write = (Buffer.prototype as unknown as { utf8Write?: Utf8Writer }).utf8Write;
const utf8Write: (buffer: Buffer, text: string, offset: number) => number =
  nativeUtf8Write === undefined ? (buffer, text, offset) => buffer.write(text, offset, 'utf8') : (buffer, text, offset) => nativeUtf8Write.call(buffer, text, offset);

/** `,"c":"01234567"}` replaces the line's closing brace: 16 bytes for 1. */
const CHECKSUM_BYTES = 15;

const CHECKSUM_OPEN = Buffer.from(',"c":"', 'latin1');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** Writes `,"c":"<8 hex>"}` at `at` (over the line's closing brace); returns the index after it. */
function putChecksum(buffer: Buffer, at: number, crc: number): number {
  let index = at;
  for (let byte = 0; byte < CHECKSUM_OPEN.length; byte++) buffer[index++] = CHECKSUM_OPEN[byte]!;
  for (let shift = 28; shift >= 0; shift -= 4) buffer[index++] = HEX_DIGITS[(crc >>> shift) & 15]!;
  buffer[index++] = 0x22; // "
  buffer[index++] = 0x7d; // }
  return index;
}
