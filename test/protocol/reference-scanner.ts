/**
 * A deliberately naive reference for rules 1–5: batch only, quadratic in the worst case, written
 * straight from the rule text with regular expressions and look-ahead searches. The differential
 * test checks the linear streaming scanner against it.
 */
import { parseBlock } from '../../src/protocol/parse-block.js';
import { resolveParseOptions } from '../../src/protocol/parse-options.js';
import type { ParsedOutput } from '../../src/protocol/types.js';
import { isNameStartChar } from '../../src/protocol/xml-chars.js';

const WS = '[ \\t\\r\\n]';

function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  return lf < 0 ? text.length : lf;
}

/** The fence opened by the line at `start`, if it opens one. */
function fenceAt(text: string, start: number): { char: string; length: number } | undefined {
  const match = /^ {0,3}(`{3,}|~{3,})/.exec(text.slice(start, lineEnd(text, start)));
  if (!match) return undefined;
  const run = match[1] as string;
  const info = text.slice(start + match[0].length, lineEnd(text, start));
  if (run[0] === '`' && info.includes('`')) return undefined;
  return { char: run[0] as string, length: run.length };
}

/** Where a code span starting at `from` must close by: the next blank line or fence line. */
function paragraphEnd(text: string, from: number): number {
  let lf = text.indexOf('\n', from);
  while (lf >= 0) {
    const start = lf + 1;
    const end = text.indexOf('\n', start);
    if (end >= 0 && /^[ \t\r]*$/.test(text.slice(start, end))) return start;
    if (fenceAt(text, start)) return start;
    lf = end;
  }
  return text.length;
}

function runLength(text: string, at: number): number {
  let end = at;
  while (text[end] === '`') end++;
  return end - at;
}

/** Facts about the output; `parseReference` turns them into a result. */
export function scanReference(text: string) {
  const thinks: [number, number][] = [];
  let opener: { start: number; end: number; attributes: boolean; selfClosing: boolean } | undefined;
  let closer: { start: number; end: number } | undefined;
  let nestedAt = -1;
  let secondAt = -1;
  let example = false;
  let index = 0;
  while (index < text.length) {
    if (index === 0 || text[index - 1] === '\n') {
      const fence = fenceAt(text, index);
      if (fence) {
        const contentStart = Math.min(lineEnd(text, index) + 1, text.length);
        const closing = new RegExp(`^ {0,3}${fence.char === '`' ? '`' : '~'}{${fence.length},}[ \\t\\r]*$`);
        let contentEnd = text.length;
        let after = text.length;
        for (let line = contentStart; line < text.length; line = lineEnd(text, line) + 1) {
          if (closing.test(text.slice(line, lineEnd(text, line)))) {
            contentEnd = line;
            after = Math.min(lineEnd(text, line) + 1, text.length);
            break;
          }
        }
        const content = text.slice(contentStart, contentEnd);
        const open = new RegExp(`<action[ \\t\\r\\n>/]`, 'i').exec(content);
        if (open && new RegExp(`</action${WS}*>`, 'i').test(content.slice(open.index + 8))) example = true;
        index = after;
        continue;
      }
    }
    const char = text[index];
    if (char === '`') {
      const length = runLength(text, index);
      const limit = paragraphEnd(text, index);
      let search = index + length;
      let closeEnd = -1;
      while (search < limit) {
        const next = text.indexOf('`', search);
        if (next < 0 || next >= limit) break;
        const nextLength = runLength(text, next);
        if (nextLength === length) {
          closeEnd = next + length;
          break;
        }
        search = next + nextLength;
      }
      index = closeEnd >= 0 ? closeEnd : index + length;
      continue;
    }
    if (char === '<') {
      const rest = text.slice(index);
      if (rest.startsWith('<!--')) {
        const end = text.indexOf('-->', index + 4);
        index = end < 0 ? text.length : end + 3;
        continue;
      }
      const hider = new RegExp(`^<(think|thinking|observation)${WS}*>`, 'i').exec(rest);
      if (hider) {
        const name = hider[1] as string;
        const close = new RegExp(`</${name}${WS}*>`, 'i').exec(text.slice(index + hider[0].length));
        const end = close ? index + hider[0].length + close.index + close[0].length : text.length;
        if (name.toLowerCase() !== 'observation' && !opener) thinks.push([index, end]);
        index = end;
        continue;
      }
      const tag = new RegExp(`^<action(?:(${WS}*)>|${WS}*/>|${WS}+([^<>]*)>)`, 'i').exec(rest);
      const attributes = tag?.[2] !== undefined;
      const validAttributes = !attributes || isNameStartChar(tag?.[2]?.charCodeAt(0) ?? 0) || /^[\uD800-\uDBFF]/.test(tag?.[2] ?? '');
      if (tag && validAttributes) {
        if (opener) {
          secondAt = index;
          break;
        }
        const end = index + tag[0].length;
        const selfClosing = tag[0].endsWith('/>');
        opener = { start: index, end, attributes, selfClosing };
        if (selfClosing) {
          closer = { start: end, end };
          index = end;
          continue;
        }
        let at = end;
        while (at < text.length) {
          const lt = text.indexOf('<', at);
          if (lt < 0) break;
          if (text.startsWith('<![CDATA[', lt)) {
            const close = text.indexOf(']]>', lt + 9);
            at = close < 0 ? text.length : close + 3;
            continue;
          }
          const close = new RegExp(`^</action${WS}*>`, 'i').exec(text.slice(lt));
          if (close) {
            closer = { start: lt, end: lt + close[0].length };
            break;
          }
          if (nestedAt < 0 && /^<action[ \t\r\n>/]/i.test(text.slice(lt, lt + 8))) nestedAt = lt;
          at = lt + 1;
        }
        if (!closer) break;
        index = closer.end;
        continue;
      }
    }
    index++;
  }
  return { thinks, opener, closer, nestedAt, secondAt, example };
}

const trim = (value: string): string => value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');

/** The reference result, in the shape of `ParsedOutput` (problem messages left out). */
export function parseReference(text: string, finish: { finishReason?: string; stopSequence?: string } = {}): ParsedOutput {
  const facts = scanReference(text);
  const visibleEnd = facts.opener ? facts.opener.start : text.length;
  let visible = '';
  let from = 0;
  for (const [start, end] of facts.thinks) {
    if (start >= visibleEnd) break;
    visible += text.slice(from, start);
    from = end;
  }
  if (from < visibleEnd) visible += text.slice(from, visibleEnd);
  const base = { text: trim(visible), calls: [] as ParsedOutput['calls'] };
  if (!facts.opener) {
    return facts.example
      ? { ...base, hasBlock: false, problem: { category: 'action_in_code_fence', message: '' } }
      : { ...base, hasBlock: false };
  }
  let closer = facts.closer;
  if (!closer) {
    if (finish.finishReason !== 'stop_sequence' || trim(finish.stopSequence ?? '').toLowerCase() !== '</action>') {
      return { ...base, hasBlock: true, problem: { category: 'unclosed_action', message: '', offset: facts.opener.start } };
    }
    closer = { start: text.length, end: text.length };
  }
  const trailingText = trim(text.slice(closer.end));
  const trailing = trailingText === '' ? {} : { trailing: trailingText };
  if (facts.secondAt >= 0) {
    return { ...base, hasBlock: true, ...trailing, problem: { category: 'multiple_action_blocks', message: '', offset: facts.secondAt } };
  }
  const block = {
    start: facts.opener.start,
    innerStart: facts.opener.end,
    innerEnd: facts.opener.selfClosing ? facts.opener.end : closer.start,
    end: closer.end,
    attributes: facts.opener.attributes,
    selfClosing: facts.opener.selfClosing,
    nestedAt: facts.nestedAt,
  };
  const parsed = parseBlock(text.slice(block.start, block.end), block, resolveParseOptions());
  if (!parsed.ok) return { ...base, hasBlock: true, ...trailing, problem: { ...parsed.problem, message: '' } };
  return { ...base, calls: parsed.value, hasBlock: true, ...trailing };
}
