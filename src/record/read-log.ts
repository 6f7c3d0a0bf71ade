import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Envelope } from '../bus/events.js';
import { LogError, errorMessage } from '../errors.js';
import { restoreResult } from './binary-parts.js';
import { assertRegularFile } from './log-file.js';
import { crc32, lineChecksum, verifyLine } from './log-line.js';
import { parseHeader, type LogHeader } from './log-format.js';

/** A line that could not be read as an event: reported, never fatal. */
export type QuarantinedLine = { lineNumber: number; text: string; reason: string };

/** A line whose checksum does not follow from the lines before it: edited, inserted, or after a deleted line. */
export type TamperedLine = { lineNumber: number; reason: string };

export type ReadLogResult = {
  header: LogHeader;
  events: Envelope[];
  quarantined: QuarantinedLine[];
  /** Lines that parse but break the checksum chain (format version 2): the log was changed by hand. */
  tampered: TamperedLine[];
};

export type ReadLogOptions = {
  /**
   * Replace `{ "$side": … }` placeholders by the side file's data, and turn the `{ "$parts": … }`
   * output of a rich tool result back into a `ToolResult` with its image bytes (default false).
   */
  loadSideFiles?: boolean;
};

/** Quarantined text kept per line; a torn 50 MB line is reported, not copied. */
const MAX_QUARANTINE_CHARS = 1_000;
// Side references the log itself writes: `<log name>.side/<file>.json`, nothing that climbs out.
const SIDE_REFERENCE = /^[^/\\]+\.side\/[A-Za-z0-9._-]+\.json$/;

/**
 * Reads a session log. A line that does not parse as an envelope (the torn last line a SIGKILL
 * leaves, or any damaged line) is quarantined with its line number and reason, and reading goes
 * on. A missing, foreign, other-version or truncated header throws a `LogError` naming the
 * version found: a log is never silently misread.
 *
 * @example
 * const { events, quarantined } = readLog('.troupe/session.jsonl');
 * for (const line of quarantined) console.warn(`line ${line.lineNumber}: ${line.reason}`);
 */
export function readLog(path: string, options: ReadLogOptions = {}): ReadLogResult {
  assertRegularFile(path, 'session log');
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    throw new LogError('log_format', `cannot read session log ${path}: ${errorMessage(error)}`, { cause: error });
  }
  if (content === '') throw new LogError('log_format', `session log ${path} is empty: no header, version unknown`);
  const lines = content.split('\n');
  const header = parseHeader(lines[0] ?? '', lines.length > 1, path);
  const { events, quarantined, tampered } = readLines(path, header, lines, 1, crc32(lines[0] ?? ''), options);
  return { header, events, quarantined, tampered };
}

/**
 * Reads event lines `lines[from…]` of a log (line numbers count from 1 at the header), checking
 * the checksum chain from `chain` when the log has one.
 */
export function readLines(path: string, header: LogHeader, lines: readonly string[], from: number, chain: number, options: ReadLogOptions = {}, firstLineNumber = from + 1) {
  const events: Envelope[] = [];
  /** The line number of each event. */
  const numbers: number[] = [];
  const quarantined: QuarantinedLine[] = [];
  const tampered: TamperedLine[] = [];
  const checked = header.version >= 2;
  for (let index = from; index < lines.length; index++) {
    const text = lines[index] ?? '';
    if (text === '') continue; // the end of the file, or the newline that closed a torn tail
    const lineNumber = firstLineNumber + index - from;
    const torn = index === lines.length - 1 ? ' (the last line has no end of line: a write cut short)' : '';
    const quarantine = (reason: string): void => {
      const shown = text.length > MAX_QUARANTINE_CHARS ? `${text.slice(0, MAX_QUARANTINE_CHARS)}…[${text.length} characters]` : text;
      quarantined.push({ lineNumber, text: shown, reason: `${reason}${torn}` });
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      quarantine(`not JSON: ${errorMessage(error)}`);
      continue;
    }
    const problem = envelopeProblem(parsed, header.catalogue);
    if (problem !== undefined) {
      quarantine(problem);
      continue;
    }
    if (checked) {
      const verified = verifyLine(text, chain);
      if (verified.ok) chain = verified.crc ?? chain;
      else {
        tampered.push({ lineNumber, reason: verified.reason });
        // Go on from this line's own link, so that one changed line is named once.
        chain = lineChecksum(text) ?? chain;
      }
    }
    const { v: _version, c: _checksum, ...event } = parsed as Envelope & { v: number; c?: string };
    if (options.loadSideFiles) {
      const loaded = loadSide(path, event.data);
      if (loaded.ok) (event as { data: unknown }).data = loaded.data;
      else if (loaded.reason !== undefined) quarantine(loaded.reason);
      if (event.type === 'tool.completed') {
        // A rich result comes back as one, its images read from the line or their side files.
        const restored = restoreResult(path, (event.data as { output?: unknown } | null)?.output);
        if (restored?.ok === true) (event.data as { output: unknown }).output = restored.value;
        else if (restored !== undefined) quarantine(`tool result of ${event.id}: ${restored.problem}`);
      }
    }
    events.push(event as Envelope);
    numbers.push(lineNumber);
  }
  return { events, numbers, quarantined, tampered, chain };
}

function envelopeProblem(value: unknown, catalogue: number): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an envelope object';
  const line = value as Record<string, unknown>;
  if (typeof line.id !== 'string' || typeof line.type !== 'string' || typeof line.at !== 'number' || !('data' in line)) {
    return 'not an envelope: id, type, at and data are required';
  }
  if (line.v !== catalogue) return `event catalogue version ${JSON.stringify(line.v)} differs from the header's ${catalogue}`;
  return undefined;
}

function loadSide(path: string, data: unknown): { ok: true; data: unknown } | { ok: false; reason?: string } {
  const reference = (data as { $side?: unknown } | null)?.$side;
  if (typeof reference !== 'string') return { ok: false };
  if (!SIDE_REFERENCE.test(reference)) return { ok: false, reason: `side reference ${JSON.stringify(reference)} refused: not a side file of this log` };
  try {
    return { ok: true, data: JSON.parse(readFileSync(join(dirname(path), reference), 'utf8')) };
  } catch (error) {
    return { ok: false, reason: `side file ${reference} unreadable: ${errorMessage(error)}` };
  }
}
