/**
 * The element layer of the `<ACTION>` grammar: splitting an element's inner text into child
 * elements with stop-node semantics (docs/protocol.md rules 8 and 10), and decoding a string value.
 * Both are single forward passes: every search resumes where the previous one stopped.
 */
import { failure, success, type Outcome } from '../outcome.js';
import { isLegalXmlCodePoint, isNameChar, isNameStartChar, isXmlSpace, scanName, startsWithIgnoreCase } from './xml-chars.js';
import type { MalformedCategory, MalformedProblem, RawArgument } from './types.js';

/**
 * What `scanElements` found: the children before the first problem, where stray text first
 * appeared (-1: none), and the first structural problem when it comes before any stray text.
 */
export type ScannedElements = { elements: RawArgument[]; strayOffset: number; problem: MalformedProblem | undefined };

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const RBRACKET = 0x5d;

/** The DTD declarations after `<!` (rule 8: `doctype_forbidden`), lower-case. */
const DECLARATIONS = ['doctype', 'entity', 'element', 'attlist', 'notation'] as const;

/**
 * Splits the inner text of an element into its child elements (stop-node semantics for each child).
 *
 * Whitespace and comments between children are skipped. `strayText` is true when other text or
 * CDATA sits between or around them; the caller decides what that means. Problems are reported in
 * document order: once stray text has been seen, a later structural problem is not reported (the
 * stray text is the first problem) and `elements` holds the children found before it.
 *
 * @example
 * splitElements('<path>a.ts</path><line>3</line>', 0)
 * // → ok, elements [{ name: 'path', raw: 'a.ts', … }, { name: 'line', raw: '3', … }]
 */
export function splitElements(
  raw: string,
  baseOffset: number,
): Outcome<{ elements: RawArgument[]; strayText: boolean }, MalformedProblem> {
  const scanned = scanElements(raw, baseOffset);
  if (scanned.problem !== undefined) return failure(scanned.problem);
  return success({ elements: scanned.elements, strayText: scanned.strayOffset >= 0 });
}

/**
 * Like `splitElements`, but keeps the first stray text offset and the children found before a
 * problem (so a caller can look for earlier problems inside them).
 */
export function scanElements(raw: string, baseOffset: number): ScannedElements {
  return scanChildren(raw, 0, raw.length, baseOffset);
}

/**
 * `scanElements` over `text` from `from` to `to`, without slicing it first; the offset of
 * `text[index]` is `shift + index`.
 */
export function scanChildren(text: string, from: number, to: number, shift: number): ScannedElements {
  const elements: RawArgument[] = [];
  let strayOffset = -1;
  let index = from;
  while (index < to) {
    const code = text.charCodeAt(index);
    if (code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d) {
      index++;
      continue;
    }
    if (code !== LT) {
      let end = text.indexOf('<', index);
      if (end < 0 || end > to) end = to;
      if (strayOffset < 0) {
        const cdataEnd = indexOfBefore(text, ']]>', index, end, to);
        if (cdataEnd >= 0) return problemAt(elements, strayOffset, 'malformed_xml', '`]]>` outside a CDATA section', shift + cdataEnd);
        strayOffset = shift + index;
      }
      index = end;
      continue;
    }
    const next = index + 1 < to ? text.charCodeAt(index + 1) : -1;
    if (next === BANG) {
      if (startsWithBefore(text, '<!--', index, to)) {
        const close = indexOfWithin(text, '-->', index + 4, to);
        if (close < 0) return problemAt(elements, strayOffset, 'malformed_xml', 'unclosed comment `<!--`', shift + index);
        index = close + 3;
        continue;
      }
      if (startsWithBefore(text, '<![CDATA[', index, to)) {
        if (strayOffset < 0) strayOffset = shift + index;
        const close = indexOfWithin(text, ']]>', index + 9, to);
        if (close < 0) return problemAt(elements, strayOffset, 'malformed_xml', 'unclosed CDATA section', shift + index);
        index = close + 3;
        continue;
      }
      if (isDeclaration(text, index, to)) {
        return problemAt(elements, strayOffset, 'doctype_forbidden', 'DOCTYPE and ENTITY declarations are not allowed; entities are never defined', shift + index);
      }
      return problemAt(elements, strayOffset, 'malformed_xml', 'unexpected `<!` markup', shift + index);
    }
    if (next === QUESTION) return problemAt(elements, strayOffset, 'malformed_xml', 'processing instructions `<?…?>` are not allowed', shift + index);
    if (next === SLASH) return problemAt(elements, strayOffset, 'malformed_xml', 'a close tag without a matching open tag', shift + index);

    const nameEnd = scanName(text, index + 1, to);
    if (nameEnd === index + 1) return problemAt(elements, strayOffset, 'malformed_xml', 'a `<` that does not start a valid element name', shift + index);
    const name = text.slice(index + 1, nameEnd);
    let cursor = nameEnd;
    while (cursor < to && isXmlSpace(text.charCodeAt(cursor))) cursor++;
    const after = cursor < to ? text.charCodeAt(cursor) : -1;
    if (after === SLASH && cursor + 1 < to && text.charCodeAt(cursor + 1) === GT) {
      elements.push({ name, raw: '', selfClosing: true, offset: shift + index, innerOffset: shift + cursor });
      index = cursor + 2;
      continue;
    }
    if (after !== GT) {
      if (cursor > nameEnd && cursor < to && isNameStartChar(codePointBefore(text, cursor, to))) {
        return problemAt(elements, strayOffset, 'attributes_not_supported', `attributes are not supported (on <${name}>); pass values as child elements`, shift + index);
      }
      return problemAt(elements, strayOffset, 'malformed_xml', `the tag <${name} is not closed by \`>\``, shift + index);
    }
    const innerStart = cursor + 1;
    const closeStart = findClose(text, name, innerStart, to);
    if (closeStart < 0) return problemAt(elements, strayOffset, 'malformed_xml', `<${name}> has no matching </${name}>`, shift + index);
    elements.push({
      name,
      raw: text.slice(innerStart, closeStart),
      selfClosing: false,
      offset: shift + index,
      innerOffset: shift + innerStart,
    });
    // The close tag: `</name`, optional whitespace, `>` (findClose checked it).
    index = closeStart + 2 + name.length;
    while (text.charCodeAt(index) !== GT) index++;
    index++;
  }
  return { elements, strayOffset, problem: undefined };
}

/** The scan result for a problem at `offset`; in document order a problem after stray text loses to the stray text. */
function problemAt(elements: RawArgument[], strayOffset: number, category: MalformedCategory, message: string, offset: number): ScannedElements {
  return { elements, strayOffset, problem: strayOffset >= 0 ? undefined : { category, message, offset } };
}

/** `<!DOCTYPE`, `<!ENTITY` and the other DTD declarations, in any letter case. */
function isDeclaration(text: string, index: number, to: number): boolean {
  for (const word of DECLARATIONS) {
    if (index + 2 + word.length <= to && startsWithIgnoreCase(text, word, index + 2)) return true;
  }
  return false;
}

/** True when `pattern` occurs at `index` and ends by `to`. */
function startsWithBefore(text: string, pattern: string, index: number, to: number): boolean {
  return index + pattern.length <= to && text.startsWith(pattern, index);
}

/** The first `pattern` at or after `from` that ends by `to`, or -1. */
function indexOfWithin(text: string, pattern: string, from: number, to: number): number {
  const found = text.indexOf(pattern, from);
  return found >= 0 && found + pattern.length <= to ? found : -1;
}

/** The first `]]>` starting in [from, before) and ending by `to`, or -1; never reads far past `before`. */
function indexOfBefore(text: string, pattern: ']]>', from: number, before: number, to: number): number {
  for (let index = from; index < before; index++) {
    if (text.charCodeAt(index) === RBRACKET && startsWithBefore(text, pattern, index, to)) return index;
  }
  return -1;
}

/** The code point at `index`, not pairing a high surrogate with a low one at or past `to`. */
function codePointBefore(text: string, index: number, to: number): number {
  const code = text.charCodeAt(index);
  if (code >= 0xd800 && code <= 0xdbff && index + 1 >= to) return code;
  return text.codePointAt(index) as number;
}

/** True when `text` has `name` at `index` followed, before `to`, by a character that cannot continue a name. */
function nameAt(text: string, name: string, index: number, to: number): boolean {
  const end = index + name.length;
  if (end > to) return false;
  // A manual loop stops at the first difference, so text between two `<` is read once.
  for (let offset = 0; offset < name.length; offset++) {
    if (text.charCodeAt(index + offset) !== name.charCodeAt(offset)) return false;
  }
  if (end >= to) return true;
  const code = text.charCodeAt(end);
  // The usual follower is `>`, `/` or whitespace; only a non-ASCII one needs the full table.
  if (code < 0x80) return !isAsciiNameChar(code);
  return !isNameChar(codePointBefore(text, end, to));
}

/** True for the ASCII characters that may continue an XML name: letters, digits, `_ : - .`. */
function isAsciiNameChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x3a) || code === 0x5f || code === 0x2d || code === 0x2e
  );
}

/**
 * Finds the close tag matching an open tag of `name` whose inner text starts at `from`: same-name
 * tags nest, CDATA, comments and PIs are skipped. The index of the close tag's `<`, or -1 when it
 * is missing before `to` or a skipped section is unclosed.
 */
function findClose(text: string, name: string, from: number, to: number): number {
  let depth = 1;
  let index = from;
  while (index < to) {
    const lt = text.indexOf('<', index);
    if (lt < 0 || lt >= to) return -1;
    const next = lt + 1 < to ? text.charCodeAt(lt + 1) : -1;
    if (next === BANG || next === QUESTION) {
      let skipTo = -2;
      if (next === QUESTION) skipTo = indexOfWithin(text, '?>', lt + 2, to);
      else if (startsWithBefore(text, '<![CDATA[', lt, to)) skipTo = indexOfWithin(text, ']]>', lt + 9, to);
      else if (startsWithBefore(text, '<!--', lt, to)) skipTo = indexOfWithin(text, '-->', lt + 4, to);
      if (skipTo === -1) return -1;
      if (skipTo >= 0) {
        index = skipTo + (next === QUESTION ? 2 : 3);
        continue;
      }
      index = lt + 1;
      continue;
    }
    if (next === SLASH) {
      if (nameAt(text, name, lt + 2, to)) {
        let cursor = lt + 2 + name.length;
        while (cursor < to && isXmlSpace(text.charCodeAt(cursor))) cursor++;
        if (cursor < to && text.charCodeAt(cursor) === GT) {
          depth--;
          if (depth === 0) return lt;
          index = cursor + 1;
        } else {
          index = lt + 2;
        }
        continue;
      }
      index = lt + 1;
      continue;
    }
    if (nameAt(text, name, lt + 1, to)) {
      // A nested open tag of the same name; find its `>` without crossing another `<`.
      let cursor = lt + 1 + name.length;
      while (cursor < to) {
        const code = text.charCodeAt(cursor);
        if (code === GT || code === LT) break;
        cursor++;
      }
      if (cursor < to && text.charCodeAt(cursor) === GT) {
        if (text.charCodeAt(cursor - 1) !== SLASH) depth++;
        index = cursor + 1;
      } else {
        index = cursor;
      }
      continue;
    }
    index = lt + 1;
  }
  return -1;
}

/**
 * Decodes an element's raw inner text to its string value (docs/protocol.md rule 10).
 *
 * CDATA sections are unwrapped verbatim. Elsewhere the five predefined entities and numeric
 * references to legal XML characters are decoded in one pass; other `&…;` and a bare `&` stay
 * literal, and comments and other markup stay as text. ASCII whitespace is trimmed at both ends
 * outside CDATA (characters written as references are kept). With `verbatim`, only one leading and
 * one trailing newline (LF or CRLF) are removed instead. Whitespace-only text is `''`.
 *
 * @example
 * decodeText('  a &lt; b <![CDATA[ & ]]>  ', { verbatim: false }) // → ok, 'a < b  & '
 */
export function decodeText(raw: string, options: { verbatim: boolean }): Outcome<string, MalformedProblem> {
  let start = 0;
  let end = raw.length;
  while (start < end && isXmlSpace(raw.charCodeAt(start))) start++;
  if (start === end) return success('');
  if (options.verbatim) {
    start = raw.startsWith('\r\n') ? 2 : raw.charCodeAt(0) === 0x0a ? 1 : 0;
    end = raw.endsWith('\r\n') ? raw.length - 2 : raw.endsWith('\n') ? raw.length - 1 : raw.length;
    if (end < start) end = start;
  } else {
    while (end > start && isXmlSpace(raw.charCodeAt(end - 1))) end--;
  }

  const parts: string[] = [];
  let segmentStart = start;
  let index = start;
  let commentsUnclosed = false;
  let instructionsUnclosed = false;
  while (index < end) {
    const code = raw.charCodeAt(index);
    if (code === LT) {
      if (raw.startsWith('<![CDATA[', index)) {
        const close = raw.indexOf(']]>', index + 9);
        if (close < 0 || close + 3 > end) {
          return failure({ category: 'malformed_xml', message: 'unclosed CDATA section in a value' });
        }
        parts.push(raw.slice(segmentStart, index), raw.slice(index + 9, close));
        index = close + 3;
        segmentStart = index;
        continue;
      }
      // Comments and PIs are kept as written, so nothing inside them is decoded or checked.
      const comment = raw.startsWith('<!--', index);
      const closer = comment ? '-->' : raw.startsWith('<?', index) ? '?>' : '';
      // Once a closer is known to be missing, it is missing for every later opener too: do not search again.
      let close = -1;
      if (closer !== '' && !(comment ? commentsUnclosed : instructionsUnclosed)) {
        close = raw.indexOf(closer, index + (comment ? 4 : 2));
        if (close < 0 || close + closer.length > end) {
          close = -1;
          if (comment) commentsUnclosed = true;
          else instructionsUnclosed = true;
        }
      }
      index = close >= 0 ? close + closer.length : index + 1;
      continue;
    }
    if (code === 0x26 /* & */) {
      const reference = decodeReference(raw, index, end);
      if (reference !== undefined) {
        parts.push(raw.slice(segmentStart, index), reference.value);
        index = reference.end;
        segmentStart = index;
      } else {
        index++;
      }
      continue;
    }
    if (code === 0x5d /* ] */ && raw.startsWith(']]>', index) && index + 3 <= end) {
      return failure({ category: 'malformed_xml', message: '`]]>` outside a CDATA section in a value' });
    }
    index++;
  }
  parts.push(raw.slice(segmentStart, end));
  return success(parts.join(''));
}

const NAMED_ENTITIES: ReadonlyArray<readonly [string, string]> = [
  ['amp;', '&'],
  ['lt;', '<'],
  ['gt;', '>'],
  ['quot;', '"'],
  ['apos;', "'"],
];

/** Decodes the reference at `index` (an `&`), or undefined when it stays literal. */
function decodeReference(raw: string, index: number, end: number): { value: string; end: number } | undefined {
  if (raw.charCodeAt(index + 1) !== 0x23 /* # */) {
    for (const [entity, value] of NAMED_ENTITIES) {
      if (raw.startsWith(entity, index + 1) && index + 1 + entity.length <= end) {
        return { value, end: index + 1 + entity.length };
      }
    }
    return undefined;
  }
  const hex = raw.charCodeAt(index + 2) === 0x78 /* x */;
  let cursor = index + (hex ? 3 : 2);
  const digitsStart = cursor;
  let codePoint = 0;
  while (cursor < end) {
    const digit = digitValue(raw.charCodeAt(cursor), hex);
    if (digit < 0) break;
    // Saturate: anything past U+10FFFF is illegal anyway and must not overflow to a legal value.
    codePoint = Math.min(codePoint * (hex ? 16 : 10) + digit, 0x110000);
    cursor++;
  }
  if (cursor === digitsStart || cursor >= end || raw.charCodeAt(cursor) !== 0x3b /* ; */) return undefined;
  if (!isLegalXmlCodePoint(codePoint)) return undefined;
  return { value: String.fromCodePoint(codePoint), end: cursor + 1 };
}

function digitValue(code: number, hex: boolean): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (!hex) return -1;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}
