import * as zlib from 'node:zlib';

/**
 * The checksum chain of a session log (format version 2). Each line ends with `"c":"<8 hex>"`: the
 * CRC-32 of the line's text without that field, seeded with the previous line's checksum (the
 * header's for the first event). A line edited by hand, inserted, deleted or moved breaks the
 * chain from there on; a reader names the first line that does not check.
 */

// zlib.crc32 arrived in Node 20.15; earlier 20.x releases get the tables below.
const nativeCrc32 = (zlib as { crc32?: (data: string, value?: number) => number }).crc32;

/**
 * CRC-32 tables for slicing-by-8: `TABLES[k * 256 + b]` is the CRC of byte `b` followed by `k`
 * zero bytes, so eight bytes are folded in per step (in JavaScript, several times faster than
 * zlib's for the short lines of a log, and with no string to encode).
 */
let tables: Uint32Array | undefined;

function crcTables(): Uint32Array {
  if (tables !== undefined) return tables;
  const made = new Uint32Array(256 * 8);
  for (let index = 0; index < 256; index++) {
    let value = index;
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    made[index] = value >>> 0;
  }
  for (let index = 0; index < 256; index++) {
    for (let slice = 1; slice < 8; slice++) {
      const previous = made[(slice - 1) * 256 + index]!;
      made[slice * 256 + index] = (previous >>> 8) ^ made[previous & 0xff]!;
    }
  }
  tables = made;
  return made;
}

/** CRC-32 of `bytes[start…end)`, continuing from `seed` (0 to start a chain): the same as `crc32` of their text. */
export function crc32Bytes(bytes: Uint8Array, start: number, end: number, seed = 0): number {
  const table = tables ?? crcTables();
  let crc = ~seed;
  let index = start;
  for (; index + 8 <= end; index += 8) {
    const low = crc ^ (bytes[index]! | (bytes[index + 1]! << 8) | (bytes[index + 2]! << 16) | (bytes[index + 3]! << 24));
    crc =
      table[1792 + (low & 0xff)]! ^
      table[1536 + ((low >>> 8) & 0xff)]! ^
      table[1280 + ((low >>> 16) & 0xff)]! ^
      table[1024 + (low >>> 24)]! ^
      table[768 + bytes[index + 4]!]! ^
      table[512 + bytes[index + 5]!]! ^
      table[256 + bytes[index + 6]!]! ^
      table[bytes[index + 7]!]!;
  }
  for (; index < end; index++) crc = table[(crc ^ bytes[index]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** CRC-32 of `text` (UTF-8), continuing from `seed` (0 to start a chain). */
export function crc32(text: string, seed = 0): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(text, seed);
  const bytes = Buffer.from(text, 'utf8');
  return crc32Bytes(bytes, 0, bytes.length, seed);
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
