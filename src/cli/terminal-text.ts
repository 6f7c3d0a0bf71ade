/**
 * Text from models, tools and scenes on its way to a terminal. A terminal obeys the control
 * characters in what it prints: ESC starts sequences that retitle the window, clear the screen,
 * plant hyperlinks or move the cursor; CR overwrites a line; BEL rings; the bidi controls (U+202E,
 * the right-to-left override) make text read differently from what it is. Model-written text
 * must reach the terminal as something to read, never as something the terminal does.
 */

/**
 * C0 controls but tab and newline, DEL, C1 controls, the Arabic letter mark, the bidi marks,
 * embeddings, overrides and isolates, and the line and paragraph separators.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_ONE = new RegExp(UNSAFE.source);

/** The same characters, outside ASCII or DEL: those JSON.stringify leaves raw. */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const RAW_IN_JSON_ONE = new RegExp(RAW_IN_JSON.source);

/**
 * `text` with every control and bidi character shown as its code point (`<U+202E>`, `<U+001B>`);
 * tabs, newlines and everything else are kept. Idempotent: what it returns has nothing to escape.
 *
 * @example
 * terminalSafe('evil\u202Etxt.exe \u001b]0;pwned\u0007'); // 'evil<U+202E>txt.exe <U+001B>]0;pwned<U+0007>'
 */
export function terminalSafe(text: string): string {
  // Most text has nothing to escape: one test, no copy.
  return UNSAFE_ONE.test(text) ? text.replace(UNSAFE, codePoint) : text;
}

/**
 * A JSON line with the control and bidi characters that `JSON.stringify` leaves raw written as
 * `\uXXXX` escapes: the same JSON to a parser, inert on a terminal.
 *
 * @example
 * jsonTerminalSafe(JSON.stringify({ text: 'a\u202Eb' })); // '{"text":"a\\u202eb"}'
 */
export function jsonTerminalSafe(line: string): string {
  return RAW_IN_JSON_ONE.test(line) ? line.replace(RAW_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`) : line;
}

function codePoint(char: string): string {
  return `<U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`;
}
