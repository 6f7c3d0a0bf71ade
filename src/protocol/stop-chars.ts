/**
 * The characters that can change a matcher's state while it waits for something. Every tag and
 * marker the scanners look for is ASCII, so a set is a 128-entry table and every other character
 * (U+0080 and up, surrogates included) is plain text to all of them. A streaming scanner whose
 * state is waiting reads a short chunk with no stop character by moving past it, with no further
 * work (see `StreamingScanner.push` in `streaming-scanner.ts`).
 */

/** A set of ASCII characters: `set[code] === 1` for its members. */
export type StopChars = Uint8Array;

/** The set of the given ASCII characters. */
export function stopChars(chars: string): StopChars {
  const set = new Uint8Array(0x80);
  for (let index = 0; index < chars.length; index++) set[chars.charCodeAt(index)] = 1;
  return set;
}

/** True when `chunk` holds no character of `stops`. */
export function holdsNoStop(chunk: string, stops: StopChars): boolean {
  for (let index = 0; index < chunk.length; index++) {
    const code = chunk.charCodeAt(index);
    if (code < 0x80 && stops[code] === 1) return false;
  }
  return true;
}

/** Only `<`: a tag may start. */
export const LT_STOPS = stopChars('<');
/** A line end, or a `<`. */
export const LF_LT_STOPS = stopChars('\n<');
/** Only a line end. */
export const LF_STOPS = stopChars('\n');
/** No character: nothing can change the state any more. */
export const NO_STOPS = stopChars('');
