/**
 * Character classes of XML 1.0 (fifth edition) used by the scanners: whitespace, name
 * characters and the characters a document may contain. All checks are table-free range tests
 * costing O(1) per character; the one regular expression, a single character class, only lets
 * `findForbiddenCharacter` skip text with nothing suspicious in one native pass.
 */

/** True for the ASCII whitespace XML and docs/protocol.md rule 10 trim: space, TAB, LF, CR. */
export function isXmlSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** True when the code point may start an XML name (`NameStartChar`). */
export function isNameStartChar(cp: number): boolean {
  if (cp < 0x80) {
    return (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f || cp === 0x3a;
  }
  return (
    (cp >= 0xc0 && cp <= 0xd6) ||
    (cp >= 0xd8 && cp <= 0xf6) ||
    (cp >= 0xf8 && cp <= 0x2ff) ||
    (cp >= 0x370 && cp <= 0x37d) ||
    (cp >= 0x37f && cp <= 0x1fff) ||
    (cp >= 0x200c && cp <= 0x200d) ||
    (cp >= 0x2070 && cp <= 0x218f) ||
    (cp >= 0x2c00 && cp <= 0x2fef) ||
    (cp >= 0x3001 && cp <= 0xd7ff) ||
    (cp >= 0xf900 && cp <= 0xfdcf) ||
    (cp >= 0xfdf0 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0xeffff)
  );
}

/** True when the code point may continue an XML name (`NameChar`). */
export function isNameChar(cp: number): boolean {
  if (isNameStartChar(cp)) return true;
  return (
    cp === 0x2d ||
    cp === 0x2e ||
    (cp >= 0x30 && cp <= 0x39) ||
    cp === 0xb7 ||
    (cp >= 0x300 && cp <= 0x36f) ||
    (cp >= 0x203f && cp <= 0x2040)
  );
}

/**
 * The end of the XML name starting at `start` and ending by `end`, or `start` itself when no name
 * starts there. Reads whole code points so astral letters count once.
 */
export function scanName(text: string, start: number, end = text.length): number {
  let index = start;
  while (index < end) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      // ASCII: letters, `_` and `:` anywhere; digits, `-` and `.` after the first character.
      const letter = (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f || code === 0x3a;
      if (!letter && (index === start || !((code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x2e))) break;
      index++;
      continue;
    }
    const next = index + 1 < end ? text.charCodeAt(index + 1) : 0;
    const cp = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? (code - 0xd800) * 0x400 + (next - 0xdc00) + 0x10000 : code;
    if (index === start ? !isNameStartChar(cp) : !isNameChar(cp)) break;
    index += cp > 0xffff ? 2 : 1;
  }
  return index;
}

/** True when the code point is a character XML allows in a document (`Char`). */
export function isLegalXmlCodePoint(cp: number): boolean {
  return (
    cp === 0x09 ||
    cp === 0x0a ||
    cp === 0x0d ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/** Every code unit that may be a character XML forbids: C0 controls but TAB/LF/CR, surrogates, U+FFFE/FFFF. */
const SUSPECT_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
/** Below this many characters the plain loop is cheaper than starting a native search. */
const NATIVE_SEARCH_FROM = 16;

/**
 * The index of the first character XML forbids in `text` (C0 controls other than TAB, LF and
 * CR, U+FFFE, U+FFFF, lone surrogates), or -1 when there is none.
 */
export function findForbiddenCharacter(text: string, start = 0, end = text.length): number {
  // On long text a native search skips the common case (nothing suspicious) at once; the loop
  // below then only has to tell a lone surrogate from a pair, starting at the first suspect.
  let from = start;
  if (end - start > NATIVE_SEARCH_FROM) {
    const suspect = (start === 0 && end === text.length ? text : text.slice(start, end)).search(SUSPECT_CHARACTER);
    if (suspect < 0) return -1;
    from = start + suspect;
  }
  for (let index = from; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20) {
      if (code !== 0x09 && code !== 0x0a && code !== 0x0d) return index;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      // A high surrogate must be followed by a low one inside the range; a low one alone is lone.
      const next = index + 1 < end ? text.charCodeAt(index + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index++;
      else return index;
    } else if (code === 0xfffe || code === 0xffff) {
      return index;
    }
  }
  return -1;
}

/** True when `text` has `pattern` at `index`, comparing ASCII letters case-insensitively. */
export function startsWithIgnoreCase(text: string, pattern: string, index: number): boolean {
  if (index + pattern.length > text.length) return false;
  for (let offset = 0; offset < pattern.length; offset++) {
    let code = text.charCodeAt(index + offset);
    if (code >= 0x41 && code <= 0x5a) code += 0x20;
    if (code !== pattern.charCodeAt(offset)) return false;
  }
  return true;
}
