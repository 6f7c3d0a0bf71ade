import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { CATALOGUE_VERSION } from '../bus/events.js';
import { LogError } from '../errors.js';
import { checksummed, crc32, lineChecksum } from './log-line.js';
import { headerLine, parseHeader } from './log-format.js';
import { writeAll, type LogFs } from './log-fs.js';

/**
 * Where an opened log file stands: its format version, its size, the checksum chain's last link,
 * and the lines this opening added (a header, or the end and note of a torn tail).
 */
export type OpenedLog = { version: number; size: number; chain: number; added: number };

/** Lines longer than this are not searched for when finding the last line (a line's data goes to a side file past 1 MiB). */
const TAIL_WINDOW = 2 * 1024 * 1024;

/**
 * Refuses a path that exists and is not a regular file (a device that never ends, a FIFO that
 * blocks, a directory), before anything opens it.
 */
export function assertRegularFile(path: string, what: string): void {
  let stats: ReturnType<typeof statSync> | undefined;
  try {
    stats = statSync(path);
  } catch {
    return; // missing: the caller creates it, or says it is missing
  }
  if (!stats.isFile()) {
    const kind = stats.isDirectory() ? 'a directory' : stats.isFIFO() ? 'a FIFO' : stats.isCharacterDevice() || stats.isBlockDevice() ? 'a device' : 'not a regular file';
    throw new LogError('log_format', `${what} ${path} is ${kind}; a session log is a regular file`);
  }
}

/**
 * Prepares an open log file for appending: a new (empty) file gets the header; an existing one
 * must have a valid header, and a torn tail (no final newline after a SIGKILL) is ended and noted
 * with a `log.error` line, so that new lines start fresh and the checksum chain goes on from the
 * last whole line.
 */
export function prepareLogFile(fs: LogFs, fd: number, path: string): OpenedLog {
  const size = fs.fstatSync(fd).size;
  if (size === 0) {
    const header = headerLine();
    writeAll(fs, fd, header);
    fs.fsyncSync(fd);
    return { version: 2, size: Buffer.byteLength(header), chain: crc32(header.slice(0, -1)), added: 1 };
  }
  const head = readAt(fs, fd, 0, Math.min(size, 64 * 1024));
  const end = head.indexOf('\n');
  const headerText = end === -1 ? head : head.slice(0, end);
  const { version } = parseHeader(headerText, end !== -1, path);
  const tailStart = Math.max(0, size - TAIL_WINDOW);
  const tail = readAt(fs, fd, tailStart, size - tailStart);
  const torn = !tail.endsWith('\n');
  // The last whole line is the chain's last link: the header's when no event follows it.
  // Without a final newline the last piece is the torn fragment; with one, it is empty.
  const whole = tail.split('\n').slice(0, -1);
  let chain = crc32(headerText);
  for (let index = whole.length - 1; index >= 0; index--) {
    const found = lineChecksum(whole[index]!);
    if (found !== undefined) {
      chain = found;
      break;
    }
  }
  let written = size;
  let added = 0;
  if (torn) {
    const envelope = {
      v: CATALOGUE_VERSION,
      id: `log-${randomUUID().slice(0, 8)}`,
      type: 'log.error',
      at: Date.now(),
      data: { message: 'the previous writer stopped mid-line; the fragment above is quarantined by readers', path },
    };
    const json = JSON.stringify(envelope);
    const note = version >= 2 ? checksummed(json, chain) : { line: json, crc: chain };
    const text = `\n${note.line}\n`;
    writeAll(fs, fd, text);
    fs.fsyncSync(fd);
    chain = note.crc;
    written += Buffer.byteLength(text);
    added = 1; // the note (the fragment's new end of line closes a line already counted)
  }
  return { version, size: written, chain, added };
}

function readAt(fs: LogFs, fd: number, position: number, length: number): string {
  const buffer = Buffer.alloc(length);
  const read = fs.readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read).toString('utf8');
}
