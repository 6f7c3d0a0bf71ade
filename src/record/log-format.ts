import { CATALOGUE_VERSION } from '../bus/events.js';
import { LogError } from '../errors.js';

/** The `format` of every troupe session log's header line. */
export const LOG_FORMAT = 'troupe-log';

/**
 * The version of the session log's line format (header, envelope lines, side-file placeholders).
 * Readers refuse any other version with an error naming it; there is no silent misread.
 *
 * Version history:
 * - 1: header `{ format, version, catalogue, createdAt }`; one envelope per line with `v`; data
 *   over `maxLineBytes` replaced by `{ "$side": "<log>.side/<id>.json", "bytes": n }`. Added
 *   within version 1 (old readers see plain JSON): a `tool.completed` rich result's `output` as
 *   `{ "$parts": [...] }`, its images inline as `base64` or in `<log>.side/<sha256>.<ext>`.
 * - 2: every event line ends with `"c"`, a CRC-32 chained from the line before (the header's
 *   text seeds it), so an edited, inserted or deleted line is found. Version 1 logs are still read.
 */
export const LOG_VERSION = 2;

/** The versions this troupe reads. */
const READABLE_VERSIONS: ReadonlySet<unknown> = new Set([1, 2]);

/** The first line of a session log. */
export type LogHeader = { format: typeof LOG_FORMAT; version: number; catalogue: number; createdAt: string };

/** The header line (with its newline) for a log created now. */
export function headerLine(createdAt: Date = new Date()): string {
  const header: LogHeader = { format: LOG_FORMAT, version: LOG_VERSION, catalogue: CATALOGUE_VERSION, createdAt: createdAt.toISOString() };
  return `${JSON.stringify(header)}\n`;
}

/**
 * Checks a log's first line. `complete` is false when the file ended before the line's newline
 * (a crash while the header was written); a header that still parses is accepted. Throws a
 * `LogError` naming the format and version found.
 */
export function parseHeader(text: string, complete: boolean, path: string): LogHeader {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Name the version even in a fragment, so the message says which troupe wrote it.
    const version = /"version"\s*:\s*(\d+)/.exec(text)?.[1];
    const found = version === undefined ? 'version unknown' : `version ${version}`;
    const what = complete ? 'an unreadable header' : `a truncated header (${text.length} characters, no end of line)`;
    throw new LogError('log_format', `session log ${path} has ${what}, ${found}: ${JSON.stringify(text.slice(0, 80))}`);
  }
  const header = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (header.format !== LOG_FORMAT) {
    throw new LogError('log_format', `${path} is not a troupe session log (format ${JSON.stringify(header.format) ?? 'missing'}, expected "${LOG_FORMAT}")`);
  }
  if (!READABLE_VERSIONS.has(header.version)) {
    throw new LogError(
      'log_format',
      `session log ${path} is format version ${JSON.stringify(header.version) ?? 'missing'}; this troupe reads versions 1 and ${LOG_VERSION}`,
    );
  }
  if (header.catalogue !== CATALOGUE_VERSION) {
    throw new LogError(
      'log_format',
      `session log ${path} uses event catalogue version ${JSON.stringify(header.catalogue) ?? 'missing'}; this troupe knows version ${CATALOGUE_VERSION}`,
    );
  }
  return header as LogHeader;
}
