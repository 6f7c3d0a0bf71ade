import * as zlib from 'node:zlib';

/**
 * The checksum chain of a session log (format version 2). Each line ends with `"c":"<8 hex>"`: the
 * CRC-32 of the line's text without that field, seeded with the previous line's checksum (the
 * header's for the first event). A line edited by hand, inserted, deleted or moved breaks the
 * chain from there on; a reader names the first line that does not check.
 */

// zlib.crc32 arrived in Node 20.15; earlier 20.x releases get the table below.
const nativeCrc32 = (zlib as { crc32?: (data: string, value?: number) => number }).crc32;

let table: Uint32Array | undefined;

function jsCrc32(text: string, seed: number): number {
  table ??= Uint32Array.from({ length: 256 }, (_, index) => {
    let value = index;
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    return value >>> 0;
  });
  let crc = ~seed >>> 0;
  for (const byte of Buffer.from(text, 'utf8')) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** CRC-32 of `text` (UTF-8), continuing from `seed` (0 to start a chain). */
export function crc32(text: string, seed = 0): number {
  return nativeCrc32 !== undefined ? nativeCrc32(text, seed) : jsCrc32(text, seed);
}

/** The field a checksummed line ends with, before its closing brace: `,"c":"0a1b2c3d"`. */
const SUFFIX_CHARS = ',"c":"00000000"}'.length;

/** Appends the chained checksum to one line of JSON (an object); returns the line and its checksum. */
export function checksummed(json: string, previous: number): { line: string; crc: number } {
  const crc = crc32(json, previous);
  return { line: `${json.slice(0, -1)},"c":"${hex(crc)}"}`, crc };
}

/**
 * Checks a line against the chain: its checksum when it has one and it follows from `previous`,
 * or why not. `undefined` checksum: the line carries none (a version 1 log).
 */
export function verifyLine(line: string, previous: number): { ok: true; crc: number | undefined } | { ok: false; reason: string } {
  if (!line.endsWith('"}') || line.charAt(line.length - SUFFIX_CHARS) !== ',' || !line.startsWith(',"c":"', line.length - SUFFIX_CHARS)) {
    return { ok: false, reason: 'no checksum field at the end of the line' };
  }
  const written = Number.parseInt(line.slice(line.length - 10, line.length - 2), 16);
  const json = `${line.slice(0, line.length - SUFFIX_CHARS)}}`;
  const crc = crc32(json, previous);
  if (written !== crc) return { ok: false, reason: `checksum mismatch (the line, or one before it, was changed by hand)` };
  return { ok: true, crc };
}

/** The checksum a line ends with, without checking it (to seed a chain from a known good line). */
export function lineChecksum(line: string): number | undefined {
  const match = /,"c":"([0-9a-f]{8})"\}$/.exec(line);
  return match === null ? undefined : Number.parseInt(match[1]!, 16);
}

const DIGITS = '0123456789abcdef';

function hex(value: number): string {
  // By hand: Number#toString(16) is slow for the doubles a CRC above 2^31 is.
  let text = '';
  for (let shift = 28; shift >= 0; shift -= 4) text += DIGITS[(value >>> shift) & 15];
  return text;
}
