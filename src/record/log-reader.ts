import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Envelope } from '../bus/events.js';
import { LogError, errorMessage } from '../errors.js';
import { assertRegularFile } from './log-file.js';
import { crc32 } from './log-line.js';
import { parseHeader, type LogHeader } from './log-format.js';
import { readLines, type QuarantinedLine, type TamperedLine } from './read-log.js';

/** Where reading a log resumes: a byte offset at the start of a line, its line number, and the checksum chain's link there. */
export type LogPosition = { offset: number; line: number; chain: number };

/** Events read from a position on, each with its line number. */
export type LogTail = {
  header: LogHeader;
  events: Envelope[];
  lines: number[];
  quarantined: QuarantinedLine[];
  tampered: TamperedLine[];
};

/** The header and the position just after it: where a log's first event starts. */
export function readLogStart(path: string): { header: LogHeader; start: LogPosition; text: string } {
  const text = readRange(path, 0, 64 * 1024);
  const end = text.indexOf('\n');
  const headerText = end === -1 ? text : text.slice(0, end);
  const header = parseHeader(headerText, end !== -1, path);
  return { header, start: { offset: Buffer.byteLength(headerText) + 1, line: 2, chain: crc32(headerText) }, text };
}

/**
 * The events of a log from `position` to its end (side files loaded, checksums checked): what a
 * resume replays after its checkpoint. Reads only what follows the position, so its cost does not
 * grow with what came before.
 */
export function readLogTail(path: string, header: LogHeader, position: LogPosition): LogTail {
  const text = readRange(path, position.offset, Number.POSITIVE_INFINITY);
  const read = readLines(path, header, text.split('\n'), 0, position.chain, { loadSideFiles: true }, position.line);
  return { header, events: read.events, lines: read.numbers, quarantined: read.quarantined, tampered: read.tampered };
}

function readRange(path: string, offset: number, most: number): string {
  assertRegularFile(path, 'session log');
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new LogError('log_format', `cannot read session log ${path}: ${errorMessage(error)}`, { cause: error });
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) throw new LogError('log_format', `session log ${path} is empty: no header, version unknown`);
    const length = Math.max(0, Math.min(size - offset, most));
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const got = readSync(fd, buffer, read, length - read, offset + read);
      if (got === 0) break;
      read += got;
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
